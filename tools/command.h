// The subcommands of the stoker command. Each add_*() registers its subcommand and flags on
// `app` before parsing and returns the object that holds them (it must outlive parsing); after
// parsing, run() gives the exit status when that subcommand was the one given, else nullopt.
// Library errors propagate as stoker::Error (main prints them), except where a command says.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace stoker::cli {

// The command line this process was started with, as one shell-quoted string (for reports).
const std::string& command_line();

class Command {
 public:
  virtual ~Command() = default;
  virtual std::optional<int> run() = 0;
};

// stoker bench DATA [loader flags] [--images N] [--digest] [--json] [--stats ...]
// [--device cpu|cuda]: images/s of the input pipeline and where the time goes (bench.cc).
std::unique_ptr<Command> add_bench_command(CLI::App& app);

// stoker demo: a naive pipeline starving simulated GPUs, stoker's feeding them (demo.cc).
std::unique_ptr<Command> add_demo_command(CLI::App& app);

// stoker synth OUT: a deterministic photo-like JPEG image folder (synth.cc).
std::unique_ptr<Command> add_synth_command(CLI::App& app);

// stoker pack SRC OUT, stoker verify OUT, stoker inspect OUT (pack.cc). verify reports its
// own failure ("verify: FAILED: ...") with exit status 1.
std::unique_ptr<Command> add_pack_commands(CLI::App& app);

// stoker doctor DATA --gpus G (--gpu-rate R | --step-ms MS --batch B) [--json] [--html F],
// or stoker doctor --telemetry FILE... (doctor.cc).
std::unique_ptr<Command> add_doctor_command(CLI::App& app);

// stoker monitor --out FILE [--interval S] [--gpu-source ...] -- CMD...: the exit status is
// CMD's; 127 when it cannot be started (like a shell), after a message on stderr
// (monitor_cmd.cc).
std::unique_ptr<Command> add_monitor_command(CLI::App& app);

}  // namespace stoker::cli
