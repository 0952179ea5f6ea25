// stoker demo: a photo-like set (generated once), a naive configuration starving simulated GPUs,
// stoker's configuration feeding them, and the doctor's verdict on each.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "command.h"
#include "loader_flags.h"
#include "stoker/dataset.h"
#include "stoker/diagnose.h"
#include "stoker/loader.h"
#include "stoker/loader_stats.h"
#include "stoker/packed.h"
#include "synth.h"
#include "validators.h"

namespace stoker::cli {
namespace {

struct DemoConfig {
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

DemoRun feed_simulated_gpus(Loader& loader, const DemoConfig& o) {
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

int cmd_demo(BenchFlags f, const DemoConfig& o) {
  const std::filesystem::path data = o.dir;
  const auto stamp = data / ".stoker-synth";
  const std::string want = fmt::format("images={} v1", o.images);
  std::string have;
  if (std::ifstream in(stamp); in) std::getline(in, have);
  if (have != want) {
    fmt::print("demo: generating {} photo-like 0.3-megapixel JPEGs in {} ...\n", o.images, o.dir);
    std::filesystem::remove_all(data);
    synthesize_image_folder(data, SynthConfig{.images = o.images});
    std::ofstream(stamp) << want << "\n";
  }
  const IoConfig io = io_config(f);
  auto dataset = open_dataset(data, {}, io);
  const std::filesystem::path packed_dir = o.dir + "-raw256";
  PackConfig pack;
  pack.mode = PackMode::kRaw;
  pack.max_side = 256;
  pack.replace = true;  // the demo's own copy: a set generated anew replaces its old pack
  pack_dataset(*dataset, o.dir, packed_dir, pack);  // a no-op once the pack is complete
  auto packed = open_packed(packed_dir, io);

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

class Demo : public Command {
 public:
  explicit Demo(CLI::App& app) {
    flags_.batch = 64;
    cmd_ = app.add_subcommand(
        "demo",
        "a naive pipeline starving simulated GPUs, stoker's feeding them, and the verdicts");
    cmd_->add_option("--dir", options_.dir, "where the demo data set is generated");
    cmd_->add_option("--images", options_.images, "images in the demo set")->check(at_least(1));
    cmd_->add_option("--gpus", options_.gpus, "simulated GPUs")->check(at_least(1));
    cmd_->add_option("--gpu-rate", options_.gpu_rate, "images/s of one simulated GPU")
        ->check(above(0));
    cmd_->add_option("--seconds", options_.seconds, "seconds per configuration")->check(above(0));
    add_loader_flags(*cmd_, flags_);
  }

  std::optional<int> run() override {
    if (!cmd_->parsed()) return std::nullopt;
    return cmd_demo(flags_, options_);
  }

 private:
  CLI::App* cmd_ = nullptr;
  BenchFlags flags_;
  DemoConfig options_;
};

}  // namespace

std::unique_ptr<Command> add_demo_command(CLI::App& app) { return std::make_unique<Demo>(app); }

}  // namespace stoker::cli
