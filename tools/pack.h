// The pack, verify and inspect subcommands of the stoker CLI (packed datasets, stoker/packed.h).
//
// Usage from tools/stoker.cc:
//   auto pack_commands = add_pack_commands(app);   // before CLI11_PARSE
//   CLI11_PARSE(app, argc, argv);
//   if (auto rc = pack_commands->run()) return *rc;
// Library errors propagate as stoker::Error (main prints them), except verify's, which it
// reports itself ("verify: FAILED: ...") with exit status 1.
#pragma once

#include <memory>
#include <optional>

namespace CLI {
class App;
}  // namespace CLI

namespace stoker {

class PackCommands {
 public:
  virtual ~PackCommands() = default;
  // After parsing: the exit status of the pack/verify/inspect command that was given, or
  // nullopt when the command line chose another subcommand.
  virtual std::optional<int> run() = 0;
};

// Registers the three subcommands on `app`; the returned object holds their flags and must
// outlive parsing.
std::unique_ptr<PackCommands> add_pack_commands(CLI::App& app);

}  // namespace stoker
