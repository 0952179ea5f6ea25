#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "command.h"
#include "diagnose/json.h"
#include "diagnose/report.h"
#include "stoker/capacity.h"
#include "stoker/error.h"
#include "stoker/telemetry.h"
#include "stoker/transform.h"
#include "util/check.h"
#include "validators.h"
#ifdef STOKER_HAVE_CUDA
#include "stoker/cuda.h"
#endif

namespace stoker::cli {
namespace {

#ifdef STOKER_HAVE_CUDA
// The capacity test's GPU setups: a GpuLoader (the diagnose layer does not link CUDA).
class MeasuredGpuLoader : public MeasuredLoader {
 public:
  MeasuredGpuLoader(std::shared_ptr<const Dataset> data, const LoaderConfig& config, int gpu,
                    cuda::DecodeOn decode)
      : gpu_(std::move(data), config, gpu, cuda::GpuDecodeConfig{decode, "auto"}) {}
  void set_epoch(int64_t epoch) override { gpu_.set_epoch(epoch); }
  bool next() override { return gpu_.next(0) != nullptr; }
  const Loader& host() const override { return gpu_.host(); }

 private:
  cuda::GpuLoader gpu_;
};
#endif

// The GPU setups' loader where this build has CUDA and a usable device; empty otherwise
// (run_capacity then refuses --device cuda).
// decode_on_gpu: the GPU decode's setups, empty where this build has no nvJPEG.
GpuLoaderFactory gpu_loader_factory(const std::string& device, bool decode_on_gpu = false) {
#ifdef STOKER_HAVE_CUDA
  if (device != "cuda") return {};
  if (decode_on_gpu && !cuda::gpu_decode_built()) return {};
  std::string why;
  STOKER_CHECK_ARG(cuda::available(&why), "--device cuda: no usable GPU: {}", why);
  const cuda::DecodeOn decode = decode_on_gpu ? cuda::DecodeOn::kGpu : cuda::DecodeOn::kCpu;
  return [decode](std::shared_ptr<const Dataset> data, const LoaderConfig& config, int gpu) {
    return std::make_unique<MeasuredGpuLoader>(std::move(data), config, gpu, decode);
  };
#else
  (void)device;
  (void)decode_on_gpu;
  return {};
#endif
}

// The capacity test as a page: demand against delivered per GPU count, GPU idle per setup.
Report capacity_html(const CapacityReport& r) {
  Report page;
  page.title = "stoker doctor: capacity for 1.." + std::to_string(r.rows.size()) + " GPUs";
  page.diagnosis = r.diagnosis;
  page.charts.push_back(capacity_chart(r));
  nlohmann::json series = nlohmann::json::array();
  for (size_t i = 0; i < r.setups.size(); ++i) {
    nlohmann::json x = nlohmann::json::array(), y = nlohmann::json::array();
    for (const auto& row : r.rows) {
      x.push_back(row.gpus);
      y.push_back(100.0 * row.gpu_idle[i]);
    }
    series.push_back({{"name", r.setups[i].name}, {"x", x}, {"y", y}, {"colour", i}});
  }
  page.charts.push_back({{"kind", "lines"},
                         {"title", "GPU idle time per GPU count"},
                         {"x_label", "GPUs"},
                         {"y_label", "GPU idle %"},
                         {"y_max", 100},
                         {"x_integer", true},
                         {"series", series}});
  // The numbers behind the charts, and what each setup needs to feed all the GPUs asked for.
  const int gpus = static_cast<int>(r.rows.size());
  const double demand = r.demand_per_gpu * gpus;
  page.table.push_back({"setup", "images/s", "CPU ms per image", "stored bytes per image",
                        fmt::format("GPUs fed (of {})", gpus),
                        fmt::format("cores to feed {} GPUs", gpus)});
  for (const SetupMeasurement& s : r.setups) {
    const int fed = r.demand_per_gpu > 0
                        ? static_cast<int>(std::min<double>(
                              gpus, std::floor(s.images_per_second / r.demand_per_gpu)))
                        : 0;
    page.table.push_back({s.name, fmt::format("{:.0f}", s.images_per_second),
                          fmt::format("{:.2f}", s.cpu_ms_per_image),
                          fmt::format("{}", s.bytes_per_image), std::to_string(fed),
                          fmt::format("{:.1f}", demand * s.cpu_ms_per_image / 1e3)});
  }
  page.metadata = run_metadata(command_line());
  page.notes.push_back(
      fmt::format("{}; {} images measured; {} threads on {} cores; demand {:.0f} "
                  "images/s per GPU",
                  r.data, r.sample, r.threads, r.cpus, r.demand_per_gpu));
  return page;
}

// Telemetry as a page: utilisation over time per GPU and of the CPUs.
Report telemetry_html(const Diagnosis& d, const nlohmann::json& series,
                      const std::vector<std::string>& files) {
  Report page;
  page.title = "stoker doctor: telemetry";
  page.diagnosis = d;
  nlohmann::json lines = nlohmann::json::array();
  for (const auto& gpu : series.value("gpus", nlohmann::json::array())) {
    lines.push_back({{"name", fmt::format("GPU {} util %", gpu["index"].get<int>())},
                     {"x", gpu["t"]},
                     {"y", gpu["util"]}});
  }
  if (series.contains("cpu") && !series["cpu"]["t"].empty()) {
    lines.push_back(
        {{"name", "CPU busy %"}, {"x", series["cpu"]["t"]}, {"y", series["cpu"]["busy"]}});
    lines.push_back(
        {{"name", "CPU iowait %"}, {"x", series["cpu"]["t"]}, {"y", series["cpu"]["iowait"]}});
  }
  page.charts.push_back({{"kind", "lines"},
                         {"title", "Utilisation over time"},
                         {"x_label", "seconds"},
                         {"y_label", "%"},
                         {"y_max", 100},
                         {"series", lines}});
  std::string list;
  for (const auto& f : files) list += (list.empty() ? "" : ", ") + f;
  page.notes.push_back("logs: " + list);
  page.metadata = run_metadata(command_line());
  return page;
}

class Doctor : public Command {
 public:
  explicit Doctor(CLI::App& app) {
    cmd_ = app.add_subcommand(
        "doctor",
        "name the scaling failure: measure the pipeline on a sample of DATA and plan 1..G GPUs");
    auto* data = cmd_->add_option("DATA", data_, "image folder, file list or packed dataset");
    auto* telemetry =
        cmd_->add_option("--telemetry", telemetry_,
                         "diagnose logs instead (- for standard input: a pasted message): "
                         "nvidia-smi tables, CSV or dmon, gpustat, mpstat, sar -u, vmstat, "
                         "training-loop Time/Data lines, Lightning profiles, topo -m, stoker "
                         "stats lines or stoker monitor logs")
            ->expected(1, -1);
    data->excludes(telemetry);
    cmd_->add_option("--gpus", gpus_, "plan for 1..G GPUs")->check(at_least(1));
    auto* rate =
        cmd_->add_option("--gpu-rate", gpu_rate_, "images/s one GPU trains on")->check(above(0));
    auto* step =
        cmd_->add_option("--step-ms", step_ms_, "one training step's time in ms")->check(above(0));
    auto* batch = cmd_->add_option("--batch", batch_, "batch size per GPU (with --step-ms)")
                      ->check(at_least(1));
    rate->excludes(step);
    step->needs(batch);
    batch->needs(step);
    cmd_->add_option("--sample", sample_, "images of DATA to measure on")->check(at_least(1));
    cmd_->add_option("--seconds", seconds_, "measuring time per setup")->check(above(0));
    cmd_->add_option("--threads", threads_, "worker threads (default: cores available)")
        ->check(at_least(0));
    cmd_->add_option("--size", size_, "output side of the job's RandomResizedCrop")
        ->check(at_least(1));
    cmd_->add_flag("--no-fixes", no_fixes_, "measure the data as is only");
    cmd_->add_option("--cpu-node-cores", cpu_node_cores_,
                     "also plan CPU-only nodes of this many cores to decode for the GPUs "
                     "(stoker.ray), from the rate per core measured here")
        ->check(at_least(1));
    cmd_->add_option("--device", device_,
                     "cuda: measure every setup with GPU augmentation, and the JPEG setups with "
                     "the GPU decode too where the build has nvJPEG (CUDA builds)")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    cmd_->add_option("--gpu", gpu_, "CUDA device index for --device cuda")->check(at_least(0));
    cmd_->add_flag("--json", json_, "one JSON document instead of text");
    cmd_->add_option("--html", html_, "also write a self-contained HTML report with charts");
  }

  std::optional<int> run() override {
    if (!cmd_->parsed()) return std::nullopt;
    if (data_ == "-") telemetry_.insert(telemetry_.begin(), "-");  // a pasted message
    if (!telemetry_.empty()) return run_telemetry();
    STOKER_CHECK_ARG(!data_.empty(), "doctor: give DATA (and --gpus with --gpu-rate or --step-ms)");
    STOKER_CHECK_ARG(gpu_rate_ > 0 || step_ms_ > 0,
                     "doctor: give the GPU demand: --gpu-rate IMAGES_PER_S, or --step-ms MS with "
                     "--batch B");
    CapacityConfig o;
    o.gpus = gpus_;
    o.demand_per_gpu = gpu_rate_ > 0 ? gpu_rate_ : batch_ / (step_ms_ / 1e3);
    o.sample = sample_;
    o.seconds = seconds_;
    o.threads = threads_;
    o.transform.size = size_;
    o.measure_fixes = !no_fixes_;
    o.cpu_node_cores = cpu_node_cores_;
    o.device = device_;
    o.gpu = gpu_;
    o.gpu_loader = gpu_loader_factory(device_);
    o.gpu_decode_loader = gpu_loader_factory(device_, true);
    auto dataset = open_dataset(data_);
    const CapacityReport report = run_capacity(*dataset, o);
    if (!html_.empty()) write_html(capacity_html(report), html_);
    if (json_) {
      fmt::print("{}\n", json_text(to_json(report), 2));
    } else {
      fmt::print("{}", format_capacity(report));
    }
    return 0;
  }

 private:
  int run_telemetry() {
    const Telemetry telemetry = read_telemetry_files(telemetry_);
    const Diagnosis d = diagnose_telemetry(telemetry);
    const nlohmann::json series = telemetry_series(telemetry);
    if (!html_.empty()) write_html(telemetry_html(d, series, telemetry_), html_);
    if (json_) {
      nlohmann::json j = to_json(d);
      j["series"] = series;
      fmt::print("{}\n", json_text(j, 2));
    } else {
      fmt::print("{}", format_diagnosis(d));
    }
    return 0;
  }

  CLI::App* cmd_ = nullptr;
  std::vector<std::string> telemetry_;
  std::string data_;
  int gpus_ = 1;
  double gpu_rate_ = 0;
  double step_ms_ = 0;
  int batch_ = 0;
  int sample_ = 200;
  double seconds_ = 2.0;
  int threads_ = 0;
  int size_ = 224;
  bool no_fixes_ = false;
  int cpu_node_cores_ = 0;
  bool json_ = false;
  std::string html_;
  std::string device_ = "cpu";
  int gpu_ = 0;
};

}  // namespace

std::unique_ptr<Command> add_doctor_command(CLI::App& app) { return std::make_unique<Doctor>(app); }

}  // namespace stoker::cli
