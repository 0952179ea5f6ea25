// The stoker command: no logic of its own, it wires the subcommands (command.h) to one CLI.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "stoker/error.h"
#include "stoker/log.h"
#include "stoker/version.h"
#include "validators.h"

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
  // --help shows each option's default ("[256]") beside its type and range, for every
  // subcommand (they inherit option_defaults).
  app.option_defaults()->always_capture_default();
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_version_flag("--version", "stoker " STOKER_VERSION_STRING);
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(add_bench_command(app));
  commands.push_back(add_demo_command(app));
  commands.push_back(add_synth_command(app));
  commands.push_back(add_pack_commands(app));
  commands.push_back(add_doctor_command(app));
  commands.push_back(add_monitor_command(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ValidationError& e) {
    // CLI11 says "--batch: must be ≥ 1 (got 0)"; a sentence reads better.
    std::string message = e.what();
    const size_t colon = message.find(": must be");
    if (colon != std::string::npos) message.erase(colon, 1);
    std::fprintf(stderr, "stoker: %s\nRun with --help for more information.\n", message.c_str());
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
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
    std::fprintf(stderr, "stoker: error: %s\n", stoker::printable(e.message()).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stoker: error: %s\n", stoker::printable(e.what()).c_str());
    return 1;
  }
}
