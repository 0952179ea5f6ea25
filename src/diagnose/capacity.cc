#include "stoker/capacity.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "diagnose/json.h"
#include "stoker/env.h"
#include "stoker/error.h"
#include "stoker/loader_stats.h"
#include "stoker/packed.h"
#include "stoker/rng.h"
#include "util/check.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

// A view of some samples of another dataset, in the given order.
class SubsetDataset : public Dataset {
 public:
  SubsetDataset(const Dataset& parent, std::vector<int64_t> indices)
      : parent_(parent), indices_(std::move(indices)) {}
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  int64_t label(int64_t i) const override { return parent_.label(at(i)); }
  std::string name(int64_t i) const override { return parent_.name(at(i)); }
  void read(int64_t i, std::vector<uint8_t>& out) const override { parent_.read(at(i), out); }
  const std::vector<std::string>& classes() const override { return parent_.classes(); }
  std::string fingerprint() const override { return parent_.fingerprint(); }
  std::string describe() const override {
    return fmt::format("{} samples of {}", indices_.size(), parent_.describe());
  }

 private:
  int64_t at(int64_t i) const { return indices_[static_cast<size_t>(i)]; }
  const Dataset& parent_;
  std::vector<int64_t> indices_;
};

// A non-owning shared_ptr for datasets that outlive the loader using them.
std::shared_ptr<const Dataset> borrow(const Dataset& d) {
  return std::shared_ptr<const Dataset>(&d, [](const Dataset*) {});
}

// Samples spread over the data set (a fixed permutation's prefix), so every class shows up.
// Evaluated position by position: no table of the whole data set's size.
std::vector<int64_t> pick_sample(int64_t size, int sample) {
  const EpochPermutation perm(0x5EED5A3B1Eull, 0, size);
  std::vector<int64_t> out(static_cast<size_t>(std::min<int64_t>(size, sample)));
  for (size_t i = 0; i < out.size(); ++i) out[i] = perm(static_cast<int64_t>(i));
  return out;
}

// Throughput of a loader over `data`, after one warm-up epoch. `Source` is a Loader or a
// GpuLoader (whose host() loader counts the CPU work).
template <typename Source>
SetupMeasurement measure_source(Source& loader, const Loader& host, const CapacityConfig& o,
                                std::string name, std::string action) {
  loader.set_epoch(0);
  while (loader.next()) {
  }
  StatsSampler sampler(host);
  sampler.sample();
  const auto start = std::chrono::steady_clock::now();
  for (int64_t epoch = 1;; ++epoch) {
    loader.set_epoch(epoch);
    while (loader.next()) {
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed >= o.seconds && epoch >= 2) break;
  }
  const LoaderStats before = sampler.last_stats();
  sampler.sample();
  const LoaderStats& after = sampler.last_stats();
  const PipelineWindow& w = sampler.last_window();
  SetupMeasurement m;
  m.name = std::move(name);
  m.action = std::move(action);
  m.images_per_second = w.images_per_second();
  const double cpu = (after.cpu.read + after.cpu.decode + after.cpu.augment) -
                     (before.cpu.read + before.cpu.decode + before.cpu.augment);
  m.cpu_ms_per_image = w.images > 0 ? 1e3 * cpu / static_cast<double>(w.images) : 0.0;
  m.wait_fraction = w.wait_fraction;
  return m;
}

LoaderConfig measuring_config(const Dataset& data, const CapacityConfig& o) {
  LoaderConfig config;
  config.batch_size = static_cast<int>(std::min<int64_t>(o.batch, data.size()));
  config.threads = o.threads;
  config.rank = 0;
  config.world_size = 1;
  config.transform = o.transform;
  // A bad file in the sample is skipped (and costs nothing), as a job that trains through
  // bad files would; the capacity is what the good ones cost.
  config.bad_samples = BadSamplePolicy::kSkip;
  return config;
}

SetupMeasurement measure(const Dataset& data, const CapacityConfig& o, std::string name,
                         std::string action, bool gpu_decode = false) {
  if (gpu_decode || o.device == "cuda") {
    const GpuLoaderFactory& make = gpu_decode ? o.gpu_decode_loader : o.gpu_loader;
    const std::unique_ptr<MeasuredLoader> gpu =
        make(borrow(data), measuring_config(data, o), o.gpu);
    return measure_source(*gpu, gpu->host(), o,
                          name + (gpu_decode ? " + GPU decode" : " + GPU augmentation"),
                          action + (action.empty() ? "" : ", ") +
                              (gpu_decode ? "device='cuda', decode='gpu'" : "device='cuda'"));
  }
  Loader loader(borrow(data), measuring_config(data, o));
  return measure_source(loader, loader, o, std::move(name), std::move(action));
}

int64_t stored_bytes(const Dataset& data) {
  int64_t total = 0;
  std::vector<uint8_t> bytes;
  for (int64_t i = 0; i < data.size(); ++i) {
    data.read(i, bytes);
    total += static_cast<int64_t>(bytes.size());
  }
  return total;
}

// A temporary folder that is removed with this object.
struct WorkDir {
  explicit WorkDir(const fs::path& wanted) {
    if (!wanted.empty()) {
      path = wanted;
      fs::create_directories(path);
      return;
    }
    std::string templ = (fs::temp_directory_path() / "stoker-doctor-XXXXXX").string();
    STOKER_CHECK(::mkdtemp(templ.data()) != nullptr, "cannot create a temporary folder in {}",
                 fs::temp_directory_path().string());
    path = templ;
    owned = true;
  }
  ~WorkDir() {
    std::error_code ec;
    if (owned) fs::remove_all(path, ec);
  }
  fs::path path;
  bool owned = false;
};

std::vector<SetupMeasurement> measure_setups(const Dataset& data, const CapacityConfig& o,
                                             int64_t& sample_size) {
  SubsetDataset subset(data, pick_sample(data.size(), o.sample));
  sample_size = subset.size();
  std::vector<SetupMeasurement> setups;
  setups.push_back(measure(subset, o, "as is", ""));
  setups.back().bytes_per_image = stored_bytes(subset) / std::max<int64_t>(1, subset.size());
  const bool gpu_decode = o.device == "cuda" && o.gpu_decode_loader;
  if (gpu_decode) {
    setups.push_back(measure(subset, o, "as is", "", true));
    setups.back().bytes_per_image = setups.front().bytes_per_image;
  }
  if (!o.measure_fixes) return setups;
  WorkDir work(o.work_dir);
  struct Variant {
    PackMode mode;
    const char* name;
    const char* action;
  };
  for (const Variant& v : {Variant{PackMode::kJpeg, "packed jpeg 256",
                                   "stoker pack DATA OUT --mode jpeg --max-side 256 --quality 90"},
                           Variant{PackMode::kRaw, "packed raw 256",
                                   "stoker pack DATA OUT --mode raw --max-side 256"}}) {
    PackConfig pack;
    pack.mode = v.mode;
    pack.max_side = 256;
    pack.quality = 90;
    pack.threads = o.threads;
    pack.skip_bad_samples = true;
    pack.replace = true;  // the doctor's scratch folder: another sample replaces the last one
    const fs::path out = work.path / to_string(v.mode);
    const PackResult packed = pack_dataset(subset, "doctor sample", out, pack);
    auto packed_data = open_packed(out);
    const int64_t bytes_per_image = packed.bytes / std::max<int64_t>(1, packed.records);
    setups.push_back(measure(*packed_data, o, v.name, v.action));
    setups.back().bytes_per_image = bytes_per_image;
    if (gpu_decode && v.mode == PackMode::kJpeg) {
      setups.push_back(measure(*packed_data, o, v.name, v.action, true));
      setups.back().bytes_per_image = bytes_per_image;
    }
  }
  return setups;
}

Fix measured_fix(const SetupMeasurement& s, const SetupMeasurement& base, int64_t sample,
                 int threads) {
  Fix fix;
  fix.action = s.action;
  fix.reason = fmt::format("{:.2f} ms of CPU per image instead of {:.2f}; {} bytes per image",
                           s.cpu_ms_per_image, base.cpu_ms_per_image, s.bytes_per_image);
  fix.images_per_second = s.images_per_second;
  fix.speedup = base.images_per_second > 0 ? s.images_per_second / base.images_per_second : 0.0;
  fix.measured_on = fmt::format("{} of your images, {} threads", sample, threads);
  return fix;
}

// The measured setups that beat `base`, fastest first.
std::vector<Fix> measured_fixes(const std::vector<SetupMeasurement>& setups, int64_t sample,
                                int threads) {
  std::vector<const SetupMeasurement*> better;
  for (size_t i = 1; i < setups.size(); ++i) {
    if (setups[i].images_per_second > setups[0].images_per_second) better.push_back(&setups[i]);
  }
  std::sort(better.begin(), better.end(),
            [](auto* a, auto* b) { return a->images_per_second > b->images_per_second; });
  std::vector<Fix> fixes;
  for (const auto* s : better) fixes.push_back(measured_fix(*s, setups[0], sample, threads));
  return fixes;
}

Fix gpu_augmentation_fix() {
  Fix fix;
  fix.action = "GPU augmentation and decode (device='cuda', decode='gpu'; --device cuda)";
  fix.reason =
      "the CPU only decodes (or copies raw pixels); crop, resize, normalise on the GPU; with "
      "decode='gpu' nvJPEG decodes the JPEGs there too, the CPU only reads and checks them";
  fix.measured_on = "not measured here: needs a CUDA build and a GPU";
  return fix;
}

}  // namespace

CapacityReport run_capacity(const Dataset& data, const CapacityConfig& o) {
  STOKER_CHECK_ARG(o.gpus >= 1, "doctor: --gpus must be at least 1 (got {})", o.gpus);
  STOKER_CHECK_ARG(o.demand_per_gpu > 0 && std::isfinite(o.demand_per_gpu),
                   "doctor: the GPU demand must be a positive number (got {} images/s)",
                   o.demand_per_gpu);
  STOKER_CHECK_ARG(o.sample >= 1, "doctor: the sample must hold at least 1 image (got {})",
                   o.sample);
  STOKER_CHECK_ARG(o.seconds > 0, "doctor: the measuring time must be positive");
  STOKER_CHECK_ARG(o.device == "cpu" || o.device == "cuda", "doctor: unknown device '{}'",
                   o.device);
  STOKER_CHECK_ARG(o.device != "cuda" || o.gpu_loader,
                   "--device cuda: this stoker was built without CUDA");
  CapacityReport r;
  r.data = data.describe();
  r.cpus = available_cpus();
  r.threads = o.threads > 0 ? o.threads : r.cpus;
  r.demand_per_gpu = o.demand_per_gpu;
  CapacityConfig options = o;
  options.threads = r.threads;
  int64_t sample = 0;
  r.setups = measure_setups(data, options, sample);
  r.sample = static_cast<int>(sample);
  for (int g = 1; g <= o.gpus; ++g) {
    CapacityRow row;
    row.gpus = g;
    row.demand = g * o.demand_per_gpu;
    for (const auto& s : r.setups) {
      const double delivered = std::min(row.demand, s.images_per_second);
      row.delivered.push_back(delivered);
      row.gpu_idle.push_back(1.0 - delivered / row.demand);
    }
    r.rows.push_back(row);
  }

  const SetupMeasurement& base = r.setups[0];
  const double demand = o.gpus * o.demand_per_gpu;
  // GPUs fed, in double first: a tiny demand must not overflow the int.
  const auto gpus_fed = [&](double rate) {
    return static_cast<int>(std::min<double>(o.gpus, std::floor(rate / o.demand_per_gpu)));
  };
  const int fed = gpus_fed(base.images_per_second);
  Diagnosis& d = r.diagnosis;
  d.numbers.capacity =
      CapacityNumbers{.demand_images_per_second = demand,
                      .delivered_images_per_second = std::min(demand, base.images_per_second),
                      .pipeline_images_per_second = base.images_per_second,
                      .gpu_idle_fraction = r.rows.back().gpu_idle[0],
                      .gpus_fed = std::min(fed, o.gpus)};
  d.evidence.push_back(fmt::format(
      "measured on {} images of {} with {} threads on {} cores: {:.0f} images/s as is "
      "({:.2f} ms of CPU per image)",
      r.sample, r.data, r.threads, r.cpus, base.images_per_second, base.cpu_ms_per_image));
  for (size_t i = 1; i < r.setups.size(); ++i) {
    d.evidence.push_back(fmt::format("{}: {:.0f} images/s ({:.2f} ms of CPU per image)",
                                     r.setups[i].name, r.setups[i].images_per_second,
                                     r.setups[i].cpu_ms_per_image));
  }
  if (base.images_per_second >= demand) {
    d.verdict = Verdict::kHealthy;
    d.summary = fmt::format(
        "{} GPUs need {:.0f} images/s; this machine's pipeline delivers {:.0f} as is ({:.0f} % "
        "headroom): the GPUs set the pace",
        o.gpus, demand, base.images_per_second, 100.0 * (base.images_per_second / demand - 1));
    return r;
  }
  d.verdict = Verdict::kInputBoundCpu;
  d.summary = fmt::format(
      "{} GPUs need {:.0f} images/s; this machine's pipeline delivers {:.0f} as is: the GPUs "
      "idle {:.0f} % of the time; it feeds {} GPU{} at {:.0f} images/s each",
      o.gpus, demand, base.images_per_second, 100.0 * r.rows.back().gpu_idle[0], fed,
      fed == 1 ? "" : "s", o.demand_per_gpu);
  d.fixes = measured_fixes(r.setups, r.sample, r.threads);
  for (Fix& fix : d.fixes) {
    fix.reason += fmt::format("; feeds {} of {} GPUs", gpus_fed(*fix.images_per_second), o.gpus);
  }
  if (o.device != "cuda") d.fixes.push_back(gpu_augmentation_fix());
  if (base.cpu_ms_per_image > 0) {
    Fix cores;
    cores.action = fmt::format("about {:.0f} cores for {} GPUs with the pipeline as is",
                               std::ceil(demand * base.cpu_ms_per_image / 1e3), o.gpus);
    cores.reason =
        fmt::format("{:.2f} ms of CPU per image x {:.0f} images/s", base.cpu_ms_per_image, demand);
    cores.measured_on = "estimate from the measured CPU cost";
    d.fixes.push_back(cores);
  }
  if (o.cpu_node_cores > 0 && r.threads > 0) {
    const double per_core = base.images_per_second / r.threads;
    const int nodes = cpu_nodes_needed(demand, base.images_per_second, per_core, o.cpu_node_cores);
    Fix beside;
    beside.action = fmt::format(
        "{} CPU-only node{} of {} cores beside the GPUs, decoding with stoker.ray (docs/ray.md)",
        nodes, nodes == 1 ? "" : "s", o.cpu_node_cores);
    beside.reason = fmt::format(
        "{:.0f} images/s per core measured here; {:.0f} images/s to make up beyond this "
        "machine's {:.0f} (the transport's cost not included: docs/perf.md, \"CPU nodes on Ray\")",
        per_core, demand - base.images_per_second, base.images_per_second);
    beside.measured_on = "estimate from the measured rate per core";
    d.fixes.push_back(beside);
  }
  return r;
}

int cpu_nodes_needed(double demand, double delivered_here, double per_core, int cores_per_node) {
  STOKER_CHECK_ARG(per_core > 0 && cores_per_node > 0,
                   "cpu_nodes_needed: the rate per core and the cores per node must be > 0");
  const double missing = demand - delivered_here;
  if (missing <= 0) return 0;
  return static_cast<int>(std::ceil(missing / (per_core * cores_per_node)));
}

void measure_fixes(Diagnosis& diagnosis, const Dataset& data, const LoaderConfig& config,
                   int sample) {
  STOKER_CHECK(sample >= 1, "diagnose: the sample must hold at least 1 image (got {})", sample);
  CapacityConfig o;
  o.sample = sample;
  o.threads = config.threads > 0 ? config.threads : available_cpus();
  o.transform = config.transform;
  o.batch = std::min(64, config.batch_size);
  int64_t measured = 0;
  const auto setups = measure_setups(data, o, measured);
  std::vector<Fix> fixes = measured_fixes(setups, measured, o.threads);
  for (Fix& fix : diagnosis.fixes) {
    if (fix.action.rfind("stoker pack", 0) != 0) fixes.push_back(std::move(fix));
  }
  diagnosis.fixes = std::move(fixes);
}

nlohmann::json to_json(const CapacityReport& r) {
  nlohmann::json setups = nlohmann::json::array();
  for (const auto& s : r.setups) {
    setups.push_back({{"name", s.name},
                      {"action", s.action},
                      {"images_per_second", s.images_per_second},
                      {"cpu_ms_per_image", s.cpu_ms_per_image},
                      {"bytes_per_image", s.bytes_per_image}});
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows) {
    rows.push_back({{"gpus", row.gpus},
                    {"demand", row.demand},
                    {"delivered", row.delivered},
                    {"gpu_idle", row.gpu_idle}});
  }
  nlohmann::json j = to_json(r.diagnosis);
  j["capacity"] = {{"data", r.data},
                   {"threads", r.threads},
                   {"cpus", r.cpus},
                   {"sample", r.sample},
                   {"demand_per_gpu", r.demand_per_gpu},
                   {"setups", setups},
                   {"rows", rows}};
  return j;
}

std::string format_capacity(const CapacityReport& r) {
  std::string out = fmt::format("stoker doctor: {} ({} images measured, {} threads, {} cores)\n\n",
                                r.data, r.sample, r.threads, r.cpus);
  out += fmt::format("{:>5} {:>9}", "GPUs", "demand");
  for (const auto& s : r.setups) out += fmt::format(" | {:>24}", s.name);
  out += "\n";
  out += fmt::format("{:>5} {:>9}", "", "images/s");
  for (size_t i = 0; i < r.setups.size(); ++i)
    out += fmt::format(" | {:>24}", "delivered  GPU idle");
  out += "\n";
  for (const auto& row : r.rows) {
    out += fmt::format("{:>5} {:>9.0f}", row.gpus, row.demand);
    for (size_t i = 0; i < r.setups.size(); ++i) {
      out += fmt::format(" | {:>13.0f} {:>8.0f} %", row.delivered[i], 100.0 * row.gpu_idle[i]);
    }
    out += "\n";
  }
  out += "\n" + format_diagnosis(r.diagnosis);
  return out;
}

}  // namespace stoker
