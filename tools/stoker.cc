// The stoker command: no logic of its own, it wires the library's layers to flags.
#include <fmt/format.h>
#include <xxhash.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "pack.h"
#include "stoker/dataset.h"
#include "stoker/env.h"
#include "stoker/error.h"
#include "stoker/loader.h"
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
  std::string device = "cpu";  // cpu | cuda (GPU augmentation)
  int gpu = 0;                 // CUDA device index
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
BenchResult run_bench(Source& loader, int64_t first_epoch, int64_t images, bool digest) {
  std::vector<uint8_t> copy;
  XXH3_state_t* hash = XXH3_createState();
  XXH3_64bits_reset(hash);
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
        const std::span<const uint8_t> pixels = image_bytes(*batch, copy);
        XXH3_64bits_update(hash, pixels.data(), pixels.size());
        for (int64_t label : batch->labels) {
          uint8_t le[8];
          for (int b = 0; b < 8; ++b)
            le[b] = static_cast<uint8_t>(static_cast<uint64_t>(label) >> (8 * b));
          XXH3_64bits_update(hash, le, sizeof le);
        }
        XXH3_64bits_update(hash, batch->valid.data(), batch->valid.size());
      }
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
  if (digest) result.digest = fmt::format("{:016x}", XXH3_64bits_digest(hash));
  XXH3_freeState(hash);
  return result;
}

double rate(const BenchResult& r) { return r.seconds > 0 ? r.images / r.seconds : 0.0; }

int report_bench(const BenchFlags& f, const Dataset& dataset, const Loader& loader,
                 const BenchResult& r, double open_seconds, const std::string& device);

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
    r = run_bench(source, f.epoch, f.images, f.digest);
    return report_bench(f, *dataset, gpu.host(), r, open_seconds, device);
#else
    STOKER_THROW(
        "--device cuda: this stoker was built without CUDA (install the CUDA toolkit and "
        "configure with -DSTOKER_CUDA=ON)");
#endif
  }
  Loader loader(dataset, loader_config(f));
  r = run_bench(loader, f.epoch, f.images, f.digest);
  return report_bench(f, *dataset, loader, r, open_seconds, device);
}

int report_bench(const BenchFlags& f, const Dataset& dataset_ref, const Loader& loader_ref,
                 const BenchResult& r, double open_seconds, const std::string& device) {
  const Dataset* dataset = &dataset_ref;
  const Loader* loader = &loader_ref;
  const auto& s = r.stats;
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
                        {"cpu_seconds",
                         {{"read", s.cpu.read},
                          {"decode", s.cpu.decode},
                          {"augment", s.cpu.augment},
                          {"collate", s.cpu.collate}}},
                        {"rank", loader->rank()},
                        {"world_size", loader->world_size()},
                        {"device", device},
                        {"dataset", dataset->describe()}};
    if (f.digest) j["digest"] = r.digest;
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
  return 0;
}

// The demo: a deterministic photo-like set, generated once, then the main job on it.
int cmd_demo(BenchFlags f, const std::string& dir, int images) {
  const std::filesystem::path data = dir;
  const auto stamp = data / ".stoker-synth";
  const std::string want = fmt::format("images={} v1", images);
  std::string have;
  if (std::ifstream in(stamp); in) std::getline(in, have);
  if (have != want) {
    fmt::print("demo: generating {} photo-like 0.3-megapixel JPEGs in {} ...\n", images, dir);
    std::filesystem::remove_all(data);
    synthesize_image_folder(data, SynthOptions{.images = images});
    std::ofstream(stamp) << want << "\n";
  }
  auto dataset = open_dataset(data);
  f.data = dir;
  Loader loader(dataset, loader_config(f));
  fmt::print("demo: {}\n", dataset->describe());
  fmt::print(
      "demo: RandomResizedCrop {0}x{0} + flip + normalize, float32 NCHW, batch {1}, "
      "{2} threads\n",
      f.size, f.batch, loader.stats().threads);
  const BenchResult r = run_bench(loader, 0, 3 * dataset->size(), false);
  const double images_per_second = rate(r);
  const auto& s = r.stats;
  const double cpu = s.cpu.read + s.cpu.decode + s.cpu.augment + s.cpu.collate;
  constexpr double kResnet50PerA100 = 2500.0;  // training images/s of one A100 (mixed precision)
  fmt::print(
      "\n  {:.0f} images/s on {} threads ({:.2f} ms of CPU per image: read {:.0f} %,"
      " decode {:.0f} %, augment {:.0f} %)\n",
      images_per_second, s.threads, 1e3 * cpu / std::max<int64_t>(1, r.images_total),
      100 * s.cpu.read / cpu, 100 * s.cpu.decode / cpu, 100 * s.cpu.augment / cpu);
  fmt::print(
      "  = the input demand of {:.2f} A100 GPUs training ResNet-50 (about {:.0f} images/s "
      "each)\n",
      images_per_second / kResnet50PerA100, kResnet50PerA100);
  fmt::print("  one A100 needs about {:.1f} cores like these with this pipeline\n",
             kResnet50PerA100 / std::max(1.0, images_per_second / s.threads));
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
  bench_cmd
      ->add_option("--device", bench.device,
                   "where augmentation runs: cpu, or cuda (workers decode crop regions into "
                   "pinned memory, the GPU resizes, flips and normalises)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  bench_cmd->add_option("--gpu", bench.gpu, "CUDA device index for --device cuda")
      ->check(CLI::NonNegativeNumber);

  BenchFlags demo;
  demo.batch = 64;
  std::string demo_dir = "build/demo-data";
  int demo_images = 512;
  auto* demo_cmd = app.add_subcommand("demo", "the main job on a generated default data set");
  demo_cmd->add_option("--dir", demo_dir, "where the demo data set is generated");
  demo_cmd->add_option("--images", demo_images, "images in the demo set")
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
  CLI11_PARSE(app, argc, argv);
  if (auto rc = pack_commands->run()) return *rc;
  if (bench_cmd->parsed()) return cmd_bench(bench);
  if (demo_cmd->parsed()) return cmd_demo(demo, demo_dir, demo_images);
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
