// The doctor subcommand of the stoker CLI (stoker/capacity.h, stoker/diagnose.h):
//   stoker doctor DATA --gpus G (--gpu-rate R | --step-ms MS --batch B) [--json] [--html F]
// Same pattern as pack.h: register before parsing, run() after.
#pragma once

#include <memory>
#include <optional>

namespace CLI {
class App;
}  // namespace CLI

namespace stoker {

class DoctorCommand {
 public:
  virtual ~DoctorCommand() = default;
  // After parsing: the exit status when `doctor` was given, else nullopt.
  virtual std::optional<int> run() = 0;
};

std::unique_ptr<DoctorCommand> add_doctor_command(CLI::App& app);

}  // namespace stoker
