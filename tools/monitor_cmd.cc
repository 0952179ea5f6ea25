// stoker monitor: flags -> stoker/monitor.h.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "command.h"
#include "stoker/error.h"
#include "stoker/monitor.h"
#include "validators.h"

namespace stoker::cli {
namespace {

class Monitor : public Command {
 public:
  explicit Monitor(CLI::App& app) {
    cmd_ = app.add_subcommand(
        "monitor",
        "run CMD while sampling CPU (/proc/stat) and GPU utilisation (NVML, else nvidia-smi) "
        "into FILE, which `stoker doctor --telemetry FILE` reads; exits with CMD's status");
    cmd_->add_option("--out", options_.out, "the log to write (JSON lines)")->required();
    cmd_->add_option("--interval", options_.interval, "seconds between samples (default 1)")
        ->check(between(0.05, 3600.0));
    const std::map<std::string, GpuSource> sources = {{"auto", GpuSource::kAuto},
                                                      {"nvml", GpuSource::kNvml},
                                                      {"nvidia-smi", GpuSource::kNvidiaSmi},
                                                      {"none", GpuSource::kNone}};
    cmd_->add_option("--gpu-source", options_.gpu_source,
                     "auto (NVML, else nvidia-smi, else none), nvml, nvidia-smi or none")
        ->transform(CLI::CheckedTransformer(sources));
    cmd_->add_option("command", options_.command,
                     "the command to run (after --, so that its options are its own)")
        ->required();
  }

  std::optional<int> run() override {
    if (!cmd_->parsed()) return std::nullopt;
    try {
      return run_monitor(options_);
    } catch (const Error& e) {
      std::fprintf(stderr, "stoker %s\n", e.message().c_str());
      return 127;
    }
  }

 private:
  CLI::App* cmd_ = nullptr;
  MonitorConfig options_;
};

}  // namespace

std::unique_ptr<Command> add_monitor_command(CLI::App& app) {
  return std::make_unique<Monitor>(app);
}

}  // namespace stoker::cli
