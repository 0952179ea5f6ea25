// stoker bench: runs a loader (or a GpuLoader) over DATA and reports images/s, where the CPU time
// went, the batch digest and the live verdict.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "command.h"
#include "diagnose/json.h"
#include "loader_flags.h"
#include "stoker/batch_digest.h"
#include "stoker/capacity.h"
#include "stoker/dataset.h"
#include "stoker/error.h"
#include "stoker/loader.h"
#include "stoker/loader_stats.h"
#include "util/check.h"
#include "validators.h"
#ifdef STOKER_HAVE_CUDA
#include "stoker/cuda.h"
#endif

namespace stoker::cli {
namespace {

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

// Where bench's stats lines go: --stats-file (its own file, started afresh), else with --stats
// standard error, else the monitor's shared file when `stoker monitor` runs bench
// (STOKER_STATS_FILE: appended to, beside other loaders' lines; docs/doctor.md).
StatsFileConfig stats_file_config(const BenchFlags& f) {
  StatsFileConfig c;
  if (!f.stats_file.empty()) {
    c.path = f.stats_file;
    c.truncate = true;
  } else if (f.stats) {
    c.path = "-";
  }
  if (f.stats_interval) c.interval_seconds = *f.stats_interval;
  return c;
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
BenchResult run_bench(Source& loader, int64_t first_epoch, int64_t images, bool digest,
                      StatsFileWriter* stats_log = nullptr) {
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
    STOKER_CHECK_ARG(in_epoch > 0,
                     "the sampler gives this rank no batch (drop mode on a tiny set?)");
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
                 StatsFileWriter& stats_log);

int cmd_bench(const BenchFlags& f) {
  STOKER_CHECK_ARG(f.decode != "gpu" || f.device == "cuda", "--decode gpu needs --device cuda");
  const auto open_start = std::chrono::steady_clock::now();
  auto dataset = open_dataset(f.data, {}, io_config(f));
  const double open_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - open_start).count();
  BenchResult r;
  std::string device = "cpu";
  if (f.device == "cuda") {
#ifdef STOKER_HAVE_CUDA
    std::string why;
    STOKER_CHECK_ARG(cuda::available(&why), "--device cuda: no usable GPU: {}", why);
    cuda::GpuLoader gpu(dataset, loader_config(f), f.gpu,
                        cuda::GpuDecodeConfig{cuda::parse_decode_on(f.decode), f.jpeg_backend});
    const cuda::AugmenterStats decoding = gpu.augmenter_stats();
    device = fmt::format("cuda:{} {}, decode {}", f.gpu, cuda::device_name(f.gpu),
                         !decoding.gpu_decode        ? "cpu"
                         : decoding.hardware_decoder ? "gpu (hardware decoder)"
                                                     : "gpu (hybrid)");
    GpuSource source{gpu};
    StatsFileWriter stats_log(gpu.host(), stats_file_config(f));
    r = run_bench(source, f.epoch, f.images, f.digest, &stats_log);
    return report_bench(f, *dataset, gpu.host(), r, open_seconds, device, stats_log);
#else
    STOKER_THROW_ARG(
        "--device cuda: this stoker was built without CUDA (install the CUDA toolkit and "
        "configure with -DSTOKER_CUDA=ON)");
#endif
  }
  Loader loader(dataset, loader_config(f));
  StatsFileWriter stats_log(loader, stats_file_config(f));
  r = run_bench(loader, f.epoch, f.images, f.digest, &stats_log);
  return report_bench(f, *dataset, loader, r, open_seconds, device, stats_log);
}

int report_bench(const BenchFlags& f, const Dataset& dataset_ref, const Loader& loader_ref,
                 const BenchResult& r, double open_seconds, const std::string& device,
                 StatsFileWriter& stats_log) {
  const Dataset* dataset = &dataset_ref;
  const Loader* loader = &loader_ref;
  const auto& s = r.stats;
  std::optional<Diagnosis> diagnosis;
  stats_log.write_now();  // the last window (a no-op without --stats or a monitor)
  if (f.stats) {
    // The live verdict over the whole run (the per-interval lines carry the windows).
    diagnosis = diagnose_loader(*loader, f.measure_fixes);
  }
  // The rate counts what came after the first batch: with one batch there is nothing to count.
  const bool measured = r.batches >= 2;
  if (f.json) {
    nlohmann::json j = {
        {"images_per_second", measured ? nlohmann::json(rate(r)) : nlohmann::json()},
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
  if (measured) {
    fmt::print("  {:.0f} images/s ({} images in {:.2f} s after the first batch; {} batches)\n",
               rate(r), r.images, r.seconds, r.batches);
  } else {
    fmt::print(
        "  images/s: not measured: the run delivered {} batch(es), and the rate counts the "
        "batches after the first; give a smaller --batch, or --images above {} (epochs repeat "
        "as needed)\n",
        r.batches, 2 * f.batch);
  }
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

class Bench : public Command {
 public:
  explicit Bench(CLI::App& app) {
    cmd_ = app.add_subcommand(
        "bench", "measure images/s of the input pipeline on DATA and where the time goes");
    cmd_->add_option("DATA", f_.data, "image folder, file list or packed dataset")->required();
    add_loader_flags(*cmd_, f_);
    cmd_->add_option("--images", f_.images,
                     "run until this many images are delivered (default: one epoch)");
    cmd_->add_flag("--digest", f_.digest, "XXH3-64 of every delivered batch, in order");
    cmd_->add_flag("--json", f_.json, "one JSON line");
    cmd_->add_flag("--stats", f_.stats,
                   "live stats JSON lines (stderr or --stats-file) and the live verdict");
    cmd_->add_option("--stats-file", f_.stats_file, "write the stats lines here")->needs("--stats");
    cmd_->add_option("--stats-interval", f_.stats_interval,
                     "seconds between stats lines (default: $STOKER_STATS_INTERVAL, else 1)");
    cmd_->add_flag("!--no-measure-fixes", f_.measure_fixes,
                   "with --stats: do not measure the fixes on a sample of DATA");
    cmd_->add_option("--device", f_.device,
                     "where augmentation runs: cpu, or cuda (workers decode crop regions into "
                     "pinned memory, the GPU resizes, flips and normalises)")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    cmd_->add_option("--gpu", f_.gpu, "CUDA device index for --device cuda")->check(at_least(0));
    cmd_->add_option("--decode", f_.decode,
                     "with --device cuda: where JPEGs are decoded: cpu (the workers), gpu "
                     "(nvJPEG) or auto")
        ->check(CLI::IsMember({"cpu", "gpu", "auto"}));
    cmd_->add_option("--jpeg-backend", f_.jpeg_backend,
                     "with --decode gpu: auto, hardware or gpu_hybrid")
        ->check(CLI::IsMember({"auto", "hardware", "gpu_hybrid"}));
  }

  std::optional<int> run() override {
    if (!cmd_->parsed()) return std::nullopt;
    return cmd_bench(f_);
  }

 private:
  CLI::App* cmd_ = nullptr;
  BenchFlags f_;
};

}  // namespace

std::unique_ptr<Command> add_bench_command(CLI::App& app) { return std::make_unique<Bench>(app); }

}  // namespace stoker::cli
