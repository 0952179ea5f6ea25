// A stoker-like binary with only the monitor subcommand, for the monitor's tests: they drive
// the real command-line registration without depending on the rest of tools/stoker.cc.
#include <CLI/CLI.hpp>

#include "monitor_cmd.h"

int main(int argc, char** argv) {
  CLI::App app{"stoker (monitor only, for tests)"};
  app.require_subcommand(1);
  auto monitor = stoker::add_monitor_command(app);
  CLI11_PARSE(app, argc, argv);
  return monitor->run().value_or(2);
}
