// The stoker command: no logic of its own, it wires the subcommands (command.h) to one CLI.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "stoker/error.h"
#include "stoker/version.h"

namespace stoker::cli {
namespace {

std::string g_command_line;

}  // namespace

const std::string& command_line() { return g_command_line; }

namespace {

int run(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool plain = arg.find_first_not_of(
                           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                           "_-./=:,+@%") == std::string::npos;
    if (!g_command_line.empty()) g_command_line += ' ';
    if (plain && !arg.empty()) {
      g_command_line += arg;
    } else {
      std::string quoted = "'";
      for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      g_command_line += quoted + "'";
    }
  }
  CLI::App app{"stoker: keeps every GPU of a training job fed"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "stoker " STOKER_VERSION_STRING);
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(add_bench_command(app));
  commands.push_back(add_demo_command(app));
  commands.push_back(add_synth_command(app));
  commands.push_back(add_pack_commands(app));
  commands.push_back(add_doctor_command(app));
  commands.push_back(add_monitor_command(app));
  CLI11_PARSE(app, argc, argv);
  for (const auto& command : commands) {
    if (auto rc = command->run()) return *rc;
  }
  return 2;
}

}  // namespace
}  // namespace stoker::cli

int main(int argc, char** argv) {
  try {
    return stoker::cli::run(argc, argv);
  } catch (const stoker::Error& e) {
    std::fprintf(stderr, "stoker: error: %s\n", e.message().c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stoker: error: %s\n", e.what());
    return 1;
  }
}
