// Reading telemetry (telemetry_read.cc and the parsers): kind detection, parsing of every kind
// (fixtures written like the tools' output, tests/fixtures/telemetry/make_fixtures.py), and
// malformed logs naming the right line.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "diagnose/test_util.h"
#include "stoker/error.h"
#include "stoker/monitor.h"
#include "stoker/telemetry.h"
#include "util/test_util.h"

namespace stoker {
namespace {

// The recorder without a command (a program recording its own run): its log is what the
// doctor reads as a stoker-monitor log, one "all CPUs" sample per sample() call.
TEST(TelemetryRecorderTest, WritesAMonitorLogTheDoctorReads) {
  test::TempDir dir("recorder");
  const std::string log = (dir.path() / "run.jsonl").string();
  {
    TelemetryRecorder recorder({.out = log, .interval = 0.5, .gpu_source = GpuSource::kNone});
    EXPECT_STREQ(recorder.gpu_source(), "none");
    recorder.start({"my-job", "--fast"}, "");
    for (int i = 0; i < 3; ++i) {
      const int64_t before = recorder.samples();
      // /proc/stat counts in clock ticks: spin until one has passed, so that a delta exists.
      volatile double sink = 0;
      for (int spin = 0; spin < 20'000'000; ++spin) sink = sink + spin;
      recorder.sample();
      EXPECT_EQ(recorder.samples(), before + 1);
    }
    recorder.finish(7, std::nullopt);
    EXPECT_TRUE(recorder.logging());
  }
  const Telemetry t = read_telemetry_files({log});
  ASSERT_EQ(t.files.size(), 1u);
  EXPECT_EQ(t.files[0].kind, TelemetryKind::kStokerMonitor);
  EXPECT_EQ(t.files[0].gpu_source, "none");
  EXPECT_EQ(t.files[0].exit_status, 7);
  const auto all =
      std::count_if(t.cpus.begin(), t.cpus.end(), [](const CpuSample& s) { return s.cpu < 0; });
  EXPECT_EQ(all, 3);
  EXPECT_TRUE(t.gpus.empty());
}

TEST(TelemetryRecorderTest, RefusesAnIntervalOutOfRangeAndAnUnwritableLog) {
  test::TempDir dir("recorder");
  try {
    TelemetryRecorder({.out = (dir.path() / "a.jsonl").string(), .interval = 0.01});
    FAIL() << "an interval of 0.01 s was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(e.message().find("0.01"), std::string::npos) << e.message();
  }
  const std::string unwritable = (dir.path() / "no-such-folder" / "a.jsonl").string();
  try {
    TelemetryRecorder({.out = unwritable, .gpu_source = GpuSource::kNone});
    FAIL() << "a log in a missing folder was accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find(unwritable), std::string::npos) << e.message();
  }
}

using test::count_cpu;
using test::fixture;
using test::parse;
using test::parse_error;
using test::read;
using test::starts_with;

// ---- kinds ---------------------------------------------------------------------------------

TEST(TelemetryKind, DetectedFromContentNotName) {
  const std::vector<std::pair<std::string, TelemetryKind>> cases = {
      {"input_bound_gpu.csv", TelemetryKind::kNvidiaSmiCsv},
      {"io_bound_gpu.csv", TelemetryKind::kNvidiaSmiCsv},
      {"thin_gpu.csv", TelemetryKind::kNvidiaSmiCsv},
      {"imbalance_dmon.txt", TelemetryKind::kNvidiaSmiDmon},
      {"comm_dmon.txt", TelemetryKind::kNvidiaSmiDmon},
      {"input_bound_mpstat.txt", TelemetryKind::kMpstat},
      {"mpstat_12h.txt", TelemetryKind::kMpstat},
      {"comm_sar.txt", TelemetryKind::kSar},
      {"sar_all_cpus.txt", TelemetryKind::kSar},
      {"io_bound_vmstat.txt", TelemetryKind::kVmstat},
      {"vmstat_plain.txt", TelemetryKind::kVmstat},
      {"vmstat_wide.txt", TelemetryKind::kVmstat},
      {"mpstat_sysstat12.txt", TelemetryKind::kMpstat},
      {"sar_u_all_sysstat12.txt", TelemetryKind::kSar},
      {"stats_straggler.jsonl", TelemetryKind::kStokerStats},
      {"healthy_monitor.jsonl", TelemetryKind::kStokerMonitor},
  };
  for (const auto& [name, kind] : cases) {
    const Telemetry t = read({name});
    ASSERT_EQ(t.files.size(), 1u);
    EXPECT_EQ(t.files[0].kind, kind) << name;
  }
  // The name plays no part.
  EXPECT_EQ(detect_telemetry_kind("# gpu   sm  mem\n# Idx    %    %\n    0   5   1\n", "x.csv"),
            TelemetryKind::kNvidiaSmiDmon);
  EXPECT_EQ(detect_telemetry_kind("\n\nindex, utilization.gpu [%]\n0, 5 %\n", "dmon.txt"),
            TelemetryKind::kNvidiaSmiCsv);
  // sar -u ALL has %usr too, but %steal before %irq.
  EXPECT_EQ(detect_telemetry_kind("01:03:03        CPU      %usr     %nice      %sys   %iowait "
                                  "   %steal      %irq     %soft    %guest    %gnice     %idle\n",
                                  "m"),
            TelemetryKind::kSar);
  EXPECT_STREQ(to_string(TelemetryKind::kStokerMonitor), "stoker-monitor");
}

TEST(TelemetryKind, UnknownNamesTheFile) {
  const std::string e = parse_error("hello world\nthis is a diary\n", "notes.txt");
  EXPECT_TRUE(starts_with(e, "notes.txt: not a telemetry log stoker reads")) << e;
  EXPECT_NE(e.find("'hello world'"), std::string::npos) << e;
  EXPECT_TRUE(starts_with(parse_error("\n  \n", "empty.log"), "empty.log: empty")) << "";
  EXPECT_TRUE(starts_with(parse_error("{\"loss\": 1.5}\n", "train.jsonl"), "train.jsonl: not a"));
  try {
    read_telemetry_files({"/nonexistent/gpu.csv"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "/nonexistent/gpu.csv: No such file or directory");
  }
}

// Telemetry files are read whole, so only regular files are: `doctor --telemetry /dev/zero`
// grew to 24 GB until the kernel killed it, and a FIFO without a writer would wait forever.
TEST(TelemetryKind, DevicesFifosAndFoldersAreRefusedNotRead) {
  const auto error_of_file = [](const std::string& path) {
    try {
      read_telemetry_files({path});
      return std::string("no error");
    } catch (const Error& e) {
      return e.message();
    }
  };
  EXPECT_EQ(error_of_file("/dev/zero"), "/dev/zero: not a regular file");
  const test::TempDir temp("telemetry_dir");
  const std::string dir = temp.path().string();
  EXPECT_EQ(error_of_file(dir), dir + ": is a directory");
  const std::string fifo = dir + "/gpu.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of_file(fifo), fifo + ": not a regular file");
}

// ---- parsing ------------------------------------------------------------------------------

TEST(TelemetryParse, NvidiaSmiCsvWithUnits) {
  const Telemetry t = read({"input_bound_gpu.csv"});
  ASSERT_EQ(t.gpus.size(), 24u);
  EXPECT_EQ(t.files[0].time_base, TimeBase::kAbsolute);
  const GpuSample& s = t.gpus[3];  // line 5: 2025/11/29 14:02:11.116, 1, 29 %, 9 %, 10278 MiB
  EXPECT_EQ(s.origin.line, 5);
  EXPECT_EQ(s.gpu, 1);
  EXPECT_EQ(s.round, 1);
  EXPECT_DOUBLE_EQ(s.util, 29);
  EXPECT_DOUBLE_EQ(*s.memory_util, 9);
  EXPECT_DOUBLE_EQ(*s.memory_used_mib, 10278);
  // 2025-11-29 is day 20421 since 1970.
  EXPECT_DOUBLE_EQ(s.time, 20421 * 86400.0 + 14 * 3600 + 2 * 60 + 11.116);
  EXPECT_EQ(t.cite(s.origin), fixture("input_bound_gpu.csv") +
                                  ":5: 2025/11/29 14:02:11.116, 1, 29 %, 9 %, 10278 MiB");
}

TEST(TelemetryParse, NvidiaSmiCsvNounitsWiderQueryAndNotAvailable) {
  const Telemetry t = read({"io_bound_gpu.csv"});
  ASSERT_EQ(t.gpus.size(), 12u);  // the [N/A] power draw of line 5 does not matter
  EXPECT_EQ(t.gpus[3].origin.line, 5);
  EXPECT_DOUBLE_EQ(t.gpus[3].util, 9);
  EXPECT_DOUBLE_EQ(*t.gpus[3].memory_used_mib, 30213);
  // [N/A] or [Not Supported] utilisation: no sample; subsets without index: one GPU.
  const Telemetry u = parse(
      "utilization.gpu [%], memory.used [MiB]\n[N/A], 5 MiB\n[Not Supported], 7 MiB\n"
      "77 %, 9 MiB\n",
      "u.csv");
  ASSERT_EQ(u.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(u.gpus[0].util, 77);
  EXPECT_EQ(u.files[0].time_base, TimeBase::kSequence);
  // GPUs told apart by pci.bus_id; a repeated header (nvidia-smi restarted) is skipped.
  const Telemetry p = parse(
      "pci.bus_id, utilization.gpu [%]\n00000000:07:00.0, 10 %\n00000000:0F:00.0, 20 %\n"
      "pci.bus_id, utilization.gpu [%]\n00000000:07:00.0, 30 %\n",
      "p.csv");
  ASSERT_EQ(p.gpus.size(), 3u);
  EXPECT_EQ(p.gpus[1].gpu, 1);
  EXPECT_EQ(p.gpus[2].gpu, 0);
  EXPECT_EQ(p.gpus[2].round, 1);
}

TEST(TelemetryParse, DmonRepeatedHeadersAndDateTime) {
  const Telemetry t = read({"imbalance_dmon.txt"});
  ASSERT_EQ(t.gpus.size(), 48u);  // 12 rounds of 4 GPUs, a header repeated after round 10
  EXPECT_EQ(t.files[0].time_base, TimeBase::kSequence);
  EXPECT_EQ(t.gpus[40].origin.line, 45);  // after the repeated header and units lines
  EXPECT_EQ(t.gpus[40].round, 10);
  EXPECT_DOUBLE_EQ(t.gpus[40].util, 98);
  EXPECT_FALSE(t.gpus[0].pcie_rx_mbps.has_value());

  const Telemetry c = read({"comm_dmon.txt"});
  ASSERT_EQ(c.gpus.size(), 30u);
  EXPECT_EQ(c.files[0].time_base, TimeBase::kAbsolute);
  const GpuSample& dip = c.gpus[5];  // round 2, GPU 1: both GPUs dip, PCIe busy
  EXPECT_DOUBLE_EQ(dip.util, 11);
  EXPECT_DOUBLE_EQ(*dip.pcie_rx_mbps, 9187);
  EXPECT_DOUBLE_EQ(*dip.pcie_tx_mbps, 8771);
  EXPECT_DOUBLE_EQ(dip.time, 20421 * 86400.0 + 14 * 3600 + 22 * 60 + 12);
  // '-' is a missing value; -o T gives times of day.
  const Telemetry m = parse(
      "#Time        gpu     sm    mem  rxpci  txpci\n#HH:MM:SS    Idx      %      %   MB/s   MB/s\n"
      "23:59:59       0      -      -      -      -\n00:00:00       0     50      3     12      "
      "3\n",
      "t.txt");
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_EQ(m.files[0].time_base, TimeBase::kTimeOfDay);
  EXPECT_DOUBLE_EQ(m.gpus[0].time, 86400.0);  // past midnight
}

TEST(TelemetryParse, MpstatAllAndPerCpuRowsSkippingAverage) {
  const Telemetry t = read({"input_bound_mpstat.txt"});
  EXPECT_EQ(count_cpu(t, -1), 12u);
  EXPECT_EQ(count_cpu(t, 3), 12u);
  EXPECT_EQ(t.cpus.size(), 60u);  // the Average: block is a summary, not a sample
  const CpuSample& s = t.cpus[0];
  EXPECT_EQ(s.origin.line, 4);
  EXPECT_DOUBLE_EQ(s.busy, 96.0);
  EXPECT_DOUBLE_EQ(s.iowait, 0.25);
  EXPECT_DOUBLE_EQ(s.idle, 3.75);
  EXPECT_DOUBLE_EQ(s.time, 20421 * 86400.0 + 14 * 3600 + 2 * 60 + 11);  // 11/29/25 (C locale)
}

TEST(TelemetryParse, RealSysstatOutput) {
  // Captured from sysstat 12.6.1 (Debian 12, C locale): mpstat -P ALL 1 3; sar -u ALL -P ALL.
  const Telemetry m = read({"mpstat_sysstat12.txt"});
  EXPECT_EQ(count_cpu(m, -1), 3u);
  EXPECT_EQ(count_cpu(m, 1), 3u);
  EXPECT_EQ(m.files[0].time_base, TimeBase::kAbsolute);
  EXPECT_EQ(m.cpus[0].origin.line, 4);
  const Telemetry s = read({"sar_u_all_sysstat12.txt"});
  EXPECT_EQ(count_cpu(s, -1), 2u);
  EXPECT_EQ(count_cpu(s, 0), 2u);
  EXPECT_EQ(s.cpus[0].origin.line, 4);
}

TEST(TelemetryParse, MpstatTwelveHourClock) {
  const Telemetry t = read({"mpstat_12h.txt"});
  ASSERT_EQ(count_cpu(t, -1), 4u);
  const double day = 20421 * 86400.0;
  EXPECT_DOUBLE_EQ(t.cpus[0].time, day + 11 * 3600 + 59 * 60 + 59);  // 11:59:59 AM
  EXPECT_DOUBLE_EQ(t.cpus[3].time, day + 12 * 3600);                 // 12:00:00 PM
  EXPECT_DOUBLE_EQ(t.cpus[3].busy, 100 - 43.0 - 1.0);
  const Telemetry am = parse(
      "12:00:05 AM  CPU    %usr %iowait   %idle\n"
      "12:00:06 AM  all   10.00    0.00   90.00\n",
      "am.txt");
  EXPECT_EQ(am.files[0].time_base, TimeBase::kTimeOfDay);
  EXPECT_DOUBLE_EQ(am.cpus[0].time, 6.0);  // 12 AM is midnight
}

TEST(TelemetryParse, SarPerCpuAndIsoDate) {
  const Telemetry t = read({"sar_all_cpus.txt"});
  EXPECT_EQ(count_cpu(t, -1), 3u);
  EXPECT_EQ(count_cpu(t, 0), 3u);
  EXPECT_EQ(count_cpu(t, 1), 3u);
  EXPECT_DOUBLE_EQ(t.cpus[3].busy, 100 - 62.0 - 2.0);  // 14:02:12 all
  EXPECT_DOUBLE_EQ(t.cpus[3].iowait, 2.0);
  EXPECT_DOUBLE_EQ(t.cpus[3].time, 20421 * 86400.0 + 14 * 3600 + 2 * 60 + 12);
  // Other sar reports in the same file (-r here) are skipped; LINUX RESTART lines too.
  const Telemetry r = parse(
      "Linux 6.1.0 (h) \t2025-11-29 \t_x86_64_\t(2 CPU)\n\n"
      "10:00:00        CPU     %user     %nice   %system   %iowait    %steal     %idle\n"
      "10:00:01        all     10.00      0.00      5.00      1.00      0.00     84.00\n"
      "10:00:02       LINUX RESTART\t(2 CPU)\n\n"
      "10:00:02    kbmemfree   kbavail kbmemused  %memused\n"
      "10:00:03      1000000   2000000    500000     20.00\n",
      "r.txt");
  ASSERT_EQ(r.cpus.size(), 1u);
  EXPECT_DOUBLE_EQ(r.cpus[0].busy, 15.0);
}

TEST(TelemetryParse, VmstatWithAndWithoutTimestamps) {
  const Telemetry t = read({"io_bound_vmstat.txt"});
  ASSERT_EQ(t.cpus.size(), 12u);  // the since-boot first row is skipped
  EXPECT_EQ(t.files[0].time_base, TimeBase::kAbsolute);
  EXPECT_EQ(t.cpus[0].origin.line, 4);
  EXPECT_DOUBLE_EQ(t.cpus[0].iowait, 38);
  EXPECT_DOUBLE_EQ(t.cpus[0].busy, 11);
  EXPECT_DOUBLE_EQ(t.cpus[0].time, 20421 * 86400.0 + 14 * 3600 + 12 * 60 + 11);
  const Telemetry p = read({"vmstat_plain.txt"});
  ASSERT_EQ(p.cpus.size(), 6u);  // repeated headers are fine
  EXPECT_EQ(p.files[0].time_base, TimeBase::kSequence);
  EXPECT_DOUBLE_EQ(p.cpus[0].busy, 95);
  EXPECT_DOUBLE_EQ(p.cpus[1].busy, 96);
  EXPECT_EQ(p.cpus[3].origin.line, 9);  // after the repeated header
  // vmstat -w (procps 4, with the gu column), captured from the real tool.
  const Telemetry w = read({"vmstat_wide.txt"});
  ASSERT_EQ(w.cpus.size(), 2u);
  EXPECT_DOUBLE_EQ(w.cpus[0].busy, 51);
  EXPECT_DOUBLE_EQ(w.cpus[0].idle, 49);
}

TEST(TelemetryParse, StatsLines) {
  const Telemetry t = read({"stats_straggler.jsonl"});
  ASSERT_EQ(t.ranks.size(), 12u);
  const RankSample& r = t.ranks[1];
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.world_size, 2);
  EXPECT_EQ(r.origin.line, 2);
  EXPECT_DOUBLE_EQ(r.time, 1764460000.25);
  EXPECT_EQ(r.window.images, 1280);
  EXPECT_DOUBLE_EQ(r.window.wait_fraction, 0.55);
  EXPECT_DOUBLE_EQ(r.window.busy_fraction, 0.97);
  EXPECT_EQ(r.window.threads, 8);
  EXPECT_EQ(r.window.cpus, 8);
}

TEST(TelemetryParse, MonitorLog) {
  const Telemetry t = read({"healthy_monitor.jsonl"});
  EXPECT_EQ(t.files[0].gpu_source, "nvml");
  EXPECT_EQ(t.files[0].exit_status, 0);
  ASSERT_EQ(t.gpus.size(), 16u);
  EXPECT_EQ(count_cpu(t, -1), 8u);
  EXPECT_EQ(count_cpu(t, 3), 8u);
  EXPECT_EQ(t.gpus[3].gpu, 1);
  EXPECT_EQ(t.gpus[3].round, 1);
  EXPECT_DOUBLE_EQ(*t.gpus[3].pcie_rx_mbps, 812.25);
}

TEST(TelemetryParse, CutOffLastJsonLineIsSkipped) {
  // A job killed (or a disk full) mid-write leaves a last line without its line break.
  const std::string head =
      "{\"stoker_monitor\": 1, \"gpu_source\": \"none\"}\n"
      "{\"t\": 1.0, \"cpu\": {\"busy\": 50, \"iowait\": 1, \"idle\": 49}}\n";
  const std::string cut = "{\"t\": 2.0, \"cpu\": {\"busy\": 5";
  EXPECT_EQ(parse(head + cut, "m.jsonl").cpus.size(), 1u);
  EXPECT_EQ(parse_error(head + cut + "\n", "m.jsonl"), "m.jsonl:3: not a JSON object");
}

// ---- malformed logs name the line ----------------------------------------------------------

TEST(TelemetryMalformed, NamesFileAndLine) {
  const std::string csv = "timestamp, index, utilization.gpu [%], memory.used [MiB]\n";
  const std::string row = "2025/11/29 14:02:10.112, 0, 22 %, 10240 MiB\n";
  struct Case {
    std::string content, name, expected;
  };
  const std::vector<Case> cases = {
      {csv + row + row + "2025/11/29 14:02:11.112, 0, 22 %\n", "a.csv",
       "a.csv:4: expected 4 comma-separated fields like the header, found 3"},
      {csv + row + "2025/11/29 14:02:11.112, 0, abc %, 1 MiB\n", "b.csv",
       "b.csv:3: utilization.gpu: expected a number, found 'abc %'"},
      {csv + "2025-11-29 14:02:10, 0, 22 %, 1 MiB\n", "c.csv",
       "c.csv:2: timestamp: expected YYYY/MM/DD HH:MM:SS.mmm, found '2025-11-29 14:02:10'"},
      {csv + row + "\n" + "2025/11/29 14:02:11.112, 0, 101 %, 1 MiB\n", "d.csv",
       "d.csv:4: utilization.gpu: 101 is not a percentage"},
      {"timestamp, index, temperature.gpu\n", "e.csv",
       "e.csv:1: no utilization.gpu column: add it to nvidia-smi --query-gpu"},
      {"# gpu     sm    mem\n# Idx      %      %\n    0     10      3\n    1     20      3\n"
       "    0      x      3\n",
       "f.txt", "f.txt:5: sm: expected a number or '-', found 'x'"},
      {"# gpu     sm    mem\n# Idx      %      %\n    0     10      3\n    1     20\n", "g.txt",
       "g.txt:4: expected 3 columns like the header, found 2"},
      {"# gpu   pwr  gtemp\n# Idx     W      C\n", "h.txt",
       "h.txt:1: no sm column: run nvidia-smi dmon -s u (or -s ut)"},
      {"Linux 6.1.0 (h) \t11/29/25 \t_x86_64_\t(2 CPU)\n\n"
       "14:02:10     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  "
       "%gnice   %idle\n"
       "14:02:11     all   88.00    0.00    7.50    0.25    0.00    0.50    0.00    0.00    0.00\n",
       "i.txt", "i.txt:4: expected 10 values after the CPU column like the header, found 9"},
      {"Linux 6.1.0 (h) \t11/29/25 \t_x86_64_\t(2 CPU)\n\n"
       "14:02:10        CPU     %user     %nice   %system   %iowait    %steal     %idle\n"
       "14:02:11        all     22.00      0.00      6.50      0.50      0.00     71.00\n"
       "14:02:1x        all     22.00      0.00      6.50      0.50      0.00     71.00\n",
       "j.txt", "j.txt:5: expected a time (HH:MM:SS) first, found '14:02:1x'"},
      {"14:02:10        CPU     %user     %idle\n14:02:11        all     22.00      7l.00\n",
       "k.txt", "k.txt:2: %idle: expected a percentage, found '7l.00'"},
      {" r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
       " 1  0      0  51234  70760 1914304    0    0   979  2538 1054 1943 12  3 84  1  0\n"
       " 1  0      0  51234  70760 1914304    0    0   979  2538 1054 1943 12  3 8A  1  0\n",
       "l.txt", "l.txt:3: expected a number, found '8A'"},
      {"procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- "
       "-----timestamp-----\n"
       " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st"
       "                 UTC\n"
       " 1  0      0  51234  70760 1914304    0    0   979  2538 1054 1943 12  3 84  1  0\n",
       "m.txt", "m.txt:3: expected 19 columns like the header, found 17"},
      {"{\"stoker_stats\": 1, \"time\": 1.0, \"rank\": 0, \"window\": {\"seconds\": 1, \"images\": "
       "5, \"wait_fraction\": 0.1, \"busy_fraction\": 0.5, \"read_fraction\": 0.1, "
       "\"cpu_utilisation\": 0.5}}\n"
       "{\"stoker_stats\": 1, \"time\": 2.0, \"rank\": 0}\n",
       "n.jsonl", "n.jsonl:2: missing \"window\""},
      {"{\"stoker_stats\": 1, \"time\": 2.0, \"rank\": 0, \"window\": {}}\n", "o.jsonl",
       "o.jsonl:1: missing \"seconds\""},
      {"{\"stoker_stats\": 1, \"time\": 2.0, \"rank\": 0, \"window\": {\"seconds\": 1, \"images\": "
       "5, \"wait_fraction\": 0.1, \"busy_fraction\": 0.5, \"read_fraction\": 0.1, "
       "\"cpu_utilisation\": 0.5}}\n\n{\"stoker_stats\": 1, \"time\": 2.0, \"rank\": -1,\n",
       "p.jsonl", "p.jsonl:3: not a JSON object"},
      {"{\"stoker_stats\": 1, \"time\": \"now\", \"rank\": 0}\n", "q.jsonl",
       "q.jsonl:1: \"time\": expected a number"},
      {"{\"stoker_monitor\": 1, \"gpu_source\": \"nvml\"}\n{\"t\": 1.0, \"gpus\": []}\n"
       "{\"t\": 2.0, \"gpus\": [{\"index\": 0, \"util\": 120}]}\n",
       "r.jsonl", "r.jsonl:3: \"util\": 120 is not a percentage"},
  };
  for (const Case& c : cases) EXPECT_EQ(parse_error(c.content, c.name), c.expected) << c.content;
}

TEST(TelemetryMalformed, FailedFileLeavesTheRestIntact) {
  Telemetry t;
  parse_telemetry("index, utilization.gpu [%]\n0, 5 %\n", "good.csv", t);
  EXPECT_THROW(parse_telemetry("index, utilization.gpu [%]\n0, 5 %\n0, x\n", "bad.csv", t), Error);
  EXPECT_EQ(t.files.size(), 1u);
  EXPECT_EQ(t.gpus.size(), 1u);
}

}  // namespace
}  // namespace stoker
