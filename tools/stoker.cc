// The stoker command: no logic of its own, it wires the library's layers to flags.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "doctor.h"
#include "monitor_cmd.h"
#include "pack.h"
#include "stoker/batch_digest.h"
#include "stoker/capacity.h"
#include "stoker/dataset.h"
#include "stoker/env.h"
#include "stoker/error.h"
#include "stoker/loader.h"
#include "stoker/loader_stats.h"
#include "stoker/packed.h"
#include "synth.h"

#ifdef STOKER_HAVE_CUDA
#include "stoker/cuda.h"
#endif

namespace stoker {
namespace {

// Flags shared by bench and demo: how the loader is configured.
struct BenchFlags {
  std::string data;
  int threads = 0;
  int batch = 256;
  int prefetch = 0;
  int size = 224;
  std::string transform = "train";
  std::string output = "float32";
  std::string mode = "exact";
  int64_t images = 0;
  uint64_t seed = 0;
  int64_t epoch = 0;
  std::optional<int> rank;
  std::optional<int> world;
  std::string bad_samples = "error";
  bool no_shuffle = false;
  bool exact_decode = false;
  bool digest = false;
  bool json = false;
  bool stats = false;           // live stats lines and the live verdict
  std::string stats_file;       // where the stats lines go ("" with --stats: stderr)
  double stats_interval = 1.0;  // seconds between stats lines
  bool measure_fixes = true;    // with --stats: measure the fixes on a sample
  std::string device = "cpu";   // cpu | cuda (GPU augmentation)
  int gpu = 0;                  // CUDA device index
};

void add_loader_flags(CLI::App& cmd, BenchFlags& f) {
  cmd.add_option("--threads", f.threads,
                 "worker threads (default: cores available / ranks on node)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--batch", f.batch, "batch size per rank")->check(CLI::PositiveNumber);
  cmd.add_option("--prefetch", f.prefetch, "batches in flight (default: chosen from threads)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--size", f.size, "output side in pixels")->check(CLI::PositiveNumber);
  cmd.add_option("--transform", f.transform, "train (RandomResizedCrop+flip) or eval")
      ->check(CLI::IsMember({"train", "eval"}));
  cmd.add_option("--output", f.output,
                 "float32, float16, bfloat16 (NCHW, normalised) or uint8 (NHWC)")
      ->check(CLI::IsMember({"float32", "uint8", "float16", "bfloat16"}));
  cmd.add_option("--mode", f.mode, "sampler mode")->check(CLI::IsMember({"exact", "pad", "drop"}));
  cmd.add_option("--seed", f.seed, "shuffle and augmentation seed");
  cmd.add_option("--epoch", f.epoch, "first epoch")->check(CLI::NonNegativeNumber);
  auto* rank = cmd.add_option("--rank", f.rank, "this rank (with --world)");
  auto* world = cmd.add_option("--world", f.world, "world size (with --rank)");
  rank->needs(world);
  world->needs(rank);
  cmd.add_option("--bad-samples", f.bad_samples, "error (stop, naming the file) or skip (count)")
      ->check(CLI::IsMember({"error", "skip"}));
  cmd.add_flag("--no-shuffle", f.no_shuffle, "dataset order instead of a permutation");
  cmd.add_flag("--exact-decode", f.exact_decode, "decode at full scale (no DCT scaling)");
}

LoaderConfig loader_config(const BenchFlags& f) {
  LoaderConfig config;
  config.batch_size = f.batch;
  config.threads = f.threads;
  config.prefetch = f.prefetch;
  config.shuffle = !f.no_shuffle;
  config.seed = f.seed;
  config.mode = parse_sampler_mode(f.mode);
  // bench is one rank unless told otherwise (DESIGN.md), whatever the environment says.
  config.rank = f.rank.value_or(0);
  config.world_size = f.world.value_or(1);
  config.bad_samples = parse_bad_sample_policy(f.bad_samples);
  config.transform.kind = parse_transform_kind(f.transform);
  config.transform.output = parse_output_kind(f.output);
  config.transform.size = f.size;
  config.transform.decode.dct_scaling = !f.exact_decode;
  return config;
}

struct BenchResult {
  int64_t images = 0;        // valid images after the first batch
  int64_t images_total = 0;  // valid images including the first batch
  int64_t batches = 0;
  double seconds = 0;              // from the first batch to the last
  double first_batch_seconds = 0;  // from run_bench's start (after opening) to the first batch
  int64_t rss_before_first_batch_kib = 0;
  LoaderStats stats;
  std::string digest;
};

// Peak resident set size of this process so far (VmHWM), in KiB; 0 when unknown.
int64_t peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return 0;
}

// Writes a stats JSON line every `interval` seconds while the bench runs.
class StatsLog {
 public:
  StatsLog(const Loader& loader, const BenchFlags& f)
      : sampler_(loader), interval_(f.stats_interval) {
    if (!f.stats) return;
    enabled_ = true;
    if (!f.stats_file.empty()) {
      file_.open(f.stats_file, std::ios::trunc);
      STOKER_CHECK(file_.good(), "{}: cannot write the stats file", f.stats_file);
    }
    last_ = std::chrono::steady_clock::now();
  }
  void tick(bool force = false) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && std::chrono::duration<double>(now - last_).count() < interval_) return;
    last_ = now;
    const std::string line = sampler_.sample().dump();
    if (file_.is_open()) {
      file_ << line << "\n" << std::flush;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }

 private:
  StatsSampler sampler_;
  double interval_;
  bool enabled_ = false;
  std::ofstream file_;
  std::chrono::steady_clock::time_point last_;
};

// The bytes of a delivered batch's images, for --digest (a device batch is copied back).
std::span<const uint8_t> image_bytes(const Batch& b, std::vector<uint8_t>&) { return b.images; }

#ifdef STOKER_HAVE_CUDA
std::span<const uint8_t> image_bytes(const cuda::DeviceBatch& b, std::vector<uint8_t>& copy) {
  copy = cuda::copy_to_host(b);
  return copy;
}

// A GpuLoader as run_bench sees a loader.
struct GpuSource {
  cuda::GpuLoader& gpu;
  void set_epoch(int64_t e) { gpu.set_epoch(e); }
  std::shared_ptr<const cuda::DeviceBatch> next() { return gpu.next(0); }
  LoaderStats stats() const { return gpu.host().stats(); }
};
#endif

// Runs the loader: one epoch, or until `images` valid images when images > 0. `Source` is a
// Loader, or a GpuSource whose batches live on the GPU.
template <typename Source>
BenchResult run_bench(Source& loader, int64_t first_epoch, int64_t images, bool digest,
                      StatsLog* stats_log = nullptr) {
  std::vector<uint8_t> copy;
  BatchDigest hash;
  BenchResult result;
  const auto start_time = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point first_batch_time;
  for (int64_t epoch = first_epoch;; ++epoch) {
    loader.set_epoch(epoch);
    int64_t in_epoch = 0;
    while (auto batch = loader.next()) {
      ++in_epoch;
      int64_t valid = 0;
      for (uint8_t v : batch->valid) valid += v;
      if (result.batches == 0) {
        first_batch_time = std::chrono::steady_clock::now();
        result.first_batch_seconds =
            std::chrono::duration<double>(first_batch_time - start_time).count();
        result.rss_before_first_batch_kib = peak_rss_kib();
      } else {
        result.images += valid;
      }
      result.images_total += valid;
      ++result.batches;
      if (digest) {
        hash.add(image_bytes(*batch, copy), batch->labels, batch->valid);
      }
      if (stats_log) stats_log->tick();
      if (images > 0 && result.images_total >= images) break;
    }
    if (images <= 0 || result.images_total >= images) break;
    STOKER_CHECK(in_epoch > 0, "the sampler gives this rank no batch (drop mode on a tiny set?)");
  }
  if (result.batches > 0) {
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - first_batch_time).count();
  }
  result.stats = loader.stats();
  if (digest) result.digest = hash.hex();
  return result;
}

double rate(const BenchResult& r) { return r.seconds > 0 ? r.images / r.seconds : 0.0; }

int report_bench(const BenchFlags& f, const Dataset& dataset, const Loader& loader,
                 const BenchResult& r, double open_seconds, const std::string& device,
                 StatsLog& stats_log);

int cmd_bench(const BenchFlags& f) {
  const auto open_start = std::chrono::steady_clock::now();
  auto dataset = open_dataset(f.data);
  const double open_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - open_start).count();
  BenchResult r;
  std::string device = "cpu";
  if (f.device == "cuda") {
#ifdef STOKER_HAVE_CUDA
    std::string why;
    STOKER_CHECK(cuda::available(&why), "--device cuda: no usable GPU: {}", why);
    cuda::GpuLoader gpu(dataset, loader_config(f), f.gpu);
    device = fmt::format("cuda:{} {}", f.gpu, cuda::device_name(f.gpu));
    GpuSource source{gpu};
    StatsLog stats_log(gpu.host(), f);
    r = run_bench(source, f.epoch, f.images, f.digest, &stats_log);
    return report_bench(f, *dataset, gpu.host(), r, open_seconds, device, stats_log);
#else
    STOKER_THROW(
        "--device cuda: this stoker was built without CUDA (install the CUDA toolkit and "
        "configure with -DSTOKER_CUDA=ON)");
#endif
  }
  Loader loader(dataset, loader_config(f));
  StatsLog stats_log(loader, f);
  r = run_bench(loader, f.epoch, f.images, f.digest, &stats_log);
  return report_bench(f, *dataset, loader, r, open_seconds, device, stats_log);
}

int report_bench(const BenchFlags& f, const Dataset& dataset_ref, const Loader& loader_ref,
                 const BenchResult& r, double open_seconds, const std::string& device,
                 StatsLog& stats_log) {
  const Dataset* dataset = &dataset_ref;
  const Loader* loader = &loader_ref;
  const auto& s = r.stats;
  std::optional<Diagnosis> diagnosis;
  if (f.stats) {
    stats_log.tick(true);
    // The live verdict over the whole run (the per-interval lines carry the windows).
    diagnosis = diagnose_loader(*loader, f.measure_fixes);
  }
  if (f.json) {
    nlohmann::json j = {{"images_per_second", rate(r)},
                        {"images", r.images},
                        {"images_total", r.images_total},
                        {"batches", r.batches},
                        {"seconds", r.seconds},
                        {"first_batch_seconds", r.first_batch_seconds},
                        {"open_seconds", open_seconds},
                        {"peak_rss_before_first_batch_kib", r.rss_before_first_batch_kib},
                        {"peak_rss_kib", peak_rss_kib()},
                        {"threads", s.threads},
                        {"prefetch", s.prefetch},
                        {"batch", f.batch},
                        {"skipped", s.skipped},
                        {"wait_seconds", s.wait_seconds},
                        {"wall_seconds", s.wall_seconds},
                        {"cpu_seconds", to_json(s.cpu)},
                        {"rank", loader->rank()},
                        {"world_size", loader->world_size()},
                        {"device", device},
                        {"dataset", dataset->describe()}};
    if (f.digest) j["digest"] = r.digest;
    if (diagnosis) j["diagnosis"] = to_json(*diagnosis);
    fmt::print("{}\n", j.dump());
    return 0;
  }
  fmt::print("stoker bench: {}\n", dataset->describe());
  fmt::print("  rank {}/{}, {} threads, batch {}, prefetch {}, {} {} {}, augment on {}\n",
             loader->rank(), loader->world_size(), s.threads, f.batch, s.prefetch, f.transform,
             f.size, f.output, device);
  fmt::print("  {:.0f} images/s ({} images in {:.2f} s after the first batch; {} batches)\n",
             rate(r), r.images, r.seconds, r.batches);
  fmt::print("  opened in {:.3f} s, first batch after {:.3f} s more\n", open_seconds,
             r.first_batch_seconds);
  const double cpu = s.cpu.read + s.cpu.decode + s.cpu.augment + s.cpu.collate;
  const auto per_image = [&](double x) {
    return r.images_total > 0 ? 1e3 * x / static_cast<double>(r.images_total) : 0.0;
  };
  fmt::print(
      "  CPU seconds: read {:.2f}, decode {:.2f}, augment {:.2f}, collate {:.2f}"
      " ({:.2f} ms per image)\n",
      s.cpu.read, s.cpu.decode, s.cpu.augment, s.cpu.collate, per_image(cpu));
  fmt::print("  consumer waited {:.2f} s of {:.2f} s ({:.0f} %)\n", s.wait_seconds, s.wall_seconds,
             s.wall_seconds > 0 ? 100.0 * s.wait_seconds / s.wall_seconds : 0.0);
  if (s.skipped > 0) fmt::print("  skipped {} bad samples\n", s.skipped);
  if (f.digest) fmt::print("  digest {}\n", r.digest);
  if (diagnosis) fmt::print("\n{}", format_diagnosis(*diagnosis));
  return 0;
}

struct DemoOptions {
  std::string dir = "build/demo-data";
  int images = 512;
  int gpus = 4;
  double gpu_rate = 250;  // images/s one simulated GPU trains on
  double seconds = 4;     // per configuration
};

// One configuration of the demo feeding `gpus` simulated GPUs: the consumer "trains" by
// sleeping the step time of a global batch, as a GPU would keep the Python thread waiting.
struct DemoRun {
  double delivered = 0;
  Diagnosis diagnosis;
};

DemoRun feed_simulated_gpus(Loader& loader, const DemoOptions& o) {
  const double step = loader.config().batch_size / (o.gpus * o.gpu_rate);
  StatsSampler sampler(loader);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t epoch = 0;; ++epoch) {
    loader.set_epoch(epoch);
    bool done = false;
    while (auto batch = loader.next()) {
      std::this_thread::sleep_for(std::chrono::duration<double>(step));
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
          o.seconds) {
        done = true;
        break;
      }
    }
    if (done) break;
  }
  sampler.sample();
  DemoRun run;
  run.delivered = sampler.last_window().images_per_second();
  run.diagnosis = diagnose_pipeline(sampler.last_window());
  return run;
}

// The demo tells the story: a photo-like set (generated once), a naive configuration starving
// N simulated GPUs, stoker's configuration feeding them, and the doctor's verdict on each.
int cmd_demo(BenchFlags f, const DemoOptions& o) {
  const std::filesystem::path data = o.dir;
  const auto stamp = data / ".stoker-synth";
  const std::string want = fmt::format("images={} v1", o.images);
  std::string have;
  if (std::ifstream in(stamp); in) std::getline(in, have);
  if (have != want) {
    fmt::print("demo: generating {} photo-like 0.3-megapixel JPEGs in {} ...\n", o.images, o.dir);
    std::filesystem::remove_all(data);
    synthesize_image_folder(data, SynthOptions{.images = o.images});
    std::ofstream(stamp) << want << "\n";
  }
  auto dataset = open_dataset(data);
  const std::filesystem::path packed_dir = o.dir + "-raw256";
  PackOptions pack;
  pack.mode = PackMode::kRaw;
  pack.max_side = 256;
  pack_dataset(*dataset, o.dir, packed_dir, pack);  // a no-op once the pack is complete
  auto packed = open_packed(packed_dir);

  const double demand = o.gpus * o.gpu_rate;
  fmt::print(
      "demo: {} simulated GPUs training at {:.0f} images/s each need {:.0f} images/s\n"
      "      (RandomResizedCrop {}x{} + flip + normalize, float32 NCHW, batch {}; {})\n",
      o.gpus, o.gpu_rate, demand, f.size, f.size, f.batch, dataset->describe());

  struct Config {
    const char* name;
    const char* how;
    std::shared_ptr<Dataset> data;
    int threads;
    bool exact_decode;
  };
  const Config configs[] = {
      {"naive", "the folder of JPEGs, full-size decode, 1 worker thread", dataset, 1, true},
      {"stoker", "stoker pack --mode raw --max-side 256, all cores", packed, f.threads, false},
  };
  for (const Config& c : configs) {
    BenchFlags flags = f;
    flags.threads = c.threads;
    flags.exact_decode = c.exact_decode;
    Loader loader(c.data, loader_config(flags));
    fmt::print("\n== {}: {} ({} threads)\n", c.name, c.how, loader.stats().threads);
    const DemoRun run = feed_simulated_gpus(loader, o);
    const auto& numbers = run.diagnosis.numbers.pipeline;
    const double idle = numbers ? numbers->wait_fraction : 0.0;
    fmt::print("   delivered {:.0f} of {:.0f} images/s: the GPUs idle {:.0f} % of the time\n",
               run.delivered, demand, 100 * idle);
    fmt::print("   doctor: {} — {}\n", to_string(run.diagnosis.verdict), run.diagnosis.summary);
    if (!run.diagnosis.fixes.empty()) {
      fmt::print("   first fix: {}\n", run.diagnosis.fixes.front().action);
    }
  }
  fmt::print(
      "\nMeasure your own data: build/stoker doctor DATA --gpus 8 --gpu-rate 2500 --html "
      "report.html\n");
  return 0;
}

int cmd_synth(const std::string& out, const SynthOptions& options) {
  synthesize_image_folder(out, options);
  fmt::print("synth: wrote {} images in {} classes to {}\n", options.images, options.classes, out);
  return 0;
}

int run(int argc, char** argv) {
  CLI::App app{"stoker: keeps every GPU of a training job fed"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "stoker 0.1.0");

  BenchFlags bench;
  auto* bench_cmd = app.add_subcommand(
      "bench", "measure images/s of the input pipeline on DATA and where the time goes");
  bench_cmd->add_option("DATA", bench.data, "image folder, file list or packed dataset")
      ->required();
  add_loader_flags(*bench_cmd, bench);
  bench_cmd->add_option("--images", bench.images,
                        "run until this many images are delivered (default: one epoch)");
  bench_cmd->add_flag("--digest", bench.digest, "XXH3-64 of every delivered batch, in order");
  bench_cmd->add_flag("--json", bench.json, "one JSON line");
  bench_cmd->add_flag("--stats", bench.stats,
                      "live stats JSON lines (stderr or --stats-file) and the live verdict");
  bench_cmd->add_option("--stats-file", bench.stats_file, "write the stats lines here")
      ->needs("--stats");
  bench_cmd->add_option("--stats-interval", bench.stats_interval, "seconds between stats lines")
      ->check(CLI::PositiveNumber);
  bench_cmd->add_flag("!--no-measure-fixes", bench.measure_fixes,
                      "with --stats: do not measure the fixes on a sample of DATA");
  bench_cmd
      ->add_option("--device", bench.device,
                   "where augmentation runs: cpu, or cuda (workers decode crop regions into "
                   "pinned memory, the GPU resizes, flips and normalises)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  bench_cmd->add_option("--gpu", bench.gpu, "CUDA device index for --device cuda")
      ->check(CLI::NonNegativeNumber);

  BenchFlags demo;
  demo.batch = 64;
  DemoOptions demo_options;
  auto* demo_cmd = app.add_subcommand(
      "demo", "a naive pipeline starving simulated GPUs, stoker's feeding them, and the verdicts");
  demo_cmd->add_option("--dir", demo_options.dir, "where the demo data set is generated");
  demo_cmd->add_option("--images", demo_options.images, "images in the demo set")
      ->check(CLI::PositiveNumber);
  demo_cmd->add_option("--gpus", demo_options.gpus, "simulated GPUs")->check(CLI::PositiveNumber);
  demo_cmd->add_option("--gpu-rate", demo_options.gpu_rate, "images/s of one simulated GPU")
      ->check(CLI::PositiveNumber);
  demo_cmd->add_option("--seconds", demo_options.seconds, "seconds per configuration")
      ->check(CLI::PositiveNumber);
  add_loader_flags(*demo_cmd, demo);

  std::string synth_out;
  SynthOptions synth;
  auto* synth_cmd =
      app.add_subcommand("synth", "write a deterministic photo-like JPEG image folder");
  synth_cmd->add_option("OUT", synth_out, "output folder")->required();
  synth_cmd->add_option("--images", synth.images, "images")->check(CLI::PositiveNumber);
  synth_cmd->add_option("--classes", synth.classes, "classes")->check(CLI::PositiveNumber);
  synth_cmd->add_option("--width", synth.width, "width")->check(CLI::PositiveNumber);
  synth_cmd->add_option("--height", synth.height, "height")->check(CLI::PositiveNumber);
  synth_cmd->add_option("--quality", synth.quality, "JPEG quality")->check(CLI::Range(1, 100));
  synth_cmd->add_option("--seed", synth.seed, "seed");

  auto pack_commands = add_pack_commands(app);
  auto doctor_command = add_doctor_command(app);
  auto monitor_command = add_monitor_command(app);
  CLI11_PARSE(app, argc, argv);
  if (auto rc = pack_commands->run()) return *rc;
  if (auto rc = doctor_command->run()) return *rc;
  if (auto rc = monitor_command->run()) return *rc;
  if (bench_cmd->parsed()) return cmd_bench(bench);
  if (demo_cmd->parsed()) return cmd_demo(demo, demo_options);
  if (synth_cmd->parsed()) return cmd_synth(synth_out, synth);
  return 2;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) {
  try {
    return stoker::run(argc, argv);
  } catch (const stoker::Error& e) {
    std::fprintf(stderr, "stoker: error: %s\n", e.message().c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stoker: error: %s\n", e.what());
    return 1;
  }
}
