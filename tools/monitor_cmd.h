// The monitor subcommand of the stoker CLI (stoker/monitor.h):
//   stoker monitor --out FILE [--interval S] [--gpu-source auto|nvml|nvidia-smi|none] -- CMD...
//
// Usage from tools/stoker.cc:
//   auto monitor_command = add_monitor_command(app);   // before CLI11_PARSE
//   CLI11_PARSE(app, argc, argv);
//   if (auto rc = monitor_command->run()) return *rc;
// The exit status is the command's; 127 when it cannot be started (like a shell), after a
// message on stderr.
#pragma once

#include <memory>
#include <optional>

namespace CLI {
class App;
}  // namespace CLI

namespace stoker {

class MonitorCommand {
 public:
  virtual ~MonitorCommand() = default;
  // After parsing: the exit status of `monitor` when it was given, else nullopt.
  virtual std::optional<int> run() = 0;
};

// Registers the subcommand on `app`; the returned object holds its flags and must outlive
// parsing.
std::unique_ptr<MonitorCommand> add_monitor_command(CLI::App& app);

}  // namespace stoker
