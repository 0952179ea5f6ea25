// stoker monitor, driven through its command line (tools/monitor_cmd.cc): the command's exit
// status comes back, the log is what the doctor reads, the nvidia-smi fallback works (with a
// fake nvidia-smi first on PATH), and SIGTERM reaches the command.
#include <dlfcn.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "stoker/telemetry.h"
#include "util/test_util.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

class MonitorTest : public ::testing::Test {
 protected:
  void SetUp() override { log_ = (dir_ / "monitor.jsonl").string(); }

  // Runs `sh -c script` and returns its exit status.
  static int shell(const std::string& script) {
    const int status = std::system(script.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string monitor(const std::string& flags) const {
    return fmt::format("'{}' monitor --out '{}' {}", STOKER_MONITOR_CLI, log_, flags);
  }

  test::TempDir temp_{"monitor"};
  fs::path dir_ = temp_.path();
  std::string log_;
};

TEST_F(MonitorTest, ForwardsExitStatusAndWritesWhatTheDoctorReads) {
  EXPECT_EQ(shell(monitor("--interval 0.2 --gpu-source none -- sh -c 'sleep 1.1; exit 3'")), 3);
  const Telemetry t = read_telemetry_files({log_});
  ASSERT_EQ(t.files.size(), 1u);
  EXPECT_EQ(t.files[0].kind, TelemetryKind::kStokerMonitor);
  EXPECT_EQ(t.files[0].gpu_source, "none");
  EXPECT_EQ(t.files[0].exit_status, 3);
  size_t all = 0;
  for (const CpuSample& s : t.cpus) {
    if (s.cpu >= 0) continue;
    ++all;
    EXPECT_NEAR(s.busy + s.iowait + s.idle, 100.0, 0.05);
  }
  EXPECT_GE(all, 5u);  // every 0.2 s for 1.1 s, plus the last partial interval
  EXPECT_LE(all, 7u);
  EXPECT_TRUE(t.gpus.empty());
  // Without GPU samples the doctor says so rather than guessing.
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kUnknown);
}

// A stoker loader inside the monitored command writes its stats lines next to the log
// (STOKER_STATS_FILE); reading the log reads them too, one rank per loader.
TEST_F(MonitorTest, RecordsTheStatsLinesOfTheLoadersInsideTheCommand) {
  const std::string data = (dir_ / "data").string();
  ASSERT_EQ(shell(fmt::format("'{}' synth '{}' --images 24 --classes 2 --width 64 --height 48 "
                              ">/dev/null",
                              STOKER_MONITOR_CLI, data)),
            0);
  const std::string bench = fmt::format(
      "'{}' bench '{}' --batch 4 --size 16 --threads 1 --images 480 --stats-interval 0.05 "
      ">/dev/null",
      STOKER_MONITOR_CLI, data);
  ASSERT_EQ(shell(monitor("--interval 0.2 --gpu-source none -- sh -c \"" + bench + "\"")), 0);
  const std::string stats = log_ + ".stats.jsonl";
  ASSERT_TRUE(fs::exists(stats));
  const Telemetry t = read_telemetry_files({log_});
  ASSERT_EQ(t.files.size(), 2u);
  EXPECT_EQ(t.files[1].kind, TelemetryKind::kStokerStats);
  EXPECT_EQ(t.files[1].path, stats);
  ASSERT_FALSE(t.ranks.empty());
  EXPECT_EQ(t.ranks.back().rank, 0);
  EXPECT_GT(t.ranks.back().window.images, 0);
}

TEST_F(MonitorTest, ExitStatusOfSignalAndMissingCommand) {
  EXPECT_EQ(shell(monitor("--gpu-source none -- sh -c 'kill -9 $$'")), 128 + 9);
  const Telemetry t = read_telemetry_files({log_});
  EXPECT_EQ(t.files[0].exit_status, 137);
  EXPECT_EQ(shell(monitor("--gpu-source none -- /nonexistent/command 2>/dev/null")), 127);
  EXPECT_EQ(shell(monitor("--interval 0.01 -- true 2>/dev/null")), 105);  // CLI11: out of range
}

TEST_F(MonitorTest, FullDiskEndsSamplingNotTheJob) {
  // The log may not grow past 2 KiB (dash counts ulimit -f in 512-byte blocks; SIGXFSZ ignored
  // so that writes fail with EFBIG): the monitor warns, stops sampling, and the command runs
  // on to its own exit status. The log stays readable: the cut-off last line is skipped.
  const std::string script =
      fmt::format("trap '' XFSZ; ulimit -f 4; exec {} 2>'{}'",
                  monitor("--interval 0.05 --gpu-source none -- sh -c 'sleep 1; exit 5'"),
                  (dir_ / "stderr.txt").string());
  EXPECT_EQ(shell(script), 5);
  std::ifstream err(dir_ / "stderr.txt");
  const std::string message((std::istreambuf_iterator<char>(err)),
                            std::istreambuf_iterator<char>());
  EXPECT_NE(message.find("; no more samples"), std::string::npos) << message;
  EXPECT_LE(fs::file_size(log_), 2048u);
  const Telemetry t = read_telemetry_files({log_});
  EXPECT_EQ(t.files[0].kind, TelemetryKind::kStokerMonitor);
  EXPECT_FALSE(t.files[0].exit_status.has_value());  // the end line could not be written
}

TEST_F(MonitorTest, NvidiaSmiFallback) {
  if (void* nvml = ::dlopen("libnvidia-ml.so.1", RTLD_NOW)) {
    ::dlclose(nvml);
    GTEST_SKIP() << "NVML is present: auto would pick it";
  }
  // A fake nvidia-smi that answers only the query the monitor makes.
  const fs::path bin = dir_ / "bin";
  fs::create_directories(bin);
  {
    std::ofstream smi(bin / "nvidia-smi");
    smi << "#!/bin/sh\n"
           "[ \"$1\" = --query-gpu=index,utilization.gpu,utilization.memory,memory.used ] "
           "|| exit 9\n"
           "[ \"$2\" = --format=csv,noheader,nounits ] || exit 9\n"
           "echo '0, 55, 10, 1234'\n"
           "echo '1, [N/A], 5, 999'\n";
  }
  fs::permissions(bin / "nvidia-smi", fs::perms::owner_all);
  EXPECT_EQ(shell(fmt::format("PATH='{}':\"$PATH\" {}", bin.string(),
                              monitor("--interval 0.2 -- sleep 0.7"))),
            0);
  const Telemetry t = read_telemetry_files({log_});
  EXPECT_EQ(t.files[0].gpu_source, "nvidia-smi");
  ASSERT_GE(t.gpus.size(), 3u);  // GPU 1 reports [N/A]: no samples of it
  for (const GpuSample& s : t.gpus) {
    EXPECT_EQ(s.gpu, 0);
    EXPECT_DOUBLE_EQ(s.util, 55);
    EXPECT_DOUBLE_EQ(*s.memory_util, 10);
    EXPECT_DOUBLE_EQ(*s.memory_used_mib, 1234);
  }
  EXPECT_EQ(t.gpus[1].round, 1);
  // nvidia-smi asked for explicitly but missing: a clear failure.
  EXPECT_EQ(shell(fmt::format("PATH=/nonexistent {} 2>/dev/null",
                              monitor("--gpu-source nvidia-smi -- true"))),
            127);
}

TEST_F(MonitorTest, PassesSigtermToTheCommand) {
  // The command exits 7 on SIGTERM; the monitor, sent SIGTERM by another process, passes it on
  // and exits with the command's status.
  const std::string script =
      fmt::format("{} & pid=$!; sleep 0.8; kill -TERM $pid; wait $pid",
                  monitor("--interval 0.2 --gpu-source none -- sh -c "
                          "'trap \"exit 7\" TERM; while :; do sleep 0.05; done'"));
  EXPECT_EQ(shell(script), 7);
  const Telemetry t = read_telemetry_files({log_});
  EXPECT_EQ(t.files[0].exit_status, 7);
}

TEST_F(MonitorTest, AKilledMonitorTakesTheCommandWithIt) {
  // Before: SIGKILL of the monitor (which forwards nothing) left CMD running as an orphan. Now
  // the kernel sends CMD a SIGTERM when the monitor dies (PR_SET_PDEATHSIG). The command notes
  // the SIGTERM in a file; the script waits for that file (up to 20 s, an event, not a timing).
  const std::string got = (dir_ / "got-term").string();
  const std::string script = fmt::format(
      "{} & pid=$!; sleep 0.5; kill -KILL $pid; i=0; while [ ! -e '{}' ] && [ $i -lt 400 ]; do "
      "sleep 0.05; i=$((i + 1)); done; [ -e '{}' ]",
      monitor("--interval 0.2 --gpu-source none -- sh -c "
              "'trap \"touch " +
              got + "; exit 0\" TERM; while :; do sleep 0.05; done'"),
      got, got);
  EXPECT_EQ(shell(script), 0);
}

}  // namespace
}  // namespace stoker
