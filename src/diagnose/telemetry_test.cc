// Telemetry: kind detection, parsing of every kind (fixtures written like the tools' output,
// tests/fixtures/telemetry/make_fixtures.py), malformed logs naming the right line, and one
// scenario per verdict with exact numbers.
#include "stoker/telemetry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "stoker/error.h"

namespace stoker {
namespace {

std::string fixture(const std::string& name) { return std::string(STOKER_FIXTURES) + "/" + name; }

Telemetry read(const std::vector<std::string>& names) {
  std::vector<std::string> paths;
  for (const auto& n : names) paths.push_back(fixture(n));
  return read_telemetry_files(paths);
}

Telemetry parse(const std::string& content, const std::string& name) {
  Telemetry t;
  parse_telemetry(content, name, t);
  return t;
}

// The message of the stoker::Error that parsing `content` throws ("" when it does not throw).
std::string parse_error(const std::string& content, const std::string& name) {
  try {
    parse(content, name);
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::vector<std::string> actions(const std::vector<Fix>& fixes) {
  std::vector<std::string> out;
  for (const Fix& f : fixes) out.push_back(f.action);
  return out;
}

size_t count_cpu(const Telemetry& t, int cpu) {
  return static_cast<size_t>(std::count_if(t.cpus.begin(), t.cpus.end(),
                                           [&](const CpuSample& s) { return s.cpu == cpu; }));
}

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
    EXPECT_TRUE(starts_with(e.message(), "/nonexistent/gpu.csv: cannot open")) << e.message();
  }
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
      {"timestamp, index, memory.used [MiB]\n", "e.csv",
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

// ---- verdicts ------------------------------------------------------------------------------

TEST(TelemetryVerdict, InputBoundCpuCombinedByTime) {
  const Telemetry t = read({"input_bound_gpu.csv", "input_bound_mpstat.txt"});
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
  // Compared over 14:02:11-14:02:21, the seconds both logs cover: 11 rounds, 11 CPU samples.
  EXPECT_EQ(d.numbers.utilisation->combined, "time");
  EXPECT_NEAR(*d.numbers.utilisation->overlap_seconds, 10.146, 1e-6);
  EXPECT_NEAR(d.numbers.utilisation->gpus[0].mean_util, 288.0 / 11, 1e-9);
  EXPECT_NEAR(d.numbers.utilisation->gpus[1].mean_util, 266.0 / 11, 1e-9);
  EXPECT_EQ(d.numbers.utilisation->gpus[0].samples, 11);
  EXPECT_NEAR(d.numbers.utilisation->gpu_util_mean, 277.0 / 11, 1e-9);
  EXPECT_NEAR(*d.numbers.utilisation->cpu_busy_mean, 1053.0 / 11, 1e-9);
  EXPECT_NEAR(*d.numbers.utilisation->cpu_iowait_mean, 0.25, 1e-9);
  EXPECT_EQ(d.numbers.utilisation->cpu_samples, 11);
  EXPECT_EQ(d.summary,
            "input-bound on CPU: the GPUs averaged 25.2 % while the CPUs were 95.7 % busy "
            "(iowait 0.2 %): decoding and augmentation cannot keep up");
  // Evidence: per-GPU means and quoted lines.
  EXPECT_EQ(d.evidence[0], "GPU 0 (" + fixture("input_bound_gpu.csv") +
                               "): mean utilisation 26.2 % over 11 "
                               "samples");
  const auto quoted = std::count_if(d.evidence.begin(), d.evidence.end(), [](const auto& e) {
    return e.find(".txt:") != std::string::npos || e.find(".csv:") != std::string::npos;
  });
  EXPECT_EQ(quoted, 4);
  EXPECT_NE(std::find(d.evidence.begin(), d.evidence.end(),
                      fixture("input_bound_mpstat.txt") +
                          ":11: 14:02:12     all   87.50    0.00    7.50    0.25    0.00    0.50 "
                          "   0.00    0.00    0.00    4.25"),
            d.evidence.end());
  // The same fixes as the live verdict's, not a copy that drifts.
  PipelineWindow w;
  w.seconds = 10;
  w.images = 1000;
  w.wait_fraction = 0.5;
  w.busy_fraction = 0.95;
  const Diagnosis live = diagnose_pipeline(w);
  ASSERT_EQ(live.verdict, Verdict::kInputBoundCpu);
  EXPECT_EQ(actions(d.fixes), actions(live.fixes));
  EXPECT_EQ(to_json(d)["verdict"], "input-bound-cpu");
}

TEST(TelemetryVerdict, RankImbalanceOneGpuBusy) {
  const Diagnosis d = diagnose_telemetry(read({"imbalance_dmon.txt"}));
  EXPECT_EQ(d.verdict, Verdict::kRankImbalance) << d.summary;
  EXPECT_NEAR(d.numbers.utilisation->gpus[0].mean_util, 97.5, 1e-9);
  EXPECT_NEAR(*d.numbers.utilisation->others_util_mean, 1.0, 1e-9);
  EXPECT_NEAR(d.numbers.utilisation->gpu_util_mean, 25.125, 1e-9);
  EXPECT_EQ(d.summary, "one GPU does the work: GPU 0 (" + fixture("imbalance_dmon.txt") +
                           ") averaged 97.5 % while the other 3 averaged 1.0 %: unsharded data, "
                           "or a single-GPU funnel such as DataParallel");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_NE(d.fixes[0].action.find("DistributedSampler"), std::string::npos);
  EXPECT_NE(d.fixes[1].action.find("DataParallel"), std::string::npos);
  // Evidence quotes a line of each GPU.
  EXPECT_NE(std::find(d.evidence.begin(), d.evidence.end(),
                      fixture("imbalance_dmon.txt") +
                          ":4:     1     63     34      -      1      0      0      0      0      "
                          "0   1593    210"),
            d.evidence.end());
}

TEST(TelemetryVerdict, IoBound) {
  const Diagnosis d = diagnose_telemetry(read({"io_bound_gpu.csv", "io_bound_vmstat.txt"}));
  EXPECT_EQ(d.verdict, Verdict::kIoBound) << d.summary;
  EXPECT_EQ(d.numbers.utilisation->combined, "time");
  EXPECT_NEAR(d.numbers.utilisation->gpu_util_mean, 94.0 / 11, 1e-9);
  EXPECT_NEAR(*d.numbers.utilisation->cpu_iowait_mean, 442.0 / 11, 1e-9);
  EXPECT_NEAR(*d.numbers.utilisation->cpu_busy_mean, 131.0 / 11, 1e-9);
  EXPECT_EQ(d.summary,
            "io-bound: iowait 40.2 % with the CPUs only 11.9 % busy and the GPUs at 8.5 %: the "
            "job waits on storage");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_NE(d.fixes[1].action.find("local NVMe"), std::string::npos);
}

TEST(TelemetryVerdict, CommunicationBound) {
  const Diagnosis d = diagnose_telemetry(read({"comm_dmon.txt", "comm_sar.txt"}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_EQ(d.numbers.utilisation->combined, "time");
  EXPECT_NEAR(d.numbers.utilisation->gpu_util_mean, (881.0 + 895.0) / 28, 1e-9);
  EXPECT_NEAR(*d.numbers.utilisation->dip_fraction, 5.0 / 14, 1e-9);
  EXPECT_NEAR(*d.numbers.utilisation->dip_together, 1.0, 1e-9);
  EXPECT_NEAR(*d.numbers.utilisation->interconnect_mbps_in_dips, 18369.0, 1e-9);
  EXPECT_NEAR(*d.numbers.utilisation->cpu_busy_mean, 327.0 / 14 + 6.5, 1e-9);
  EXPECT_EQ(d.summary,
            "communication-bound: all GPUs dipped below 50 % together in 36 % of the rounds "
            "(100 % of the dips were shared) while PCIe rx+tx averaged 18369 MB/s per GPU; "
            "CPUs 29.9 % busy, GPUs 63.4 % on average");
  // The dip with the most traffic: round 14, GPU 1.
  EXPECT_NE(std::find(d.evidence.begin(), d.evidence.end(),
                      fixture("comm_dmon.txt") +
                          ":32:  20251129   14:22:24      1     11      3      0      0      0   "
                          "   0   9667   9131"),
            d.evidence.end());
  EXPECT_NE(d.fixes[0].action.find("gradient accumulation"), std::string::npos);
}

TEST(TelemetryVerdict, CommunicationNeedsInterconnectEvidence) {
  // GPUs that dip together, CPUs 30 % busy, but no PCIe counters: unknown, naming what to log.
  std::string dmon = "# gpu     sm    mem\n# Idx      %      %\n";
  for (int i = 0; i < 10; ++i) {
    const int sm = i % 2 == 0 ? 10 : 95;
    dmon += fmt::format("    0 {:6d}      1\n    1 {:6d}      1\n", sm, sm);
  }
  std::string vmstat =
      " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n";
  for (int i = 0; i < 11; ++i) {
    vmstat += " 1  0      0  51234  70760 1914304    0    0     0    12 1054 1943 25  5 70  0  0\n";
  }
  Telemetry t = parse(dmon, "d.txt");
  parse_telemetry(vmstat, "v.txt", t);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  EXPECT_EQ(d.summary,
            "the GPUs dip below 50 % together in 50 % of the rounds with the CPUs 30.0 % busy, "
            "but there are no interconnect counters: log nvidia-smi dmon -s ut to see whether "
            "communication is the cause");
  EXPECT_NEAR(d.numbers.utilisation->gpu_util_mean, 52.5, 1e-9);
}

TEST(TelemetryVerdict, Healthy) {
  const Diagnosis d = diagnose_telemetry(read({"healthy_monitor.jsonl"}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_NEAR(d.numbers.utilisation->gpu_util_mean, (93.375 + 92.875) / 2, 1e-9);
  EXPECT_NEAR(*d.numbers.utilisation->cpu_busy_mean, 43.5, 1e-9);
  EXPECT_EQ(d.summary,
            "the GPUs are busy: mean utilisation 93.1 % over 2 GPU(s), CPUs 43.5 % busy; the "
            "input pipeline keeps up");
  EXPECT_TRUE(d.fixes.empty());
}

TEST(TelemetryVerdict, UnknownWhenThin) {
  const Diagnosis d = diagnose_telemetry(read({"thin_gpu.csv"}));
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  EXPECT_EQ(d.summary, "too few GPU samples to judge: 3 (need 5)");
  // GPUs low but no CPU log: unknown, and it names what to add.
  const Diagnosis e = diagnose_telemetry(read({"io_bound_gpu.csv"}));
  EXPECT_EQ(e.verdict, Verdict::kUnknown);
  EXPECT_NE(e.summary.find("GPUs averaged 8.3 % but there are 0 CPU samples (need 5)"),
            std::string::npos)
      << e.summary;
  // A CPU log alone cannot tell.
  const Diagnosis c = diagnose_telemetry(read({"input_bound_mpstat.txt"}));
  EXPECT_EQ(c.verdict, Verdict::kUnknown);
  EXPECT_TRUE(starts_with(c.summary, "no GPU log: CPUs 95.7 % busy")) << c.summary;
  EXPECT_EQ(diagnose_telemetry(Telemetry{}).verdict, Verdict::kUnknown);
}

TEST(TelemetryVerdict, FileMeansWhenLogsHaveNoCommonClock) {
  // dmon without -o DT has no clock: whole-file means, said in the evidence.
  const Diagnosis d = diagnose_telemetry(read({"imbalance_dmon.txt", "input_bound_mpstat.txt"}));
  EXPECT_EQ(d.numbers.utilisation->combined, "file-means");
  EXPECT_EQ(d.numbers.utilisation->cpu_samples, 12);
  EXPECT_NE(std::find(d.evidence.begin(), d.evidence.end(),
                      "not every log has dates: compared whole-file means"),
            d.evidence.end());
}

TEST(TelemetryVerdict, StatsStragglerRank) {
  const Diagnosis d = diagnose_telemetry(read({"stats_straggler.jsonl"}));
  EXPECT_EQ(d.verdict, Verdict::kRankImbalance) << d.summary;
  EXPECT_EQ(d.summary,
            "rank 1 straggles: 1280 images/s against 2560 on rank 0, its consumer waited 55 % "
            "against 5 % on rank 0; every step waits for the slowest rank");
  ASSERT_EQ(d.numbers.stats->ranks.size(), 2u);
  EXPECT_EQ(d.numbers.stats->ranks[1].verdict, Verdict::kInputBoundCpu);
  EXPECT_EQ(d.numbers.stats->ranks[0].verdict, Verdict::kHealthy);
  EXPECT_NEAR(d.numbers.stats->ranks[1].images_per_second, 1280, 1e-9);
  EXPECT_EQ(d.evidence[0],
            "rank 0: 2560 images/s, consumer waited 5 %, workers 62 % busy over 6.0 s (6 "
            "lines): healthy");
  // The straggler's last line is quoted.
  EXPECT_TRUE(starts_with(d.evidence[2], fixture("stats_straggler.jsonl") + ":12: {"))
      << d.evidence[2];
}

TEST(TelemetryVerdict, StatsOneRankGoesThroughThePipelineVerdict) {
  const Telemetry t = read({"stats_input_bound.jsonl"});
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
  PipelineWindow w;
  w.seconds = 6;
  w.images = 6 * 2560;
  w.wait_fraction = 0.42;
  w.busy_fraction = 0.97;
  w.read_fraction = 0.03;
  w.cpu_utilisation = 0.95;
  w.threads = 8;
  w.cpus = 8;
  const Diagnosis live = diagnose_pipeline(w);
  EXPECT_EQ(d.summary, "rank 0: " + live.summary);
  EXPECT_EQ(actions(d.fixes), actions(live.fixes));
}

TEST(TelemetryVerdict, StatsAddToGpuEvidence) {
  // Balanced stats with healthy GPUs: the GPU verdict, with the ranks' numbers attached.
  const Diagnosis d =
      diagnose_telemetry(read({"healthy_monitor.jsonl", "stats_input_bound.jsonl"}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy);
  EXPECT_EQ(d.numbers.stats->ranks[0].verdict, Verdict::kInputBoundCpu);
  // The JSON of docs/doctor.md: the deciding part at the top, the other attached under its name.
  const nlohmann::json n = to_json(d)["numbers"];
  EXPECT_NEAR(n["gpu_util_mean"].get<double>(), d.numbers.utilisation->gpu_util_mean, 0);
  EXPECT_EQ(n["stats"]["ranks"][0]["verdict"], "input-bound-cpu");
  EXPECT_EQ(n["stats"]["wait_fraction"], 0.42);  // the agreeing ranks' window
  EXPECT_EQ(n["files"][1]["kind"], "stoker-stats");
  EXPECT_FALSE(n.contains("ranks"));
}

TEST(TelemetryVerdict, AStragglerDecidesWithTheGpuNumbersAttached) {
  const Diagnosis d = diagnose_telemetry(read({"healthy_monitor.jsonl", "stats_straggler.jsonl"}));
  EXPECT_EQ(d.verdict, Verdict::kRankImbalance);
  const nlohmann::json n = to_json(d)["numbers"];
  EXPECT_EQ(n["ranks"].size(), 2u);
  EXPECT_EQ(n["ranks"][1]["lines"], 6);
  EXPECT_EQ(n["utilisation"]["combined"], d.numbers.utilisation->combined);
  EXPECT_FALSE(n.contains("stats"));
  EXPECT_FALSE(n.contains("wait_fraction"));  // a straggler has no agreed window
}

TEST(TelemetryVerdict, QuotedLinesAreValidJson) {
  // Fuzz finding: a quoted log line with bytes that are not UTF-8 (a Latin-1 GPU name here)
  // made to_json(d).dump() throw. Quotes keep UTF-8 and show other bytes as '?'.
  std::string csv = "index, name, utilization.gpu [%]\n";
  for (int i = 0; i < 6; ++i) csv += "0, GPU \xe9\xbc\x01, 97 %\n1, caf\xc3\xa9, 1 %\n";
  const Diagnosis d = diagnose_telemetry(parse(csv, "gpu-\xe9t\xe9.csv"));
  EXPECT_EQ(d.verdict, Verdict::kRankImbalance);
  std::string json;
  ASSERT_NO_THROW(json = to_json(d).dump());
  EXPECT_NE(json.find("gpu-?t?.csv:2: 0, GPU ???, 97 %"), std::string::npos) << json;
  EXPECT_NE(json.find("gpu-?t?.csv:3: 1, caf\xc3\xa9, 1 %"), std::string::npos) << json;
}

// ---- series --------------------------------------------------------------------------------

TEST(TelemetrySeries, GpuAndCpuOverTime) {
  const auto s = telemetry_series(read({"input_bound_gpu.csv", "input_bound_mpstat.txt"}));
  ASSERT_EQ(s["gpus"].size(), 2u);
  EXPECT_EQ(s["gpus"][1]["index"], 1);
  ASSERT_EQ(s["gpus"][0]["t"].size(), 12u);
  EXPECT_NEAR(s["gpus"][0]["t"][0].get<double>(), 0.0, 1e-6);
  EXPECT_NEAR(s["gpus"][0]["t"][1].get<double>(), 1.003, 1e-6);
  EXPECT_EQ(s["gpus"][0]["util"][1], 31.0);
  ASSERT_EQ(s["cpu"]["t"].size(), 12u);  // the "all" rows
  EXPECT_NEAR(s["cpu"]["t"][0].get<double>(), 0.888, 1e-6);
  EXPECT_EQ(s["cpu"]["busy"][0], 96.0);
  EXPECT_EQ(s["cpu"]["iowait"][0], 0.25);
}

}  // namespace
}  // namespace stoker
