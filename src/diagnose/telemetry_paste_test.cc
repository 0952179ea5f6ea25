// Pasted messages (telemetry_paste.cc): real logs from public issue threads read and named as
// tests/fixtures/pasted/expected.tsv says, the Markdown noise read through line for line, and
// each scanner's numbers exact.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "diagnose/test_util.h"
#include "stoker/diagnose.h"
#include "stoker/error.h"
#include "stoker/telemetry.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

using test::pasted;

Telemetry read_text(const std::string& text) { return test::parse(text, "msg.txt"); }
Diagnosis diagnose_paste(const char* file) {
  return diagnose_telemetry(read_telemetry_files({pasted(file)}));
}

TEST(PastedLogs, EveryFixtureGetsItsExpectedVerdictAndConfidence) {
  std::ifstream expected(pasted("expected.tsv"));
  ASSERT_TRUE(expected.good());
  std::string line;
  int checked = 0;
  while (std::getline(expected, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string file, verdict, confidence;
    std::getline(fields, file, '\t');
    std::getline(fields, verdict, '\t');
    std::getline(fields, confidence, '\t');
    if (verdict == "not-read") {
      try {
        read_telemetry_files({pasted(file)});
        ADD_FAILURE() << file << ": read, expected a clear error";
      } catch (const Error& e) {
        EXPECT_THAT(e.message(), HasSubstr("not a telemetry log stoker reads")) << file;
      }
    } else {
      const Diagnosis d = diagnose_telemetry(read_telemetry_files({pasted(file)}));
      EXPECT_EQ(to_string(d.verdict), verdict) << file << ": " << d.summary;
      EXPECT_EQ(to_string(d.confidence), confidence) << file << ": " << d.summary;
      if (d.confidence == Confidence::kLow) {
        EXPECT_FALSE(d.next.empty()) << file << ": low confidence must say what to collect";
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

TEST(PastedLogs, MarkdownIsReadThroughLineForLine) {
  const std::string md =
      "> **Here** is my log\r\n"
      "> ```txt\r\n"
      "> \\# gpu   sm\r\n"
      "> > nested `quote`\r\n"
      "> ```\r\n"
      "`| 0 | inline |`\n"
      "last";
  const std::string plain = strip_markdown(md);
  EXPECT_EQ(plain, "Here is my log\n\n# gpu   sm\nnested `quote`\n\n| 0 | inline |\nlast");
  EXPECT_EQ(std::count(plain.begin(), plain.end(), '\n'), std::count(md.begin(), md.end(), '\n'));
}

TEST(PastedLogs, TheNvidiaSmiTableOf2018WithItsNumbers) {
  const Telemetry t =
      read_telemetry_files({pasted("nvidia-smi_caffe842-gtx1080x2-384-unbalanced-memory.txt")});
  ASSERT_EQ(t.files.size(), 1u);
  EXPECT_EQ(t.files[0].kind, TelemetryKind::kNvidiaSmiTable);
  ASSERT_EQ(t.gpus.size(), 2u);
  EXPECT_EQ(t.gpus[0].gpu, 0);
  EXPECT_EQ(t.gpus[0].util, 56);
  EXPECT_EQ(*t.gpus[0].memory_used_mib, 6861);
  EXPECT_EQ(*t.gpus[0].memory_total_mib, 8110);
  EXPECT_EQ(*t.gpus[0].power_w, 107);
  EXPECT_EQ(*t.gpus[0].power_cap_w, 215);
  EXPECT_EQ(t.gpus[1].gpu, 1);
  EXPECT_EQ(t.gpus[1].util, 83);
  EXPECT_EQ(t.gpus[1].origin.line, 10);
}

TEST(PastedLogs, A2024TableWithMigRowsAndProcesses) {
  const Telemetry t =
      read_telemetry_files({pasted("nvidia-smi_deepracer58-gridk520-418-processes.txt")});
  ASSERT_EQ(t.gpus.size(), 1u);
  EXPECT_EQ(t.gpus[0].util, 0);
  ASSERT_FALSE(t.processes.empty());
  EXPECT_EQ(t.processes[0].memory_mib.value_or(0), 35);
  const Telemetry h100 =
      read_telemetry_files({pasted("nvidia-smi_nccl1967-h100-560-new-layout-cutoff.txt")});
  ASSERT_GE(h100.gpus.size(), 2u);
  EXPECT_EQ(*h100.gpus[0].power_cap_w, 700);
  EXPECT_EQ(*h100.gpus[1].memory_used_mib, 112);
}

TEST(PastedLogs, GpustatLinesWithTheirProcesses) {
  const Telemetry t = read_text(
      "gpu01  Mon Jan  1 12:00:00 2018\n"
      "[0] GeForce GTX 1080 Ti | 65'C,  98 % |  9000 / 11178 MB | alice(8990M)\n"
      "[1] GeForce GTX 1080 Ti | 50\xC2\xB0"
      "C,  57 % |  4200 / 11178 MB | alice/4242(4190M)\n");
  ASSERT_EQ(t.gpus.size(), 2u);
  EXPECT_EQ(t.files[0].kind, TelemetryKind::kGpustat);
  EXPECT_EQ(t.gpus[1].util, 57);
  EXPECT_EQ(*t.gpus[1].memory_total_mib, 11178);
  ASSERT_EQ(t.processes.size(), 2u);
  EXPECT_EQ(t.processes[1].pid, 4242);
  EXPECT_EQ(*t.processes[1].memory_mib, 4190);
}

TEST(PastedLogs, StepLinesOfEveryTrainerTheirDataShare) {
  struct Case {
    const char* line;
    double step, data;
  };
  for (const Case& c : {
           Case{"Epoch: [0][10/5005]\tTime 0.500 ( 1.204)\tData 0.300 ( 0.989)\tLoss 6.9", 0.5,
                0.3},
           Case{"Epoch: [1/120][180/3368] Data 0.200 (0.574) Batch 0.800 (3.887) Remain", 0.8, 0.2},
           Case{"Train: [ 49/323]  Data time: 0.10(0.02)  Forward time: 0.31(0.29)  Batch time: "
                "0.40(0.31)",
                0.4, 0.1},
           Case{"Epoch [1][200/5005]  lr: 1.000e-01, time: 0.196, data_time: 0.008, memory: 30",
                0.196, 0.008},
           Case{"step:10 smpl:640 loss:1.073 lr:2.0e-06 updt_s:0.296 data_s:0.004", 0.3, 0.004},
       }) {
    const Telemetry t = read_text(std::string("training...\n") + c.line + "\n");
    ASSERT_FALSE(t.steps.empty()) << c.line;
    EXPECT_EQ(t.files[0].kind, TelemetryKind::kTrainLog) << c.line;
    EXPECT_NEAR(t.steps[0].step_seconds, c.step, 1e-9) << c.line;
    EXPECT_NEAR(t.steps[0].data_seconds, c.data, 1e-9) << c.line;
    EXPECT_EQ(t.steps[0].origin.line, 2);
  }
}

TEST(PastedLogs, TheStepVerdictLeavesOutTheLongestWait) {
  // Four steady steps that wait 8 % and a first step that waited 40 s for the workers.
  std::string log = "Epoch: [0][0/100]\tTime 41.000 (41.000)\tData 40.000 (40.000)\n";
  for (int i = 1; i <= 4; ++i) {
    log += "Epoch: [0][" + std::to_string(10 * i) + "/100]\tTime 1.000 (9.0)\tData 0.080 (8.0)\n";
  }
  const Diagnosis d = diagnose_telemetry(read_text(log));
  ASSERT_TRUE(d.numbers.steps);
  EXPECT_NEAR(d.numbers.steps->data_fraction, 0.08, 1e-9);
  EXPECT_EQ(d.verdict, Verdict::kHealthy);
  EXPECT_EQ(d.confidence, Confidence::kMedium);
}

TEST(PastedLogs, ALightningProfileSaysHowLongTheLoopWaited) {
  const Telemetry t = read_telemetry_files(
      {pasted("lightning-profiler_laglama51-train-dataloader-next-dominates-cutoff.txt")});
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_NEAR(t.steps[0].data_seconds / t.steps[0].step_seconds, 84.689 / 91.657, 1e-9);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kInputBound);
  EXPECT_EQ(d.confidence, Confidence::kHigh);
}

TEST(PastedLogs, ATorchProfilerTableSaysHowLongTheLoopWaited) {
  // ClinicalDG#2: enumerate(DataLoader) holds 89.18 % of the profile's CPU total.
  const Telemetry t = read_telemetry_files(
      {pasted("profiler_ClinicalDG2-torch-profiler-enumerate-dataloader-88pct.txt")});
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.files[0].kind, TelemetryKind::kTorchProfiler);
  EXPECT_NEAR(t.steps[0].data_seconds, 79.116, 1e-9);
  EXPECT_NEAR(t.steps[0].data_seconds / t.steps[0].step_seconds, 0.8918, 1e-9);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kInputBound);
  // neuralprophet#972: the optimizer's step dominates, the loader holds 8.61 %.
  const Diagnosis healthy = diagnose_telemetry(read_telemetry_files({pasted(
      "profiler_neuralprophet972-torch-profiler-optimizer-step-57pct-dataloader-9pct.txt")}));
  EXPECT_EQ(healthy.verdict, Verdict::kHealthy);
  ASSERT_TRUE(healthy.numbers.steps);
  EXPECT_NEAR(healthy.numbers.steps->data_fraction, 0.0861, 1e-9);
  // With a schedule, the ProfilerStep rows together are the loop.
  const std::string rule(40, '-');
  const Telemetry steps = read_text(
      rule + "  " + rule + "  " + rule + "\n" +
      "                                    Name     Self CPU %     CPU total %      CPU total\n" +
      rule + "  " + rule + "  " + rule + "\n" +
      "                           ProfilerStep*         10.00%          60.00%          3.000s\n"
      "enumerate(DataLoader)#_MultiProcessingD...          5.00%          12.00%        "
      "600.000ms\n");
  ASSERT_EQ(steps.steps.size(), 1u);
  EXPECT_NEAR(steps.steps[0].step_seconds, 3.0, 1e-9);
  EXPECT_NEAR(steps.steps[0].data_seconds, 0.6, 1e-9);
  // midi-lm#7, Lightning's PyTorchProfiler cut before its train_dataloader_next row: the 5
  // steps took 21.590 s, their batches 2.412 s; the rest bounds the wait from above.
  const Telemetry pl = read_telemetry_files(
      {pasted("profiler_midi-lm7-lightning-pytorchprofiler-dataloader-cutoff.txt")});
  ASSERT_EQ(pl.steps.size(), 1u);
  EXPECT_TRUE(pl.steps[0].data_upper_bound);
  EXPECT_NEAR(pl.steps[0].data_seconds, 21.590 - 2.412, 1e-9);
  const Diagnosis bound = diagnose_telemetry(pl);
  EXPECT_EQ(bound.verdict, Verdict::kInputBound);
  EXPECT_EQ(bound.confidence, Confidence::kMedium);
  EXPECT_THAT(bound.summary, HasSubstr("up to 89 %"));
}

TEST(PastedLogs, AWaitBoundedInTheMildBandIsHealthyWithLowConfidence) {
  // graphium#111, Lightning's simple profiler without its fetch row: run_training_batch's
  // 47.362 s of run_training_epoch's 56.344 s leave 16 % outside the batches, the loop's hooks
  // included. A mild wait at worst: healthy, low, as the thread's expert said.
  const Telemetry t = read_telemetry_files(
      {pasted("profiler_graphium111-lightning-simple-profiler-gnn-epoch-cutoff.txt")});
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_TRUE(t.steps[0].data_upper_bound);
  EXPECT_NEAR(t.steps[0].data_seconds, 56.344 - 47.362, 1e-9);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, HasSubstr("at most that, mild at worst"));
  // The same profile beside nvidia-smi dmon's GPU at 3 %: the batches' work is not the GPU's
  // either, and the bound decides nothing.
  std::ifstream profile(
      pasted("profiler_graphium111-lightning-simple-profiler-gnn-epoch-cutoff.txt"));
  std::ostringstream text;
  text << profile.rdbuf()
       << "\n\n```\n# gpu    sm   mem   enc   dec\n# Idx     %     %     %     %\n";
  for (int i = 0; i < 12; ++i) text << "    0     3     1     0     0\n";
  const Diagnosis u = diagnose_telemetry(read_text(text.str()));
  EXPECT_EQ(u.verdict, Verdict::kUnknown) << u.summary;
  EXPECT_THAT(u.summary, HasSubstr("beside GPUs mostly idle"));
}

TEST(PastedLogs, LateRunningAveragesShowTheStallsBetweenTheLinesShown) {
  // horovod#675: 4 ranks at step 30786 of 34406; the lines wait 2 %, rank 1's running
  // average 1.204 s of 2.771 s: every step waits for the rank that stalls.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_horovod675-4-ranks-data-avg-1.2-0.69-0.42-0.02-time-avg-2.77.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kMedium);
  ASSERT_TRUE(d.numbers.steps);
  EXPECT_NEAR(d.numbers.steps->data_fraction, 1.204 / 2.771, 1e-9);
  EXPECT_THAT(d.evidence, testing::Contains(HasSubstr("stalls between them")));
  // Early in the epoch the averages still carry the workers' start: the lines decide.
  std::string early;
  for (int i = 10; i <= 50; i += 10) {
    early += "Epoch: [0][" + std::to_string(i) + "/5005]\tTime 0.500 (4.000)\tData 0.010 (3.500)\n";
  }
  EXPECT_EQ(diagnose_telemetry(read_text(early)).verdict, Verdict::kHealthy);
}

TEST(PastedLogs, OneGpuComputingInBurstsWaitsForItsBatches) {
  // dctts-pytorch#5: one V100's grep'd rows alternate between 0 % and 24-95 %, the same memory
  // in every row (one GPU).
  const Diagnosis d = diagnose_paste("nvidia-smi-rows_dctts5-v100-grep-MiB-nfs.txt");
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, HasSubstr("computes in bursts"));
  // Rows with different memory may be several GPUs: which is which cannot be known.
  const Diagnosis sing = diagnose_paste("nvidia-smi-rows_sing3-v100-dataparallel-idle-phase.txt");
  EXPECT_EQ(sing.verdict, Verdict::kUnknown);
}

TEST(PastedLogs, StepsThatStallAmongSteadyOnesAreProbablyTheLoader) {
  // Lightning#19368: batches 33-39 at 0.86-0.91 s, then 2.1, 3.0, 2.7, 1.8 s.
  const Diagnosis d = diagnose_paste("datalog_pl19368-per-batch-time-jumps-0.87-to-3s.txt");
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, HasSubstr("4 of 11 steps"));
  // A running average settling since the start (Tacotron's sec/step, tacotron#96: 195.7,
  // 99.9, 69.1, ... 15.1) falls line after line: a trend, no stalls; the feeder's pace decides.
  const Diagnosis trend = diagnose_paste("datalog_tacotron96-k80-sec-per-step-cutoff.txt");
  EXPECT_NE(trend.summary.find("feeder"), std::string::npos) << trend.summary;
  EXPECT_EQ(trend.confidence, Confidence::kLow);
  // Steady steps say nothing of the wait.
  std::string steady;
  for (int i = 0; i < 8; ++i) steady += "step " + std::to_string(i) + " | 1.2s/it\n";
  EXPECT_EQ(diagnose_telemetry(read_text(steady)).verdict, Verdict::kUnknown);
}

TEST(PastedLogs, ProseComparingTwoScalesIsTwoRuns) {
  // LlamaGen#78, one sentence: "For 2 nodes, I got: Train 2.35 Steps/Sec. While for single
  // node, I got 2.94 Steps/Sec."
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_LlamaGen78-2node-2.35-vs-1node-2.94-steps-per-sec.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  ASSERT_TRUE(d.numbers.scaling);
  EXPECT_EQ(d.numbers.scaling->scale_unit, "nodes");
  ASSERT_EQ(d.numbers.scaling->runs.size(), 2u);
  // Steps a second count each node's batches: 2.35 steps of 2 nodes' batches.
  EXPECT_EQ(d.numbers.scaling->runs[0].per_second, 2.94);
  EXPECT_EQ(d.numbers.scaling->runs[1].per_second, 2 * 2.35);
  // mxnet#8289: "**1 GPU:**" above "--gpus 2" (a device id): the heading in words names the run.
  const Diagnosis m = diagnose_telemetry(read_telemetry_files(
      {pasted("mxnet_mxnet8289-vgg16-dummy-1-2-4gpu-214-405-818-samples-s.txt")}));
  EXPECT_EQ(m.verdict, Verdict::kHealthy) << m.summary;
  ASSERT_TRUE(m.numbers.scaling);
  EXPECT_EQ(m.numbers.scaling->runs.front().scale, 1);
  EXPECT_EQ(m.numbers.scaling->runs.back().scale, 4);
}

TEST(PastedLogs, ScalesNamedInOtherWordsAndSentencesThatCompareThem) {
  // one-glm#11: three tables of samples/s by "单卡" / "单机4卡" / "单机8卡" (1, 4, 8 cards).
  const Diagnosis glm =
      diagnose_paste("scaling_one-glm11-samples-s-table-1-4-8-gpu-pytorch-vs-oneflow-cutoff.txt");
  EXPECT_EQ(glm.verdict, Verdict::kCommunicationBound) << glm.summary;
  ASSERT_TRUE(glm.numbers.scaling);
  EXPECT_EQ(glm.numbers.scaling->runs.front().scale, 1);
  EXPECT_EQ(glm.numbers.scaling->runs.back().scale, 8);
  // imagen-pytorch#214: "Single P4 GPU: 1.8 it/sec", "Dual P4 GPU (Same host): 2.6 it/sec".
  const Diagnosis p4 =
      diagnose_paste("scaling_imagen-pytorch214-accelerate-multinode-p4-it-per-sec.txt");
  EXPECT_EQ(p4.verdict, Verdict::kCommunicationBound) << p4.summary;
  ASSERT_TRUE(p4.numbers.scaling);
  EXPECT_NEAR(p4.numbers.scaling->efficiency, 2.6 / 2 / 1.8, 1e-9);
  // nccl#318: "Single Node: p3.16xlarge" / "Training time: 36 mins", "Two Nodes" / "1 h 45
  // mins": the same work at two scales, 8 and 16 GPUs (a p3.16xlarge has 8).
  const Diagnosis took =
      diagnose_paste("scaling_nccl318-p3.16xlarge-1node-36min-vs-2node-1h45.txt");
  EXPECT_EQ(took.verdict, Verdict::kCommunicationBound) << took.summary;
  ASSERT_TRUE(took.numbers.scaling);
  EXPECT_EQ(took.numbers.scaling->scale_unit, "gpus");
  EXPECT_EQ(took.numbers.scaling->runs.back().scale, 16);
  EXPECT_NEAR(took.numbers.scaling->efficiency, 2160.0 / (2 * 6300.0), 1e-9);
  // yolov5#10645: "1x GPU: [09:12, ...] = approx. 9 min per epoch", "2x GPUs: ... 8 min".
  const Diagnosis epochs =
      diagnose_paste("scaling_yolov5-10645-ddp-1vs2gpu-epoch-times-cutoff.txt");
  ASSERT_TRUE(epochs.numbers.scaling) << epochs.summary;
  EXPECT_EQ(epochs.numbers.scaling->runs.front().scale, 1);
  EXPECT_NEAR(epochs.numbers.scaling->runs.front().per_second, 1.0 / 540, 1e-12);
  // tensorflow#34008: "4 x GPU NVIDIA Titan X" names the machine; each run's
  // CUDA_VISIBLE_DEVICES names its GPUs; "the same dummy data" makes the data no suspect.
  const Diagnosis visible =
      diagnose_paste("scaling_tensorflow34008-mirrored-sec-per-step-by-gpus-cutoff.txt");
  EXPECT_EQ(visible.verdict, Verdict::kCommunicationBound) << visible.summary;
  EXPECT_EQ(visible.confidence, Confidence::kMedium);
  ASSERT_TRUE(visible.numbers.scaling);
  EXPECT_EQ(visible.numbers.scaling->runs.front().scale, 1);
  EXPECT_EQ(visible.numbers.scaling->runs.back().scale, 3);
  // fast-stable-diffusion#587, one sentence: "Trainning on RTX3090 0.5s / it, but with 2x RTX
  // 3090 with 1.2s /it".
  const Diagnosis but =
      diagnose_paste("scaling_fast-stable-diffusion587-dreambooth-2x3090-s-per-it.txt");
  EXPECT_EQ(but.verdict, Verdict::kCommunicationBound) << but.summary;
  ASSERT_TRUE(but.numbers.scaling);
  EXPECT_NEAR(but.numbers.scaling->efficiency, (2 / 1.2) / 2 / 2, 1e-9);
  // fairchem#432: no rate of either run is read, only "using 2 nodes is significantly slower
  // than using 1 node 8 gpus".
  const Diagnosis said = diagnose_paste("scaling_fairchem432-2-nodes-4x-slower-per-step.txt");
  EXPECT_EQ(said.verdict, Verdict::kCommunicationBound) << said.summary;
  EXPECT_EQ(said.confidence, Confidence::kLow);
  EXPECT_THAT(said.summary, HasSubstr("the paste says the larger run is the slower"));
  // Words that say both decide nothing.
  Telemetry both;
  parse_telemetry("2 nodes is slower than 1 node\n8 GPUs is faster than 1 GPU\n", "msg.txt", both);
  EXPECT_EQ(diagnose_telemetry(both).verdict, Verdict::kUnknown);
}

TEST(PastedLogs, ASpeedThatFallsMidRunAndStaysLowIsWhatFeedsTheGpu) {
  // insightface#1624: 1473-1548 samples/sec for 400 steps, then 905, 485, 488.
  const Diagnosis d = diagnose_paste(
      "datalog_insightface1624-arcface-torch-speed-drops-after-400-steps-cutoff.txt");
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, HasSubstr("after 7 steady lines"));
  // Two series on the lines (images/sec, then samples/sec) are not one that falls.
  const Diagnosis units = diagnose_telemetry(
      read_text("images/sec: 1000\nimages/sec: 1000\nimages/sec: 1000\nimages/sec: 1000\n"
                "samples/sec: 10\nsamples/sec: 10\nsamples/sec: 10\n"));
  EXPECT_EQ(units.verdict, Verdict::kUnknown) << units.summary;
  // A gradual decline (a model that grows as it trains) is no fall.
  std::string decline;
  for (int i = 0; i < 10; ++i) {
    decline += fmt::format("step {} | {:.2f} it/s\n", i, 20.0 * std::pow(0.8, i));
  }
  EXPECT_EQ(diagnose_telemetry(read_text(decline)).verdict, Verdict::kUnknown);
}

TEST(PastedLogs, CollectiveBenchmarksSayHowFastTheGpusExchange) {
  // fastchat#9: a 2 GB all-reduce at 5.08 GB/s across two nodes, 213.81 GB/s within one.
  const Diagnosis d = diagnose_paste("other_fastchat9-multinode-allreduce-5gbps-no-speedup.txt");
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kMedium);
  EXPECT_THAT(d.summary, HasSubstr("allreduce [[0, 1, 2, 3, 4, 5, 6, 7]] runs at 5.08 GB/s"));
  EXPECT_THAT(d.summary, HasSubstr("against 214 GB/s for allreduce [[0, 1, 2, 3]]"));
  // nccl-tests#232's rows (2 nodes, 1 H100 each): 41.5 GB/s is not slow. The same rows under
  // a header without its '#' (as nccl#583 pasted it) read the same.
  const std::string rows =
      "     2097152        524288     float     sum      -1    113.2   18.53   18.53      0    "
      "93.35   22.46   22.46      0\n"
      "    33554432       8388608     float     sum      -1    812.3   41.31   41.31      0    "
      "808.2   41.52   41.52      0\n";
  for (const char* hash : {"#", ""}) {
    Telemetry t;
    parse_telemetry(fmt::format("{}       size         count      type   redop    root     time   "
                                "algbw   busbw #wrong     time   algbw   busbw #wrong\n",
                                hash) +
                        rows,
                    "msg.txt", t);
    ASSERT_EQ(t.bandwidths.size(), 2u) << hash;
    EXPECT_EQ(t.bandwidths[1].bus_gbps, 41.31);
    EXPECT_EQ(t.bandwidths[1].bytes, 33554432);
    EXPECT_TRUE(t.steps.empty());
    const Diagnosis fine = diagnose_telemetry(t);
    EXPECT_EQ(fine.verdict, Verdict::kUnknown) << fine.summary;
    EXPECT_THAT(fine.summary, HasSubstr("not slow"));
  }
  // One measurement at socket speed: communication-bound, low.
  Telemetry socket;
  parse_telemetry("AllReduce: [[0, 1]]  Bytes: 1.00000 GB  Time: 0.9 s  Bandwidth: 1.1 GB/s\n",
                  "msg.txt", socket);
  const Diagnosis slow = diagnose_telemetry(socket);
  EXPECT_EQ(slow.verdict, Verdict::kCommunicationBound);
  EXPECT_EQ(slow.confidence, Confidence::kLow);
  // The colon glued to the number, and a line cut after it (the fuzzer's: it read past the
  // words once).
  Telemetry glued;
  parse_telemetry("AllReduce: [[0, 1]] Bandwidth :1.1 GB/s\nSendRecv: [[0, 1]] Bandwidth :245.77\n",
                  "msg.txt", glued);
  ASSERT_EQ(glued.bandwidths.size(), 1u);
  EXPECT_EQ(glued.bandwidths[0].bus_gbps, 1.1);
  // A group's ranks quoted in the verdict are made printable (bytes that are not UTF-8 made the
  // JSON writer throw: the fuzzer's).
  Telemetry bytes;
  parse_telemetry("AllReduce: [[0, 1,\x01\xff\xfe]]  Bandwidth: 1.1 GB/s\n", "msg.txt", bytes);
  ASSERT_EQ(bytes.bandwidths.size(), 1u);
  EXPECT_EQ(bytes.bandwidths[0].group, "allreduce [[0, 1,???]]");
}

TEST(PastedLogs, AFirstEpochTwiceTheOthersWhenWholeEpochsAreTimed) {
  // ginex#6: "Epoch time: 948457.4916 ms", then 487, 461, 448, 441, 441 s: the page cache.
  const Diagnosis d = diagnose_paste("datalog_ginex6-first-epoch-948s-vs-440s-cutoff.txt");
  EXPECT_EQ(d.verdict, Verdict::kIoBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, HasSubstr("2.1x the later ones'"));
  // Steps of seconds still need three times: a job's start costs seconds.
  Telemetry short_steps;
  parse_telemetry("Epoch 0 | 2.2s/it\nEpoch 1 | 1.0s/it\nEpoch 2 | 1.0s/it\nEpoch 3 | 1.0s/it\n",
                  "msg.txt", short_steps);
  EXPECT_NE(diagnose_telemetry(short_steps).verdict, Verdict::kIoBound);
}

TEST(PastedLogs, AStepAndItsWaitToldInASentence) {
  // finetrainers#174: "a step takes a total of 55 seconds, of which the model calculation time is
  // 42 seconds, but before that, 13 seconds will be consumed in the dataloader".
  const Diagnosis d =
      diagnose_paste("datalog_finetrainers174-hunyuanvideo-8gpu-dataloader-wait.txt");
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  ASSERT_TRUE(d.numbers.steps);
  EXPECT_NEAR(d.numbers.steps->data_fraction, 13.0 / 55, 1e-9);
  const auto share = [](const char* text) {
    Telemetry t;
    parse_telemetry(text, "msg.txt", t);
    const Diagnosis told = diagnose_telemetry(t);
    return told.numbers.steps ? told.numbers.steps->data_fraction : -1.0;
  };
  // A total and its part; a wait beside the compute (the step is both); a wait beside a total.
  EXPECT_NEAR(share("Each iteration takes about 1.2s, of which 0.9s is spent waiting for data.\n"),
              0.75, 1e-9);
  EXPECT_NEAR(share("data loading takes 2s per iteration while forward/backward takes 0.5s\n"), 0.8,
              1e-9);
  EXPECT_NEAR(share("Loading a batch takes 800 ms and a training step takes 0.2 s.\n"), 0.8, 1e-9);
  EXPECT_NEAR(share("An iteration takes 2s and data loading takes 0.1s.\n"), 0.05, 1e-9);
  // A duration without both a step and a wait is no step: "loading the data takes 3 hours".
  Telemetry none;
  EXPECT_THROW(
      parse_telemetry("Loading the data takes 3 hours before training starts.\n", "msg.txt", none),
      Error);
  // Said of a scale, it is how long a run took there: no step either.
  Telemetry run;
  parse_telemetry("Training takes 10 hours in total on 8 GPUs, which seems slow.\n", "msg.txt",
                  run);
  EXPECT_TRUE(run.steps.empty());
  ASSERT_EQ(run.rates.size(), 1u);
  EXPECT_EQ(run.rates[0].unit, "runs");
  EXPECT_EQ(diagnose_telemetry(run).verdict, Verdict::kUnknown);
}

TEST(PastedLogs, ASteadySpeedOnOneNodeIsProbablyTheGpusPace) {
  // tensorflow/benchmarks on ROCm (tensorflow-upstream#345): 10 lines of ~751 images/sec.
  const Diagnosis d = diagnose_paste("tfbench_tensorflow-upstream345-rocm-2gpu-resnet50-fp16.txt");
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, HasSubstr("a steady speed: 10 lines within"));
  const auto log = [](const std::string& heading, const std::vector<double>& rates) {
    std::string text = heading;
    for (const double r : rates) text += fmt::format("images/sec: {}\n", r);
    Telemetry t;
    parse_telemetry(text, "msg.txt", t);
    return diagnose_telemetry(t);
  };
  const std::vector<double> even = {300, 748, 751, 753, 749, 750, 752, 747, 751, 750};
  EXPECT_EQ(log("", even).verdict, Verdict::kHealthy);
  // Across nodes, or with the model sharded, the exchange may set that pace; too few lines, or an
  // uneven speed, say nothing.
  EXPECT_EQ(log("2 nodes, 16 GPUs\n", even).verdict, Verdict::kUnknown);
  EXPECT_EQ(log("I train it on two machines\n", even).verdict, Verdict::kUnknown);
  EXPECT_EQ(log("a 1.5B model with FSDP on 2 devices\n", even).verdict, Verdict::kUnknown);
  EXPECT_EQ(log("", {748, 751, 753, 749, 750, 752, 747, 751}).verdict, Verdict::kUnknown);
  EXPECT_EQ(log("", {748, 751, 600, 749, 750, 752, 747, 751, 750}).verdict, Verdict::kUnknown);
}

TEST(PastedLogs, FairseqsWallClockAgainstItsTrainingClock) {
  // fairseq#2424: wall and train_wall both cumulative (868/101, 951/182, ...): 83 s of wall
  // for 81 s of training per 100 updates; the 767 s before the first line is the start.
  const Telemetry old_clocks =
      read_telemetry_files({pasted("datalog_fairseq2424-wps-increases-over-time-fp16-cutoff.txt")});
  ASSERT_FALSE(old_clocks.steps.empty());
  EXPECT_NEAR(old_clocks.steps[0].step_seconds, 83.0 / 100, 1e-9);
  EXPECT_NEAR(old_clocks.steps[0].data_seconds, 2.0 / 100, 1e-9);
  EXPECT_TRUE(old_clocks.steps[0].data_upper_bound);
  EXPECT_EQ(diagnose_telemetry(old_clocks).verdict, Verdict::kHealthy);
  // Cumulative clocks whose steps take half the wall: the other half is outside the steps.
  const Telemetry half = read_text(
      "num_updates=100, wall=100, train_wall=50\nnum_updates=200, wall=200, train_wall=100\n"
      "num_updates=300, wall=300, train_wall=150\nnum_updates=400, wall=400, train_wall=200\n");
  ASSERT_EQ(half.steps.size(), 3u);
  EXPECT_NEAR(half.steps[0].data_seconds / half.steps[0].step_seconds, 0.5, 1e-9);
  const Diagnosis half_verdict = diagnose_telemetry(half);
  EXPECT_EQ(half_verdict.verdict, Verdict::kInputBound) << half_verdict.summary;
  EXPECT_EQ(half_verdict.confidence, Confidence::kMedium);
  // fairseq#2338 (train_inner): train_wall per interval (25, 24, ...), wall cumulative.
  const Telemetry new_clocks = read_telemetry_files(
      {pasted("datalog_fairseq2338-gpu-train-inner-log-tpu-benchmark-cutoff.txt")});
  ASSERT_FALSE(new_clocks.steps.empty());
  EXPECT_NEAR(new_clocks.steps[0].step_seconds, 25.0 / 100, 1e-9);
  EXPECT_NEAR(new_clocks.steps[0].data_seconds, 1.0 / 100, 1e-9);
  EXPECT_EQ(diagnose_telemetry(new_clocks).verdict, Verdict::kHealthy);
}

TEST(PastedLogs, CpusSaidToBeFullBesideAnIdleGpu) {
  // yolov5#2043: "the GPU utilization was zero, memory was almost full, and CPU utilization was
  // full" above an nvidia-smi table with the V100 at 0 %.
  const Diagnosis d = diagnose_paste("nvsmi_yolov5-2043-v100-util0-cpu-full-cutoff.txt");
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  for (const char* text : {"the CPU usage is not full at all\n", "the CPU isn't full at all\n",
                           "the CPU is fine, the GPU is maxed\n"}) {
    Telemetry not_full;
    EXPECT_THROW(parse_telemetry(text, "msg.txt", not_full), Error) << text;
  }
}

TEST(PastedLogs, AnIdleLookWhileTheStepsRunIsAWaitNotAHang) {
  // Evo-1#24: "seeing ~20% GPU utilization which translates to ~1.5s/it" above a tqdm line.
  const Diagnosis d = diagnose_paste("datalog_Evo-1-24-tqdm-1.45s-it-h200-20pct-util.txt");
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, HasSubstr("while the loop's steps run"));
  // The same look without step lines cannot tell a wait from a hang.
  Telemetry look;
  parse_telemetry("I am using a single H200 GPU and seeing ~20% GPU utilization\n", "msg.txt",
                  look);
  EXPECT_EQ(diagnose_telemetry(look).verdict, Verdict::kUnknown);
}

TEST(PastedLogs, OneGpuAgainstTheRestToldInWords) {
  // LlamaFactory#5320: "rank=0的卡GPU利用率为0，其余卡利用率100%" (rank 0's card at 0, the
  // other cards at 100 %): a straggling rank the others wait for.
  const Diagnosis d =
      diagnose_paste("gpuutil_LlamaFactory5320-rank0-util0-others100-streaming-cutoff.txt");
  EXPECT_EQ(d.verdict, Verdict::kRankImbalance) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, HasSubstr("GPU 0 at 0 % while GPUs 1-2 are busy"));
  // The seeds' second failure in words, with the GPU count stated: only GPU 0 computes.
  Telemetry eight;
  parse_telemetry("With 8 GPUs, GPU 0 utilization is 100% while the other GPUs are at 0%.\n",
                  "msg.txt", eight);
  ASSERT_EQ(eight.gpus.size(), 8u);
  const Diagnosis only = diagnose_telemetry(eight);
  EXPECT_EQ(only.verdict, Verdict::kRankImbalance) << only.summary;
  EXPECT_THAT(only.summary, HasSubstr("only GPU 0 computes (100 %) while GPUs 1-7 sit at 0 %"));
  EXPECT_THAT(only.summary, HasSubstr("innocent if it is a single-GPU job by design"));
  // All of them busy is no imbalance; a GPU's memory is not its utilisation.
  Telemetry even;
  parse_telemetry("GPU 0 util is 98% and the others are at 97% util\n", "msg.txt", even);
  EXPECT_EQ(diagnose_telemetry(even).verdict, Verdict::kHealthy);
  for (const char* text : {"GPU 0 memory is 100% full, the other GPUs have 10% used\n",
                           "GPU 0 memory usage is 100% while the others are at 10%\n",
                           "GPU 0 utilization is high while the others are idle\n"}) {
    Telemetry none;
    EXPECT_THROW(parse_telemetry(text, "msg.txt", none), Error) << text;
  }
}

TEST(PastedLogs, AUtilizationNamedAloneOnALineAboutTheGpu) {
  // yolov4-pytorch#58: "GPU的利用率太低了，我每4秒监测一次Gpu,发现利用率最多到12左右" (the GPU's
  // utilization is too low; checked every 4 seconds, at most about 12): 12 %, not the 4 s.
  const Telemetry t =
      read_telemetry_files({pasted("datalog_yolov4-pytorch58-epoch-cost-time-gpu-util-2pct.txt")});
  ASSERT_FALSE(t.gpus.empty());
  EXPECT_EQ(t.gpus[0].util, 12);
  // Beside the CPU's, it is no GPU's.
  Telemetry cpu;
  EXPECT_THROW(
      parse_telemetry("on the CPU, utilization is 85 while the GPU waits\n", "msg.txt", cpu),
      Error);
}

TEST(PastedLogs, AStatisticIsNamedByTheLabelBeforeIt) {
  // alan-cluster#9: "Blocking, waiting for batch (threaded) (10/10):  mean:  189ms  std:  207ms"
  // above the compute's rows: the wait is 6 % of the step.
  const Diagnosis d = diagnose_paste("datalog_alan-cluster9-waiting-for-batch-vs-backward.txt");
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  ASSERT_TRUE(d.numbers.steps);
  EXPECT_NEAR(d.numbers.steps->data_fraction,
              0.189 / (0.189 + 0.002 + 0.011 + 0.402 + 2.321 + 0.055 + 0.044), 1e-6);
}

TEST(PastedLogs, ATableOfEpochTimesByGpuCountIsAScalingComparison) {
  // keras-yolo3#104: the same 3 epochs take 7m on 1 GPU, 14m on 2, 18m on 4.
  const Diagnosis d = diagnose_paste("scaling_keras-yolo3-104-epoch-time-by-gpus.txt");
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  ASSERT_TRUE(d.numbers.scaling);
  ASSERT_EQ(d.numbers.scaling->runs.size(), 3u);
  EXPECT_NEAR(d.numbers.scaling->efficiency, 420.0 / (4 * 1080.0), 1e-9);
  EXPECT_THAT(d.summary, HasSubstr("420 s -> 1080 s, 10 % scaling efficiency (the rate per GPU "
                                   "kept, if both runs did the same work; 39 % if each GPU did "
                                   "as much work as the smaller run)"));
}

TEST(PastedLogs, ScalingTablesAndLinesInMoreLayouts) {
  // mxnet#4120: "| No. of GPUs | Batch Size | Speed |" over "| 1 | 32 | 11.4 samples/sec |":
  // the unit in the cells, the batch size no measure.
  const Diagnosis mxnet = diagnose_paste("scaling_mxnet4120-ssd-samples-per-sec-1-to-8-gpus.txt");
  EXPECT_EQ(mxnet.verdict, Verdict::kCommunicationBound) << mxnet.summary;
  ASSERT_TRUE(mxnet.numbers.scaling);
  EXPECT_NEAR(mxnet.numbers.scaling->efficiency, 22.3 / (8 * 11.4), 1e-9);
  // gluon-cv#85: "Name | #GPUS | Training Speed(images / second)": the count in the second
  // column, a series per name (GluonCV 1-8 GPUs; mxnet-ssd and Caffe at 4 only).
  const Diagnosis gluon = diagnose_paste("scaling_gluon-cv85-ssd-images-per-sec-1-to-8-gpus.txt");
  ASSERT_TRUE(gluon.numbers.scaling) << gluon.summary;
  EXPECT_NEAR(gluon.numbers.scaling->efficiency, 40.0 / (8 * 30), 1e-9);
  // byteps#79: "#of gpus=1, 191 img/sec" ... "#of gpus=8, 8 img/sec".
  const Diagnosis byteps =
      diagnose_paste("scaling_byteps79-resnet50-gtx1080-img-per-sec-1-to-8-gpus-cutoff.txt");
  ASSERT_TRUE(byteps.numbers.scaling) << byteps.summary;
  EXPECT_THAT(byteps.summary, HasSubstr("1 -> 8 GPUs"));
  // horovod#396: "1 p3.8xlarge: 1399.38 images/sec" ... "8 p3.16xlarge: 9745.38 images/sec":
  // instances of a known GPU count, each a node.
  const Diagnosis aws =
      diagnose_paste("scaling_horovod396-aws-p3-resnet50-images-per-sec-1-to-8-nodes.txt");
  ASSERT_TRUE(aws.numbers.scaling) << aws.summary;
  EXPECT_THAT(aws.summary, HasSubstr("4 -> 64 GPUs"));
  // StackGAN-v2#28: "1x TITAN XP，260s/epoch", 2x 240 s, 3x 220 s (a full-width comma).
  const Diagnosis stackgan =
      diagnose_paste("scaling_stackganv2-28-titanxp-s-per-epoch-1-2-3-gpus.txt");
  ASSERT_TRUE(stackgan.numbers.scaling) << stackgan.summary;
  EXPECT_NEAR(stackgan.numbers.scaling->efficiency, 260.0 / (3 * 220), 1e-9);
  // A column about each GPU is no count: "Batch size per gpu" (mmpose#23) is not read as one.
  Telemetry per_gpu;
  EXPECT_THROW(parse_telemetry("Model | Batch size per gpu | Notes\nResnet_50 | 64 | a\n"
                               "Resnet_101 | 32 | b\n",
                               "msg.txt", per_gpu),
               Error);
}

TEST(PastedLogs, ATrainerSaysItselfThatItsBatchesWereLate) {
  // darknet#6149 ("Loaded: 1.174679 seconds - performance bottleneck on CPU or Disk HDD/SSD")
  // and TextBoxes++#12 (Caffe's "Data layer prefetch queue empty").
  for (const char* file :
       {"datalog_darknet6149-loaded-1.17s-two-thirds-batches-docker-build-cutoff.txt",
        "datalog_textboxes-plusplus12-caffe-prefetch-queue-empty-18s-per-iter.txt"}) {
    const Diagnosis d = diagnose_paste(file);
    EXPECT_EQ(d.verdict, Verdict::kInputBound) << file << ": " << d.summary;
    EXPECT_EQ(d.confidence, Confidence::kLow) << file;
    EXPECT_THAT(d.summary, HasSubstr("the trainer says itself")) << file;
  }
}

TEST(PastedLogs, AScalesOwnLineWithItsRunsDuration) {
  // yolov5#282: "1 gpu: 0.175h" and "2 gpu: 0.203h" for the same 100 epochs.
  const Diagnosis d = diagnose_paste("scaling_yolov5-282-coco128-1-vs-2-gpu-hours-cutoff.txt");
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  ASSERT_TRUE(d.numbers.scaling);
  EXPECT_NEAR(d.numbers.scaling->efficiency, 0.175 / (2 * 0.203), 1e-9);
}

TEST(PastedLogs, PhaseTimersSayHowMuchOfTheStepIsGradientExchange) {
  // Megatron-LM#184: backward-params-all-reduce 2.7-3.1 s against 1.3-2.7 s of compute.
  const Telemetry t =
      read_telemetry_files({pasted("megatron_Megatron-LM184-t5-timers-allreduce-cutoff.txt")});
  ASSERT_GE(t.phases.size(), 3u);
  EXPECT_NEAR(t.phases[0].communication_seconds, 2.67265 + 0.00013, 1e-9);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kMedium);
  // gpt-neox#965 (DeepSpeed): 138 ms of all-reduce in a 9.6 s step is not the limit; the rest
  // of the timed step is the model's own work, so the step is compute (low: the timers do not
  // time the wait for data).
  const Diagnosis ds = diagnose_telemetry(read_telemetry_files(
      {pasted("deepspeed_gptneox965-2node-timers-allreduce-138ms-of-4.7s-backward.txt")}));
  EXPECT_EQ(ds.verdict, Verdict::kHealthy) << ds.summary;
  EXPECT_EQ(ds.confidence, Confidence::kLow);
  EXPECT_THAT(ds.summary, HasSubstr("not what limits it"));
  EXPECT_THAT(ds.summary, HasSubstr("do not time the wait for data"));
}

TEST(PastedLogs, ColumnsNamedByAHeaderAndGpusNamedByTheirIndex) {
  // SLIP#22: "(data_time_, batch_time_)" above rows of two bare numbers.
  const Telemetry slip =
      read_telemetry_files({pasted("datalog_SLIP22-ddp-data-time-batch-time-pairs-cutoff.txt")});
  ASSERT_FALSE(slip.steps.empty());
  EXPECT_NEAR(slip.steps[0].data_seconds, 142.89722776412964, 1e-9);
  EXPECT_NEAR(slip.steps[0].step_seconds, 172.6102113723755, 1e-9);
  // keras#9502: a GPU monitor's "[GPU0 0%] [GPU1 0%]".
  const Telemetry mon =
      read_telemetry_files({pasted("gpumon_keras9502-gpu-usage-audit-cpu-scope-cutoff.txt")});
  ASSERT_GE(mon.gpus.size(), 2u);
  EXPECT_EQ(mon.gpus[0].gpu, 0);
  EXPECT_EQ(mon.gpus[1].gpu, 1);
}

TEST(PastedLogs, TopologyCountsNvlinkPairs) {
  const Telemetry dgx =
      read_telemetry_files({pasted("topo_nccltests29-dgx1-v100-nv1-nv2-cutoff.txt")});
  ASSERT_EQ(dgx.topologies.size(), 1u);
  EXPECT_EQ(dgx.topologies[0].gpus, 8);
  EXPECT_EQ(dgx.topologies[0].pairs, 28);
  EXPECT_GT(dgx.topologies[0].nvlink_pairs, 0);
  const Telemetry pcie =
      read_telemetry_files({pasted("topo_gpuallocator17-4090x8-all-sys-tabs.txt")});
  ASSERT_EQ(pcie.topologies.size(), 1u);
  EXPECT_EQ(pcie.topologies[0].nvlink_pairs, 0);
}

TEST(PastedLogs, KindsMixedInOneMessage) {
  std::ifstream table(pasted("nvidia-smi_caffe842-gtx1080x2-384-unbalanced-memory.txt"));
  std::ostringstream text;
  text << "My GPUs look like this:\n"
       << table.rdbuf() << "\nand my log says\n"
       << "Epoch: [0][10/5005]\tTime 2.000 ( 2.0)\tData 1.500 ( 1.5)\n";
  const Telemetry t = read_text(text.str());
  ASSERT_EQ(t.files.size(), 2u);
  EXPECT_EQ(t.files[0].kind, TelemetryKind::kNvidiaSmiTable);
  EXPECT_EQ(t.files[1].kind, TelemetryKind::kTrainLog);
  EXPECT_EQ(t.gpus.size(), 2u);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kInputBound);  // the loop's data time decides
}

TEST(PastedLogs, BusyButPowerlessGpusAreACommunicationHang) {
  std::string text;
  for (int round = 0; round < 6; ++round) {
    text += "| NVIDIA-SMI 535.54.03   Driver Version: 535.54.03   CUDA Version: 12.2 |\n";
    for (int gpu = 0; gpu < 2; ++gpu) {
      text += "|   " + std::to_string(gpu) +
              "  NVIDIA A100-SXM4-80GB  On | 00000000:07:00.0 Off | 0 |\n"
              "| N/A   33C    P0    88W / 400W |  70000MiB / 81920MiB |    100%      Default |\n";
    }
  }
  const Diagnosis d = diagnose_telemetry(read_text(text));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, HasSubstr("22 % of their power cap"));
}

// Fuzz finding: a grep'd usage row whose percentage no nvidia-smi prints (377 %) came before
// any sample, and its file index was used while still unset.
TEST(PastedLogs, ARowNoNvidiaSmiPrintsIsPassedOver) {
  const Telemetry t = read_text(
      "| N/A   48C    P0   273W / 350W |  19492MiB / 32510MiB |    377%      Default |\n"
      "| N/A   47C    P0   252W / 350W |  16434MiB / 32510MiB |    100%      Default |\n");
  ASSERT_EQ(t.gpus.size(), 1u);
  EXPECT_EQ(t.gpus[0].util, 100);
  EXPECT_TRUE(t.files[0].gpus_guessed);
}

TEST(PastedLogs, IostatAndTopGiveTheCpuSplit) {
  const Telemetry t = read_text(
      "$ iostat -x 1\n"
      "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n"
      "          10.20    0.00    3.10   41.50    0.00   45.20\n"
      "\n"
      "top - 10:00:01 up 3 days,  2 users,  load average: 7.90, 7.50, 7.20\n"
      "%Cpu(s): 88.1 us,  9.0 sy,  0.0 ni,  2.4 id,  0.5 wa,  0.0 hi,  0.0 si,  0.0 st\n");
  ASSERT_EQ(t.cpus.size(), 2u);
  EXPECT_EQ(t.files[0].kind, TelemetryKind::kIostat);
  EXPECT_NEAR(t.cpus[0].iowait, 41.5, 1e-9);
  EXPECT_NEAR(t.cpus[0].busy, 100 - 45.2 - 41.5, 1e-9);
  EXPECT_EQ(t.cpus[0].origin.line, 3);
  EXPECT_EQ(t.files[1].kind, TelemetryKind::kTop);
  EXPECT_NEAR(t.cpus[1].busy, 100 - 2.4 - 0.5, 1e-9);
}

// A training log's data time with the CPUs pinned in the same message: input-bound on CPU.
TEST(PastedLogs, CpuLinesRefineAnInputBoundStepLog) {
  std::string text;
  for (int i = 0; i < 6; ++i) {
    text += "Epoch: [0][" + std::to_string(i * 10) + "/500]\tTime 1.000 (1.0)\tData 0.600 (0.6)\n";
    text += "%Cpu(s): 93.0 us,  5.0 sy,  0.0 ni,  1.5 id,  0.5 wa,  0.0 hi,  0.0 si,  0.0 st\n";
  }
  const Diagnosis d = diagnose_telemetry(read_text(text));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
  EXPECT_TRUE(d.next.empty());
}

TEST(PastedLogs, WholeLogsPastedAsBlocksAmongProse) {
  const Telemetry t = read_text(
      "Here is mpstat while it trains:\n"
      "\n"
      "10:00:01 AM  CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  "
      "%gnice   %idle\n"
      "10:00:02 AM  all   90.00    0.00    6.00    1.00    0.00    0.00    0.00    0.00    "
      "0.00    3.00\n"
      "10:00:03 AM  all   91.00    0.00    6.00    1.00    0.00    0.00    0.00    0.00    "
      "0.00    2.00\n"
      "\n"
      "and the GPU:\n"
      "\n"
      "index, utilization.gpu [%]\n"
      "0, 12 %\n"
      "0, 15 %\n");
  ASSERT_EQ(t.files.size(), 2u);
  EXPECT_EQ(t.files[0].kind, TelemetryKind::kMpstat);
  EXPECT_EQ(t.files[1].kind, TelemetryKind::kNvidiaSmiCsv);
  ASSERT_EQ(t.cpus.size(), 2u);
  EXPECT_NEAR(t.cpus[1].busy, 97.0, 1e-9);
  EXPECT_EQ(t.cpus[1].origin.line, 5);
  ASSERT_EQ(t.gpus.size(), 2u);
  EXPECT_EQ(t.gpus[1].util, 15);
  EXPECT_EQ(t.gpus[1].origin.line, 11);
}

TEST(PastedLogs, ACsvThatATableFollowsIsOnePartOfAPaste) {
  // OneFlow#4806: the comment starts with nvidia-smi's CSV and goes on, after a blank line,
  // with the trainer's table: a paste read part by part, not a CSV with a bad row.
  const Telemetry t = read_text(
      "utilization.gpu [%], memory.used [MiB]\n"
      "100 %, 15618 MiB\n"
      "99 %, 15670 MiB\n"
      "\n"
      "| batches  | samples | throughput | latency |\n"
      "| -------- | ------- | ---------- | ------- |\n"
      "| 10       | 5120    | 25.06352   | 20.42810 |\n");
  EXPECT_EQ(t.files[0].kind, TelemetryKind::kNvidiaSmiCsv);
  ASSERT_EQ(t.gpus.size(), 2u);
  EXPECT_EQ(t.gpus[1].util, 99);
  // A row with commas but not the header's count stays a CSV's error.
  EXPECT_THROW(
      read_text("utilization.gpu [%], memory.used [MiB]\n100 %, 15618 MiB\n\n99 %, 1 MiB, 3\n"),
      std::exception);
}

TEST(PastedLogs, APeerCopyMatrixUnderAPcieLinksRateIsTheExchangesLimit) {
  // level1techs#185531: BusGrind's matrix, 3.32 GB/s between two GPUs behind a host bridge.
  const Telemetry t = read_telemetry_files(
      {pasted("other_level1techsforum185531-2x3070ti-p2p-bandwidth-busgrind-topo.txt")});
  ASSERT_EQ(t.bandwidths.size(), 8u);  // four matrices of two GPUs, no diagonal
  EXPECT_EQ(t.bandwidths[0].bus_gbps, 3.32);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound);
  EXPECT_NE(d.summary.find("3.32 GB/s"), std::string::npos) << d.summary;
  // NVLink-class copies are no limit.
  EXPECT_EQ(diagnose_telemetry(read_text("Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n"
                                         "   D\\D     0      1\n"
                                         "     0 770.13  48.35\n"
                                         "     1  48.36 771.27\n"))
                .verdict,
            Verdict::kUnknown);
}

TEST(PastedLogs, OneProcessAtAHundredPercentIsOneCore) {
  const Diagnosis d = diagnose_telemetry(read_text(
      "top - 10:00:01 up 3 days,  1 user,  load average: 1.02, 1.00, 0.98\n"
      "%Cpu(s):  3.2 us,  0.3 sy,  0.0 ni, 96.4 id,  0.1 wa,  0.0 hi,  0.0 si,  0.0 st\n"
      "\n"
      "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n"
      "  41234 alice     20   0   25.1g   3.1g 410644 R 100.0   2.4  12:01.33 python\n"
      "    812 root      20   0       0      0      0 S   0.3   0.0   0:10.02 kworker/3:1\n"));
  EXPECT_NE(std::find_if(d.evidence.begin(), d.evidence.end(),
                         [](const std::string& e) {
                           return e.find("one core busy, not the machine") != std::string::npos;
                         }),
            d.evidence.end());
  EXPECT_NE(d.verdict, Verdict::kInputBoundCpu);
}

TEST(PastedLogs, DmonIsReadByItsHeaderInEveryDriverLayout) {
  // The 535+ layout (gtemp, mtemp, jpg, ofa) and the old one (temp ... fb bar1) of the fixture.
  const Telemetry fresh = read_text(
      "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk\n"
      "# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz\n"
      "    0     86     35      -     23      5      0      0      0      0   1593   1980\n"
      "    1     80     34      -     25      4      0      0      0      0   1593   1980\n");
  ASSERT_EQ(fresh.gpus.size(), 2u);
  EXPECT_EQ(fresh.files[0].kind, TelemetryKind::kNvidiaSmiDmon);
  EXPECT_EQ(fresh.gpus[1].util, 25);
  const Telemetry old =
      read_telemetry_files({pasted("dmon_deepspeech178-old-layout-quoted-escaped.txt")});
  ASSERT_FALSE(old.gpus.empty());
  EXPECT_EQ(old.files[0].kind, TelemetryKind::kNvidiaSmiDmon);
}

TEST(PastedLogs, AQueryCsvWithoutItsHeaderIsReadByItsUnits) {
  const Telemetry t = read_text(
      "$ nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total "
      "--format=csv,noheader -l 1\n"
      "0, 87 %, 9584 MiB, 11178 MiB\n"
      "1, 3 %, 9584 MiB, 11178 MiB\n"
      "0, 91 %, 9584 MiB, 11178 MiB\n");
  ASSERT_EQ(t.gpus.size(), 3u);
  EXPECT_EQ(t.files[0].kind, TelemetryKind::kNvidiaSmiCsv);
  EXPECT_EQ(t.gpus[1].gpu, 1);
  EXPECT_EQ(t.gpus[1].util, 3);
  EXPECT_EQ(*t.gpus[2].memory_total_mib, 11178);
  EXPECT_EQ(t.gpus[2].round, 1);
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_NE(t.notes[0].text.find("without its header"), std::string::npos);
  // ultralytics#22307: the query's timestamp, then the index, behind the log's own time; GPUs 0
  // and 1 busy, 2-7 with nothing on them.
  const Telemetry logged = read_telemetry_files(
      {pasted("nvsmi_ultralytics22307-query-gpu-csv-2of8-gpus-active-cutoff.txt")});
  ASSERT_GE(logged.gpus.size(), 8u);
  EXPECT_EQ(logged.gpus[1].gpu, 1);
  EXPECT_EQ(logged.gpus[1].util, 65);
  EXPECT_EQ(logged.gpus[7].gpu, 7);
  EXPECT_EQ(logged.gpus[7].util, 0);
  EXPECT_EQ(diagnose_telemetry(logged).verdict, Verdict::kRankImbalance);
  // timestamp, temperature.gpu, ...: a bare integer after the timestamp that does not count
  // the GPUs in turn (0, 1, ..., 0, 1, ...) is another column, and the rows are one GPU's.
  const Telemetry warm = read_text(
      "2024/05/01 10:00:01.123, 41, 97 %, 30000 MiB, 81920 MiB\n"
      "2024/05/01 10:00:02.123, 43, 35 %, 30000 MiB, 81920 MiB\n"
      "2024/05/01 10:00:03.123, 46, 98 %, 30000 MiB, 81920 MiB\n");
  ASSERT_EQ(warm.gpus.size(), 3u);
  EXPECT_TRUE(std::all_of(warm.gpus.begin(), warm.gpus.end(),
                          [](const GpuSample& g) { return g.gpu == 0; }));
}

TEST(PastedLogs, MpstatRowsWithoutTheirHeaderAreReadByTheirDefaultColumns) {
  // gbm-perf#11: mpstat's all-CPU rows below gpustat's, the header not pasted (sysstat's ten
  // columns, %iowait fourth, %idle last); the last row is cut short and not read.
  const Telemetry t =
      read_telemetry_files({pasted("nvsmi_gbm-perf11-h2o-xgboost-gpustat-mpstat-cutoff.txt")});
  ASSERT_EQ(t.cpus.size(), 4u);
  EXPECT_DOUBLE_EQ(t.cpus[1].idle, 80.50);
  EXPECT_DOUBLE_EQ(t.cpus[3].busy, 100 - 40.33);
  // sar -u's six columns; one row alone is not read (it may be another table's): nothing else
  // in that paste is telemetry.
  EXPECT_EQ(read_text("12:00:01 AM  all  10.00  0.00  5.00  20.00  0.00  65.00\n"
                      "12:00:02 AM  all  12.00  0.00  5.00  18.00  0.00  65.00\n")
                .cpus.size(),
            2u);
  EXPECT_THROW(read_text("12:00:01 AM  all  10.00  0.00  5.00  20.00  0.00  65.00\n"), Error);
}

TEST(PastedLogs, TheDocumentedQueryWithoutItsHeaderNamesGpusByBusId) {
  // mace#156: timestamp, name, pci.bus_id, ..., utilization.gpu, utilization.memory,
  // memory.total, memory.free, memory.used (the nvidia-smi documentation's example query).
  const Telemetry t =
      read_telemetry_files({pasted("nvsmi_mace156-query-csv-2xA100-second-gpu-8MiB-0pct.txt")});
  ASSERT_FALSE(t.gpus.empty());
  EXPECT_EQ(t.files[0].kind, TelemetryKind::kNvidiaSmiCsv);
  EXPECT_EQ(t.gpus[1].gpu, 1);
  EXPECT_EQ(*t.gpus[1].memory_used_mib, 8);
  EXPECT_EQ(*t.gpus[1].memory_total_mib, 40960);
  EXPECT_EQ(*t.gpus[0].memory_used_mib, 29310);
  // GPU 0 busy at some of the looks, GPU 1 idle at all of them with nothing on it.
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kRankImbalance) << d.summary;
  EXPECT_THAT(d.summary, HasSubstr("only GPU 0 computes"));
}

TEST(PastedLogs, IostatDeviceRowsAndHtopBars) {
  std::string text;
  for (int i = 0; i < 4; ++i) {
    text += "Epoch: [0][" + std::to_string(i * 10) + "/500]\tTime 1.000 (1.0)\tData 0.700 (0.7)\n";
  }
  text +=
      "\nDevice            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   "
      "wrqm/s  %wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz  "
      "aqu-sz  %util\n"
      "sda            812.00  98211.00     0.00   0.00   11.20   120.95    2.00     16.00     "
      "0.00   0.00    1.00     8.00    0.00      0.00     0.00   0.00    0.00     0.00    9.10 "
      " 99.60\n"
      "\n"
      "    1  [||||||                     21.4%]   2  [|||||||                    25.0%]\n"
      "  Mem[|||||||||||               3.1G/15.5G]   Tasks: 141, 512 thr; 2 running\n";
  const Telemetry t = read_text(text);
  ASSERT_EQ(t.disks.size(), 1u);
  EXPECT_EQ(t.disks[0].device, "sda");
  EXPECT_NEAR(t.disks[0].util, 99.6, 1e-9);
  EXPECT_NEAR(*t.disks[0].read_await, 11.2, 1e-9);
  ASSERT_EQ(t.cpus.size(), 1u);  // htop: the two bars, averaged
  EXPECT_NEAR(t.cpus[0].busy, (21.4 + 25.0) / 2, 1e-9);
  // The step waits 70 % for data with the disk saturated: io-bound.
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kIoBound);
}

TEST(PastedLogs, ProseAloneIsAClearError) {
  try {
    read_text("my training is slow, any idea?\nthanks\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(
        e.message(),
        HasSubstr("msg.txt: not a telemetry log stoker reads: looked for nvidia-smi tables"));
    EXPECT_THAT(e.message(), HasSubstr("it starts with 'my training is slow, any idea?'"));
  }
}

}  // namespace
}  // namespace stoker
