// stoker monitor: runs a command, passes its signals on, and samples CPU and GPU utilisation
// into the log the doctor reads while it runs (the recorder: stoker/monitor.h). The process
// handling lives here, in the command, not in the library.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "command.h"
#include "stoker/error.h"
#include "stoker/monitor.h"
#include "util/check.h"
#include "util/env_vars.h"
#include "validators.h"

extern char** environ;

namespace stoker::cli {
namespace {

volatile sig_atomic_t g_child = 0;

// Passes SIGINT/SIGTERM on to the command, unless the kernel sent it (a terminal's Ctrl-C goes
// to the whole foreground process group, the command included).
void forward_signal(int sig, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code > 0) return;
  const pid_t child = g_child;
  if (child > 0) ::kill(child, sig);
}

class SignalForwarding {
 public:
  SignalForwarding() {
    struct sigaction sa {};
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalForwarding() {
    g_child = 0;
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// Runs CMD as our child, tied to us: when this process dies, even by SIGKILL (which forwards
// nothing), the kernel sends CMD a SIGTERM (PR_SET_PDEATHSIG), so that a killed monitor leaves
// no orphaned training job. posix_spawn cannot set that, hence fork + exec, with only
// async-signal-safe calls in between: the program is found on PATH before the fork.
pid_t spawn_tied_to_us(const std::vector<std::string>& command, std::vector<char*>& argv) {
  std::string program = command[0];
  if (program.find('/') == std::string::npos) {
    const std::string dirs = util::env_string("PATH", "/usr/local/bin:/usr/bin:/bin");
    std::string found;
    size_t begin = 0;
    while (found.empty() && begin <= dirs.size()) {
      const size_t end = std::min(dirs.find(':', begin), dirs.size());
      const std::string dir = end > begin ? dirs.substr(begin, end - begin) : ".";
      const std::string candidate = dir + "/" + program;
      if (::access(candidate.c_str(), X_OK) == 0) found = candidate;
      begin = end + 1;
    }
    STOKER_CHECK_ARG(!found.empty(), "monitor: cannot run '{}': not found on PATH", program);
    program = found;
  }
  const pid_t parent = ::getpid();
  int report[2];
  STOKER_CHECK(::pipe2(report, O_CLOEXEC) == 0, "monitor: pipe: {}", std::strerror(errno));
  const pid_t child = ::fork();
  if (child < 0) {
    const int error = errno;
    ::close(report[0]);
    ::close(report[1]);
    STOKER_THROW("monitor: cannot start '{}': fork: {}", command[0], std::strerror(error));
  }
  if (child == 0) {
    ::close(report[0]);
    // The parent may have died between fork and prctl: then nobody would send the signal.
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != parent) ::_exit(127);
    ::execve(program.c_str(), argv.data(), environ);
    const int error = errno;
    [[maybe_unused]] const ssize_t n = ::write(report[1], &error, sizeof(error));
    ::_exit(127);
  }
  ::close(report[1]);
  int error = 0;
  ssize_t n;
  do {
    n = ::read(report[0], &error, sizeof(error));  // EOF: exec succeeded (the pipe closed)
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == sizeof(error)) {
    ::waitpid(child, nullptr, 0);
    STOKER_THROW_ARG("monitor: cannot run '{}': {}", command[0], std::strerror(error));
  }
  return child;
}

// Runs the command to the end while the recorder samples; returns its exit status (128 + N when
// signal N ended it, like a shell). The command inherits stdin, stdout, stderr and the
// environment, with STOKER_STATS_FILE set to OUT.stats.jsonl (unless already set): every stoker
// loader inside it appends its stats lines there (stoker/loader_stats.h). SIGINT and SIGTERM
// sent to the monitor by another process (kill, a scheduler) are passed on to it (a terminal's
// Ctrl-C reaches both already).
int run_monitor(const MonitorConfig& config, const std::vector<std::string>& command) {
  STOKER_CHECK_ARG(!command.empty(), "monitor: no command to run");
  TelemetryRecorder recorder(config);
  // Any stoker loader inside CMD writes its stats lines next to the log (the loader honours
  // STOKER_STATS_FILE), so that the doctor sees the input pipeline beside CPU and GPU. A
  // STOKER_STATS_FILE the caller set already is left alone.
  const std::optional<std::string> preset = util::env_text(util::kStatsFile);
  const std::string stats_file = preset.value_or(config.out + ".stats.jsonl");
  if (!preset) {
    std::remove(stats_file.c_str());  // this run's lines only
    ::setenv(util::kStatsFile, stats_file.c_str(), 1);
  }
  recorder.start(command, stats_file);

  // A parent that ignores SIGCHLD would make the kernel reap CMD behind our back (waitpid:
  // ECHILD) and lose its exit status.
  ::signal(SIGCHLD, SIG_DFL);
  SignalForwarding forwarding;
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t child = spawn_tied_to_us(command, argv);
  g_child = child;

  using SteadyClock = std::chrono::steady_clock;
  const auto interval = std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::duration<double>(config.interval));
  auto last = SteadyClock::now();
  auto next = last + interval;
  int status = 0;
  while (true) {
    const pid_t r = ::waitpid(child, &status, WNOHANG);
    if (r == child) break;
    if (r < 0 && errno != EINTR) STOKER_THROW("monitor: waitpid: {}", std::strerror(errno));
    const auto now = SteadyClock::now();
    if (now >= next && recorder.logging()) {
      recorder.sample();
      last = SteadyClock::now();
      next += interval;
      if (next < last) next = last + interval;  // sampling was slow
      continue;
    }
    const auto poll =
        std::chrono::duration_cast<SteadyClock::duration>(std::chrono::milliseconds(20));
    std::this_thread::sleep_for(
        recorder.logging() ? std::min<SteadyClock::duration>(next - now, poll) : poll);
  }
  g_child = 0;
  // A last, shorter sample so that short commands are measured too.
  if (SteadyClock::now() - last >= std::chrono::milliseconds(50)) recorder.sample();
  const int exit_status = WIFEXITED(status)     ? WEXITSTATUS(status)
                          : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                                : 1;
  recorder.finish(exit_status,
                  WIFSIGNALED(status) ? std::optional<int>(WTERMSIG(status)) : std::nullopt);
  return exit_status;
}

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
    cmd_->add_option("command", command_,
                     "the command to run (after --, so that its options are its own)")
        ->required();
  }

  std::optional<int> run() override {
    if (!cmd_->parsed()) return std::nullopt;
    try {
      return run_monitor(options_, command_);
    } catch (const Error& e) {
      std::fprintf(stderr, "stoker %s\n", e.message().c_str());
      return 127;
    }
  }

 private:
  CLI::App* cmd_ = nullptr;
  MonitorConfig options_;
  std::vector<std::string> command_;
};

}  // namespace

std::unique_ptr<Command> add_monitor_command(CLI::App& app) {
  return std::make_unique<Monitor>(app);
}

}  // namespace stoker::cli
