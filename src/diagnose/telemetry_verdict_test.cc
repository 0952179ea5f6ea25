// The doctor's verdict from logs (telemetry_verdict.cc): one scenario per verdict with exact
// numbers, the numbers' JSON layout, and the chart series.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnose/json.h"
#include "diagnose/test_util.h"
#include "stoker/diagnose.h"
#include "stoker/telemetry.h"

namespace stoker {
namespace {

using test::actions;
using test::fixture;
using test::parse;
using test::read;
using test::starts_with;

// ---- verdicts -----------------------------------------------------------------------------------

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
  // Three samples of one GPU at 41 %: a snapshot, judged as one, naming what would decide.
  const Diagnosis d = diagnose_telemetry(read({"thin_gpu.csv"}));
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_EQ(d.summary,
            "the GPU at 41 %: waiting on something — its input, a hang, or a moment between "
            "steps; one look cannot tell which");
  EXPECT_THAT(d.next, testing::Contains(testing::HasSubstr("data time against its step time")));
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
            "rank 1 straggles: 1280 images/s against a median of 2560 on the other ranks, its "
            "consumer waited 55 % against their 5 %; every step waits for the slowest rank");
  ASSERT_EQ(d.numbers.stats->ranks.size(), 2u);
  EXPECT_EQ(d.numbers.stats->ranks[1].verdict, Verdict::kInputBoundCpu);
  EXPECT_EQ(d.numbers.stats->ranks[0].verdict, Verdict::kHealthy);
  EXPECT_NEAR(d.numbers.stats->ranks[1].images_per_second, 1280, 1e-9);
  EXPECT_TRUE(d.numbers.stats->ranks[1].straggler);
  EXPECT_FALSE(d.numbers.stats->ranks[0].straggler);
  EXPECT_EQ(d.evidence[0],
            "rank 0: 2560 images/s, consumer waited 5 %, workers 62 % busy over 6.0 s (6 "
            "lines): healthy");
  // The straggler's last line is quoted.
  EXPECT_TRUE(starts_with(d.evidence[2], fixture("stats_straggler.jsonl") + ":12: {"))
      << d.evidence[2];
}

// Stats lines of ranks at the given images/s (one 1 s window each, 5 % waits, three lines).
std::string stats_lines(const std::vector<int>& rates) {
  std::string out;
  for (int line = 0; line < 3; ++line) {
    for (size_t r = 0; r < rates.size(); ++r) {
      out += nlohmann::json{{"stoker_stats", 1},
                            {"time", 1764460000.0 + line},
                            {"rank", r},
                            {"world_size", rates.size()},
                            {"threads", 8},
                            {"cpus", 8},
                            {"window",
                             {{"seconds", 1.0},
                              {"images", rates[r]},
                              {"wait_fraction", 0.05},
                              {"busy_fraction", 0.5},
                              {"read_fraction", 0.02},
                              {"cpu_utilisation", 0.5}}}}
                 .dump() +
             "\n";
    }
  }
  return out;
}

TEST(TelemetryVerdict, StatsStragglersByTheAuditsRule) {
  // 600 against 1000 images/s: a straggler, as stoker.torch.audit says (find_stragglers).
  Diagnosis d = diagnose_telemetry(parse(stats_lines({600, 1000}), "two.jsonl"));
  EXPECT_EQ(d.verdict, Verdict::kRankImbalance) << d.summary;
  EXPECT_TRUE(d.numbers.stats->ranks[0].straggler);
  // One fast rank among eight makes no stragglers of the other seven.
  d = diagnose_telemetry(
      parse(stats_lines({1000, 1000, 1000, 1000, 1000, 1000, 1000, 3000}), "eight.jsonl"));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  // The thresholds are the telemetry verdict's.
  TelemetryThresholds loose;
  loose.straggler.rate = 0.5;
  d = diagnose_telemetry(parse(stats_lines({600, 1000}), "two.jsonl"), loose);
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
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
  EXPECT_EQ(n["ranks"][1]["straggler"], true);
  EXPECT_EQ(n["ranks"][0]["straggler"], false);
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

TEST(TelemetryVerdict, ALoaderNameQuotedFromAWarningIsValidJson) {
  // Fuzz finding: the loader a Lightning warning names, quoted in the summary, kept a byte that
  // is not UTF-8 and made to_json(d).dump() throw.
  const Diagnosis d = diagnose_telemetry(parse(
      "UserWarning: The dataloader, va\x9a dataloader 0, does not have many workers which may be "
      "a bottleneck. Consider increasing the value of the `num_workers` argument` (try 32 which "
      "is the number of cpus on this machine) in the `DataLoader` init to improve performance.\n",
      "warning.txt"));
  std::string json;
  ASSERT_NO_THROW(json = to_json(d).dump());
  EXPECT_NE(json.find("'va? dataloader 0'"), std::string::npos) << json;
}

// ---- series -------------------------------------------------------------------------------------

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
