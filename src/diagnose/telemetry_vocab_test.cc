// Reading by vocabulary (telemetry_vocab.h, telemetry_lines.cc): each trainer's lines as its
// users paste them — the lines below are copied from real logs in public threads and
// repositories (tests/fixtures/pasted/README.md names the files' sources) — give the step, its
// wait for data and the running averages; throughput lines and GPU counts; and nothing is read
// from what is not a log.
#include "diagnose/telemetry_vocab.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "diagnose/telemetry_judge.h"
#include "diagnose/telemetry_parse.h"
#include "diagnose/test_util.h"
#include "stoker/diagnose.h"
#include "stoker/error.h"
#include "stoker/telemetry.h"

namespace stoker::telemetry {
namespace {

using test::pasted;

Telemetry read_text(const std::string& text) { return test::parse(text, "msg.txt"); }

// Text no reader places: either no telemetry at all, or measurements that no rule places
// (Telemetry::unplaced, answered `unknown`) — never a step, a rate or a run.
void ExpectNothingPlaced(const std::string& text) {
  Telemetry t;
  try {
    t = read_text(text);
  } catch (const Error&) {
    return;
  }
  EXPECT_FALSE(t.unplaced.empty()) << text;
  EXPECT_TRUE(t.steps.empty() && t.rates.empty()) << text;
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kUnknown) << text;
}

struct Expected {
  const char* line;
  double step, data;
  std::optional<double> step_avg, data_avg;
};

TEST(Vocabulary, EachTrainersStepLineGivesItsStepAndDataWait) {
  const std::vector<Expected> cases = {
      // timm train.py (a public repository's training notes, swin_tiny on 2x 2080 Ti).
      {"Train: 0 [  50/10009 (  0%)]  Loss:  6.973588 (6.9921)  Time: 0.316s,  405.65/s  "
       "(0.344s,  371.84/s)  LR: 5.000e-07  Data: 0.006 (0.033)",
       0.316, 0.006, 0.344, 0.033},
      // mmengine (OpenMMLab 2.x), as quoted in issue 29.
      {"Epoch(train) [1][ 24/1051]  lr: 1.0000e-02  eta: 2:35:13  time: 8.9139  data_time: "
       "7.4351  memory: 4302  loss: 2.2",
       8.9139,
       7.4351,
       {},
       {}},
      // YOLOX (yolox_YOLOX1069).
      {"2022-04-01 11:45:10 | INFO     | yolox.core.trainer:238 - epoch: 1/300, iter: 860/1047, "
       "mem: 8558Mb, iter_time: 0.379s, data_time: 0.003s, total_loss: 4.2, lr: 2.699e-04, "
       "size: 736, ETA: 1 day, 11:11:04",
       0.379,
       0.003,
       {},
       {}},
      // wav2letter (w2l_wav2letter516): bch and smp in milliseconds.
      {"epoch:        1 | lr: 0.100000 | lrcriterion: 0.000000 | runtime: 01:34:59 | bch(ms): "
       "557.78 | smp(ms): 538.41 | fwd(ms): 9.84 | crit-fwd(ms): 4.95 | bwd(ms): 6.97",
       0.55778,
       0.53841,
       {},
       {}},
      // detectron2 (d2_detectron2195).
      {"[11/01 11:20:11 d2.utils.events]: eta: 8:29:46  iter: 19  total_loss: 1.739  "
       "loss_cls: 1.226  time: 0.3401  data_time: 0.0466  lr: 0.000200  max_mem: 3957M",
       0.3401,
       0.0466,
       {},
       {}},
      // DeiT's MetricLogger behind mpirun's prefix (timm_deit76).
      {"2021-03-10T13:17:11.883Z: [1,0]<stdout>:Epoch: [2]  [ 150/1251]  eta: 0:20:52  lr: "
       "0.000201  loss: 6.8610 (6.8841)  time: 1.0552  data: 0.0035  max mem: 8249",
       1.0552,
       0.0035,
       {},
       {}},
      // PyTorch's ImageNet example (train-log_examples164).
      {"Epoch: [0][16/5005]\tTime 67.619 (11.054)\tData 67.544 (10.785)\tLoss 6.9076 (6.9079)",
       67.619, 67.544, 11.054, 10.785},
      // ESPnet: iter_time is the data wait beside train_time (espnet_espnet4802).
      {"[train] iter_time=2.763e-04, forward_time=0.133, loss_ctc=82.949, backward_time=0.122, "
       "optim_step_time=0.073, train_time=0.429, time=1 hour, 18 minutes and 52.65 seconds",
       0.429,
       2.763e-04,
       {},
       {}},
      // mmcv's JSON log (mmcv_mmdet4394).
      {"{\"mode\": \"train\", \"epoch\": 161, \"iter\": 100, \"lr\": 0.001, \"memory\": 5572, "
       "\"data_time\": 0.19335, \"loss\": 1177.34624, \"time\": 0.97546}",
       0.97546,
       0.19335,
       {},
       {}},
      // LeRobot: the step is the update plus the data wait; "step:10" is a counter.
      {"step:10 smpl:640 loss:1.073 lr:2.0e-06 updt_s:0.296 data_s:0.004", 0.300, 0.004, {}, {}},
      // detectron2's evaluator (detectron2#4469): "Dataloading" is the wait, "Total" the step.
      {"[08/08 13:55:11 d2.evaluation.evaluator]: Inference done 2924/6028. Dataloading: 0.0008 "
       "s/iter. Inference: 0.2047 s/iter. Eval: 0.0004 s/iter. Total: 0.2060 s/iter. "
       "ETA=0:10:39",
       0.2060,
       0.0008,
       {},
       {}},
      // RSL-RL's runner (OpenTrajBooster#9): stepping the environments is the learner's input.
      {"                       Computation: 116 steps/s (collection: 218.512s, learning 0.610s)",
       218.512 + 0.610,
       218.512,
       {},
       {}},
      // PaddlePaddle/models' dygraph Transformer (models#4376): a rate of steps, "read_t" its wait.
      {"2020-02-29 13:38:58,806-INFO: step_idx: 36500, epoch: 0, batch: 36500, avg loss: "
       "3.289963, normalized loss: 1.914222, ppl: 26.841858, speed: 2.35 step/s, read_t: "
       "0.000104 s",
       1 / 2.35,
       0.000104,
       {},
       {}},
      // CNTK's C# example (CNTK#3753): times per batch in "ms/b".
      {"|Train| #: 006336 Eval:    0.382271 Loss:     0.334825 Total 737.1 ms/b : Load  11.0 "
       "ms/b Train  18.3 ms/b GetEvalLoss 613.6 ms/b Dispose   0.7 ms/b",
       0.7371,
       0.0110,
       {},
       {}},
  };
  for (const Expected& c : cases) {
    const Telemetry t = read_text(c.line);
    ASSERT_FALSE(t.steps.empty()) << c.line;
    EXPECT_NEAR(t.steps[0].step_seconds, c.step, 1e-9) << c.line;
    EXPECT_NEAR(t.steps[0].data_seconds, c.data, 1e-9) << c.line;
    EXPECT_TRUE(t.steps[0].has_data) << c.line;
    if (c.step_avg) {
      ASSERT_EQ(t.steps.size(), 2u) << c.line;
      EXPECT_TRUE(t.steps[1].average);
      EXPECT_NEAR(t.steps[1].step_seconds, *c.step_avg, 1e-9) << c.line;
      EXPECT_NEAR(t.steps[1].data_seconds, *c.data_avg, 1e-9) << c.line;
    } else {
      EXPECT_EQ(t.steps.size(), 1u) << c.line;
    }
  }
}

TEST(Vocabulary, ProgressBarsTimeTheStepOnly) {
  // tqdm / Lightning (lightning_pl9304's bar): a step time and no data wait.
  const Telemetry t = read_text(
      "Epoch 10/10:  90%|#####     | 9/10 [00:59<00:05,  5.95s/it, loss=304, v_num=1]\n"
      "Epoch 3 | Batch 468/469 | Loss 3.078954: 100%|#####| 469/469 [00:48<00:00,  9.57it/s]\n");
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_NEAR(t.steps[0].step_seconds, 5.95, 1e-9);
  EXPECT_FALSE(t.steps[0].has_data);
  EXPECT_NEAR(t.steps[1].step_seconds, 1 / 9.57, 1e-9);
  // Step times alone say how fast, not why.
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  EXPECT_THAT(d.summary, testing::HasSubstr("step times only"));
}

TEST(Vocabulary, ADataColumnAboveTheStepIsNoWaitOrTheStepIsTimedWithoutIt) {
  // timm_EfficientPyTorch: its "Data" column prints images per second, above the step on
  // every line.
  const Telemetry t = read_text(
      "Epoch: [0][430/5005]    Time 0.409 (0.405)      Data 626.6 (728.0)      Loss 6.8381\n"
      "Epoch: [0][440/5005]    Time 0.364 (0.404)      Data 704.2 (727.9)      Loss 6.8506\n");
  ASSERT_EQ(t.steps.size(), 4u);  // two lines and their running averages
  for (const StepSample& s : t.steps) EXPECT_FALSE(s.has_data);
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_THAT(t.notes[0].text, testing::HasSubstr("larger than the step on most lines"));
  // datalog_OpenAnimateAnyone101: a steady step with a 19.6 s wait on one line: the step is
  // timed without its wait, so each step is the two together.
  const Telemetry u = read_text(
      "load_data_time: 0.0001, train_step_time: 0.665.\n"
      "load_data_time: 0.0001, train_step_time: 0.652\n"
      "load_data_time: 19.6173, train_step_time: 0.686\n"
      "load_data_time: 0.0002, train_step_time: 0.664\n");
  ASSERT_EQ(u.steps.size(), 4u);
  EXPECT_TRUE(u.steps[2].has_data);
  EXPECT_NEAR(u.steps[2].step_seconds, 19.6173 + 0.686, 1e-9);
  ASSERT_EQ(u.notes.size(), 1u);
  EXPECT_THAT(u.notes[0].text, testing::HasSubstr("timed without its wait"));
  EXPECT_EQ(diagnose_telemetry(u).verdict, Verdict::kInputBound);
}

TEST(Vocabulary, ThroughputLinesAndTheGpusTheyName) {
  const Telemetry t = read_text(
      "1\timages/sec: 198.0 +/- 0.0 (jitter = 0.0)\t8.458\n"
      "total images/sec: 197.98\n"
      "Img/sec per GPU: 290.1 +-0.8\n"
      "Total img/sec on 8 GPU(s): 2320.6 +-6.4\n"
      "2 nodes: 56.1 samples/s (baseline: 55.7), 14364 tokens/s/gpu, Train Step MFU': 0.521\n");
  ASSERT_EQ(t.rates.size(), 6u);
  EXPECT_EQ(t.rates[0].per_second, 198.0);
  EXPECT_EQ(t.rates[0].unit, "images");
  EXPECT_TRUE(t.rates[1].total);
  EXPECT_TRUE(t.rates[2].per_gpu);
  EXPECT_EQ(t.rates[2].per_second, 290.1);
  EXPECT_TRUE(t.rates[3].total);
  EXPECT_EQ(t.rates[3].per_second, 2320.6);
  EXPECT_EQ(t.rates[3].gpus, 8);
  EXPECT_EQ(t.rates[4].unit, "samples");
  EXPECT_EQ(t.rates[5].unit, "tokens");
  EXPECT_TRUE(t.rates[5].per_gpu);
}

TEST(Vocabulary, GpuAndNodeCountsAsPeopleWriteThem) {
  const auto gpus = [](const char* line) { return gpu_count_of(line); };
  EXPECT_EQ(gpus(" 1 gpu batch_size=32"), 1);
  EXPECT_EQ(gpus("2 gpus batch_size=32"), 2);
  EXPECT_EQ(gpus("**1node 4GPU (1080ti x 4)**"), 4);
  EXPECT_EQ(gpus("I am training on 4 12GB GeForce GTX TITAN X"), std::nullopt);
  EXPECT_EQ(gpus("When i use single V100, the first epoch cost:"), 1);
  EXPECT_EQ(gpus("While i use 3 V100 to speed up, i got:"), 3);
  // Processes per node on each of the nodes: the job's GPUs.
  EXPECT_EQ(gpus("torchrun --nproc_per_node=8 --nnodes=2 -m training.main"), 16);
  EXPECT_EQ(gpus("mpirun -np 4 --allow-run-as-root python3 tf_cnn_benchmarks.py"), 4);
  EXPECT_EQ(gpus("an 8xA100 node"), 8);
  EXPECT_EQ(gpus("GPUs: 8"), 8);
  EXPECT_EQ(gpus("GPU 0 at 100 %, GPUs 1-7 at 0 %"), std::nullopt);
  // A progress bar's counter is no "2 x 3090": 300000 is its total, not a model.
  EXPECT_EQ(gpus("2/300000 [00:10<00:20,  1.00s/it]"), std::nullopt);
  EXPECT_EQ(gpus("2 3090ti"), 2);
  // MXNet's and Keras' list of device ids; a line comparing two counts is no heading.
  EXPECT_EQ(gpus("python image_classification.py --model vgg16 --gpus 0,1,2,3"), 4);
  EXPECT_EQ(gpus("how to calculate `speed-up ratio` between 1GPU and 8GPU"), std::nullopt);
  // A list's dash glued to a count (tf#36008): "-4xGPU's within the node total images/sec".
  EXPECT_EQ(gpus("-4xGPU's within the node total images/sec:   ~4712"), 4);
  EXPECT_EQ(gpus("-8xGPU's across the nodes total images/sec: ~7302"), 8);
  bool flag = false;
  EXPECT_EQ(gpu_count_of("python train.py --gpus 2 --batch-size 32", nullptr, &flag), 2);
  EXPECT_TRUE(flag);
  // Counts in the words of held-out-4's pastes: "Dual P4 GPU" (imagen-pytorch#214), "1-GPU:"
  // (tensorflow#46800), "on H100" beside "on 2x H100" (sd-scripts#1434), "with only GPU"
  // (Lightning#15004), Chinese cards and machines (one-glm#11).
  EXPECT_EQ(gpus("2. Dual P4 GPU (Same host): 2.6 it/sec"), 2);
  EXPECT_EQ(gpus("3. Quad P4 GPU (Two hosts): 285.15 sec/it"), 4);
  EXPECT_EQ(gpus("1-GPU:"), 1);
  EXPECT_EQ(gpus("When training batch size 4 on H100 the speed is 1.27 second / it"), 1);
  EXPECT_EQ(gpus("When training batch size 4 on 2x H100 the speed is 2.05 second / it"), 2);
  EXPECT_EQ(gpus("When training with only GPU using DDPStrategy, each batch takes ~ 3s/it"), 1);
  EXPECT_EQ(gpus("only GPU 0 computes"), std::nullopt);
  EXPECT_EQ(gpus("| Eager\xe5\x8d\x95\xe5\x8d\xa1    | 89.81(samples/s)   | 5307MiB |"), 1);
  EXPECT_EQ(gpus("| Eager\xe5\x8d\x95\xe6\x9c\xba"
                 "8\xe5\x8d\xa1 | 276.82 (samples/s) |"),
            8);
  EXPECT_EQ(gpus("with two or three nodes(8 v100 32G)"), std::nullopt);  // no "3 V100"
  EXPECT_EQ(gpus("With multi-gpu (2x 3090)"), 2);                        // diffusers#1851
  EXPECT_EQ(gpus("on H100 GPU the speed is 1.2 s/it"), 1);
  EXPECT_EQ(gpus("2 3090-ti"), 2);
  EXPECT_EQ(gpus("$ CUDA_VISIBLE_DEVICES=0,1,2 python train_v2_multi_example.py"), 3);
  bool env_flag = false;
  EXPECT_EQ(gpu_count_of("CUDA_VISIBLE_DEVICES=0 python train.py", nullptr, &env_flag), 1);
  EXPECT_FALSE(env_flag);  // what the job sees beats a heading naming the machine
  // A count per node beside the nodes: the job's GPUs are both (dlrm#356, mxnet#10247,
  // horovod#288); a count per node without a node count is the count.
  EXPECT_EQ(gpus("when using 2 nodes (each with 8 A100 GPUs again), the speed is 3 it/s"), 16);
  EXPECT_EQ(gpus("Two node with 3 GPUs each: 300 samples/sec"), 6);
  EXPECT_EQ(gpus("Multinode mode (2 nodes with 4 GPUs each):"), 8);
  EXPECT_EQ(gpus("4 machines, 8 GPUs per machine"), 32);
  EXPECT_EQ(gpus("2 servers with 4 V100 in each server"), 8);
  EXPECT_EQ(gpus("8 GPUs per node"), 8);
  EXPECT_EQ(gpus("2 nodes, 8 GPUs"), 8);  // not said to be each node's: as written
  EXPECT_EQ(gpus("we use 2 nodes and 8 GPUs, each with 80GB memory"), 8);
  EXPECT_EQ(gpus("2 nodes, 8 GPUs each with batch size 32"), 8);
  std::optional<int> nodes;
  gpu_count_of("2node 8GPU", &nodes);
  EXPECT_EQ(nodes, 2);
  nodes.reset();
  gpu_count_of("1 node: 29.7 samples/s", &nodes);
  EXPECT_EQ(nodes, 1);
}

TEST(Vocabulary, ASentenceComparingTwoScalesSaysWhichWasSlower) {
  EXPECT_EQ(larger_scale_slower(
                "I found using 2 nodes is significantly slower than using 1 node 8 gpus."),
            true);  // fairchem#432
  EXPECT_EQ(larger_scale_slower(R"(But "2node 8GPU" is too much slower than  "1node 4GPU")"),
            true);  // horovod#693
  EXPECT_EQ(larger_scale_slower("the training speed of multi gpu mode is much slower than "
                                "single gpu:"),
            true);  // CasMVSNet_pl#31
  EXPECT_EQ(larger_scale_slower("One observation is that using 4 GPUs gives worse throughput "
                                "than using 2 GPus"),
            true);  // tf-models#3311: the comparative a few words before "than"
  EXPECT_EQ(larger_scale_slower("8 GPUs are 5x faster than 1 GPU"), false);
  EXPECT_EQ(larger_scale_slower("8 GPUs is not faster than 1 GPU"), true);
  EXPECT_EQ(larger_scale_slower("with 2 GPUs it isn't any faster than with 1 GPU"), true);
  EXPECT_EQ(larger_scale_slower("more than 2 gpus: 8 GPUs is slower than 1 GPU"), true);
  // Chinese "A 比 B 慢/快": fastreid#656's "多机单卡比单机单卡慢66倍" (one card on each of
  // several machines 66 times slower than one card on one machine); "单机8卡比单机1卡快" (8 cards
  // faster than 1); not what should be: "按正常情况，2个节点训练比单个节点要快很多" (normally two
  // nodes train much faster than one, llamafactory#5014).
  EXPECT_EQ(larger_scale_slower("问题描述：相同条件下，多机单卡比单机单卡慢66倍。"), true);
  EXPECT_EQ(larger_scale_slower("单机8卡比单机1卡快"), false);
  EXPECT_EQ(larger_scale_slower("按正常情况，2个节点训练比单个节点要快很多"), std::nullopt);
  // ... unless the sentence turns after "但" (but) to what was seen; "比如" (for example) is no
  // comparison, the "比" after it is.
  EXPECT_EQ(larger_scale_slower("按理说多机应该更快，但多机比单机慢"), true);
  EXPECT_EQ(larger_scale_slower("比如多卡比单卡慢很多"), true);
  EXPECT_EQ(larger_scale_slower("1 GPU is faster than 4 GPUs"), true);
  // No two scales: a machine against the paper, a loader against another.
  EXPECT_EQ(larger_scale_slower("my 8V100 machine is three/four times slower than this"),
            std::nullopt);
  EXPECT_EQ(larger_scale_slower("webdataset loads the dataset slower than pytorch"), std::nullopt);
}

TEST(Vocabulary, ASentenceSayingTheSpeedIsTheSameAtAnyScaleSaysWhichScale) {
  // gluoncv#820, speechbrain#990, mxnet-ssd's issue 12, tf#57890, mxnet#6450.
  EXPECT_EQ(speed_unchanged_with("I've test the gluon mask-rcnn on 1/2/4 gpus, but the training "
                                 "speed remains about 1 images/second no matter how many gpus "
                                 "are used, and the gpu usage in nvidia-smi is very low too."),
            ScaleKind::kGpus);
  EXPECT_EQ(speed_unchanged_with("and even with ddp on 4 gpu cards, the training speed does not "
                                 "reduce at all. I guess the cpu is the bottleneck?"),
            ScaleKind::kGpus);
  EXPECT_EQ(speed_unchanged_with("only 20 images/sec even I set batch_image =32 on 1 GPU or 4 "
                                 "GPU even larger."),
            ScaleKind::kGpus);
  EXPECT_EQ(speed_unchanged_with("Tried with 4, 8, 12 machine it's just take same time it takes "
                                 "for single machine."),
            ScaleKind::kNodes);
  EXPECT_EQ(speed_unchanged_with("The speed (samples/sec) stays relatively the same regardless "
                                 "of the number of machines I have"),
            ScaleKind::kNodes);
  // What else the sentence varied, or no speed, or no scale: nothing is read.
  EXPECT_EQ(speed_unchanged_with("This phenomenon exists no matter how many workers I choose, "
                                 "the speed drops"),
            std::nullopt);  // DALI#1325: workers, not GPUs
  EXPECT_EQ(speed_unchanged_with("On 4 GPUs, changing num_workers does not change the speed."),
            std::nullopt);
  EXPECT_EQ(speed_unchanged_with("And I find that `--fp16` doesn't speed up the training either."),
            std::nullopt);  // yolox#1383: no scale
  EXPECT_EQ(speed_unchanged_with("With 8 GPUs all the ranks start at the same time, speed 2 it/s"),
            std::nullopt);  // "at the same time": together, not as fast
  EXPECT_EQ(speed_unchanged_with("no matter how many gpus I use, it runs out of memory"),
            std::nullopt);  // said of memory
}

TEST(Vocabulary, WhatAReviewFoundTheScalingSentencesMisread) {
  // Change denied of something else than the speed, work done "in the same time", a start "at
  // about the same time", no sameness at all, a question, a comparative, a link: nothing.
  for (const char* sentence : {
           "On 4 GPUs the loss does not decrease anymore after some time.",
           "With 8 GPUs the epoch time is 10 min and the loss does not improve after epoch 3.",
           "Using 4 GPUs does not change the results and the time is fine",
           "I can't increase my learning rate with 8 GPUs because training becomes unstable "
           "over time.",
           "Running on 2 machines does not reduce accuracy, and throughput is 3.5x.",
           "We have 2 nodes and the job has been running for a long time with no change in loss.",
           "With 8 GPUs I process 8x the images in the same time.",
           "Both runs with 2 nodes started at about the same time.",
           "No matter how many GPUs I use, the time per epoch goes down linearly.",
           "no matter how many GPUs I use, NCCL times out.",
           "Regardless of the number of GPUs, the first epoch takes a long time because of "
           "caching.",
           "Should I train on 1 GPU or 4 GPUs for speed?",
           "I tried 1 or 4 GPUs and 4 is much faster at 300 images/sec.",
           "no matter how many GPUs I use it crashes, see https://stackoverflow.com/q/123",
           "With 4 GPUs, the GPU memory stays at 10 GB and the speed is 2x faster.",
       }) {
    EXPECT_EQ(speed_unchanged_with(sentence), std::nullopt) << sentence;
  }
  // What it missed: "at the same speed", a speed that "stays the same" beside "samples".
  EXPECT_EQ(speed_unchanged_with("Training on 4 GPUs runs at the same speed as on 1 GPU."),
            ScaleKind::kGpus);
  EXPECT_EQ(speed_unchanged_with("with 2 machines the speed stays the same at 300 samples/sec"),
            ScaleKind::kNodes);
  // A speed-up or a scaling efficiency in percent, one GPU against the others, memory: no
  // utilisation at two scales.
  for (const char* sentence : {
           "nvidia-smi shows 100% GPU utilization on 1 GPU, but with 4 GPUs training is only 50% "
           "faster.",
           "With 2 GPUs I get 90% scaling efficiency, with 8 GPUs only 60%, GPU util is high.",
           "With DataParallel one GPU shows 98% GPU-Util while the other 7 GPUs show 10%",
           "GPU mem usage is 95% on 1 GPU and 40% on 4 GPUs with FSDP",
       }) {
    EXPECT_EQ(utilisation_at_scales(sentence), std::nullopt) << sentence;
  }
  // A line of thousands of percentages reads its first few (it took seconds when each one
  // searched the whole sentence; no time is asserted, the fuzzer and the suite's run show it).
  std::string many = "gpu util on 4 gpus";
  for (int k = 0; k < 5000; ++k) many += " 5%";
  EXPECT_EQ(utilisation_at_scales(many), std::nullopt);
}

TEST(Vocabulary, ASentenceGivingTheGpusUtilisationAtTwoScalesGivesBoth) {
  // diffusers#5902.
  const auto machines = utilisation_at_scales(
      "The GPU utilization is around 95% on a single machine, but it drops to only 63% when "
      "training on two machines.");
  ASSERT_TRUE(machines);
  EXPECT_EQ(machines->kind, ScaleKind::kNodes);
  EXPECT_EQ(machines->smaller_scale, 1);
  EXPECT_EQ(machines->larger_scale, 2);
  EXPECT_EQ(machines->smaller, 95);
  EXPECT_EQ(machines->larger, 63);
  // The larger scale first.
  const auto gpus =
      utilisation_at_scales("with 4 GPUs the gpu util is only 45 %, while with 1 GPU it is 98%");
  ASSERT_TRUE(gpus);
  EXPECT_EQ(gpus->kind, ScaleKind::kGpus);
  EXPECT_EQ(gpus->smaller_scale, 1);
  EXPECT_EQ(gpus->larger, 45);
  // The CPUs' or the memory's, or one scale's range: nothing.
  EXPECT_EQ(utilisation_at_scales("CPU usage is 100% with 4 GPUs but 50% with 1 GPU"),
            std::nullopt);
  EXPECT_EQ(utilisation_at_scales("GPU memory usage is 90% on 8 GPUs and 20% on 1 GPU"),
            std::nullopt);
  EXPECT_EQ(utilisation_at_scales("my GPU util is 30% ~ 40% on 4 GPUs"), std::nullopt);
}

TEST(Vocabulary, ProseAndNumbersThatAreNotTimesAreNotRead) {
  for (const char* text : {
           "my training is slow, any idea? I have 8 GPUs and 64 cores, batch 256",
           "step:10 smpl:640 loss:1.073",       // counters
           "batch: 32, lr: 0.1, epochs: 90",    // a configuration
           "ETA: 1 day, 11:11:04, time 12:34",  // clocks
       }) {
    Telemetry t;
    try {
      parse_telemetry(text, "msg.txt", t);
    } catch (const Error&) {
    }
    EXPECT_TRUE(t.steps.empty()) << text;
  }
}

TEST(Vocabulary, NamedValuesKeepUnitsNamesAndAverages) {
  const auto v = named_values("bch(ms): 557.78 | smp(ms): 538.41 | thrpt(sec/sec): 47.78");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].name, "bch");
  EXPECT_EQ(v[0].unit, "ms");
  EXPECT_EQ(v[2].unit, "sec/sec");
  const auto bar = named_values("  GPU utilization  [||||||||||||||||          33%]");
  ASSERT_EQ(bar.size(), 1u);
  EXPECT_EQ(bar[0].name, "gpu_utilization");
  EXPECT_EQ(bar[0].value, 33);
  EXPECT_EQ(bar[0].unit, "%");
  const auto avg = named_values("Time  0.512 ( 1.204)\tData  0.301 ( 0.989)");
  ASSERT_EQ(avg.size(), 2u);
  EXPECT_EQ(avg[1].average, 0.989);
}

TEST(Vocabulary, TablesTimersAndProseNameTheirNumbersToo) {
  // A table's row is named by its first cell, notes in parentheses left out (CubiCasa5k#26).
  const auto row = named_values("Load batch (n=24)|0.744230");
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0].name, "load_batch");
  EXPECT_EQ(meaning_of(row[0]).quantity, Quantity::kDataWait);
  // Megatron's and DeepSpeed's timers state their unit once, up front.
  const auto timers = named_values("time (ms) | forward-backward: 1180.22 | batch-generator: 5.3");
  ASSERT_EQ(timers.size(), 2u);
  EXPECT_EQ(timers[1].unit, "ms");
  EXPECT_EQ(meaning_of(timers[1]).quantity, Quantity::kDataWait);
  EXPECT_NEAR(*seconds_of(timers[1]), 0.0053, 1e-12);
  const auto megatron = named_values(
      " iteration      100/  500000 | consumed samples:         3200 | elapsed time per "
      "iteration (ms): 1234.5 | learning rate: 1.0E-04 |");
  const auto step = std::find_if(megatron.begin(), megatron.end(), [](const NamedValue& v) {
    return meaning_of(v).quantity == Quantity::kStep;
  });
  ASSERT_NE(step, megatron.end());
  EXPECT_NEAR(*seconds_of(*step), 1.2345, 1e-12);
  // Words people put between a name and its number, and a rate typed with spaces.
  const auto prose = named_values("the GPU utilization is almost 30%");
  ASSERT_EQ(prose.size(), 1u);
  EXPECT_EQ(meaning_of(prose[0]).quantity, Quantity::kGpuUtilisation);
  // OpenCLIP's "(t)" marks a time; PaddleClas times its step as "elapse".
  const Telemetry clip = read_text(
      "2024-11-28,04:39:18 | INFO | Train Epoch: 0 [400564224/512000000 (78%)] Data (t): 12.822 "
      "Batch (t): 14.049, 1781.07/s, 222.633/s/gpu LR: 0.000057\n");
  ASSERT_EQ(clip.steps.size(), 1u);
  EXPECT_NEAR(clip.steps[0].data_seconds, 12.822, 1e-12);
  EXPECT_NEAR(clip.steps[0].step_seconds, 14.049, 1e-12);
  const auto paddle = named_values("epoch:0   train step:28060 loss:  0.9792 elapse: 0.436s");
  ASSERT_FALSE(paddle.empty());
  EXPECT_EQ(meaning_of(paddle.back()).quantity, Quantity::kStep);
  // Keras' progress bar, DeepSpeed's throughput timer, a utilisation "about" a number.
  const auto keras = named_values("100/100 [====] - 5s 50ms/step - loss: 0.1");
  const auto keras_step = std::find_if(keras.begin(), keras.end(), [](const NamedValue& v) {
    return meaning_of(v).quantity == Quantity::kStep;
  });
  ASSERT_NE(keras_step, keras.end());
  EXPECT_NEAR(*seconds_of(*keras_step), 0.05, 1e-12);
  const auto ds =
      named_values("epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=123.45");
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(meaning_of(ds.back()).rate_unit, "samples");
  const auto about = named_values("My GPU util is ~30% and the CPU usage is around 100%");
  ASSERT_EQ(about.size(), 2u);
  EXPECT_EQ(meaning_of(about[0]).quantity, Quantity::kGpuUtilisation);
  EXPECT_EQ(meaning_of(about[1]).quantity, Quantity::kCpuUtilisation);
  const auto spaced = named_values("Before: 3 it /s, data_time 0.217");
  ASSERT_EQ(spaced.size(), 2u);
  EXPECT_EQ(spaced[0].unit, "it/s");
  EXPECT_EQ(meaning_of(spaced[0]).rate_unit, "iterations");
  // A step typed with spaces, a rate's unit in parentheses after it (one-glm#11), a change
  // that is no reading, a utilisation "still merely" at a number.
  const auto second = named_values("the speed is 1.27 second / it");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].unit, "second/it");
  EXPECT_NEAR(*seconds_of(second[0]), 1.27, 1e-12);
  const auto per_step = named_values("its training at a rate of about 230 seconds per step");
  ASSERT_EQ(per_step.size(), 1u);
  EXPECT_EQ(per_step[0].unit, "seconds/step");
  EXPECT_EQ(meaning_of(per_step[0]).quantity, Quantity::kStep);
  const auto glued = named_values("Trainning on RTX3090 0.5s / it");
  ASSERT_FALSE(glued.empty());
  EXPECT_EQ(glued.back().unit, "s/it");
  const auto busy = named_values("the DataLoader is busy around 120 seconds per step");
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(meaning_of(busy[0]).quantity, Quantity::kDataWait);
  const auto cell = named_values("| Eager | 89.81(samples/s)   | 5307MiB      |");
  ASSERT_EQ(cell.size(), 2u);
  EXPECT_EQ(meaning_of(cell[0]).rate_unit, "samples");
  EXPECT_EQ(meaning_of(cell[1]).quantity, Quantity::kNone);
  const auto delta = named_values("this speeds up by ~1.2 s/batch");
  ASSERT_EQ(delta.size(), 1u);
  EXPECT_EQ(meaning_of(delta[0]).quantity, Quantity::kNone);
  // The trainers of I2L-MeshNet, Hand4Whole, Pose2Pose: "speed: total(gpu s rread)s/itr".
  const Telemetry split = read_text(
      "09-24 22:53:02 Epoch 0/7 itr 52/3489: lr: 0.0001 speed: 3.52(0.65s r2.79)s/itr "
      "3.41h/epoch loss_smpl_pose: 0.2893\n");
  ASSERT_EQ(split.steps.size(), 1u);
  EXPECT_NEAR(split.steps[0].step_seconds, 3.52, 1e-12);
  EXPECT_NEAR(split.steps[0].data_seconds, 2.79, 1e-12);
  // Prose puts the name after a percentage (Evo-1#24); Chinese names a throughput (libai#312).
  const auto after = named_values("I am using a single H200 GPU and seeing ~20% GPU utilization");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(meaning_of(after[0]).quantity, Quantity::kGpuUtilisation);
  const auto compute = named_values("it use only 695MiB GPU RAM and < 6% GPU Compute");
  ASSERT_EQ(compute.size(), 2u);
  EXPECT_EQ(meaning_of(compute[1]).quantity, Quantity::kGpuUtilisation);  // flair#1642
  const auto cards = named_values("8\xe5\x8d\xa1\xe5\x90\x9e\xe5\x90\x90:    ~280");
  ASSERT_FALSE(cards.empty());
  EXPECT_EQ(meaning_of(cards.back()).rate_unit, "samples");
  EXPECT_EQ(gpu_count_of("8\xe5\x8d\xa1\xe5\x90\x9e\xe5\x90\x90:    ~280"), 8);
  // More trainers' names: PaddleDetection's data_cost, fairseq's ups, torchtitan's tps,
  // InternLM's tgs, TensorFlow's global_step/sec, NeMo's train_step_timing.
  const auto ppdet = named_values(
      "eta: 67 days, 10:28:48 batch_cost: 0.1664 data_cost: 0.0034 "
      "ips: 96.1758 images/s");
  ASSERT_GE(ppdet.size(), 3u);  // the eta's "67 days" is a value too, of no meaning
  EXPECT_EQ(meaning_of(ppdet[ppdet.size() - 2]).quantity, Quantity::kDataWait);
  const auto fairseq = named_values("wps=13120.1, ups=3.21, wpb=4087.5");
  ASSERT_EQ(fairseq.size(), 3u);
  EXPECT_EQ(meaning_of(fairseq[1]).rate_unit, "iterations");
  EXPECT_EQ(meaning_of(named_values("tps: 3456")[0]).rate_unit, "tokens");
  // Nameless rates of iterations are a progress bar's steps: Chainer's (ESPnet), batches/s.
  const auto chainer = named_values("    4.0445 iters/sec. Estimated time");
  ASSERT_FALSE(chainer.empty());
  EXPECT_EQ(meaning_of(chainer[0]).quantity, Quantity::kStep);
  EXPECT_NEAR(*seconds_of(chainer[0]), 1 / 4.0445, 1e-12);
  EXPECT_EQ(meaning_of(named_values("speed: 2.469 batches/s")[0]).rate_unit, "iterations");
  // Composer#858: a mean in batch/s, named by what it is the mean of, and its spread, which is
  // no reading.
  const auto composer = named_values("Baseline: train mean 4.242 batch/s std 0.090 batch/s");
  ASSERT_EQ(composer.size(), 1u);
  EXPECT_EQ(meaning_of(composer[0]).rate_unit, "iterations");
  EXPECT_EQ(meaning_of(NamedValue{"std", "batch/s", 0.09, {}, 0}).quantity, Quantity::kNone);
  const auto intern = named_values("step=9,tgs (tokens/gpu/second)=2104.89,lr=2.2e-06");
  const auto tgs = std::find_if(intern.begin(), intern.end(), [](const NamedValue& v) {
    return meaning_of(v).quantity == Quantity::kRate;
  });
  ASSERT_NE(tgs, intern.end());
  EXPECT_TRUE(meaning_of(*tgs).per_gpu);
  EXPECT_EQ(meaning_of(named_values("global_step/sec: 0.402755")[0]).rate_unit, "iterations");
  EXPECT_EQ(meaning_of(named_values("train_step_timing=1.23")[0]).quantity, Quantity::kStep);
  // A percentage named before it keeps that name; a unit that counts something else is no
  // rate of the thing a name says; OpenNMT's source/target tokens per second.
  const auto both = named_values("GPU util 95% CPU util 20%");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(meaning_of(both[0]).quantity, Quantity::kGpuUtilisation);
  EXPECT_EQ(meaning_of(both[1]).quantity, Quantity::kCpuUtilisation);
  EXPECT_EQ(meaning_of(named_values("memory throughput 900 GB/s")[0]).quantity, Quantity::kNone);
  const auto onmt = named_values("lr: 1.00000; 23006/21669 tok/s;     18 sec");
  ASSERT_EQ(onmt.size(), 3u);
  EXPECT_EQ(onmt[1].value, 23006);
  EXPECT_EQ(meaning_of(onmt[1]).rate_unit, "tokens");
  EXPECT_EQ(meaning_of(onmt[2]).quantity, Quantity::kNone);
  const auto still = named_values("GPU utilization is still merely 5%");
  ASSERT_EQ(still.size(), 1u);
  EXPECT_EQ(meaning_of(still[0]).quantity, Quantity::kGpuUtilisation);
}

TEST(Vocabulary, AWaitBesideItsStepOnAnotherLineOrARateOfIterations) {
  // The whole CubiCasa5k#26 table: the wait's row, then the iteration's total.
  const Telemetry table =
      read_telemetry_files({pasted("timing_CubiCasa5k26-load-batch-0.74-of-0.91s-table.txt")});
  ASSERT_EQ(table.steps.size(), 1u);
  EXPECT_NEAR(table.steps[0].data_seconds, 0.744230, 1e-12);
  EXPECT_NEAR(table.steps[0].step_seconds, 0.912715, 1e-12);
  // Megatron: the timers' batch-generator belongs to the next iteration line.
  const Telemetry meg = read_text(
      " iteration      100/  500000 | elapsed time per iteration (ms): 1234.5 | lm loss: 7.1 |\n"
      "time (ms) | forward-backward: 1180.22 | optimizer: 40.11 | batch-generator: 500.3\n"
      " iteration      200/  500000 | elapsed time per iteration (ms): 1230.1 | lm loss: 6.9 |\n");
  ASSERT_EQ(meg.steps.size(), 2u);
  EXPECT_FALSE(meg.steps[0].has_data);
  EXPECT_NEAR(meg.steps[1].data_seconds, 0.5003, 1e-12);
  EXPECT_NEAR(meg.steps[1].step_seconds, 1.2301, 1e-12);
  // A table of cumulative timers with a data row and the compute's rows but no total
  // (triangle-splatting#9): the step is their sum.
  const Telemetry timers = read_text(
      "=============== Timer Logs: Training ===============\n"
      "data loading        :   7402.723s\n"
      "forward pass        :     35.420s\n"
      "loss calculation    :     28.251s\n"
      "backward pass       :    190.336s\n"
      "optimizer step      :     25.872s\n"
      "model update        :      1.068s\n");
  ASSERT_EQ(timers.steps.size(), 1u);
  EXPECT_NEAR(timers.steps[0].data_seconds, 7402.723, 1e-9);
  EXPECT_NEAR(timers.steps[0].step_seconds, 7402.723 + 35.420 + 28.251 + 190.336 + 25.872 + 1.068,
              1e-9);
  // A total above its breakdown (NeMo-RL#1844): the wait below is part of the step above.
  const Telemetry breakdown = read_text(
      "  \xe2\x80\xa2 Total step time: 0.33s\n"
      "  \xe2\x80\xa2 policy_training: 0.32s (99.5%)\n"
      "  \xe2\x80\xa2 data_processing: 0.00s (0.4%)\n");
  ASSERT_EQ(breakdown.steps.size(), 1u);
  EXPECT_TRUE(breakdown.steps[0].has_data);
  EXPECT_NEAR(breakdown.steps[0].step_seconds, 0.33, 1e-12);
  // A wait far above a timer row is no table's; rows that do not follow each other are none:
  // the wait is read alone.
  const Telemetry apart = read_text(
      "data loading: 5.0s\n\nsome words\nmore words\nand more\nstill more\nforward pass: 0.2s\n");
  EXPECT_TRUE(apart.steps.empty());
  ASSERT_EQ(apart.lone_waits.size(), 1u);
  EXPECT_EQ(diagnose_telemetry(apart).verdict, Verdict::kUnknown);
  // "3 it/s" beside a data time is the step it waits in (geti#5958).
  const Telemetry rate = read_text("Before: 3 it /s, data_time 0.217\n");
  ASSERT_EQ(rate.steps.size(), 1u);
  EXPECT_NEAR(rate.steps[0].step_seconds, 1.0 / 3, 1e-12);
  EXPECT_NEAR(rate.steps[0].data_seconds, 0.217, 1e-12);
}

TEST(Vocabulary, AVeryLongLineIsPassedOverAndCountedInLinearTime) {
  // 10 MB of one line (a pasted blob) between two real lines: read in one pass, the blob
  // skipped and counted, the lines around it read.
  std::string text = "Epoch: [0][1/9]\tTime 0.5 (0.5)\tData 0.4 (0.4)\n";
  text += std::string(10 << 20, 'a') + "\n";
  text += "Epoch: [0][2/9]\tTime 0.5 (0.5)\tData 0.4 (0.4)\n";
  const Telemetry t = read_text(text);
  EXPECT_EQ(t.steps.size(), 4u);
  ASSERT_FALSE(t.files.empty());
  EXPECT_EQ(t.files[0].long_lines, 1);
  // And a paste of nothing but such a line is a clear error saying so.
  try {
    read_text(std::string(100000, 'x'));
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_THAT(e.message(), testing::HasSubstr("1 line over 16 KiB was not read"));
  }
}

TEST(LoaderSettings, TheSettingThatLabelsARunInAnyWords) {
  EXPECT_EQ(loader_setting_of("num_workers=2 :")->workers, 2);
  EXPECT_EQ(loader_setting_of("python train.py --workers 8 --gpus 1")->workers, 8);
  EXPECT_EQ(loader_setting_of("with 4 dataloader workers")->workers, 4);
  EXPECT_EQ(loader_setting_of("PyTorch, num_workers=1, pin_memory=true, prefetch_load=true")->label,
            "num_workers=1, pinned memory, prefetching");
  EXPECT_EQ(loader_setting_of("-- Persistent worker + Pin memory")->label,
            "persistent workers, pinned memory");
  EXPECT_EQ(loader_setting_of("num_workers=4, persistent_workers=false, ")->label,
            "num_workers=4, no persistent workers");
  EXPECT_TRUE(loader_setting_of("GoTorch, random data")->synthetic);
  // Horovod's and BytePS's "worker" is a machine; a run on 8 GPUs names no loader setting.
  EXPECT_FALSE(loader_setting_of("synthetic - 1 worker 8 gpus")->workers);
  EXPECT_FALSE(loader_setting_of("2 workers 8 gpus each"));
  EXPECT_FALSE(loader_setting_of("Epoch 1: 7.6 it/s"));
  // A setting turned off is a run of its own.
  EXPECT_EQ(loader_setting_of("- Without multiproc")->label, "no multiprocess loading");
  EXPECT_EQ(loader_setting_of("- With multiproc")->label, "multiprocess loading");
  EXPECT_EQ(loader_setting_of("w/o pin memory")->label, "no pinned memory");
}

TEST(LoaderSettings, ARateThatFollowsTheSettingIsALoaderTheStepsWaitFor) {
  // gotorch#177: a table of settings against the same model fed random data.
  const Diagnosis table = diagnose_telemetry(
      read_telemetry_files({pasted("throughput_gotorch177-resnet50-p100-samples-per-sec-by-num-"
                                   "workers.txt")}));
  EXPECT_EQ(table.verdict, Verdict::kInputBoundCpu) << table.summary;
  EXPECT_EQ(table.confidence, Confidence::kMedium);
  EXPECT_NE(table.summary.find("22 samples/s with num_workers=0"), std::string::npos)
      << table.summary;
  EXPECT_NE(table.summary.find("206 samples/s"), std::string::npos) << table.summary;
  // deltainterpolator#3: runs under headings, the first without a setting named.
  const Diagnosis headed = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_deltainterpolator3-a6000-it-per-sec-persistent-workers-windows.txt")}));
  EXPECT_EQ(headed.verdict, Verdict::kInputBoundCpu) << headed.summary;
  EXPECT_NE(headed.summary.find("persistent workers, pinned memory"), std::string::npos)
      << headed.summary;
  // cruijff_kit#514: num_workers 0 -> 4 moves the rate 6 %: the loader keeps up.
  const Diagnosis flat = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_cruijff_kit514-torchtune-num-workers-benchmark-table-cutoff.txt")}));
  EXPECT_EQ(flat.verdict, Verdict::kHealthy) << flat.summary;
  EXPECT_EQ(flat.confidence, Confidence::kLow);
  EXPECT_NE(flat.summary.find("131 tokens/s with num_workers=0"), std::string::npos)
      << flat.summary;
  // verl#122: tqdm's s/it without and with loading in worker processes.
  const Diagnosis multiproc = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_verl122-sft-trainer-tqdm-s-per-it-gpu-util-55-vs-95-multiproc-"
              "dataloader.txt")}));
  EXPECT_EQ(multiproc.verdict, Verdict::kInputBoundCpu) << multiproc.summary;
  // Real data far below synthetic data, one setting each: the input costs the difference.
  const Diagnosis synthetic = diagnose_telemetry(
      read_text("synthetic data:\nEpoch 1: 900 images/sec\nEpoch 2: 910 images/sec\n\nreal data, "
                "num_workers=8:\nEpoch 1: 300 images/sec\nEpoch 2: 310 images/sec\n"));
  EXPECT_EQ(synthetic.verdict, Verdict::kInputBound) << synthetic.summary;
  // The same setting twice is no comparison.
  const Diagnosis same = diagnose_telemetry(read_text(
      "num_workers=8:\nEpoch 1: 300 images/sec\nnum_workers=8:\nEpoch 2: 310 images/sec\n"));
  EXPECT_EQ(same.verdict, Verdict::kUnknown) << same.summary;
}

TEST(Scaling, CountsWrittenInCellsCardsAndRatesInsideNotes) {
  // tensorflow/models#4457: "1 GPU | 1.11" under "GPUs | Global steps/sec".
  const Diagnosis cells = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_tfmodels4457-transformer-mirroredstrategy-1vs4gpu-global-steps-per-"
              "sec.txt")}));
  ASSERT_TRUE(cells.numbers.scaling) << cells.summary;
  EXPECT_EQ(cells.numbers.scaling->unit, "iterations");
  // Each global step holds the 4 GPUs' batches: 0.34 steps a second are 4 x 0.34 GPU batches.
  EXPECT_NEAR(cells.numbers.scaling->efficiency, 0.34 / 1.11, 1e-9);
  // byteps#59: BytePS counts "card"s, and "image per gpu / s" is a rate of images per GPU.
  const Diagnosis cards = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_byteps59-rdma-image-per-gpu-1-to-16-cards-table.txt")}));
  EXPECT_EQ(cards.verdict, Verdict::kCommunicationBound) << cards.summary;
  ASSERT_TRUE(cards.numbers.scaling);
  EXPECT_EQ(cards.numbers.scaling->unit, "images");
  EXPECT_NEAR(cards.numbers.scaling->efficiency, 170.4 / 335.1, 1e-9);
  // WeatherGenerator#1348: the rate inside the loss's parentheses, "(lr=..., s/sec=0.715)".
  const Diagnosis notes = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_weathergenerator1348-1-vs-2-nodes-samples-per-sec.txt")}));
  ASSERT_TRUE(notes.numbers.scaling) << notes.summary;
  EXPECT_EQ(notes.numbers.scaling->scale_unit, "nodes");
  EXPECT_NEAR(notes.numbers.scaling->efficiency, 0.350 / 2 / 0.715, 1e-9);
  // A note that is no rate stays part of its name.
  EXPECT_TRUE(named_values("Load batch (n=24)").empty());
}

TEST(PastedLogs, ProcessesInStateDAreWaitingOnStorage) {
  // pytorch/distributed#2 (ps aux): four of seven python processes in "Dl+".
  const Telemetry ps = read_telemetry_files(
      {pasted("cpu_pytorchdistributed2-ps-dataloader-workers-in-d-state.txt")});
  EXPECT_EQ(ps.process_rows, 7);
  EXPECT_EQ(ps.processes_in_d.size(), 4u);
  const Diagnosis d = diagnose_telemetry(ps);
  EXPECT_EQ(d.verdict, Verdict::kIoBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  // top's table: the S column; one process of many in D is a moment's read, not a verdict.
  const std::string top_rows =
      "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n"
      "11082 yons      20   0   20.3g   5.2g   1.1g D  39.5   4.1  11:29.40 python3\n"
      "11091 yons      20   0   20.3g   5.2g   1.1g R  99.0   4.1  11:27.11 python3\n"
      "11101 yons      20   0   20.3g   5.2g   1.1g R  98.5   4.1  11:30.02 python3\n"
      "11110 yons      20   0   20.3g   5.2g   1.1g S  12.0   4.1  11:30.90 python3\n";
  const Telemetry top = read_text(top_rows);
  EXPECT_EQ(top.process_rows, 4);
  EXPECT_EQ(top.processes_in_d.size(), 1u);
  EXPECT_FALSE(judge_process_states(top));
  // A step log waiting for data beside them: the wait is the storage's.
  const Diagnosis waits = diagnose_telemetry(read_text(
      "Epoch: [0][10/500]\tTime 2.000 (2.000)\tData 1.800 (1.800)\n"
      "Epoch: [0][20/500]\tTime 2.000 (2.000)\tData 1.800 (1.800)\n\n" +
      std::string(
          "yons 11082 39.5 4.1 21305204 5501024 pts/9 Dl+ 19:34 11:29 python3 -u train.py\n"
          "yons 11091 39.4 4.1 21308788 5506644 pts/9 Dl+ 19:34 11:27 python3 -u train.py\n")));
  EXPECT_EQ(waits.verdict, Verdict::kIoBound) << waits.summary;
}

TEST(PastedLogs, DetectronsEmptyMinibatchQueue) {
  // Detectron#408: json_stats with "mb_qsize": 0 while training; "mb_qsize > 0" in the
  // expected results is no reading.
  const Telemetry t =
      read_telemetry_files({pasted("datalog_detectron408-json-stats-mb-qsize-zero.txt")});
  ASSERT_EQ(t.loader_warnings.size(), 1u);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
}

TEST(Scaling, MergedCellsAClockStepTimeAndASpeedColumn) {
  // mxnet#14516: blank cells repeat the row above; each (batch, kv_store, dtype) a series; the
  // worst answers: local float16, 6866.89 -> 5417.86 samples/s on 4 GPUs.
  const Diagnosis merged = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_mxnet14516-resnet18-cifar-speedup-ratio-table-cutoff.txt")}));
  EXPECT_EQ(merged.verdict, Verdict::kCommunicationBound) << merged.summary;
  ASSERT_TRUE(merged.numbers.scaling);
  EXPECT_NEAR(merged.numbers.scaling->efficiency, 5417.86 / 4 / 6866.89, 1e-9);
  // OpenSeq2Seq#191: "time per step = 0:00:1.390" on 4 GPUs, 0:00:0.789 on 1.
  const Telemetry clock =
      read_telemetry_files({pasted("scaling_openseq2seq191-gnmt-1gpu-vs-4gpu-time-per-step.txt")});
  ASSERT_EQ(clock.steps.size(), 2u);
  EXPECT_NEAR(clock.steps[0].step_seconds, 1.390, 1e-9);
  EXPECT_NEAR(clock.steps[1].step_seconds, 0.789, 1e-9);
  // tensorflow#4744: a rate column beside a training-time column whose work grew with the
  // GPUs (batch 16 per GPU, the same steps): the rate answers.
  const Diagnosis rates = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_tensorflow4744-inception-v3-1-2-4-gpu-time-vs-samples-sec-cutoff.txt")}));
  ASSERT_TRUE(rates.numbers.scaling) << rates.summary;
  EXPECT_EQ(rates.numbers.scaling->unit, "samples");
  EXPECT_NEAR(rates.numbers.scaling->efficiency, 150.0 / 4 / 52.7, 1e-9);
  // DeepLearningExamples#762: bare numbers, "the numbers in the table mean examples/sec".
  const Diagnosis stated = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_deeplearningexamples762-bert-horovod-2080ti-examples-per-sec.txt")}));
  ASSERT_TRUE(stated.numbers.scaling) << stated.summary;
  EXPECT_EQ(stated.numbers.scaling->unit, "samples");
  EXPECT_NEAR(stated.numbers.scaling->efficiency, 77.0 / 4 / 32, 1e-9);  // amp+xla: the worst
  // A bare "time" before a clock is the time of day, not a step.
  EXPECT_TRUE(named_values("time: 12:30:45").empty());
}

TEST(PastedLogs, AQueryCsvThatStartsWithTheGpusName) {
  // LLaMA-Factory#6962: "NVIDIA GeForce RTX 4090 D, 100 %, 7 %, 24564 MiB".
  const Telemetry t = read_telemetry_files({pasted(
      "nvsmi_llamafactory6962-query-gpu-csv-2x4090d-zero3-offload-100pct-util-cutoff.txt")});
  ASSERT_EQ(t.gpus.size(), 4u);  // the fifth row is cut off before its memory
  EXPECT_EQ(t.gpus[0].util, 100);
  EXPECT_EQ(t.gpus[0].memory_used_mib, 24564);
}

TEST(Snapshot, TheJobsOwnGpusOnASharedMachine) {
  EXPECT_EQ(job_gpus_of("I'm using GPU 1 and 3, where Memory-Usage is approaching 100%"),
            (std::vector<int>{1, 3}));
  EXPECT_EQ(job_gpus_of("CUDA_VISIBLE_DEVICES=2,3 python train.py"), (std::vector<int>{2, 3}));
  EXPECT_EQ(job_gpus_of("I use gpus 0,1."), (std::vector<int>{0, 1}));
  EXPECT_TRUE(job_gpus_of("using 4 GPUs").empty());
  EXPECT_TRUE(job_gpus_of("only GPU 0 is used").empty());
  // tensorpack#452: GPU 0 at 100 % is another user's; the job's GPU 1 at 0 % with the loop at
  // ~0.3-1 it/s waits.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("nvsmi_tensorpack452-titanx-pascal-user-gpus-0pct-full-memory-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_THAT(d.evidence, testing::Contains(testing::HasSubstr("the job uses GPUs 1, 3")));
}

TEST(PastedLogs, ACProfileTablesDataRowsAgainstItsTotal) {
  // pyxtal_ff#15 (lines numbered by cat -n): einsum dominates, memmap's __getitem__ is 3.4 s
  // of 376 s.
  const Telemetry numbered = read_telemetry_files(
      {pasted("profiler_pyxtalff15-cprofile-minibatch-einsum-dominates-cutoff.txt")});
  ASSERT_EQ(numbered.steps.size(), 1u);
  EXPECT_NEAR(numbered.steps[0].step_seconds, 376.118, 1e-9);
  EXPECT_NEAR(numbered.steps[0].data_seconds, 3.447, 1e-9);
  const Diagnosis d = diagnose_telemetry(numbered);
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kMedium);  // data rows found by their functions' names
  // The DataLoader's __next__ most of the run: input-bound.
  const Diagnosis waits = diagnose_telemetry(read_text(
      "         912 function calls in 100.000 seconds\n\n   Ordered by: cumulative time\n\n"
      "   ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n"
      "        1    0.100    0.100  100.000  100.000 train.py:1(<module>)\n"
      "      151    0.009    0.000   71.000    0.470 torch/utils/data/dataloader.py:344(__next__)\n"
      "      151    0.009    0.000   70.000    0.460 "
      "torch/utils/data/dataloader.py:380(_next_data)\n"
      "      150   20.000    0.133   20.000    0.133 {method 'run_backward' of 'torch._C' "
      "objects}\n"));
  EXPECT_EQ(waits.verdict, Verdict::kInputBound) << waits.summary;
  // pytorch#31867: a __next__ row without the profile's total is read, and judges nothing.
  const Diagnosis partial = diagnose_telemetry(read_telemetry_files(
      {pasted("profiler_pytorch31867-cprofile-dataloader-next-before-after-reuse.txt")}));
  EXPECT_EQ(partial.verdict, Verdict::kUnknown);
  EXPECT_NE(partial.summary.find("Python profile"), std::string::npos) << partial.summary;
}

TEST(PastedLogs, HorovodsStallWarningNamesTheRankTheOthersWaitFor) {
  // horovod#403: eight stalled all-reduces, each "[missing ranks: 0]".
  const Telemetry t = read_telemetry_files(
      {pasted("other_horovod403-stall-warning-missing-rank-0-four-nodes-cutoff.txt")});
  ASSERT_EQ(t.missing_ranks.size(), 8u);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kRankImbalance) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kMedium);
  EXPECT_NE(d.summary.find("rank 0 is missing from all 8"), std::string::npos) << d.summary;
  // Different ranks missing each time: low.
  const Diagnosis varied =
      diagnose_telemetry(read_text("Stalled ops:\nHorovodAllreduce_a_0 [missing ranks: 1, 3]\n"
                                   "HorovodAllreduce_b_0 [missing ranks: 2]\n"));
  EXPECT_EQ(varied.verdict, Verdict::kRankImbalance) << varied.summary;
  EXPECT_EQ(varied.confidence, Confidence::kLow);
  // Later releases list the ready ranks instead (horovod#334: "[ready ranks: 5, 1, 4, 7, 2, 3]"
  // after tqdm's bar): 0 and 6 are missing.
  const Telemetry ready = read_telemetry_files(
      {pasted("datalog_horovod334-resnet50-stall-ranks-0-6-missing-22s-per-it-cutoff.txt")});
  ASSERT_FALSE(ready.missing_ranks.empty());
  EXPECT_THAT(ready.missing_ranks[0].second, testing::ElementsAre(0, 6));
  EXPECT_THAT(diagnose_telemetry(ready).summary, testing::HasSubstr("ranks 0, 6 are missing"));
}

TEST(Scaling, MachinesSlashGpusAndRatesSaidPerGpuInTheProse) {
  std::optional<int> nodes;
  EXPECT_EQ(gpu_count_of("2M/8G: p50:   80/s  p75:   80/s", &nodes), 16);
  EXPECT_EQ(nodes, 2);
  // pytorch#17159: "The numbers below show the **per-GPU** training throughput".
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_pytorch17159-bert-per-gpu-throughput-1m1g-to-2m8g-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  ASSERT_TRUE(d.numbers.scaling);
  EXPECT_EQ(d.numbers.scaling->runs.back().scale, 16);
  EXPECT_NEAR(d.numbers.scaling->efficiency, 78.0 / 122, 0.01);
  // mjlab#330: "~245K FPS" is 245,000 frames (samples) a second.
  const auto fps = named_values("- 2 GPUs (8192 total envs): ~245K FPS");
  ASSERT_EQ(fps.size(), 2u);
  EXPECT_EQ(fps[1].value, 245000);
  EXPECT_EQ(meaning_of(fps[1]).rate_unit, "samples");
  const auto config = named_values("fps: 30");  // a video's frame rate, no throughput
  ASSERT_EQ(config.size(), 1u);
  EXPECT_EQ(meaning_of(config[0]).quantity, Quantity::kNone);
  const auto millions = named_values("throughput: 1.5M tokens/s");
  ASSERT_EQ(millions.size(), 1u);
  EXPECT_EQ(millions[0].value, 1.5e6);
  EXPECT_EQ(meaning_of(millions[0]).rate_unit, "tokens");
  // timm's "405.65/s": a rate of samples.
  const auto timm = named_values("Time: 0.316s, 405.65/s  (0.344s, 371.84/s)");
  ASSERT_EQ(timm.size(), 2u);
  EXPECT_EQ(meaning_of(timm[1]).rate_unit, "samples");
}

TEST(LoaderSettings, ACpuCountSweepOfALoaderOnlyBenchmark) {
  EXPECT_EQ(loader_setting_of("# cpus=3, CPU usage=298%, ")->label, "3 CPUs");
  EXPECT_EQ(loader_setting_of("with 16 cores")->label, "16 CPUs");
  EXPECT_EQ(loader_setting_of("- 5 extra CPU node: 1711 img/s")->label, "5 CPU nodes");
  // ray#42318: Ray Data's ingest rises 2.3x with 10 CPU nodes added.
  const Diagnosis nodes = diagnose_telemetry(
      read_telemetry_files({pasted("scaling_ray42318-raydata-ingest-img-s-by-cpu-nodes.txt")}));
  EXPECT_EQ(nodes.verdict, Verdict::kInputBoundCpu) << nodes.summary;
  // petastorm#190: images/s rise 3.8x from 3 to 10 CPUs.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_petastorm190-throughput-by-cpus-numpy-vs-tf.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
}

TEST(Vocabulary, AStepBesideItsComputeAloneBoundsTheWait) {
  // ROMP#170: "Time 4.52 RUN 0.90": 3.6 s of the step outside the model.
  const Telemetry romp = read_text(
      "Epoch: [0][200/19445] Time 4.52 RUN 0.90 Lr 5e-05 Loss 461.33\n"
      "Epoch: [0][250/19445] Time 4.62 RUN 0.90 Lr 5e-05 Loss 432.20\n");
  ASSERT_EQ(romp.steps.size(), 2u);
  EXPECT_NEAR(romp.steps[0].data_seconds, 3.62, 1e-9);
  EXPECT_TRUE(romp.steps[0].data_upper_bound);
  EXPECT_EQ(diagnose_telemetry(read_telemetry_files(
                                   {pasted("datalog_romp170-time-vs-run-growing-gap-cutoff.txt")}))
                .verdict,
            Verdict::kInputBound);
  // DAMO-YOLO#137: iter_time 7.779 s, model_time 7.283 s: the loader keeps up.
  const Diagnosis damo = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_damo-yolo137-iter-time-vs-model-time.txt")}));
  EXPECT_EQ(damo.verdict, Verdict::kHealthy) << damo.summary;
}

TEST(Vocabulary, ATacotronFeedersPaceAgainstItsSteps) {
  // tacotron#248: 32 batches in 126.923 s, steps at 4.8 s: the steps run at the feeder's pace.
  const Telemetry late =
      read_telemetry_files({pasted("datalog_tacotron248-generated-batches-rtx2080-cutoff.txt")});
  ASSERT_EQ(late.feeder_batch_seconds.size(), 1u);
  EXPECT_NEAR(late.feeder_batch_seconds[0].second, 126.923 / 32, 1e-9);
  EXPECT_EQ(diagnose_telemetry(late).verdict, Verdict::kInputBound);
  // tacotron#96: the first fill, 6 s a batch, against running averages still at 15 s that
  // put the steps after the first at 5.03 s each ((19 x 15.065 - 195.738) / 18): the feeder is
  // the slower, once the queue its first fill made has drained — low.
  const Diagnosis k80 = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_tacotron96-k80-sec-per-step-cutoff.txt")}));
  EXPECT_EQ(k80.verdict, Verdict::kInputBound) << k80.summary;
  EXPECT_EQ(k80.confidence, Confidence::kLow);
  EXPECT_THAT(k80.summary, testing::HasSubstr("a step takes 5.03 s"));
}

TEST(Scaling, ModelsThatDifferAtOnePaceWaitForSomethingElse) {
  // mmpose#23: ResNet-50, ResNet-101 and HRNet-W32 at 256x192, 64 per GPU: all 0.88 s/iter.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("scaling_mmpose23-siter-table-by-model.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kMedium);
  EXPECT_THAT(d.summary, testing::HasSubstr("3 runs of 3 different models"));
  // Equal rates of rows whose setups differ (block size, DP or DDP) are a coincidence:
  // transformers#9371 has 40 rows.
  const Diagnosis mixed = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_transformers9371-gpt2-1gpu-dp-ddp-nvlink-vs-no-nvlink.txt")}));
  EXPECT_NE(mixed.verdict, Verdict::kInputBound) << mixed.summary;
  // Models at different paces say nothing of the input.
  const Diagnosis apart = diagnose_telemetry(
      read_text("| Model | Batch | s/iter |\n|---|---|---|\n| a | 64 | 0.5 |\n| b | 64 | 0.9 |\n"
                "| c | 64 | 1.4 |\n"));
  EXPECT_EQ(apart.verdict, Verdict::kUnknown) << apart.summary;
}

TEST(LoaderSettings, WhatAReviewFoundReadWrong) {
  // A caption of two cells above a count table does not swallow it.
  const Diagnosis caption = diagnose_telemetry(
      read_text("Benchmark results  (ResNet-50, batch 64)\nGPUs    img/sec\n1    300\n2    420\n"
                "4    600\n8    800\n"));
  ASSERT_TRUE(caption.numbers.scaling) << caption.summary;
  // Caffe's own prefetch messages are no setting; its empty queue still decides.
  EXPECT_FALSE(loader_setting_of("Restarting data prefetching from start."));
  EXPECT_EQ(loader_setting_of("prefetch_factor=4")->label, "prefetching");
  // A setting seen twice is one setting: its runs' median.
  const Diagnosis twice = diagnose_telemetry(
      read_text("num_workers=4:\nepoch 1: 100 img/s\nnum_workers=0:\nepoch 1: 110 img/s\n"
                "num_workers=4:\nepoch 1: 125 img/s\n"));
  EXPECT_NE(twice.verdict, Verdict::kInputBoundCpu) << twice.summary;
  // A negation belongs to the setting it stands before; blanks around '=' change nothing.
  EXPECT_EQ(loader_setting_of("num_workers=4, pin_memory=True, no augmentation")->label,
            "num_workers=4, pinned memory");
  EXPECT_EQ(loader_setting_of("num_workers=4, pin_memory = False")->label,
            "num_workers=4, no pinned memory");
  // Memory sizes are no machines and GPUs.
  EXPECT_FALSE(gpu_count_of("Mem: 900M/16G"));
  // A run's number is no compute time.
  const Telemetry runs = read_text("run 2 | epoch 1 | iter 300 | time 3.10 | loss 0.5\n");
  ASSERT_EQ(runs.steps.size(), 1u);
  EXPECT_FALSE(runs.steps[0].has_data);
  // Kernel threads in D are not the job's.
  const Telemetry kernel = read_text(
      "root  412  0.0  0.0  0  0 ?  D  10:00  0:03 [jbd2/nvme0n1p2-8]\n"
      "root  913  0.1  0.0  0  0 ?  D  10:00  0:09 [kworker/u64:3+flush-259:0]\n"
      "yons 11091 99.4 4.1 21308788 5506644 pts/9 Rl+ 19:34 11:27 python3 train.py\n"
      "Epoch: [0][10/500]\tTime 0.200 (0.200)\tData 0.010 (0.010)\n");
  EXPECT_EQ(kernel.process_rows, 1);
  EXPECT_TRUE(kernel.processes_in_d.empty());
}

}  // namespace
}  // namespace stoker::telemetry

namespace stoker::telemetry {
namespace {

// One `nvidia-smi` table of 8 GPUs in the 5xx layout (the rows of the nccl1967 paste), each
// GPU at `util` percent holding `mib`; with `top`, top's CPU summary under it.
std::string table_of_8(const std::vector<int>& util, const std::vector<int>& mib,
                       const char* top = nullptr) {
  std::string t =
      "+-----------------------------------------------------------------------------------------+"
      "\n"
      "| NVIDIA-SMI 560.35.03              Driver Version: 560.35.03      CUDA Version: 12.9     "
      "|\n"
      "|-----------------------------------------+------------------------+----------------------+"
      "\n"
      "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC "
      "|\n"
      "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. "
      "|\n"
      "|=========================================+========================+======================|"
      "\n";
  for (int g = 0; g < 8; ++g) {
    t += fmt::format(
        "|   {}  NVIDIA H100 80GB HBM3          On  |   00000000:{:02X}:00.0 Off |       "
        "             0 |\n",
        g, 0x18 + g);
    t += fmt::format(
        "| N/A   27C    P0            {:3d}W /  700W |   {:5d}MiB /  81559MiB |    {:3d}%      "
        "Default |\n",
        util[g] > 50 ? 620 : 70, mib[g], util[g]);
    t += "+-----------------------------------------+------------------------+--------------------"
         "--+\n";
  }
  if (top != nullptr) t += top;
  return t;
}

TEST(Snapshot, OneGpuBusyTheOthersIdleIsTheSecondFailureWithItsInnocentExplanation) {
  // The seeds' picture of the unsharded job: GPU 0 at 100 %, GPUs 1-7 at 0 %.
  const Diagnosis d = diagnose_telemetry(
      read_text(table_of_8({100, 0, 0, 0, 0, 0, 0, 0}, {30000, 4, 4, 4, 4, 4, 4, 4})));
  EXPECT_EQ(d.verdict, Verdict::kRankImbalance) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, testing::HasSubstr("only GPU 0 computes (100 %) while GPUs 1-7"));
  EXPECT_THAT(d.summary, testing::HasSubstr("single-GPU job by design"));
  EXPECT_THAT(d.next, testing::Contains(testing::HasSubstr("torchrun --nproc-per-node")));
  EXPECT_THAT(d.next, testing::Contains(testing::HasSubstr("nvidia-smi dmon -s u")));
  EXPECT_FALSE(d.fixes.empty());
  // Idle GPUs holding memory: a framework's reservation is the innocent reading too.
  const Diagnosis m = diagnose_telemetry(read_text(table_of_8(
      {100, 0, 0, 0, 0, 0, 0, 0}, {30000, 30000, 30000, 30000, 30000, 30000, 30000, 30000})));
  EXPECT_EQ(m.verdict, Verdict::kRankImbalance);
  EXPECT_THAT(m.summary, testing::HasSubstr("reserves memory on every visible GPU"));
}

TEST(Snapshot, AllBusyIsHealthyAllIdleIsUnknownUnlessTheCpusArePinned) {
  const std::vector<int> full(8, 30000);
  const Diagnosis busy =
      diagnose_telemetry(read_text(table_of_8({98, 97, 99, 96, 98, 97, 99, 98}, full)));
  EXPECT_EQ(busy.verdict, Verdict::kHealthy) << busy.summary;
  EXPECT_EQ(busy.confidence, Confidence::kLow);
  const std::vector<int> idle(8, 0);
  const Diagnosis none = diagnose_telemetry(read_text(table_of_8(idle, full)));
  EXPECT_EQ(none.verdict, Verdict::kUnknown) << none.summary;
  EXPECT_THAT(none.next, testing::Contains(testing::HasSubstr("data time against its step time")));
  // The same idle GPUs beside top's summary with the CPUs pinned: the first failure.
  const Diagnosis cpu = diagnose_telemetry(read_text(table_of_8(
      idle, full,
      "\n%Cpu(s): 93.1 us,  5.2 sy,  0.0 ni,  1.5 id,  0.2 wa,  0.0 hi,  0.0 si,  0.0 st\n")));
  EXPECT_EQ(cpu.verdict, Verdict::kInputBoundCpu) << cpu.summary;
  // ... or waiting on storage.
  const Diagnosis io = diagnose_telemetry(read_text(table_of_8(
      idle, full,
      "\n%Cpu(s): 12.1 us,  3.2 sy,  0.0 ni, 44.5 id, 40.2 wa,  0.0 hi,  0.0 si,  0.0 st\n")));
  EXPECT_EQ(io.verdict, Verdict::kIoBound) << io.summary;
}

TEST(Scaling, TwoRunsInOnePasteOrTwoFilesGiveTheSameVerdict) {
  // tf_cnn_benchmarks on synthetic data, 1 then 2 GPUs (tfbench_tensorflow23032): 95 %.
  const Telemetry one =
      read_telemetry_files({pasted("tfbench_tensorflow23032-synthetic-1-vs-2-gpu.txt")});
  const Diagnosis d = diagnose_telemetry(one);
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  ASSERT_TRUE(d.numbers.scaling);
  EXPECT_EQ(d.numbers.scaling->runs.size(), 2u);
  EXPECT_EQ(d.numbers.scaling->runs[0].scale, 1);
  EXPECT_EQ(d.numbers.scaling->runs[1].scale, 2);
  EXPECT_NEAR(d.numbers.scaling->efficiency, 0.95, 0.01);
  // Slower per GPU with more GPUs while the data wait does not grow: communication.
  const std::string a =
      "1 GPU\n"
      "Epoch: [0][10/500]\tTime 0.200 (0.200)\tData 0.010 (0.010)\n"
      "Epoch: [0][20/500]\tTime 0.200 (0.200)\tData 0.010 (0.010)\n";
  const std::string b =
      "8 GPUs\n"
      "Epoch: [0][10/500]\tTime 0.400 (0.400)\tData 0.012 (0.012)\n"
      "Epoch: [0][20/500]\tTime 0.400 (0.400)\tData 0.012 (0.012)\n";
  Telemetry both;
  parse_telemetry(a + "\nand with more GPUs\n\n" + b, "paste", both);
  const Diagnosis c = diagnose_telemetry(both);
  EXPECT_EQ(c.verdict, Verdict::kCommunicationBound) << c.summary;
  EXPECT_NEAR(c.numbers.scaling->efficiency, 0.5, 1e-9);
  Telemetry apart;
  parse_telemetry(a, "one.log", apart);
  parse_telemetry(b, "eight.log", apart);
  EXPECT_EQ(diagnose_telemetry(apart).verdict, Verdict::kCommunicationBound);
  EXPECT_NEAR(diagnose_telemetry(apart).numbers.scaling->efficiency, 0.5, 1e-9);
  // The wait for data grows with the GPUs: the input.
  const std::string starved =
      "8 GPUs\n"
      "Epoch: [0][10/500]\tTime 0.400 (0.400)\tData 0.210 (0.210)\n"
      "Epoch: [0][20/500]\tTime 0.400 (0.400)\tData 0.210 (0.210)\n";
  Telemetry input;
  parse_telemetry(a + "\n" + starved, "paste", input);
  EXPECT_EQ(diagnose_telemetry(input).verdict, Verdict::kInputBound);
}

}  // namespace
}  // namespace stoker::telemetry

namespace stoker::telemetry {
namespace {

TEST(JobSummary, SeffAndJobstatsAreWholeRunMeans) {
  // seff's layout (Slurm's contribs/seff): the CPU efficiency of the job's cores.
  const Telemetry seff = read_text(
      "Job ID: 9446771\nCluster: tiger\nUser/Group: kl5675/physics\n"
      "State: COMPLETED (exit code 0)\nNodes: 1\nCores per node: 8\n"
      "CPU Utilized: 00:10:00\nCPU Efficiency: 12.50% of 01:20:00 core-walltime\n"
      "Job Wall-clock time: 00:10:00\nMemory Utilized: 1.50 GB\n"
      "Memory Efficiency: 9.38% of 16.00 GB\n");
  ASSERT_EQ(seff.cpus.size(), 1u);
  EXPECT_EQ(seff.cpus[0].busy, 12.5);
  EXPECT_EQ(seff.files[static_cast<size_t>(seff.cpus[0].origin.file)].kind,
            TelemetryKind::kJobSummary);
  EXPECT_TRUE(seff.files[static_cast<size_t>(seff.cpus[0].origin.file)].run_means);
  // jobstats (slurm_gnn_tracking95): GPUs at 33 % while the CPUs are 12 % busy over the run.
  const Telemetry js =
      read_telemetry_files({pasted("slurm_gnn_tracking95-jobstats-2node-8gpu-gpu33-cpu12.txt")});
  ASSERT_FALSE(js.gpus.empty());
  EXPECT_EQ(js.gpus[0].util, 33);
  ASSERT_FALSE(js.cpus.empty());
  EXPECT_EQ(js.cpus[0].busy, 12);
  ASSERT_FALSE(js.runs.empty());
  EXPECT_EQ(js.runs[0].gpus, 8);
  // Whole-run means are a series, not one look: medium confidence.
  EXPECT_EQ(diagnose_telemetry(js).confidence, Confidence::kMedium);
}

TEST(JobSummary, AStepLogBesideOneCpuLookIsRefinedByIt) {
  // A loop waiting 80 % of each step and top's summary with the CPUs pinned: the CPUs.
  const Diagnosis d = diagnose_telemetry(read_text(
      "Epoch: [0][10/500]\tTime 1.000 (1.000)\tData 0.800 (0.800)\n"
      "Epoch: [0][20/500]\tTime 1.000 (1.000)\tData 0.800 (0.800)\n"
      "Epoch: [0][30/500]\tTime 1.000 (1.000)\tData 0.800 (0.800)\n"
      "%Cpu(s): 96.1 us,  3.2 sy,  0.0 ni,  0.5 id,  0.2 wa,  0.0 hi,  0.0 si,  0.0 st\n"));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
}

TEST(Vocabulary, KerasEpochLinesWithoutATimePerStep) {
  // tensorflow#44050 (verbose=2) and Keras 2.0's bar: the epoch's time over its steps.
  for (const char* line : {"3198/3198 - 2287s - loss: 2.7595 - binary_accuracy: 0.8080",
                           "3198/3198 [==============================] - 2287s - loss: 2.7595"}) {
    const auto values = named_values(line);
    ASSERT_FALSE(values.empty()) << line;
    EXPECT_EQ(values[0].name, "step_time") << line;
    EXPECT_NEAR(*seconds_of(values[0]), 2287.0 / 3198, 1e-9) << line;
    EXPECT_EQ(meaning_of(values[0]).quantity, Quantity::kStep) << line;
  }
  // A time per step stated beside it is read as stated, once; a batch still running is no epoch.
  const auto stated = named_values("3198/3198 [=====] - 2287s 715ms/step - loss: 2.7595");
  EXPECT_EQ(
      std::count_if(stated.begin(), stated.end(),
                    [](const NamedValue& v) { return meaning_of(v).quantity == Quantity::kStep; }),
      1);
  for (const NamedValue& v : named_values("1200/3198 - 2287s - loss: 2.7595")) {
    EXPECT_NE(meaning_of(v).quantity, Quantity::kStep) << v.name;
  }
}

TEST(Vocabulary, ARateInParenthesesAfterACountIsItsOwnValue) {
  // k8s-device-plugin#56 (Caffe's "Iteration 200 (0.833003 iter/s)") and TensorFlow's
  // object-detection trainer ("global step 1251: loss = 2.5009 (1.218 sec/step)").
  const auto caffe = named_values("Iteration 200 (0.833003 iter/s)");
  ASSERT_EQ(caffe.size(), 2u);
  EXPECT_FALSE(caffe[0].average);
  EXPECT_EQ(meaning_of(caffe[1]).quantity, Quantity::kStep);
  EXPECT_NEAR(*seconds_of(caffe[1]), 1 / 0.833003, 1e-9);
  const auto tf = named_values("INFO:tensorflow:global step 1251: loss = 2.5009 (1.218 sec/step)");
  ASSERT_FALSE(tf.empty());
  EXPECT_EQ(meaning_of(tf.back()).quantity, Quantity::kStep);
  EXPECT_NEAR(*seconds_of(tf.back()), 1.218, 1e-9);
  // A running average in parentheses stays one: "Time 0.154 (8.010)".
  const auto timm = named_values("Time 0.154 (8.010)");
  ASSERT_EQ(timm.size(), 1u);
  EXPECT_EQ(timm[0].average, 8.010);
}

TEST(Vocabulary, AStatisticsTableRowIsNamedByItsLabel) {
  const auto row = named_values(
      "  Blocking, waiting for batch (threaded) (10/10):  mean:  189ms   std:  207ms ");
  ASSERT_EQ(row.size(), 1u);  // the spread is no reading
  EXPECT_EQ(row[0].name, "waiting_for_batch");
  EXPECT_EQ(meaning_of(row[0]).quantity, Quantity::kDataWait);
  EXPECT_NEAR(*seconds_of(row[0]), 0.189, 1e-12);
  const auto forward = named_values("  Forward pass (10/10):     mean:   11ms   std:    3ms ");
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(meaning_of(forward[0]).quantity, Quantity::kCompute);
}

TEST(Vocabulary, DarknetsIterationAndItsLoadedLine) {
  // darknet#2538: the iteration's seconds train the batch; "Loaded:" below is its wait.
  const Telemetry t = read_text(
      "13528: 6.374037, 6.661028 avg loss, 0.001000 rate, 0.762016 seconds, 865792 images\n"
      "Loaded: 2.078771 seconds\n");
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_NEAR(t.steps[0].step_seconds, 0.762016 + 2.078771, 1e-9);
  EXPECT_NEAR(t.steps[0].data_seconds, 2.078771, 1e-9);
  // pips' "rtime" and "itime"; "Time_train(average) 30.307 (30.044)  Data_load(average) 30.035".
  const Telemetry pips =
      read_text("debug_15:30:12; step 000031/200000; rtime 0.03; itime 1.80; loss = 100.11551\n");
  ASSERT_EQ(pips.steps.size(), 1u);
  EXPECT_NEAR(pips.steps[0].data_seconds, 0.03, 1e-12);
  EXPECT_NEAR(pips.steps[0].step_seconds, 1.80, 1e-12);
  const Telemetry video = read_text(
      "Epoch: [0][4/24]  Time_train(average) 30.307 (30.044)  Data_load(average) 30.035 "
      "(29.764)\n");
  ASSERT_FALSE(video.steps.empty());
  EXPECT_NEAR(video.steps[0].step_seconds, 30.307, 1e-12);
  EXPECT_NEAR(video.steps[0].data_seconds, 30.035, 1e-12);
}

TEST(Vocabulary, ALogThatPrintsOnlyItsClockAndItsStep) {
  // icefall (lhotse#666): 50 batches between two lines' clocks, nothing timed on the lines.
  const Telemetry t = read_text(
      "2022-04-12 17:31:14,799 INFO [train.py:1069] (0/8) Sanity check\n"
      "2022-04-12 17:36:17,986 INFO [train.py:794] (0/8) Epoch 0, batch 50, loss[loss=0.5]\n"
      "2022-04-12 17:40:55,872 INFO [train.py:794] (0/8) Epoch 0, batch 100, loss[loss=0.8]\n"
      "2022-04-12 23:59:59,000 INFO [train.py:794] (0/8) Epoch 1, batch 0, loss[loss=0.8]\n"
      "2022-04-13 00:00:09,000 INFO [train.py:794] (0/8) Epoch 1, batch 2, loss[loss=0.8]\n");
  ASSERT_EQ(t.steps.size(), 2u);  // a new epoch's counter starts again: no step across it
  EXPECT_NEAR(t.steps[0].step_seconds, (4 * 60 + 37.886) / 50, 1e-6);
  EXPECT_FALSE(t.steps[0].has_data);
  EXPECT_NEAR(t.steps[1].step_seconds, 5.0, 1e-9);  // across midnight
  // A line that times its step itself is read as it says.
  const Telemetry timed =
      read_text("2021-01-01 10:00:00 step 10 time: 0.5\n2021-01-01 10:01:00 step 20 time: 0.5\n");
  ASSERT_EQ(timed.steps.size(), 2u);
  EXPECT_EQ(timed.steps[1].step_seconds, 0.5);
}

TEST(Vocabulary, ReinforcementLearnersAndSuperResolutionTrainersNameTheirWaitsSo) {
  // Habitat's PPO (sound-spaces#7): "env-time: 175.496s  pth-time: 90.586s" since the start:
  // the environments are the learner's input, pth-time the rest of its step.
  const Telemetry ppo = read_text(
      "2020-09-29 12:18:38,351 update: 10\tenv-time: 175.496s\tpth-time: 90.586s\tframes: 8250\n"
      "2020-09-29 12:22:01,408 update: 20\tenv-time: 296.408s\tpth-time: 172.698s\tframes: "
      "15750\n");
  ASSERT_EQ(ppo.steps.size(), 2u);
  EXPECT_NEAR(ppo.steps[0].data_seconds, 175.496, 1e-9);
  EXPECT_NEAR(ppo.steps[0].step_seconds, 175.496 + 90.586, 1e-9);
  EXPECT_EQ(diagnose_telemetry(read_telemetry_files(
                                   {pasted("datalog_sound-spaces7-ppo-env-time-vs-pth-time-fps-31-"
                                           "cutoff.txt")}))
                .verdict,
            Verdict::kInputBound);
  // traiNNer#72 (BasicSR's logger): "t:286.9083s, td:4.1610s": t the step, td its wait.
  const Telemetry sr = read_text(
      "22-12-06 08:58:44.018 - INFO: <epoch:249, iter:     250, lr:1.000e-04, t:286.9083s, "
      "td:4.1610s, eta:39828.4575h> pix-l1: 6.5921e-04\n");
  ASSERT_EQ(sr.steps.size(), 1u);
  EXPECT_NEAR(sr.steps[0].step_seconds, 286.9083, 1e-9);
  EXPECT_NEAR(sr.steps[0].data_seconds, 4.161, 1e-9);
  // A lone "t" is no step: "t: 0.5" alone says nothing.
  EXPECT_THROW(read_text("<epoch: 3, t: 0.5, loss: 0.2>\n<epoch: 4, t: 0.6, loss: 0.2>\n"), Error);
  // imagenet-multiGPU.torch's "DataLoadingTime" beside its "Time" (which leaves the wait out).
  const Diagnosis torch7 = diagnose_telemetry(read_telemetry_files({pasted(
      "datalog_imagenet-multigpu-torch24-dataloadingtime-spikes-every-10-iters-cutoff.txt")}));
  EXPECT_EQ(torch7.verdict, Verdict::kInputBound) << torch7.summary;
}

TEST(PastedLogs, StepsThatTakeTurnsBetweenTwoLevelsWaitForBurstsOfBatches) {
  // CLIP4Clip#58: "Time/step" alternating 44 s and 4 s on 2 x 8 GPUs.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_clip4clip58-2x8gpu-step-time-alternates-44s-4s-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_NE(d.summary.find("take turns"), std::string::npos) << d.summary;
  // Steps within one epoch are no epochs: the first step's start-up is not a cold page cache.
  EXPECT_EQ(d.summary.find("first epoch"), std::string::npos) << d.summary;
  // A regime change (slow, then fast for good) is no taking turns.
  std::string change;
  for (int i = 0; i < 12; ++i) {
    change += fmt::format("Step: {}/900, Time/step: {}\n", i + 1, i < 6 ? 44.0 + i : 4.0 + i % 2);
  }
  EXPECT_EQ(diagnose_telemetry(read_text(change)).summary.find("take turns"), std::string::npos);
}

TEST(PastedLogs, WaitsWithoutTheirStepsThatJumpOnceARoundOfTheWorkers) {
  // SparseOcc#14: "data: 53577ms" every 8th line among waits of ~20 ms.
  const Diagnosis occ = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_sparseocc14-data-time-spikes-every-8-iters.txt")}));
  EXPECT_EQ(occ.verdict, Verdict::kInputBound) << occ.summary;
  EXPECT_NE(occ.summary.find("about every 8th line"), std::string::npos) << occ.summary;
  // Mozilla TTS#407: LoaderTime 124.64 s every 4th step with 4 workers; the sentence's "busy
  // around 120 seconds per step" (no workers) is not one of the log's lines.
  const Diagnosis tts = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_mozillaTTS407-speaker-encoder-loadertime-124s-every-4th-step.txt")}));
  EXPECT_EQ(tts.verdict, Verdict::kInputBound) << tts.summary;
  // Two jumps are one distance, no pattern to name.
  EXPECT_EQ(tts.summary.find("about every"), std::string::npos) << tts.summary;
  // Even waits: read, but what share of the step they are is not known.
  std::string even;
  for (int i = 0; i < 8; ++i) even += fmt::format("data: {}ms, mem: 24882M\n", 18 + i);
  const Diagnosis flat = diagnose_telemetry(read_text(even));
  EXPECT_EQ(flat.verdict, Verdict::kUnknown) << flat.summary;
  EXPECT_NE(flat.summary.find("without their steps"), std::string::npos) << flat.summary;
}

TEST(PastedLogs, TimersAndProfilesWithoutTheirUsualTotals) {
  // presto-worldcereal#9: a cProfile table pasted without "N function calls in T seconds": its
  // top level (train.py's <module>, 208.382 s) is the run; the DataLoader's __next__ 191.063 s.
  const Telemetry profile = read_telemetry_files(
      {pasted("profiler_presto-worldcereal9-cprofile-dataloader-next-191of208s-cutoff.txt")});
  ASSERT_EQ(profile.steps.size(), 1u);
  EXPECT_NEAR(profile.steps[0].step_seconds, 208.382, 1e-9);
  EXPECT_EQ(diagnose_telemetry(profile).verdict, Verdict::kInputBound);
  // Coqui TTS#501: "step_time: 0.23 loader_time: 5.4650" — the step is timed without its wait,
  // and a sentence's two examples joined by "or" are two lines.
  const Telemetry tts =
      read_telemetry_files({pasted("datalog_tts501-parallelwavegan-step-time-vs-loader-time.txt")});
  ASSERT_EQ(tts.steps.size(), 2u);
  EXPECT_NEAR(tts.steps[0].step_seconds, 0.23 + 5.465, 1e-9);
  EXPECT_NEAR(tts.steps[0].data_seconds, 5.465, 1e-9);
  EXPECT_NEAR(tts.steps[1].data_seconds, 0.0044, 1e-9);
  // "... and htop shows 100% on all CPUs": the CPUs said busy, so the decoding holds it back.
  EXPECT_EQ(diagnose_telemetry(tts).verdict, Verdict::kInputBoundCpu);
  EXPECT_TRUE(read_text("8 workers and htop shows 100% on all CPUs\n").cpus.size() == 1u);
  EXPECT_THROW(read_text("htop does not show 100% on all CPUs\n"), Error);
  // starVLA#84: "2.89s/it, data_times=0.001, model_times=2.008".
  const Diagnosis vla = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_starvla84-tqdm-data-times-vs-model-times-lerobot-v3.txt")}));
  EXPECT_EQ(vla.verdict, Verdict::kHealthy) << vla.summary;
  // gpt-neox#126: DeepSpeed's pipeline timers, "train_batch: 87510.72 | batch_input: 78.66 |
  // ... | comms: 74766.41": the exchange, not the input.
  const Diagnosis neox = diagnose_telemetry(read_telemetry_files(
      {pasted("profiler_gptneox126-deepspeed-timers-comms-85pct-4-machines-cutoff.txt")}));
  EXPECT_EQ(neox.verdict, Verdict::kCommunicationBound) << neox.summary;
}

TEST(Scaling, ACountColumnWithAnEmptyHeaderAndThousandsInTheUnit) {
  // dgl#1143: "| | Speed (K samples/sec) |" over "| 1 GPU | 10.8 |": the rows say what the
  // first column counts, the header that the cells count thousands.
  const Telemetry t = read_text(
      "| | Speed (K samples/sec) |\n| --- | --- |\n| 1 GPU | 10.8 |\n| 2 GPU | 24.1 |\n"
      "| 4 GPU | 41.5 |\n| 8 GPU | 69.1 |\n");
  ASSERT_EQ(t.rates.size(), 4u);
  EXPECT_NEAR(t.rates[0].per_second, 10800, 1e-6);
  EXPECT_NEAR(t.rates[3].per_second, 69100, 1e-6);
  EXPECT_EQ(t.runs[static_cast<size_t>(t.rates[0].run)].gpus, 1);
  EXPECT_EQ(t.runs[static_cast<size_t>(t.rates[3].run)].gpus, 8);
  // An empty header over bare numbers is no count column.
  ExpectNothingPlaced("| | Speed (K samples/sec) |\n| --- | --- |\n| 1 | 10.8 |\n| 2 | 24.1 |\n");
}

TEST(LoaderSettings, WhereTheDataIsReadFromIsAStorageSetting) {
  // Alluxio#10688: one machine, the data set cached in Alluxio's memory, read through its FUSE
  // mount in two read modes: "about 990 images/s" against "about 630 images/s".
  const Diagnosis fuse = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_alluxio10688-fuse-readtype-images-per-sec-8xv100-cutoff.txt")}));
  EXPECT_EQ(fuse.verdict, Verdict::kIoBound) << fuse.summary;
  EXPECT_EQ(fuse.confidence, Confidence::kMedium);
  EXPECT_NE(fuse.summary.find("readtype=CACHE_PROMOTE"), std::string::npos) << fuse.summary;
  // Local SSD against NFS, in a table of its own words.
  const Diagnosis nfs = diagnose_telemetry(
      read_text("| data on | img/s |\n|---|---|\n| NFS | 410 |\n| local NVMe SSD | 1280 |\n"));
  EXPECT_EQ(nfs.verdict, Verdict::kIoBound) << nfs.summary;
  // An LLM's KV cache is no storage: its rows name no setting, and the table is not read.
  ExpectNothingPlaced(
      "| kv cache | tokens/s |\n|---|---|\n| fp16 kv_cache | 410 |\n| fp8 "
      "kv_cache | 1280 |\n");
}

TEST(LoaderSettings, TheSameLoaderFromTwoStoragesInProseIsAStorageComparison) {
  // FFCV#250: one .beton file loaded alone (no model) "from SSD ... at around 7 it/s", and
  // "from the HDD, data loading runs at around 1.2 it/s", one sentence each.
  const Diagnosis ffcv = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_ffcv250-beton-nvme-cached-vs-hdd-loader-only-its.txt")}));
  EXPECT_EQ(ffcv.verdict, Verdict::kIoBound) << ffcv.summary;
  EXPECT_THAT(ffcv.summary, testing::HasSubstr("1.2 iterations/s with hdd"));
  // DALI#5551: two lists of rates, each under the sentence that says where the files are
  // ("from fast NVME disks", "via a MinIO server").
  const Diagnosis dali = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_dali5551-tfrecord-vs-files-nvme-vs-minio-s3-images-per-sec.txt")}));
  EXPECT_EQ(dali.verdict, Verdict::kIoBound) << dali.summary;
  EXPECT_THAT(dali.summary, testing::HasSubstr("with minio"));
  EXPECT_EQ(storage_medium_of("on a local NVMe SSD"), "nvme");
  EXPECT_EQ(storage_medium_of("streaming from s3://bucket/train"), "s3");
  EXPECT_EQ(storage_medium_of("copied to /dev/shm first"), "tmpfs");
  EXPECT_EQ(storage_medium_of("SSD vs HDD"), std::nullopt);
  EXPECT_EQ(storage_medium_of("model: ssd_mobilenet_v2_coco"), std::nullopt);
  // One medium named is where every run reads: runs at two scales stay a scaling comparison.
  const Telemetry one = read_text("The data is on NFS.\n1 GPU: 400 img/s\n8 GPUs: 1200 img/s\n");
  for (const RunInfo& r : one.runs) EXPECT_EQ(r.storage, "");
  // A source file's path is no rate ("examples/" is not "examples/s"): gsplat#1058's
  // "`examples/simple_trainer.py:851`".
  ExpectNothingPlaced("the GPU waits on the DataLoader at `examples/simple_trainer.py:851`\n");
}

TEST(PastedLogs, TheStepsPhasesInPercentGiveTheWaitsShare) {
  // sudo_rm_rf#27: "time stat: data 0.1%, preproc 0.3%, forward 0.9%, loss 33.5%, backward
  // 49.7%": a wait of 0.1 % of the step.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("other_sudo-rm-rf27-time-stat-percent-breakdown.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  ASSERT_FALSE(d.evidence.empty());
  EXPECT_THAT(d.evidence[0], testing::HasSubstr("in percent"));
  EXPECT_THAT(d.evidence[0], testing::Not(testing::HasSubstr("steps of 1")));
  // Most of it the wait: input-bound.
  EXPECT_EQ(diagnose_telemetry(read_text("data_time 62%, forward 12%, backward 24%\n")).verdict,
            Verdict::kInputBound);
  // Shares that add up to more than the step, or with one phase only, are no breakdown of it.
  ExpectNothingPlaced("data 60%, forward 70%, backward 80%\n");
  ExpectNothingPlaced("GPU 0: data 3%, forward 97%\n");
}

TEST(Scaling, FairseqsWordsPerSecondAfterTheirNumberAreARate) {
  // fairseq#789: "about 10K wps with 2 machines, while running on a single machine gives a
  // speed of ~38K wps": the rate per node falls to a quarter.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_fairseq789-iwslt-2x4-titanx-10k-wps-vs-1node-38k-wps.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("38000 tokens/s -> 10000 tokens/s"));
  const Telemetry t = read_text("speed 5200 wps\n");
  ASSERT_EQ(t.rates.size(), 1u);
  EXPECT_EQ(t.rates[0].unit, "tokens");
  EXPECT_DOUBLE_EQ(t.rates[0].per_second, 5200);
}

TEST(Scaling, MeasuresListedRespectivelyAreOneRunPerScale) {
  // yolov5#1860: "Training time for 1, 2, and 4 GPUs decreases. (60, 36, 20 min respectively).
  // ... At 8 GPUs training time is around 30 minutes."
  const Diagnosis yolo = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_yolov51860-2080ti-60-36-20-min-at-1-2-4-gpus-30-min-at-8.txt")}));
  EXPECT_EQ(yolo.verdict, Verdict::kCommunicationBound) << yolo.summary;
  EXPECT_THAT(yolo.summary, testing::HasSubstr("1 -> 8 GPUs: 3600 s -> 1800 s"));
  // The scales after the measures, and rates.
  const Telemetry t =
      read_text("We measured 410, 760 and 1300 img/s on 1, 2 and 4 GPUs respectively.\n");
  ASSERT_EQ(t.rates.size(), 3u);
  EXPECT_EQ(t.runs[static_cast<size_t>(t.rates[2].run)].gpus, 4);
  EXPECT_DOUBLE_EQ(t.rates[2].per_second, 1300);
  // Lists of different lengths, or of no measure (a loss), are no runs.
  ExpectNothingPlaced("It took 60 and 36 min on 1, 2 and 4 GPUs respectively.\n");
  ExpectNothingPlaced("The loss is 0.5 and 0.3 on 1 and 2 GPUs respectively.\n");
}

TEST(Scaling, AnEpochThatTakesAsLongOnTwoGpusInSentences) {
  // accelerate#71: "each epoch takes 21 seconds with 1 GPU. When using 2 GPUs, it also takes 21
  // seconds", beside "GPU utilization is ~100% in both GPUs": the comparison decides, not the
  // look at the GPUs.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_accelerate71-nlp-example-2080ti-21s-epoch-1-vs-2-gpus.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1 -> 2 GPUs: 21 s -> 21 s for the same epoch"));
  // "also" refers to another duration: alone, it is no run's.
  ExpectNothingPlaced("On 4 GPUs the cost time is also 12 days.\n");
  // What is left of a run is not its length, and seconds alone are as often a step's.
  ExpectNothingPlaced("On 4 GPUs the remaining time is 12 hours.\n");
  for (const char* text : {"On 4 GPUs the training time is 30 seconds.\n",
                           "It took 60, 36 seconds on 1, 2 GPUs respectively.\n"}) {
    Telemetry t;
    try {
      t = read_text(text);
    } catch (const Error&) {
      continue;
    }
    EXPECT_TRUE(t.rates.empty()) << text;
  }
}

TEST(Scaling, ASpeedupOnSyntheticDataAgainstOneOnTheJobsOwn) {
  // horovod#21: "with synthetic data, my speedup is 1.97x, and with real imagenet data, the
  // speedup is 1.45x": the exchange scales, the loading does not.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_horovod21-2-nodes-speedup-synthetic-1.97x-vs-imagenet-1.45x-prose.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1.97x on synthetic data and 1.45x on its own"));
  // The order of the words does not matter; each speedup is the data named nearest before it.
  const Telemetry t = read_text(
      "On real data the speedup is 3.1x. With dummy data the speedup is 7.6x on 8 GPUs.\n");
  ASSERT_EQ(t.speedups.size(), 2u);
  EXPECT_FALSE(t.speedups[0].synthetic);
  EXPECT_TRUE(t.speedups[1].synthetic);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kInputBound);
  // Both alike: the loading keeps up, whatever limits the two.
  EXPECT_NE(diagnose_telemetry(read_text("Speedup with synthetic data is 1.6x and with real data "
                                         "it is 1.55x.\n"))
                .verdict,
            Verdict::kInputBound);
}

TEST(Scaling, ARunCountedInIterationsDoesMoreWorkOnMoreGpus) {
  // mmsegmentation#3170: "I use 74000 iterations ... the estimated running time is 17 hours",
  // and on two GPUs "the estimated running time is even a little higher, up to 18 hours": each
  // of the 74000 iterations is a batch on every GPU, twice the images in 6 % more time.
  const Diagnosis mmseg = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_mmseg3170-upernet-swin-74000-iters-17h-1gpu-18h-2gpus.txt")}));
  EXPECT_EQ(mmseg.verdict, Verdict::kHealthy) << mmseg.summary;
  EXPECT_EQ(mmseg.confidence, Confidence::kLow);
  EXPECT_THAT(mmseg.summary, testing::HasSubstr("94 % scaling efficiency"));
  // Without the iterations the same durations are the same work done slower.
  const Diagnosis same = diagnose_telemetry(
      read_text("On one GPU the training time is 17 hours. On two GPUs the training time is "
                "18 hours.\n"));
  EXPECT_EQ(same.verdict, Verdict::kCommunicationBound) << same.summary;
}

TEST(PastedLogs, TheSameSpeedOnMoreGpusOfOneMachineIsWhatTheyShare) {
  // gluoncv#820: "the training speed remains about 1 images/second no matter how many gpus
  // are used" — the GPUs added do no more, so something they share sets the pace.
  for (const char* name : {"scaling_gluoncv820-mask-rcnn-1img-s-at-1-2-4-gpus.txt",
                           "scaling_speechbrain990-voxceleb-25h-epoch-1-or-4-gpus-local-ssd.txt"}) {
    const Diagnosis d = diagnose_telemetry(read_telemetry_files({pasted(name)}));
    EXPECT_EQ(d.verdict, Verdict::kInputBound) << name << ": " << d.summary;
    EXPECT_EQ(d.confidence, Confidence::kLow) << name;
    EXPECT_THAT(d.summary, testing::HasSubstr("no faster on more GPUs of one machine")) << name;
    EXPECT_FALSE(d.next.empty()) << name;
  }
  // tf#57890: "Tried with 4, 8, 12 machine it's just take same time it takes for single
  // machine" — across machines, each bringing its own CPUs: the network is what they add.
  const Diagnosis machines = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_tf57890-mwms-tfrs-1-vs-2-machines-step-seconds-prose.txt")}));
  EXPECT_EQ(machines.verdict, Verdict::kCommunicationBound) << machines.summary;
  EXPECT_THAT(machines.summary, testing::HasSubstr("the larger run is no faster"));
}

TEST(PastedLogs, AUtilisationThatFallsAtALargerScaleIsWhatTheScalesAdd) {
  // diffusers#5902: "The GPU utilization is around 95% on a single machine, but it drops to
  // only 63% when training on two machines" — not one look at a busy GPU: the second machine's
  // network is what is new.
  const Diagnosis machines = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_diffusers5902-sdxl-util-95pct-1node-63pct-2nodes.txt")}));
  EXPECT_EQ(machines.verdict, Verdict::kCommunicationBound) << machines.summary;
  EXPECT_THAT(machines.summary,
              testing::HasSubstr("utilisation falls from 95 % on 1 machine to 63 % on 2"));
  // On one machine the GPUs added share its CPUs.
  const Diagnosis gpus = diagnose_telemetry(read_text(
      "Training is slow. GPU utilization is 97% with 1 GPU, but only 40% with 4 GPUs.\n"));
  EXPECT_EQ(gpus.verdict, Verdict::kInputBound) << gpus.summary;
  EXPECT_EQ(gpus.confidence, Confidence::kLow);
  EXPECT_THAT(
      gpus.summary,
      testing::HasSubstr("utilisation on one machine falls from 97 % on 1 GPU to 40 % on 4"));
  EXPECT_FALSE(gpus.next.empty());
}

TEST(PastedLogs, OneGpuAloneAlreadyIdleWaitsForItsInput) {
  // so#46364010: the Dataset API run "considerably slower" on 4 K80s than on 1, "gpu-utilization
  // to be around 15% each, while with a single GPU it is around 45%".
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("other_so46364010-tf-dataset-api-4xk80-util-15pct.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("already idles 55 % of its time"));
  // Busy alone and slower on more GPUs: the exchange is what the larger run adds.
  EXPECT_EQ(diagnose_telemetry(read_text("Training on 4 GPUs is slower than on a single GPU. GPU "
                                         "utilization is 95% with 1 GPU, but only 40% with 4 "
                                         "GPUs.\n"))
                .verdict,
            Verdict::kCommunicationBound);
}

TEST(PastedLogs, NcclOverSocketsBetweenMachinesIsTheLinkThatLimits) {
  // areal#639: "Cross-node collective operations ... are 4-5x slower" beside "NCCL INFO
  // NET/Socket : Using [0]bond0".
  const Diagnosis areal = diagnose_telemetry(read_telemetry_files(
      {pasted("other_areal639-nccl-net-socket-bond0-instead-of-roce-allreduce-1gb-370ms-vs-50ms-"
              "cutoff.txt")}));
  EXPECT_EQ(areal.verdict, Verdict::kCommunicationBound) << areal.summary;
  EXPECT_EQ(areal.confidence, Confidence::kLow);
  EXPECT_THAT(areal.summary, testing::HasSubstr("between the job's machines over TCP sockets"));
  EXPECT_FALSE(areal.next.empty());
  // detectron2#4730: one machine's NCCL start-up, libibverbs missing; the paste does not say
  // the job spans machines (on one machine NCCL does not use the network): `unknown`, saying
  // what holds if it does.
  const Diagnosis one_host = diagnose_telemetry(read_telemetry_files(
      {pasted("other_detectron2-4730-nccl-info-socket-transport-two-nodes-cutoff.txt")}));
  EXPECT_EQ(one_host.verdict, Verdict::kUnknown) << one_host.summary;
  EXPECT_THAT(one_host.summary, testing::HasSubstr("libibverbs, failed to load"));
  EXPECT_THAT(one_host.summary, testing::HasSubstr("if the job spans machines"));
  EXPECT_FALSE(one_host.next.empty());
  // A time of day before NCCL's prefix is no host; a line denying machines spans none; a WARN
  // is a failure, not the transport chosen.
  const Telemetry clock = read_text(
      "10:15:01 ws01:1200:1200 [0] NCCL INFO NET/Socket : Using [0]eth0:192.168.1.10<0>\n"
      "11:00:02 ws01:1201:1201 [1] NCCL INFO NET/Socket : Using [0]eth0:192.168.1.10<0>\n"
      "This is a single-node job, not multi-node: 2 GPUs in one workstation.\n");
  ASSERT_TRUE(clock.nccl_over_sockets);
  EXPECT_FALSE(clock.spans_machines);
  // Beside a stronger reading, the socket does not decide: Horovod's stall warning names the
  // rank the others wait for.
  const Diagnosis stalled = diagnose_telemetry(read_text(
      "node-a:101:101 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
      "node-b:202:202 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>\n"
      "[2020-07-22 11:02:05.1]WARNING: One or more tensors were submitted to be reduced, "
      "gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for "
      "more than 60 seconds.\n"
      "Stalled ranks:\n"
      "0: [HorovodAllreduce_grad_0] [missing ranks: 1]\n"));
  EXPECT_EQ(stalled.verdict, Verdict::kRankImbalance) << stalled.summary;
  // Two hosts in NCCL's own lines are two machines.
  const Telemetry two = read_text(
      "node-a:101:101 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
      "node-b:202:202 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>\n");
  ASSERT_TRUE(two.nccl_over_sockets);
  EXPECT_TRUE(two.spans_machines);
  // InfiniBand is no socket: nothing is read.
  EXPECT_THROW(read_text("node-a:101:101 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB "
                         "ib0:10.0.0.1<0>\n"
                         "node-a:101:101 [0] NCCL INFO Using network IB\n"),
               Error);
}

TEST(PastedLogs, ASettingAfterTheNameOfATimeLabelsItsRun) {
  // pytorch#81412: "avg time per batch for num workers=0: 0.6090951558124971" — the workers
  // label the run, the time is the batch's.
  const auto values = named_values("avg time per batch for num workers=0: 0.6090951558124971");
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].name, "avg_time_per_batch");
  EXPECT_DOUBLE_EQ(values[0].value, 0.6090951558124971);
  EXPECT_EQ(named_values("time per batch (num_workers=4): 0.38").at(0).name, "time_per_batch");
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_pytorch81412-dataloader-workers-0-8-large-numpy-batches-flat-"
              "cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("with num_workers=0"));
  // A setting alone before its value is its label (pytorch#123439: "workers=0: 0.13s").
  const auto alone = named_values("workers=0: 0.13s");
  ASSERT_FALSE(alone.empty());
  EXPECT_EQ(alone.back().unit, "s");
}

TEST(PastedLogs, AProfilersInfeedShareIsTheWaitForInput) {
  // pytorch/xla#1989: the TPU monitor pasted as one line with literal "\n": infeed 0.008 % of
  // a 342 ms step, the device never waits for its batches (its 1.59 % MXU use is the model's).
  const Telemetry tpu = read_telemetry_files(
      {pasted("profiler_torchxla1989-tpu-v3-idle-0.001pct-mxu-1.59pct-infeed-0.008pct.txt")});
  ASSERT_EQ(tpu.steps.size(), 1u);
  EXPECT_EQ(tpu.files.at(0).kind, TelemetryKind::kInputProfile);
  EXPECT_DOUBLE_EQ(tpu.steps[0].step_seconds, 0.342);
  EXPECT_NEAR(tpu.steps[0].data_seconds, 0.00008 * 0.342, 1e-12);
  const Diagnosis healthy = diagnose_telemetry(tpu);
  EXPECT_EQ(healthy.verdict, Verdict::kHealthy) << healthy.summary;
  EXPECT_EQ(healthy.confidence, Confidence::kHigh);
  // The TensorFlow profiler's overview says its own share, in the words it prints.
  const Diagnosis starved = diagnose_telemetry(read_text(
      "* Your program is HIGHLY input-bound because 68.8% of the total step time sampled is "
      "waiting for input. Therefore, you should first focus on reducing the input time\n"
      "* 7.3 % of the total step time sampled is spent on All Others time.\n"));
  EXPECT_EQ(starved.verdict, Verdict::kInputBound) << starved.summary;
  EXPECT_THAT(starved.evidence.at(0), testing::HasSubstr("69 %"));
  // tpu#156: idle time without the infeed share decides nothing; the answer names the line
  // that would.
  const Diagnosis idle = diagnose_telemetry(
      read_telemetry_files({pasted("profiler_tpu156-host-idle-mxu-0.6pct.txt")}));
  EXPECT_EQ(idle.verdict, Verdict::kUnknown) << idle.summary;
  ASSERT_FALSE(idle.next.empty());
  EXPECT_THAT(idle.next[0], testing::HasSubstr("Infeed percentage"));
  // A percentage that is no share is not read as one; a question about idle time is no
  // measurement of it.
  EXPECT_THROW(read_text("Infeed percentage: 187% (avg)\n"), Error);
  EXPECT_THROW(read_text("How do I reduce the TPU idle time? My model trains slowly on a v3-8.\n"),
               Error);
  // A space before the percent sign, as people retype it.
  const Telemetry spaced = read_text(
      "Your program is HIGHLY input-bound because 68.8 % of the total step time sampled is "
      "waiting for input.\nInfeed percentage: 45.2 % (avg)\n");
  ASSERT_EQ(spaced.steps.size(), 2u);
  EXPECT_NEAR(spaced.steps[0].data_seconds, 0.688, 1e-12);
  EXPECT_NEAR(spaced.steps[1].data_seconds, 0.452, 1e-12);
}

TEST(PastedLogs, ASettingSaidOffIsARunBesideTheOneWithItOn) {
  // tensorflow#2919: the same forward pass fed from Python each step and from a variable already
  // on the device, in "ms/minibatch".
  const Diagnosis fed = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_tf2919-feeddict-102ms-vs-variable-28ms-per-minibatch.txt")}));
  EXPECT_EQ(fed.verdict, Verdict::kInputBoundCpu) << fed.summary;
  EXPECT_THAT(fed.summary, testing::HasSubstr("with no feed_dict"));
  EXPECT_THAT(fed.summary, testing::HasSubstr("(3.6x)"));
  EXPECT_EQ(loader_setting_of("pin_memory = False")->label, "no pinned memory");
  // The code every TF1 loop is written in names no setting.
  EXPECT_FALSE(loader_setting_of("    sess.run(train_op, feed_dict={x: xb, y: yb})"));
  EXPECT_EQ(loader_setting_of("without feed_dict: 28 ms/minibatch")->label, "no feed_dict");
  // Off after on: two runs, whichever comes first.
  const Diagnosis pinned = diagnose_telemetry(
      read_text("pin_memory=True: 102 ms/batch\npin_memory=False: 28 ms/batch\n"));
  EXPECT_EQ(pinned.verdict, Verdict::kInputBoundCpu) << pinned.summary;
  EXPECT_THAT(pinned.summary, testing::HasSubstr("with no pinned memory"));
}

TEST(PastedLogs, TheStepLineRightAfterAValidationCarriesTheWorkersStart) {
  // DCNv4#54: mmseg's first interval after "Iter(val) [363]" waited 2.9 of 4.0 s (the workers
  // started again), the next 0.064 of 1.18 s.
  const Diagnosis after_val = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_dcnv4-54-mmseg-dcnv4-run-time-1-18s-data-0-06s-after-val-stall-cutoff."
              "txt")}));
  EXPECT_EQ(after_val.verdict, Verdict::kHealthy) << after_val.summary;
  // The same two lines in mid-run, with nothing above them: each line's wait counts.
  const Diagnosis mid_run = diagnose_telemetry(
      read_text("Iter [1050/10000]\tlr: 3.756e-05, time: 3.998, data_time: 2.911, memory: 7199\n"
                "Iter [1100/10000]\tlr: 3.913e-05, time: 1.181, data_time: 0.064, memory: 7199\n"));
  EXPECT_EQ(mid_run.verdict, Verdict::kInputBound) << mid_run.summary;
  // A sentence about validation, or a config line, is no validation's log line.
  for (const char* above : {"Training is slow, I disabled validation to check:",
                            "evaluation = dict(interval=4000, metric='mIoU')"}) {
    const Diagnosis prose = diagnose_telemetry(
        read_text(fmt::format("{}\nIter [5050/160000]\tlr: 1e-05, time: 0.900, data_time: 0.600\n"
                              "Iter [5100/160000]\tlr: 1e-05, time: 0.400, data_time: 0.050\n",
                              above)));
    EXPECT_EQ(prose.verdict, Verdict::kInputBound) << above;
  }
}

TEST(PastedLogs, TheDataAgainstTheNetworkInASentenceInChineseOrEnglish) {
  // pysot#218: "载入数据要1.2s多，而网络才0.6s" (loading the data takes over 1.2 s, the network
  // only 0.6 s): two thirds of the step wait for data.
  const Diagnosis chinese = diagnose_telemetry(
      read_telemetry_files({pasted("other_pysot218-data-load-1.2s-vs-network-0.6s.txt")}));
  EXPECT_EQ(chinese.verdict, Verdict::kInputBound) << chinese.summary;
  EXPECT_THAT(chinese.evidence.at(0), testing::HasSubstr("67 %"));
  const Diagnosis english = diagnose_telemetry(
      read_text("Loading the data takes more than 1.2s, while the network only takes 0.6s.\n"));
  EXPECT_EQ(english.verdict, Verdict::kInputBound) << english.summary;
  // Data parallel (数据并行) is no loading of data.
  EXPECT_EQ(in_english("\xe6\x95\xb0\xe6\x8d\xae\xe5\xb9\xb6\xe8\xa1\x8c"),
            "\xe6\x95\xb0\xe6\x8d\xae\xe5\xb9\xb6\xe8\xa1\x8c");
  // "耗时" (time taken) glued to an English name is its time; not a second time after a name
  // that says it, nor alone (a run's "耗时：103.4079s", Qwen#669).
  EXPECT_EQ(in_english("| reader耗时/s |"), "| reader_time /s |");
  EXPECT_EQ(in_english("current_batch_cost_time耗时： 0.87"), "current_batch_cost_time :  0.87");
  EXPECT_EQ(in_english("耗时：103.4079s"), "耗时: 103.4079s");
  // PaddleVideo#58: "| DALI | 2.083 | 1.804 |" under "| 加速方式 | batch耗时/s | reader耗时/s |":
  // 1.804 s of each 2.083 s batch waits for the reader.
  const Diagnosis paddle = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_paddlevideo58-dali-vs-dataloader-reader-cost-table.txt")}));
  EXPECT_EQ(paddle.verdict, Verdict::kInputBound) << paddle.summary;
}

TEST(PastedLogs, OneMeasurementWithItsUnitIsReadAndAnsweredWithWhatWouldDecide) {
  // lerobot#93: "8 batches takes ~ 15s" is all the paste measures in a unit (its breakdown's
  // rows are bare), 1.88 s a batch: read, unknown, with the measurement that would decide.
  const Diagnosis one = diagnose_telemetry(
      read_telemetry_files({pasted("profiler_lerobot93-getitem-timing-breakdown-0-workers.txt")}));
  EXPECT_EQ(one.verdict, Verdict::kUnknown) << one.summary;
  EXPECT_THAT(one.summary, testing::HasSubstr("step times only (1.88 s per step)"));
  EXPECT_THAT(one.next.at(0), testing::HasSubstr("data time against its step time"));
  // A lone bare number under a name of time may be a count, a percentage named only by its GPU
  // may be its memory: not read.
  EXPECT_THROW(read_text("duration: 12.5\n"), Error);
  EXPECT_THROW(read_text("the other GPUs have 10% used\n"), Error);
}

TEST(PastedLogs, SlowStepsRightAfterCheckpointsAreTheCheckpoints) {
  // models#3000: TensorFlow's "global step" lines take 200-650 s right after "Saving
  // checkpoint" or "Recording summary", 2-3 s otherwise.
  const Diagnosis saved = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_models3000-ssd-mobilenet-checkpoint-stalls-cutoff.txt")}));
  EXPECT_EQ(saved.verdict, Verdict::kHealthy) << saved.summary;
  EXPECT_THAT(saved.summary, testing::HasSubstr("each right after the loop's own periodic"));
  ASSERT_EQ(saved.evidence.size(), 2u);
  EXPECT_THAT(saved.evidence[1], testing::HasSubstr("(2.869 sec/step)"));
  // The same steps without the saves between them stall on something else.
  std::string bare;
  for (const double s : {2.8, 2.7, 195.0, 2.3, 2.5, 1.8, 248.0, 2.4, 245.0, 10.1, 2.6, 2.2}) {
    bare += fmt::format("INFO:tensorflow:global step 1: loss = 1.5 ({} sec/step)\n", s);
  }
  EXPECT_EQ(diagnose_telemetry(read_text(bare)).verdict, Verdict::kInputBound);
  // A review's counter-examples. One stall that follows no save may be the input's.
  std::string one_unexplained;
  const double times[] = {2.6, 2.5, 2.7, 250.0, 2.6, 2.4, 245.0, 2.5, 2.6, 240.0, 2.7, 2.5};
  for (size_t k = 0; k < std::size(times); ++k) {
    if (k == 3 || k == 6) one_unexplained += "INFO:tensorflow:Saving checkpoints for 1 into m\n";
    one_unexplained +=
        fmt::format("INFO:tensorflow:global step {}: loss = 1.5 ({} sec/step)\n", k, times[k]);
  }
  EXPECT_EQ(diagnose_telemetry(read_text(one_unexplained)).verdict, Verdict::kInputBound);
  // nanoGPT#673: steps at two levels, every other one 20 s against 0.92 s, each right after
  // the evaluation's "step 2: train loss ..., val loss ..." and "saving checkpoint to out"; the
  // same two levels without those lines take turns like a loader's bursts.
  const Diagnosis nano = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_nanogpt673-iter-ms-mfu-eval-every-2-spikes.txt")}));
  EXPECT_EQ(nano.verdict, Verdict::kHealthy) << nano.summary;
  EXPECT_THAT(nano.summary, testing::HasSubstr("4 of 9 steps take 5x or more the usual step"));
  std::string turns;
  for (int k = 0; k < 10; ++k) {
    turns +=
        fmt::format("iter {}: loss 10.9, time {}ms, mfu 30.00%\n", k, k % 2 == 0 ? 20500.0 : 923.0);
  }
  EXPECT_EQ(diagnose_telemetry(read_text(turns)).verdict, Verdict::kInputBound);
  // A step line's own words ("best validation acc") are no work between two steps.
  std::string own;
  for (const double t : {0.50, 0.52, 1.60, 0.51, 0.50, 0.49, 1.70, 0.52, 0.50, 0.51}) {
    own += fmt::format("Iter 1: {} s/it, loss 0.31, best validation acc 0.72\n", t);
  }
  EXPECT_EQ(diagnose_telemetry(read_text(own)).verdict, Verdict::kInputBound);
}

TEST(PastedLogs, AProgressBarPastedTwiceIsOneSampleOfItsSpeed) {
  // ms-swift#8096: the bar's first line twice, then 16, 37, 53, 65 s/it: a start that never was
  // steady, not a steady speed that fell.
  const Diagnosis start = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_msswift8096-h100x8-zero3-qwen35-27b-tqdm-slowing.txt")}));
  EXPECT_NE(start.verdict, Verdict::kInputBound) << start.summary;
  // Three distinct lines at one speed, then a fall that stays: still a fall.
  std::string fell;
  for (const double s : {12.5, 12.6, 12.4, 40.0, 41.0, 40.5}) {
    fell += fmt::format("Train: {}/3527 [00:15<12:16:56, {}s/it]\n", fell.size(), s);
  }
  EXPECT_EQ(diagnose_telemetry(read_text(fell)).verdict, Verdict::kInputBound);
  // The same speed under each epoch's heading is a sample each time (a review's example).
  std::string epochs;
  for (int e = 1; e <= 7; ++e) {
    epochs += fmt::format("Epoch {}/7\n  train throughput: {} samples/s\n", e, e <= 4 ? 1500 : 700);
  }
  EXPECT_EQ(diagnose_telemetry(read_text(epochs)).verdict, Verdict::kInputBound);
}

TEST(PastedLogs, ClocksWithoutAYearAndTheirCountersTimeTheSteps) {
  // jiant#1099: "06/26 12:38:54 PM: Update 340556: ..." then "12:39:04 PM: Update 340603":
  // 10 s over 47 updates.
  const Telemetry jiant =
      read_telemetry_files({pasted("datalog_jiant1099-v100-bert-record-1gpu-baseline.txt")});
  ASSERT_EQ(jiant.steps.size(), 1u);
  EXPECT_NEAR(jiant.steps[0].step_seconds, 10.0 / 47, 1e-9);
  EXPECT_FALSE(jiant.steps[0].has_data);
  // Noon is 12 PM, midnight 12 AM: 11:59:50 AM to 12:00:10 PM is 20 s; 12:00:00 AM to
  // 01:00:00 AM an hour.
  const Telemetry noon = read_text(
      "06/26 11:59:50 AM: Update 100: task record\n06/26 12:00:10 PM: Update 110: task record\n");
  ASSERT_EQ(noon.steps.size(), 1u);
  EXPECT_NEAR(noon.steps[0].step_seconds, 2.0, 1e-9);
  const Telemetry night = read_text(
      "06/26 12:00:00 AM: Update 100: task record\n06/26 01:00:00 AM: Update 200: task record\n");
  ASSERT_EQ(night.steps.size(), 1u);
  EXPECT_NEAR(night.steps[0].step_seconds, 36.0, 1e-9);
  // glog's prefix (Caffe's solver): "I0511 19:26:57.251538 ... Iteration 940" to "I0511
  // 19:46:44.235342 ... Iteration 950": 1187 s over 10 iterations.
  const Telemetry caffe = read_telemetry_files(
      {pasted("datalog_caffe584-ssd-solver-log-20min-per-10-iters-2x1080-cutoff.txt")});
  ASSERT_FALSE(caffe.steps.empty());
  EXPECT_NEAR(caffe.steps[0].step_seconds, (19 * 60 + 46.983804) / 10, 1e-6);
  // A duration is no counter: "Prefetch batch: 5348 ms." times a batch.
  EXPECT_TRUE(read_text("I1207 14:34:00.304049 17469 sgd_solver.cpp:138] Iteration 0, lr = 0.01\n"
                        "I1207 14:34:02.271486 17490 annotated_data_layer.cpp:305] Prefetch "
                        "batch: 5348 ms.\n")
                  .steps.empty());
}

TEST(PastedLogs, OneNodeAgainstTwoInOneSentence) {
  // dlrm#356: "With a single node and 8 A100 GPUs the training speed is roughly `18 it/s`;
  // however, when using 2 nodes (each with 8 A100 GPUs again), ... about `3 it/s`": 8 GPUs
  // against 16, each GPU's rate down to a sixth between machines.
  const Telemetry t = read_telemetry_files(
      {pasted("scaling_dlrm356-torchrec-1node-vs-2node-sparse-data-dist-ms.txt")});
  ASSERT_GE(t.rates.size(), 2u);
  EXPECT_EQ(t.runs[static_cast<size_t>(t.rates[0].run)].gpus, 8);
  EXPECT_EQ(t.runs[static_cast<size_t>(t.rates[1].run)].gpus, 16);
  EXPECT_EQ(t.runs[static_cast<size_t>(t.rates[1].run)].nodes, 2);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  // mxnet#10247: one machine's rate before the job's ("111 samples/sec on each machine = 222
  // samples/sec"): the job's is read; the same GPU count on two nodes is a scale of its own,
  // so the two-node rows continue the one-node series instead of starting another.
  const Telemetry mx = read_text(
      "Single node with 1 GPUs: 122 samples/sec\nSingle node with 2 GPUs: 234 samples/sec\n"
      "Two node with 1 GPUs each: 111 samples/sec on each machine = 222 samples/sec\n"
      "Two node with 2 GPUs each: 220 samples/sec on each machine = 440 samples/sec\n");
  ASSERT_EQ(mx.rates.size(), 4u);
  EXPECT_EQ(mx.rates[2].per_second, 222);
  EXPECT_EQ(mx.rates[3].per_second, 440);
  ASSERT_EQ(mx.runs.size(), 4u);
  EXPECT_EQ(mx.runs[2].gpus, 2);
  EXPECT_EQ(mx.runs[2].nodes, 2);
  EXPECT_EQ(mx.runs[3].gpus, 4);
  EXPECT_EQ(mx.runs[0].group, mx.runs[3].group);
  // horovod#288's summary: "~4419.71 total img/sec" is the job's rate on its 8 GPUs.
  const Telemetry hvd = read_text(
      "1 GPU: ~641 img/sec\nMultinode mode (2 nodes with 4 GPUs each):\n~552.4 img/sec\n"
      "~4419.71 total img/sec\n");
  ASSERT_EQ(hvd.rates.size(), 3u);
  EXPECT_TRUE(hvd.rates[2].total);
  EXPECT_EQ(hvd.rates[2].per_second, 4419.71);
  EXPECT_EQ(hvd.runs[static_cast<size_t>(hvd.rates[2].run)].gpus, 8);
}

TEST(PastedLogs, WordsThatTheLargerScaleIsSlowerBesideStepsThatKeepUp) {
  // fastreid#656: a step log of one machine waiting 1 % for data, and the words that several
  // machines are 66 times slower: communication-bound (low), not the step log's healthy.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_fastreid656-multi-machine-vs-single-run-step-timing-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, testing::HasSubstr("the steps it times keep up (waiting for data 1 %"));
  // The same step log without the words stays healthy.
  const Diagnosis alone = diagnose_telemetry(read_text(
      "[04/26 09:58:40 fastreid.utils.events]:  eta: 0:01:01  epoch/iter: 0/24  total_loss: "
      "0.6677  time: 0.1291  data_time: 0.0008  lr: 1.22e-03  max_mem: 5871M\n"));
  EXPECT_EQ(alone.verdict, Verdict::kHealthy) << alone.summary;
}

TEST(PastedLogs, MlperfResultLinesAreRunDurations) {
  // MLPerf's run_and_time.sh: "RESULT,<benchmark>,<seed>,<seconds>,<user>,<start>", grepped out
  // of ten run logs (mlperf training_results_v0.6#18): each a run's duration, 3 or 4 s.
  const Telemetry t =
      read_telemetry_files({pasted("other_mlperf06-18-gnmt-result-lines-3-4s-runs.txt")});
  ASSERT_EQ(t.rates.size(), 10u);
  EXPECT_EQ(t.rates[0].unit, "runs");
  EXPECT_DOUBLE_EQ(1 / t.rates[0].per_second, 3);
  EXPECT_DOUBLE_EQ(1 / t.rates[1].per_second, 4);
  // A seed and a fractional duration; not a CSV row that merely starts with the word.
  const Telemetry seeded = read_text("RESULT,resnet,3,5412.5,root,2019-05-01 10:00:00 AM\n");
  ASSERT_EQ(seeded.rates.size(), 1u);
  EXPECT_DOUBLE_EQ(1 / seeded.rates[0].per_second, 5412.5);
  EXPECT_THROW(read_text("x RESULT,1,2,3,4,5\n"), Error);
}

TEST(PastedLogs, CntkProfilerTimesTheMinibatchAboveItsParts) {
  // CNTK#1862: "_Minibatch Iteration : 136.605 ms ..." above "__Get Minibatch : 0.054 ms",
  // "__Forward + Backward", "__Gradient Aggregation" per rank; the paste is cut off after rank
  // 1's "__Get Minibatch : 0.044", whose "ms" is the total's.
  const Telemetry t = read_telemetry_files(
      {pasted("profiler_cntk1862-rc1-3node-minibatch-iteration-breakdown-cutoff.txt")});
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_NEAR(t.steps[0].step_seconds, 0.136605, 1e-9);
  EXPECT_NEAR(t.steps[0].data_seconds, 0.054e-3, 1e-12);
  EXPECT_NEAR(t.steps[1].data_seconds, 0.044e-3, 1e-12);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_EQ(meaning_of(NamedValue{"gradient_aggregation", "ms", 44.763, std::nullopt, 0}).quantity,
            Quantity::kCommunication);
}

TEST(PastedLogs, ASteadySpeedThroughAParameterServerIsNotYetHealthy) {
  // tf_cnn_benchmarks#15: a worker and its parameter server on one host ("Devices:
  // ['/job:worker/task:0/gpu:0']"), 234 images/s within 1 %: the exchange may set that pace.
  const Diagnosis ps = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_tfbenchmarks15-ps-worker-same-host-trivial-234-img-s-cutoff.txt")}));
  EXPECT_EQ(ps.verdict, Verdict::kUnknown) << ps.summary;
  EXPECT_THAT(ps.summary, testing::HasSubstr("goes through a parameter server"));
  // The same benchmark with its variables on the machine's own CPU is no distributed runtime
  // (tensorflow-upstream#345, --variable_update=parameter_server on 2 GPUs): steady, healthy.
  const Diagnosis local = diagnose_telemetry(
      read_telemetry_files({pasted("tfbench_tensorflow-upstream345-rocm-2gpu-resnet50-fp16.txt")}));
  EXPECT_EQ(local.verdict, Verdict::kHealthy) << local.summary;
}

TEST(PastedLogs, ADurationAfterTheStepsCounterIsThatStep) {
  // tensorflow#18691: "Step 105 duration : 3.5233473777770996", then four steps of ~0.55 s
  // (one of 0.04), again and again: the shuffle buffer refilling every fifth step.
  const Telemetry t = read_telemetry_files(
      {pasted("datalog_tensorflow18691-tfdata-shuffle-repeat-3s-step-every-5-steps.txt")});
  ASSERT_GE(t.steps.size(), 11u);
  EXPECT_NEAR(t.steps[0].step_seconds, 3.5233473777770996, 1e-12);
  EXPECT_FALSE(t.steps[0].has_data);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kInputBound);
  // Not after a count that is no step's: an epoch's duration is no step.
  EXPECT_THROW(read_text("Epoch 3 duration : 120\n"), Error);
}

TEST(PastedLogs, ADurationRightBeforeTheWordEpochTimesAnEpoch) {
  // yolov3#405: "- 1x V100 (~21 min epoch)", "- 2x V100 (~18 min epoch)": the same epoch on one
  // GPU and two, 58 % of the rate per GPU kept.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("scaling_yolov3405-v100-1x-vs-2x-epoch-minutes.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1260 s -> 1080 s for the same epoch, 58 %"));
  // A count of epochs is no duration: "trained 10 epochs" times nothing. Nor is a log's time of
  // day before "epoch 3", or a duration before the epoch's counter (a review's cases).
  EXPECT_THROW(read_text("trained for 10 epochs\n"), Error);
  EXPECT_THROW(read_text("2023-01-01 12:30:01 epoch 3 iter 100 loss 0.5\n"), Error);
  EXPECT_THROW(read_text("after 2 hours epoch 3 had loss 0.5\n"), Error);
  EXPECT_THROW(read_text("1 GPU: 2023-01-01 09:00:01 epoch done\n"), Error);
}

TEST(PastedLogs, TheDlioBenchmarksAcceleratorUtilisation) {
  // mlcommons/storage#490: a box-drawn table of DLIO's AU by simulated accelerators ("-na"),
  // with the CPUs' minimum idle share; the failed 48- and 64-accelerator rows print "?".
  const Diagnosis table = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_mlcommonsstorage490-dlio-retinanet-au-vs-accelerators-cpu-idle-zero.txt")}));
  EXPECT_EQ(table.verdict, Verdict::kInputBoundCpu) << table.summary;
  EXPECT_EQ(table.confidence, Confidence::kMedium);
  EXPECT_THAT(table.summary, testing::HasSubstr("from 97.7 % on 2 accelerators to 85.5 % on 32"));
  EXPECT_THAT(table.summary, testing::HasSubstr("CPUs are 0 % idle at 32"));
  const Telemetry read = read_telemetry_files(
      {pasted("scaling_mlcommonsstorage490-dlio-retinanet-au-vs-accelerators-cpu-idle-zero.txt")});
  ASSERT_EQ(read.accelerator_utilisation.size(), 5u);  // 2 to 32; not the "?" rows
  EXPECT_EQ(read.accelerator_utilisation[2].accelerators, 16);
  EXPECT_DOUBLE_EQ(read.accelerator_utilisation[2].percent, 93.9);
  EXPECT_EQ(read.accelerator_utilisation[2].cpu_idle, 50);
  // The same table drawn with ASCII bars, the CPUs left idle at every count: the input still
  // falls behind, and what holds it is not known.
  const Diagnosis ascii = diagnose_telemetry(read_text(
      "| -na | AU% | min CPU idle % |\n|---|---|---|\n| 2 | 97.7 | 90 |\n| 32 | 85.5 | 60 |\n"));
  EXPECT_EQ(ascii.verdict, Verdict::kInputBound) << ascii.summary;
  EXPECT_FALSE(ascii.next.empty());
  // Utilisation that holds at every count: the input keeps up.
  EXPECT_EQ(diagnose_telemetry(read_text("| accelerators | AU (%) |\n|---|---|\n| 4 | 98.1 |\n"
                                         "| 16 | 96.0 |\n"))
                .verdict,
            Verdict::kHealthy);
  // DLIO's own [METRIC] block, as its documentation shows it: AU 94.4 %, the rest the wait.
  const Diagnosis block = diagnose_telemetry(
      read_text("[METRIC] Number of Simulated Accelerators: 4\n"
                "[METRIC] Training Accelerator Utilization [AU] (%): 94.4286 (0.4908)\n"
                "[METRIC] Training Throughput (samples/second): 1903.7393 (9.8968)\n"
                "[METRIC] Training I/O Throughput (MiB/second): 586.3437 (3.0482)\n"
                "[METRIC] train_au_meet_expectation: success\n"));
  EXPECT_EQ(block.verdict, Verdict::kHealthy) << block.summary;
  EXPECT_THAT(block.summary, testing::HasSubstr("6 %"));
  EXPECT_EQ(diagnose_telemetry(
                read_text("[METRIC] Training Accelerator Utilization [AU] (%): 30.48 (1.2)\n"))
                .verdict,
            Verdict::kInputBound);
  // mlcommons/storage#258: every metric 0 after thousands of steps — nothing was timed.
  const Diagnosis zero = diagnose_telemetry(read_telemetry_files(
      {pasted("other_mlcommonsstorage258-dlio-retinanet-metric-block-all-zero.txt")}));
  EXPECT_EQ(zero.verdict, Verdict::kUnknown);
  EXPECT_THAT(zero.summary, testing::HasSubstr("timed none of them"));
}

TEST(PastedLogs, BoxDrawnTablesReadAsTheirAsciiTwins) {
  // tabulate's "fancy_grid" and rich's tables draw with U+2500-U+257F: read as '|', '-', '+'.
  EXPECT_EQ(strip_markdown("\u250c\u2500\u2500\u252c\u2500\u2510\n\u2502 a \u2502 b \u2502\n"
                           "\u255e\u2550\u256a\u2550\u2561\n\u2551 1 \u2503 2 \u2551"),
            "+--+-+\n| a | b |\n+-+-+\n| 1 | 2 |");
  // Other three-byte characters beginning with the same byte are left as they are.
  EXPECT_EQ(strip_markdown("\u2014 \u20ac"), "\u2014 \u20ac");
  const Telemetry boxed = read_text(
      "\u2502 GPUs \u2502 img/sec \u2502\n\u251c\u2500\u2500\u253c\u2500\u2500\u2524\n"
      "\u2502 1 \u2502 300 \u2502\n\u2502 8 \u2502 1200 \u2502\n");
  EXPECT_EQ(boxed.runs.size(), 2u);
  EXPECT_EQ(diagnose_telemetry(boxed).verdict, Verdict::kCommunicationBound);
}

TEST(PastedLogs, ATableOfTimersOnItsSideIsReadAsItsTranspose) {
  // mmagic#707: thread settings in columns, "time1" and "datatime1" rows under them.
  const Telemetry t = read_telemetry_files(
      {pasted("throughput_mmagic707-lark-table-threads-vs-time-datatime-cutoff.txt")});
  ASSERT_EQ(t.steps.size(), 5u);
  EXPECT_DOUBLE_EQ(t.steps[0].step_seconds, 0.816);
  EXPECT_DOUBLE_EQ(t.steps[0].data_seconds, 0.025);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  // A wait that is most of each step, whichever setting.
  EXPECT_EQ(diagnose_telemetry(read_text("workers | 2 | 4 | 8\n-- | -- | -- | --\n"
                                         "batch_time | 1.2 | 1.1 | 1.0\n"
                                         "data_time | 0.9 | 0.8 | 0.7\n"))
                .verdict,
            Verdict::kInputBound);
  // Cells with their units are named lines (VISSL's "read_sample:  133.48 ms  134.55 ms"), not
  // bare timers: no transpose reads them as seconds.
  const Telemetry vissl = read_text(
      "Timer  Host  CudaEvent\nread_sample:  133.48 ms  134.55 ms\nforward:  97.38 ms  266.44 "
      "ms\ntrain_step_total:  952.28 ms  950.72 ms\n");
  for (const StepSample& s : vissl.steps) EXPECT_LT(s.step_seconds, 2) << s.step_seconds;
}

TEST(PastedLogs, RuntimesUnderLoaderSettingsInANestedList) {
  // petastorm#432: "* workers_count = 3 ==> (nVCPU - 1)" over "* runtime: 152 sec", 263 s with
  // 4 workers, 320 s with 5, 303 s with 8 on 4 vCPUs.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("throughput_petastorm432-epoch-runtime-by-reader-pool-and-"
                                   "workers-count-4-vcpu-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("152 s with num_workers=3"));
  // "runtime", "elapsed time", "wall time" name a whole run, in seconds too; "time" alone in
  // seconds is as often a step's.
  for (const char* whole : {"runtime: 152 sec", "elapsed time: 95 s", "Wall time: 30.5s"}) {
    EXPECT_TRUE(read_text(fmt::format("num_workers=2\n{}\nnum_workers=8\n{}\n", whole, whole))
                    .rates.size() == 2u)
        << whole;
  }
  EXPECT_TRUE(read_text("num_workers=2\ntime: 1.5 s\nnum_workers=8\ntime: 1.4 s\n").rates.empty());
}

TEST(PastedLogs, LightningsWarningOfFewWorkersIsASettingNotAWait) {
  // NeMo#1204: "The dataloader, val dataloader 0, does not have many workers which may be a
  // bottleneck. ... (try 32 which is the number of cpus on this machine)".
  const Telemetry nemo = read_telemetry_files(
      {pasted("other_nemo1204-lightning-val-dataloader-few-workers-warning-32-cpus.txt")});
  ASSERT_EQ(nemo.few_workers_warnings.size(), 1u);
  EXPECT_EQ(nemo.few_workers_warnings[0].loader, "val dataloader 0");
  EXPECT_EQ(nemo.few_workers_warnings[0].suggested, 32);
  const Diagnosis d = diagnose_telemetry(nemo);
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  EXPECT_THAT(d.summary, testing::HasSubstr("not the training loader"));
  // Lightning 2.x's wording.
  const Telemetry two = read_text(
      "data_connector.py:424: The 'train_dataloader' does not have many workers which may be a "
      "bottleneck. Consider increasing the value of the `num_workers` argument` to "
      "`num_workers=31` in the `DataLoader` to improve performance.\n");
  ASSERT_EQ(two.few_workers_warnings.size(), 1u);
  EXPECT_EQ(two.few_workers_warnings[0].loader, "train_dataloader");
  EXPECT_EQ(two.few_workers_warnings[0].suggested, 31);
  EXPECT_THAT(diagnose_telemetry(two).summary,
              testing::Not(testing::HasSubstr("not the training loader")));
  // Beside a step log, the log's own wait decides.
  EXPECT_EQ(diagnose_telemetry(
                read_text("The 'train_dataloader' does not have many workers which may be a "
                          "bottleneck.\nTime 0.50 (0.50)  Data 0.40 (0.40)\nTime 0.52 (0.51)  "
                          "Data 0.41 (0.40)\nTime 0.49 (0.50)  Data 0.40 (0.40)\n"))
                .verdict,
            Verdict::kInputBound);
}

TEST(PastedLogs, BigGraphsBucketTrainsAndReadsItsPartitions) {
  // PyTorch-BigGraph#233: "bucket 1 / 16 : Trained 16170701 edges in 94.40 s ...; io: 2.04 s
  // for 5,539,194,424 bytes": the bucket's step is both, its wait the reads.
  const Telemetry t = read_telemetry_files(
      {pasted("datalog_pytorchbiggraph233-8gpu-3k-batch-bucket-94s-io-2s-cutoff.txt")});
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(t.steps[0].step_seconds, 96.44);
  EXPECT_DOUBLE_EQ(t.steps[0].data_seconds, 2.04);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
  // Reads that take most of each bucket.
  EXPECT_EQ(diagnose_telemetry(
                read_text("( 0 , 0 ): bucket 1 / 4 : Trained 100 edges in 10.00 s ( 0.01 M/sec ); "
                          "io: 30.00 s for 5 bytes\n( 0 , 1 ): bucket 2 / 4 : Trained 100 edges in "
                          "10.50 s ( 0.01 M/sec ); io: 29.00 s for 5 bytes\n"))
                .verdict,
            Verdict::kInputBound);
}

TEST(PastedLogs, EpochLinesStampedByTheLogsClock) {
  // VITS#122: "====> Epoch: 560" ... "561" ... "562" ... "563" with the logger's clock: three
  // epochs of about five minutes (the last one with a checkpoint's save).
  const Telemetry t =
      read_telemetry_files({pasted("datalog_vits122-a4000-epoch-timestamps-5min.txt")});
  ASSERT_EQ(t.rates.size(), 3u);
  EXPECT_EQ(t.rates[0].unit, "epochs");
  EXPECT_NEAR(1 / t.rates[0].per_second, 297.002, 0.001);
  EXPECT_NEAR(1 / t.rates[2].per_second, 305.643, 0.001);
  // Two messages, one ending an epoch and one starting the next (PyTorch-BigGraph): no epoch.
  EXPECT_THROW(read_text("2021-08-17 13:22:42,170 [Trainer-0] Finished epoch 49 / 90\n"
                         "2021-08-17 13:22:43,256 [Trainer-0] Starting epoch 50 / 90\n"),
               Error);
}

TEST(PastedLogs, ATableCountingNodesAndGpusScalesByGpus) {
  // DLPerf#54 (a diff's "+" rows): "node_num | gpu_num | samples/s | speedup", 1 to 8 GPUs on
  // one node, 16 and 32 on 2 and 4: one series by GPUs, the nodes beside them.
  const Telemetry t =
      read_telemetry_files({pasted("scaling_dlperf54-paddle-rn50-fp16-nodali-1to32gpu.txt")});
  ASSERT_EQ(t.runs.size(), 6u);
  EXPECT_EQ(t.runs[5].gpus, 32);
  EXPECT_EQ(t.runs[5].nodes, 4);
  EXPECT_EQ(t.runs[0].group, t.runs[5].group);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_THAT(d.summary,
              testing::HasSubstr("1 -> 32 GPUs: 597 samples/s -> 11432 samples/s, 60 %"));
}

TEST(PastedLogs, ACacheOfWhatTheStepsWaitForIsNoStorageMedium) {
  // geti#2453: "Branch | Size | Cache | Data time | Iter time", a cache of decoded images on
  // and off: the steps wait for their input, reads or decoding.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("throughput_geti2453-otx-data-vs-iter-time-cache-table.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("the rate follows the cache"));
  // The same table in a paste that reads its files from NFS: the cache saves the reads.
  EXPECT_EQ(diagnose_telemetry(read_text("The images are read from an NFS share.\n\n"
                                         "| Cache | img/s |\n|---|---|\n| off | 100 |\n"
                                         "| on | 300 |\n"))
                .verdict,
            Verdict::kIoBound);
  // A dev.to post's "Technique | Time (seconds)": "Caching + Prefetching | 11.27 (β 45%
  // faster)" against "Baseline | 20.03"; its "Mixed Precision" and "Gradient Accumulation" rows
  // change the compute, another comparison, and the note after 11.27 is the author's.
  const Diagnosis devto = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_devto-caching-prefetch-mnist-colab-epoch-times.txt")}));
  EXPECT_EQ(devto.verdict, Verdict::kInputBound) << devto.summary;
  EXPECT_EQ(devto.confidence, Confidence::kMedium);
  EXPECT_THAT(devto.summary, testing::HasSubstr("20 s with Technique=Baseline, 11.3 s with "
                                                "Technique=Caching + Prefetching"));
}

TEST(PastedLogs, LightningsDevicesFlagCountsTheGpus) {
  // litgpt#607: "python generate/base.py ... --devices 2 --strategy fsdp" above each run's
  // "Token generation rate": 33.42 tokens/s on one GPU, 3.34 on four.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_litgpt607-fsdp-generate-tokens-per-sec-1-2-4-gpus.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1 -> 4 GPUs"));
  EXPECT_EQ(gpu_count_of("accelerate launch --num_processes 8 train.py"), 8);
  EXPECT_EQ(gpu_count_of("python fit.py --trainer.devices=4"), 4);
  // Nodes by Lightning's and accelerate's flags; Lightning's devices are each node's.
  std::optional<int> nodes;
  EXPECT_EQ(gpu_count_of("python fit.py --trainer.devices=4 --trainer.num_nodes=2", &nodes), 8);
  EXPECT_EQ(nodes, 2);
  nodes.reset();
  EXPECT_EQ(gpu_count_of("accelerate launch --num_machines 2 --num_processes 16 train.py", &nodes),
            16);
  EXPECT_EQ(nodes, 2);
  EXPECT_EQ(gpu_count_of("python train.py --devices 0,1,2"), 3);
}

TEST(PastedLogs, MxnetsKvstoreBandwidthMeasure) {
  // mxnet#4062: tools/bandwidth/measure.py at 2.26-2.33 GB/s per GPU for ResNet-200's 258 MB of
  // gradients (the docs' reference: about 11): the PCIe links trained at Gen1.
  const Telemetry t =
      read_telemetry_files({pasted("other_mxnet4062-kvstore-bandwidth-measure-2.3gbs.txt")});
  ASSERT_EQ(t.bandwidths.size(), 5u);
  EXPECT_DOUBLE_EQ(t.bandwidths[0].bus_gbps, 2.264454);
  EXPECT_GT(t.bandwidths[0].bytes, 2.5e8);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kCommunicationBound);
}

TEST(PastedLogs, NcclOnesTestsCountElements) {
  // nccl#44: "./build/test/single/all_reduce_test 10000000 2 0 1", "N type op time algbw busbw"
  // over "10000000 char sum 5.650 1.77 1.77": 10 MB at 1.77 GB/s between two Pascal Titan X.
  const Telemetry t =
      read_telemetry_files({pasted("other_nccl44-pascal-titanx-allreduce-test-1.77gbs.txt")});
  ASSERT_EQ(t.bandwidths.size(), 2u);
  EXPECT_DOUBLE_EQ(t.bandwidths[0].bytes, 1e7);
  EXPECT_DOUBLE_EQ(t.bandwidths[0].bus_gbps, 1.77);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kCommunicationBound);
  // Floats are four bytes each.
  const Telemetry floats = read_text(
      "       N    type      op     time  algbw  busbw\n"
      "10000000   float     sum    5.650   7.08   7.08\n");
  ASSERT_EQ(floats.bandwidths.size(), 1u);
  EXPECT_DOUBLE_EQ(floats.bandwidths[0].bytes, 4e7);
}

TEST(PastedLogs, WorkersInColumnsUnderACaptionTimingEpochs) {
  // kge#70: "30 samples; avg.  seconds per epoch; fb15k" over "filter type|1 worker|4 workers":
  // the standard filter's 42 s with one worker, 19 s with four.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("throughput_kge70-epoch-seconds-by-filter-and-workers.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
  // Workers as columns of a rate table are a parameter server's machines: no loader setting.
  EXPECT_THROW(read_text("images/sec\n\nmodel|1 worker|4 workers\n-|-|-\nresnet|400|1400\n"),
               Error);
}

TEST(PastedLogs, CntksMinibatchCounterUnderTheLogsClock) {
  // CNTK#2187: "2017-08-04 11:46:13,022 Epoch[   0] Minibatch[  10]: [Training]time=
  // 0:00:22.375134, ..." every 10 minibatches: about 2.1 s a minibatch.
  const Telemetry t = read_telemetry_files(
      {pasted("datalog_cntk2187-lstm-python-api-21s-per-10-minibatches-cutoff.txt")});
  ASSERT_FALSE(t.steps.empty());
  EXPECT_NEAR(t.steps[0].step_seconds, 2.1502, 0.001);
  EXPECT_FALSE(t.steps[0].has_data);
}

TEST(PastedLogs, PaddlesV1TimersSetTheProviderAgainstTheTrainer) {
  // Paddle#713: PyDP2.getNextBatchInternal's 102 calls take 54.5 s, 54.4 of them its first;
  // TrainBatch averages 221.7 ms. No "total=" is a step.
  const Telemetry t =
      read_telemetry_files({pasted("profiler_paddle713-vgg-gpu-stat-dataprovider-hidden.txt")});
  EXPECT_TRUE(t.steps.empty());
  ASSERT_EQ(t.loader_against_model.size(), 1u);
  EXPECT_NEAR(t.loader_against_model[0].loader_per_second, 1000 / 1.8901, 0.1);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
  // A provider slower than the trainer's batch.
  EXPECT_EQ(diagnose_telemetry(
                read_text("Stat=PyDP2.getNextBatchInternal TID=2 total=5000 avg=500 max=600 "
                          "min=400 count=10\nStat=TrainBatch TID=1 total=2000 avg=200 max=250 "
                          "min=150 count=10\n"))
                .verdict,
            Verdict::kInputBound);
}

TEST(PastedLogs, StepsInBlocksUnderHeadingsAreRunsNotStalls) {
  // flair#1125: "With flair 0.4.1" over ten stamped lines, 397 iterations in 54 s; "with flair
  // 0.4.3 and 0.4.4" over the same iterations in 7.5-8 minutes.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_flair1125-iter-timestamps-041-vs-043-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kUnknown) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("8.4x slower"));
  // One log whose slow steps come among the fast ones stays stalls.
  std::string one;
  for (int k = 1; k <= 10; ++k) one += fmt::format("step {} time {}\n", k, k % 4 == 0 ? 3.0 : 1.0);
  EXPECT_EQ(diagnose_telemetry(read_text(one)).verdict, Verdict::kInputBound);
}

TEST(PastedLogs, WhatAReviewOfTheDlioEpochAndTimerReadersFound) {
  // "8 H100" is no 8 hours, and a start's minutes are no step's.
  EXPECT_TRUE(read_text("Each iteration takes about 2 seconds, with data loading on 8 H100 GPUs "
                        "from a local NVMe disk.\n")
                  .steps.empty());
  EXPECT_TRUE(read_text("Each iteration takes about 2 seconds on the GPU, but loading the dataset "
                        "takes 10 minutes before training starts.\n")
                  .steps.empty());
  // A table of runs whose setup rows ("batch", "workers") are no timers: the step is "time".
  const Telemetry runs = read_text(
      "| | run 1 | run 2 | run 3 |\n|---|---|---|---|\n| batch | 64 | 128 | 256 |\n"
      "| workers | 4 | 8 | 16 |\n| time | 0.41 | 0.78 | 1.52 |\n| data | 0.20 | 0.35 | 0.70 |\n");
  const Diagnosis judged = diagnose_telemetry(runs);
  EXPECT_EQ(judged.verdict, Verdict::kInputBound) << judged.summary;
  EXPECT_THAT(judged.summary, testing::HasSubstr("46 %"));
  // Several lines per epoch: each epoch runs from its first line to the next epoch's.
  std::string epochs;
  for (int e = 1; e <= 3; ++e) {
    for (int k = 1; k <= 5; ++k) {
      const int t = (e - 1) * 500 + (k - 1) * 100;
      epochs += fmt::format("2023-01-25 19:{:02}:{:02},123 INFO Epoch {} [{}/500] loss 0.15\n",
                            t / 60, t % 60, e, k * 100);
    }
  }
  const Telemetry stamped = read_text(epochs);
  ASSERT_EQ(stamped.rates.size(), 2u);
  EXPECT_NEAR(1 / stamped.rates[0].per_second, 500, 0.01);
  // DLIO: a series per workload, and one count alone judged as its wait.
  const Diagnosis workloads = diagnose_telemetry(
      read_text("| -na | workload | AU% |\n|---|---|---|\n| 1 | resnet50 | 60.0 |\n"
                "| 1 | unet3d | 99.0 |\n| 8 | resnet50 | 58.0 |\n| 8 | unet3d | 98.0 |\n"));
  EXPECT_EQ(workloads.verdict, Verdict::kInputBound) << workloads.summary;
  EXPECT_THAT(workloads.summary, testing::HasSubstr("from 60.0 % on 1 accelerator to 58.0 %"));
  const Diagnosis one = diagnose_telemetry(read_text(
      "| -na | AU% | samples/s |\n|---|---|---|\n| 8 | 50.0 | 1200 |\n| 48 | ? | 112 |\n"));
  EXPECT_EQ(one.verdict, Verdict::kInputBound) << one.summary;
  // Lightning's training loader's warning is named before the validation loader's.
  EXPECT_THAT(
      diagnose_telemetry(
          read_text("UserWarning: The dataloader, val dataloader 0, does not have many workers "
                    "which may be a bottleneck. Consider increasing the value of the "
                    "`num_workers` argument` (try 32 which is the number of cpus on this "
                    "machine) in the `DataLoader` init to improve performance.\nUserWarning: The "
                    "dataloader, train dataloader, does not have many workers which may be a "
                    "bottleneck.\n"))
          .summary,
      testing::HasSubstr("'train dataloader'"));
  // Two short sentences on two lines.
  EXPECT_EQ(read_text("The first epoch takes 40 minutes.\nThe second epoch takes only 4 "
                      "minutes.\n")
                .epochs_compared.size(),
            1u);
}

TEST(PastedLogs, WhatASecondReviewOfThisSessionsReadersFound) {
  // A checkpoint's line between a fast and a slow half parts no runs: the speed fell.
  std::string fell;
  for (int k = 0; k < 5; ++k) fell += "throughput 1000 samples/s\n";
  fell += "Saving checkpoint to out/ckpt_50.pt\n";
  for (int k = 0; k < 5; ++k) fell += "throughput 400 samples/s\n";
  EXPECT_EQ(diagnose_telemetry(read_text(fell)).verdict, Verdict::kInputBound);
  // A GPU column naming the GPU is no count: the nodes are the scale.
  const Diagnosis nodes = diagnose_telemetry(
      read_text("| nodes | GPU | img/s |\n|---|---|---|\n| 1 | V100 | 2900 |\n| 2 | V100 | 5600 |\n"
                "| 4 | V100 | 6000 |\n"));
  EXPECT_THAT(nodes.summary, testing::HasSubstr("1 -> 4 nodes"));
  // Paddle's trainer timers without the provider's row: read, no step of 22 ks.
  const Telemetry stat = read_text(
      "Stat=forwardBackward TID=1 total=21833.5 avg=218.334 max=431.113 min=142.575 count=100\n"
      "Stat=TrainBatch TID=1 total=22172.9 avg=221.728 max=432.781 min=145.168 count=100\n");
  EXPECT_TRUE(stat.steps.empty());
  EXPECT_EQ(diagnose_telemetry(stat).verdict, Verdict::kUnknown);
  // A cold page cache against a warm one is the disk's reads.
  EXPECT_EQ(diagnose_telemetry(read_text("| setting | img/s |\n|---|---|\n| cold cache | 300 |\n"
                                         "| warm cache | 900 |\n"))
                .verdict,
            Verdict::kIoBound);
  // Worker machines beside a parameter server are no loader's workers.
  EXPECT_THROW(read_text("We run distributed TensorFlow with one parameter server and N worker "
                         "machines.\nTraining time per epoch (seconds):\n\n| model | 1 worker | 2 "
                         "workers | 4 workers |\n|---|---|---|---|\n| resnet50 | 1200 | 650 | "
                         "400 |\n"),
               Error);
}

TEST(PastedLogs, ACollectiveBenchOfSmallMessagesOrItsAverageShowsNoLinkRate) {
  // nccl-tests rows pasted without their header, cut off at 512 B (nccl#1017): read, and at that
  // size a collective's time is its latency, no link's rate.
  const Telemetry rows = read_telemetry_files(
      {pasted("throughput_nccl1017-h100-vm-allreduce-small-sizes-cutoff.txt")});
  ASSERT_EQ(rows.bandwidths.size(), 7u);
  EXPECT_EQ(rows.bandwidths.back().bytes, 512);
  EXPECT_DOUBLE_EQ(rows.bandwidths.back().bus_gbps, 0.03);
  const Diagnosis small = diagnose_telemetry(rows);
  EXPECT_EQ(small.verdict, Verdict::kUnknown);
  EXPECT_THAT(small.summary, testing::HasSubstr("only 512 B messages"));
  // The sweep's "# Avg bus bandwidth" behind mpirun's prefix (aws-k8s-tester#503), and a shell's
  // mean of fifty runs' (nccl#330): means over every size, no link's rate either.
  const Diagnosis average = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_aws-k8s-tester503-multinode-nccl-avg-busbw-92.txt")}));
  EXPECT_EQ(average.verdict, Verdict::kUnknown);
  EXPECT_THAT(average.summary, testing::HasSubstr("Avg bus bandwidth is 92.3 GB/s"));
  const Diagnosis runs = diagnose_telemetry(
      read_telemetry_files({pasted("throughput_nccl330-gdr-roce-bond-avg-busbw-50-runs.txt")}));
  EXPECT_EQ(runs.verdict, Verdict::kUnknown);
  EXPECT_THAT(runs.summary, testing::HasSubstr("4.79 GB/s"));
  // Beside the table's rows, the average is left out: the large messages' rows are read.
  const Telemetry both = read_text(
      "#  size  count  type  redop  root  time  algbw  busbw  #wrong\n"
      "   1048576  262144  float  sum  -1  1200  0.87  1.64  0\n"
      "   268435456  67108864  float  sum  -1  120000  2.24  4.19  0\n"
      "# Avg bus bandwidth    : 1.2\n");
  EXPECT_EQ(diagnose_telemetry(both).verdict, Verdict::kCommunicationBound);
  EXPECT_THAT(diagnose_telemetry(both).summary, testing::HasSubstr("4.19 GB/s"));
}

TEST(PastedLogs, LogurusPrefixLeavesARunsTimeReadAndEvenEpochsSayNothingOfWaits) {
  // loguru's "date | INFO | module:function:line - time : 0:00:10.736053" per rank and epoch
  // (accelerate#485): each epoch's duration, and whole epochs that run evenly are no sign of a
  // loader that keeps up (a loader's stalls even out over thousands of steps).
  const Telemetry t =
      read_telemetry_files({pasted("datalog_accelerate485-2gpu-epoch-time-per-rank-cutoff.txt")});
  ASSERT_FALSE(t.rates.empty());
  EXPECT_NEAR(1 / t.rates.front().per_second, 10.736053, 1e-6);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kUnknown);
}

TEST(PastedLogs, PhasesTimedOnRowsOfTheirOwnSetTheExchangeAgainstCompute) {
  // jax#1009's benchmark: a row of statistics per phase, two blocks (1 and 16M parameters); the
  // all-reduce's average against the compute's.
  const Telemetry jax = read_telemetry_files(
      {pasted("other_jax1009-8-nodes-x8-v100-mpi-allreduce-vs-compute-timings.txt")});
  ASSERT_EQ(jax.phases.size(), 2u);
  EXPECT_NEAR(jax.phases[1].communication_seconds, 0.592024, 1e-9);
  EXPECT_NEAR(jax.phases[1].compute_seconds, 0.023782, 1e-9);
  EXPECT_EQ(diagnose_telemetry(jax).verdict, Verdict::kCommunicationBound);
  // Rows that follow one another make one step; a blank line between parts them.
  EXPECT_EQ(read_text("forward: 10 ms\nbackward: 20 ms\nallreduce: 100 ms\n").phases.size(), 1u);
  EXPECT_TRUE(read_text("forward: 10 ms\nbackward: 20 ms\n\nallreduce: 100 ms\n").phases.empty());
  // Statistics of something not timed are no timer's row.
  EXPECT_TRUE(read_text("compute : min_loss 0.1 avg_loss 0.2 max_loss 0.3\nallreduce : "
                        "min_elapsed 0.5 avg_elapsed 0.6 max_elapsed 0.7\n")
                  .phases.empty());
}

TEST(PastedLogs, DeepLearning4jsEtlTimeIsTheWaitForData) {
  // DL4J's PerformanceListener (deeplearning4j#6603): "ETL: 0 ms" after the logger's name and a
  // dash, the iterator's wait for the next batch, against its "iteration time".
  const Telemetry zero =
      read_telemetry_files({pasted("datalog_deeplearning4j6603-performancelistener-etl-0ms.txt")});
  ASSERT_FALSE(zero.steps.empty());
  EXPECT_DOUBLE_EQ(zero.steps.front().step_seconds, 0.133);
  EXPECT_DOUBLE_EQ(zero.steps.front().data_seconds, 0);
  EXPECT_EQ(diagnose_telemetry(zero).verdict, Verdict::kHealthy);
  // deeplearning4j#6718: 15 of 30 s waiting on its iterator.
  EXPECT_EQ(diagnose_telemetry(read_text("81148 [main] INFO  o.d.o.l.PerformanceListener - ETL: "
                                         "15068 ms; iteration 0; iteration time: 30044 ms;\n"))
                .verdict,
            Verdict::kInputBound);
}

TEST(PastedLogs, ASpeedometerLinePerMetricIsOneSampleOfTheSpeed) {
  // mxnet#3228: each batch's speed printed twice, once per metric; five batches are no steady
  // run of ten lines.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("throughput_mxnet3228-2gpu-speed-decline-cutoff.txt")}));
  EXPECT_THAT(d.summary, testing::Not(testing::HasSubstr("a steady speed")));
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
}

TEST(PastedLogs, TinygradsDeviceTimeBoundsTheWaitWhereItTakesMostOfTheStep) {
  // tinygrad#10622: 324.64 of 326.49 ms on METAL, the rest Python's: a wait of at most that.
  const Telemetry metal =
      read_telemetry_files({pasted("datalog_tinygrad10622-hlb-cifar-metal-python-vs-gpu.txt")});
  ASSERT_FALSE(metal.steps.empty());
  EXPECT_TRUE(metal.steps.front().data_upper_bound);
  EXPECT_NEAR(metal.steps.front().data_seconds, 0.00185, 1e-9);
  EXPECT_EQ(diagnose_telemetry(metal).verdict, Verdict::kHealthy);
  // tinygrad#3150: "0.26 ms HIP * 6" is the device's, named so; 264 of 265 ms in Python is its
  // dispatch as much as any wait: no bound.
  const Telemetry hip =
      read_telemetry_files({pasted("datalog_tinygrad3150-hlb-cifar-6gpu-python-vs-hip.txt")});
  const auto values = named_values(
      "345  264.63 ms run,  264.37 ms python,    0.26 ms HIP * 6,  487.50 loss, 0.000137 LR");
  ASSERT_GE(values.size(), 3u);
  EXPECT_EQ(values[2].name, "hip");
  EXPECT_DOUBLE_EQ(values[2].value, 0.26);
  EXPECT_EQ(diagnose_telemetry(hip).verdict, Verdict::kUnknown);
}

TEST(PastedLogs, APandasDataFrameIsReadAsATable) {
  // print(df): every column right-aligned under its header, the columns' own name over the
  // index, rows numbered from 0.
  const std::string text =
      "compiler model_name  Num GPUS   eager\n"
      "0             phi-2         1  228.39\n"
      "1             phi-2         4  254.05\n"
      "after\n";
  const auto lines = split_lines(text);
  std::deque<std::string> store;
  const auto pipes = pandas_as_pipes(lines, store);
  ASSERT_EQ(pipes.size(), lines.size());
  EXPECT_EQ(pipes[0].text, "| model_name | Num GPUS | eager |");
  EXPECT_EQ(pipes[2].text, "| phi-2 | 4 | 254.05 |");
  EXPECT_EQ(pipes[3].text, "after");
  // Rows whose columns do not line up, or not numbered from 0, are no such table.
  const auto ragged = split_lines("a  b\n0  12\n1  3456\n");
  EXPECT_EQ(pandas_as_pipes(ragged, store)[1].text, "0  12");
  // lightning-thunder#21: tokens/s under "THROUGHPUT (tokens/s)" at 1 and 4 GPUs, 90 %.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_lightningthunder21-phi2-1gpu-vs-4gpu-fsdp-tokens-per-s-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy);
  EXPECT_THAT(d.summary, testing::HasSubstr("90 % scaling efficiency"));
}

TEST(PastedLogs, ADenseModelsTokensPerGpuAgainstTheGpusPeak) {
  // The model's size as its name or a count of parameters states it; none where it is a
  // mixture of experts, tokens are counted, or the job generates.
  EXPECT_EQ(named_model_billions(read_text("## Llama-2-7b-hf on 8 H100\nstep 1 | 100 tokens/s\n")),
            7);
  EXPECT_EQ(named_model_billions(read_text("Number of parameters: 3.82B\nTokens/s: 22459.75\n")),
            3.82);
  EXPECT_FALSE(named_model_billions(read_text("Mixtral-8x7B: 3000 tokens/s\n")));
  EXPECT_FALSE(named_model_billions(read_text("Qwen3-30B-A3B: 3000 tokens/s\n")));
  EXPECT_FALSE(named_model_billions(read_text("trained on 1B tokens: 3000 tokens/s\n")));
  EXPECT_FALSE(named_model_billions(read_text("Llama-2-7b inference: 3000 tokens/s\n")));
  EXPECT_FALSE(named_model_billions(read_text("llama-7b against llama-13b: 3000 tokens/s\n")));
  // lightning-thunder#940: Llama-2-7b at 9325-14265 tokens/s per GPU on H100s, its compilers
  // a row each: about half the H100's dense peak, a GPU that computes.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_lightningthunder940-llama2-7b-8xh100-fsdp2-tokens-per-gpu-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy);
  EXPECT_THAT(d.summary, testing::HasSubstr("of a 7B model"));
  // The same model at a tenth of that rate says nothing of what limits it.
  EXPECT_EQ(diagnose_telemetry(read_text("Llama-2-7b-hf on 8x H100\nstep 10 | 1400 tokens/s/gpu\n"
                                         "step 20 | 1400 tokens/s/gpu\n"))
                .verdict,
            Verdict::kUnknown);
}

TEST(PastedLogs, TensorpacksGpuUtilIsTheGpusUse) {
  // tensorpack's monitor at an epoch's end: "GPUUtil/0: 94.606", the index part of the name.
  const auto values = named_values("[0119 15:39:22 @monitor.py:474] GPUUtil/0: 94.606");
  ASSERT_FALSE(values.empty());
  EXPECT_EQ(values.back().name, "gpuutil/0");
  EXPECT_DOUBLE_EQ(values.back().value, 94.606);
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_tensorpack1383-fasterrcnn-epoch16-monitor-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy);
  EXPECT_THAT(d.summary, testing::HasSubstr("95 %"));
}

TEST(PastedLogs, ChainersPrintReportTimesEpochsByTheDifferencesOfItsElapsedTime) {
  // ChainerMN's MNIST example (chainermn#94): cumulative elapsed_time a row, one epoch each.
  const Telemetry epochs = read_telemetry_files(
      {pasted("datalog_chainermn94-mnist-serialiterator-epoch-times-cutoff.txt")});
  ASSERT_GE(epochs.rates.size(), 8u);
  EXPECT_EQ(epochs.rates[1].unit, "epochs");
  EXPECT_NEAR(1 / epochs.rates[1].per_second, 6.25958 - 3.51585, 1e-9);
  EXPECT_EQ(diagnose_telemetry(epochs).verdict, Verdict::kUnknown);
  // With an iteration column, each row's steps: the seconds between rows over the iterations.
  const Telemetry steps = read_text(
      "epoch       iteration   main/loss   validation/main/loss  elapsed_time\n"
      "0           100         624.802                           45.8984\n"
      "0           200         300.1                             95.8984\n"
      "1           300         200.2       180.5                 146.8984\n");
  ASSERT_EQ(steps.steps.size(), 3u);
  EXPECT_NEAR(steps.steps[1].step_seconds, 0.5, 1e-9);
  EXPECT_NEAR(steps.steps[2].step_seconds, 0.51, 1e-9);
}

TEST(PastedLogs, SlowFirstStepsAreTheJobsStartNotStalls) {
  // nanoGPT#392 with --compile: 7962 ms, then 249 ms, then 22 ms steps: compiling, not a loader.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_nanogpt392-shakespeare-char-compile-iter-time-mfu.txt")}));
  EXPECT_NE(d.verdict, Verdict::kInputBound);
  // Slow steps after the start are still stalls.
  std::string log = "iter 0: time 8000ms\n";
  for (int k = 1; k <= 12; ++k)
    log += fmt::format("iter {}: time {}ms\n", k, k % 5 == 0 ? 300 : 22);
  EXPECT_EQ(diagnose_telemetry(read_text(log)).verdict, Verdict::kInputBound);
}

TEST(PastedLogs, WhatTheThirdReviewOfTheDoctorsReadersFound) {
  // Frameworks at one pace are a compute-bound job's look, not models at one pace.
  EXPECT_NE(diagnose_telemetry(read_text("| Framework | images/sec |\n|---|---|\n| PyTorch | 1203 "
                                         "|\n| TensorFlow | 1210 |\n| MXNet | 1198 |\n"))
                .verdict,
            Verdict::kInputBound);
  // A right-aligned table whose first column counts 0, 1, 2 under a header of its own is no
  // DataFrame: its first column stays.
  const auto workers = split_lines(
      "num_workers  epoch_time  images_per_sec\n          0       120.3           400.1\n"
      "          1        65.2           740.0\n          2        33.1          1450.2\n");
  std::deque<std::string> store;
  EXPECT_EQ(pandas_as_pipes(workers, store)[1].text, workers[1].text);
  // "on my machine" makes no workers machines.
  EXPECT_FALSE(names_worker_machines("DataLoader benchmark on my machine"));
  EXPECT_EQ(diagnose_telemetry(read_text("DataLoader benchmark on my machine\nnum_workers=0: "
                                         "120.5s\nnum_workers=8: 33.9s\n"))
                .verdict,
            Verdict::kInputBoundCpu);
  // A GPU's index is no device time: ROMP's RUN still bounds the wait.
  std::string romp;
  for (int k = 1; k <= 6; ++k) romp += fmt::format("GPU 0 Epoch {} Time 2.87 RUN 0.87\n", k);
  EXPECT_EQ(diagnose_telemetry(read_text(romp)).verdict, Verdict::kInputBound);
  // A plain word before a dash qualifies the name; a dotted logger's name does not.
  EXPECT_EQ(named_values("Validation - time: 12.0s").front().name, "validation_time");
  EXPECT_EQ(named_values("o.d.o.l.PerformanceListener - ETL: 0 ms").front().name, "etl");
  // A column named for another quantity under a caption naming a rate is no rate.
  EXPECT_THROW(read_text("Throughput scaling of our job (higher is better):\n| GPUs | efficiency "
                         "| loss |\n|---|---|---|\n| 1 | 1.00 | 2.1 |\n| 2 | 0.95 | 2.1 |\n"),
               Error);
  // A GPU's UUID names no model's size; nor does a decoder layer's class make a paste inference.
  EXPECT_FALSE(named_model_billions(
      read_text("GPU 0: NVIDIA H100 (UUID: GPU-8f2c4e1a-013b-4c5d-9e8f-1a2b3c4d5e6f)\nstep 1 | "
                "100 tokens/s\n")));
  EXPECT_EQ(named_model_billions(read_text(
                "Llama-2-7b-hf, FSDP wrapping LlamaDecoderLayer\nstep 1 | 100 tokens/s\n")),
            7);
  EXPECT_FALSE(named_model_billions(read_text("Llama-2-7b-hf with LoRA: 3000 tokens/s\n")));
  // Steps at a rounded speed, their counters after it, are steps, not a line per metric.
  std::string rounded;
  for (int k = 1; k <= 10; ++k) {
    rounded += fmt::format("Speed: 512 img/s | loss 1.2687 | step {}00\n", k);
  }
  EXPECT_EQ(diagnose_telemetry(read_text(rounded)).verdict, Verdict::kHealthy);
  // What is left of a run, behind a logger's prefix, is not its length.
  EXPECT_THROW(read_text("2023-05-01 10:00:00,000 - INFO - Remaining time: 1:23:45\n"), Error);
  // An elapsed_time that falls is each epoch's own, not Chainer's cumulative one.
  EXPECT_THROW(read_text("epoch  loss  elapsed_time\n1      0.5   300.2\n2      0.4   61.0\n3      "
                         "0.3   60.4\n"),
               Error);
  EXPECT_EQ(read_text("epoch  loss  elapsed_time\n1      0.5   30.2\n2      0.4   61.0\n3      "
                      "0.3   90.4\n")
                .rates.size(),
            3u);
  // A log record's level before a dash is the logger's, not the name's.
  EXPECT_EQ(named_values("INFO - data: 0.6s step: 1.0s").front().name, "data");
  // Generation, a mixture of experts and LoRA by their words' stems.
  EXPECT_FALSE(
      named_model_billions(read_text("Generated 4096 tokens with Llama-2-7b: 3000 tokens/s\n")));
  EXPECT_FALSE(named_model_billions(read_text("JetMoE-8B: 3000 tokens/s\n")));
  EXPECT_FALSE(named_model_billions(read_text("Llama-2-7b, LoraConfig(r=8): 3000 tokens/s\n")));
  EXPECT_EQ(named_model_billions(read_text("llama-7b-20240315: 3000 tokens/s\n")), 7);
  // Workers that are machines, in the plural or one per machine.
  EXPECT_TRUE(names_worker_machines("Epoch time when adding machines (one worker per machine):"));
  // Each rank's copy of one step (its loss apart) is one sample; steps apart are not.
  std::string ranks;
  for (int step = 1; step <= 5; ++step) {
    for (int rank = 0; rank < 2; ++rank) {
      ranks +=
          fmt::format("{}\timages/sec: 210.3 +/- 0.0 (jitter = 0.0)\t7.8{}\n", step * 10, rank);
    }
  }
  EXPECT_NE(diagnose_telemetry(read_text(ranks)).verdict, Verdict::kHealthy);
  // DeepSpeed's and Detectron2's GPUs beside their nodes are each node's.
  std::optional<int> nodes;
  EXPECT_EQ(gpu_count_of("deepspeed --num_nodes 2 --num_gpus 8 train.py", &nodes), 16);
  nodes.reset();
  EXPECT_EQ(gpu_count_of("python train_net.py --num-gpus 8 --num-machines 2", &nodes), 16);
}

TEST(PastedLogs, StrategiesThatShardMoreOfTheModelAgainstLess) {
  // BELLE#402: "ZeRO Stage=1:" ... "训练速度 8.5batch/s" over ZeRO-2's and ZeRO-3's blocks; the
  // heading's one number is the stage.
  Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("throughput_belle402-zero-stage-1-2-3-batch-per-sec.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("2.3x faster under zero-1"));
  EXPECT_EQ(exchange_setting_of("ZeRO Stage=1:"), "zero-1");
  // DeepSpeed#8064: a table's "Config" cells name the stage ("ZeRO-1, TP1DP16/EP8"), its rate
  // cells count thousands with commas in the unit the cell names ("27,941 tok/s (1,746/GPU)").
  const Telemetry t = read_telemetry_files(
      {pasted("throughput_deepspeed8064-zero3-vs-zero1-tp-ep-tokens-per-sec.txt")});
  std::vector<double> rates;
  for (const ThroughputSample& r : t.rates) {
    if (r.run > 0) rates.push_back(r.per_second);
    if (r.run > 0) EXPECT_EQ(r.unit, "tokens");
  }
  EXPECT_EQ(rates, (std::vector<double>{27941, 57414, 33477}));
  d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("under zero-3 (27941 tokens/s)"));
  // oumi#207: FSDP within 6 % of DDP's samples/s: the extra exchange hides behind the compute.
  d = diagnose_telemetry(
      read_telemetry_files({pasted("throughput_oumi207-fsdp-vs-ddp-mfu-samples-per-sec.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("within 6 % of its pace under ddp"));
  const auto verdict_of = [](const std::string& text) {
    return diagnose_telemetry(read_text(text)).verdict;
  };
  // The more-sharded strategy 1.3x slower: its exchange is exposed; faster: hidden.
  EXPECT_EQ(verdict_of("DDP:\nthroughput: 1300 tokens/s\nZeRO-3:\nthroughput: 1000 tokens/s\n"),
            Verdict::kCommunicationBound);
  EXPECT_EQ(verdict_of("DDP:\nthroughput: 1000 tokens/s\nZeRO-3:\nthroughput: 1100 tokens/s\n"),
            Verdict::kHealthy);
  // Libraries have no order of sharding: close rates under them say nothing.
  EXPECT_EQ(verdict_of("Horovod:\nthroughput: 1300 tokens/s\nBytePS:\nthroughput: 1000 "
                       "tokens/s\n"),
            Verdict::kUnknown);
  // The same stage in every row is no comparison.
  EXPECT_NE(verdict_of("ZeRO-2:\nthroughput: 1300 tokens/s\nthroughput: 1000 tokens/s\n"),
            Verdict::kHealthy);
}

TEST(PastedLogs, AStepsPhasesAndTheScalingEfficiencyThePasteStates) {
  // dev.to's "DDP is not always faster": the 2-GPU step's compute and communication on lines
  // of their own (not steps, though named "... time per step"), its scale in parentheses, and
  // the scaling efficiency the author computed from one batch divided among the GPUs.
  const Telemetry t =
      read_telemetry_files({pasted("throughput_devto-ddp-not-always-faster-2xt4-step-time.txt")});
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(t.steps[1].step_seconds, 0.02636);
  ASSERT_EQ(t.phases.size(), 1u);
  EXPECT_DOUBLE_EQ(t.phases[0].communication_seconds, 0.01124);
  EXPECT_DOUBLE_EQ(t.phases[0].compute_seconds, 0.01512);
  ASSERT_EQ(t.stated_scaling_efficiency.size(), 1u);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("42 % scaling efficiency"));
  EXPECT_EQ(named_values("DDP step time (2 GPUs) 26.36ms").front().name, "ddp_step_time");
  // The same step times with an efficiency that reads each GPU's batch as kept: 84 %.
  const std::string kept =
      "Single GPU step time 22.03ms\nDDP step time (2 GPUs) 26.36ms\nScaling efficiency 84%\n";
  EXPECT_EQ(diagnose_telemetry(read_text(kept)).verdict, Verdict::kHealthy);
}

TEST(PastedLogs, AWaitOnTheLineBelowItsStepAndTheTimeOfAWindowOfSteps) {
  // Coqui TTS#976 prints one value a line: "| > step_time: 1.23120  (1.23022)" over
  // "| > loader_time: 0.00170  (0.00163)", the loader's time that step's wait.
  Telemetry t =
      read_telemetry_files({pasted("datalog_coquitts976-hifigan-step-time-loader-time.txt")});
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_TRUE(t.steps[0].has_data);
  EXPECT_DOUBLE_EQ(t.steps[0].data_seconds, 0.0017);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
  // A wait two lines below a step that is no total is not its own.
  t = read_text("step_time: 1.2\nloss: 0.5\nloader_time: 0.9\n");
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_FALSE(t.steps[0].has_data);
  // HugeCTR#186: "Time(1000 iters): 5.381177s" is 1000 steps' time, 5.38 ms each.
  t = read_telemetry_files(
      {pasted("datalog_hugectr186-dlrm-terabyte-time-per-1000-iters-cutoff.txt")});
  ASSERT_FALSE(t.steps.empty());
  EXPECT_NEAR(t.steps[0].step_seconds, 0.005381177, 1e-12);
  // A window of time is how a value was averaged, not a count.
  EXPECT_EQ(named_values("GPU utilization(1min): 55%").front().value, 55);
}

TEST(PastedLogs, ALoaderInTheTrainingProcessAgainstLoaderSubprocesses) {
  // pocket-tts#263: "main (`a61b787`, in-process loader) | 0.79 | 3.17" against "this branch (3
  // loader subprocesses) | 1.34 | 5.36": the rate follows where the loading runs.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_pockettts263-inprocess-vs-subprocess-loader-steps-per-sec.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("with num_workers=0"));
  EXPECT_EQ(loader_setting_of("this branch (3 loader subprocesses)")->workers, 3);
  EXPECT_EQ(loader_setting_of("main (in-process loader)")->workers, 0);
  EXPECT_FALSE(loader_setting_of("spawned 3 processes for the model"));
}

TEST(PastedLogs, ATablesRowsAreRunsNotOneRunsSteps) {
  // opentau#273: "| Cell | bs | ... | step ms | global sps |", a row per configuration and batch:
  // its step times (3.9 s at batch 8, 19.4 s at 12) are runs to compare, not stalls of one run.
  const Telemetry t = read_telemetry_files(
      {pasted("throughput_opentau273-fsdp-vs-zero2-step-ms-sps-matrix-cutoff.txt")});
  ASSERT_EQ(t.steps.size(), 13u);
  EXPECT_DOUBLE_EQ(t.steps[0].step_seconds, 3.917);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kUnknown) << d.summary;
  EXPECT_THAT(d.summary, testing::Not(testing::HasSubstr("input-bound")));
}

TEST(PastedLogs, TacotronsRunningMeanAgainstItsFeeder) {
  // Real-Time-Voice-Cloning#671: "Generated 64 train batches of size 36 in 219.496 sec" (3.43 s
  // a batch), then sec/step falling as a mean since the start would: 222.339 at Step 1, 21.385
  // at Step 11. The ten steps after the first took 1.29 s each: the feeder is the slower.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_rtvc671-tacotron-feeder-64-batches-219s-sec-per-step-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("a step takes 1.29 s"));
  // A series that does not fall is read as it is.
  const std::string level =
      "Generated 32 batches of size 32 in 32.0 sec\nStep 1 [4.0 sec/step]\nStep 2 [4.1 "
      "sec/step]\nStep 3 [4.0 sec/step]\n";
  EXPECT_EQ(diagnose_telemetry(read_text(level)).verdict, Verdict::kHealthy);
}

TEST(PastedLogs, AnNvidiaSmiTableCutInsideItsLeftBorderWithItsProcessRows) {
  // deepmd-kit#1218: the paste starts at " 0  NVIDIA GeForce ...  Off  | 00000000:01:00.0 Off |",
  // and its process rows come without their header: PID 12238 holds 2333 MiB on the busy GPU 0
  // and 189 MiB, a context, on the idle GPU 1.
  const Telemetry t =
      read_telemetry_files({pasted("nvsmi_deepmd-kit1218-gpu0-99pct-gpu1-idle-same-pid.txt")});
  EXPECT_FALSE(t.files[0].gpus_guessed);
  ASSERT_EQ(t.processes.size(), 2u);
  EXPECT_EQ(t.processes[1].gpu, 1);
  EXPECT_EQ(t.processes[1].pid, 12238);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kRankImbalance) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, testing::HasSubstr("holding only a context of its process"));
  // A line of numbers and words is no process row without a process's type.
  EXPECT_TRUE(read_text("| 0 NVIDIA A100 | 00000000:01:00.0 Off | 0 |\n"
                        "| N/A 30C P0 50W / 400W | 1000MiB / 40960MiB | 99% Default |\n"
                        "0   1   2   3   X   python   100MiB\n")
                  .processes.empty());
}

TEST(PastedLogs, ModelsByTheirTimeOnASingleAndADualGpu) {
  // ahjavid's multi-GPU analysis: "| Model | Parameters | Single GPU | Dual GPU | Speedup |",
  // a small CNN at 45 min on one GPU and 68 on two, ViT-Large at 48 hrs and 28. Rows of
  // different models: the small ones scale worst because a per-step exchange weighs most
  // beside little compute, not because each run pays a fixed cost.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_ahjavid-multigpu-analysis-2x4070tisuper-phb-model-size.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1 -> 2 GPUs: 2700 s -> 4080 s"));
  // The counts in words are the columns' scales; "dual core" counts no GPU.
  EXPECT_THAT(
      diagnose_telemetry(
          read_text("| Job | Single GPU | Dual GPU |\n|---|---|---|\n| a | 10 min | 6 min |\n"))
          .summary,
      testing::HasSubstr("1 -> 2 GPUs"));
  ExpectNothingPlaced(
      "| Job | Single core | Dual core |\n|---|---|---|\n| a | 45 min | 68 min |\n");
}

TEST(PastedLogs, ATimeAndDataTimeTableWithAColumnNamingTheMachine) {
  // UniverseNet#6: "| Method | Backbone | GPU | time | data_time |" over "| UniverseNet | R2-50 |
  // T4 * 4 | 2.2383 | 0.0174 |": each row a step and its wait; "T4 * 4" is no rank.
  const Telemetry t =
      read_telemetry_files({pasted("throughput_universenet6-time-data-time-t4-v100.txt")});
  ASSERT_EQ(t.steps.size(), 5u);
  EXPECT_TRUE(t.steps[0].has_data);
  EXPECT_DOUBLE_EQ(t.steps[0].data_seconds, 0.0174);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
  // A GPU column of indices is each rank's view of one step: no series.
  EXPECT_TRUE(read_text("| gpu | time | data_time |\n|---|---|---|\n| 0 | 1.0 | 0.1 |\n| 1 | 1.0 | "
                        "0.9 |\n")
                  .steps.empty());
}

TEST(PastedLogs, TheSameJobWithAndWithoutALinkBetweenItsGpus) {
  // transformers#9824: "| 2:DDP w/ NVlink | 101 |" against "| 2:DDP w/o NVlink | 131 |" (and
  // "2:DP w/ NVlink | 110"): without NVLink the same DDP job is 1.3x slower.
  const Telemetry t =
      read_telemetry_files({pasted("scaling_transformers9824-dp-ddp-nvlink-2gpu.txt")});
  Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kMedium);
  EXPECT_THAT(d.summary, testing::HasSubstr("1.3x slower without NVLink (131 s)"));
  EXPECT_EQ(link_setting_of("2:DDP w/o NVlink"), "no nvlink");
  EXPECT_EQ(link_setting_of("NVLink disabled"), "no nvlink");
  EXPECT_EQ(link_setting_of("NCCL_P2P_DISABLE=1"), "no p2p");
  EXPECT_EQ(link_setting_of("with P2P"), "p2p");
  EXPECT_EQ(link_setting_of("DDP"), std::nullopt);
  EXPECT_EQ(exchange_setting_of("2:DDP w/ NVlink"), "ddp");
  // Headings too; a link that barely matters is no limit.
  d =
      diagnose_telemetry(read_text("DDP with NVLink:\nthroughput: 1000 samples/s\nthroughput: 1010 "
                                   "samples/s\n\nDDP w/o NVLink:\nthroughput: 950 "
                                   "samples/s\nthroughput: 960 samples/s\n"));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  // NCCL's own lines name P2P at every channel: no run of their own.
  const Telemetry nccl = read_text(
      "node1:123:456 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC\nthroughput: 1000 "
      "samples/s\n");
  for (const RunInfo& r : nccl.runs) EXPECT_EQ(r.link_setting, "");
}

TEST(PastedLogs, PaddlePaddlesProfilingReportByWhatItsOperatorsDo) {
  // Paddle#8119: "thread0::send  391  400535 ..." above the compute operators (13039.2,
  // 9707.2, ...): the exchange is 91 % of the operators' time.
  Telemetry t =
      read_telemetry_files({pasted("profiler_paddle8119-fluid-dist-vgg16-send-op-cutoff.txt")});
  ASSERT_EQ(t.phases.size(), 1u);
  EXPECT_NEAR(t.phases[0].communication_seconds, 400.535, 1e-9);
  Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  // Paddle#17482: the reader's "read" op, 236470 ms, most of the operators' time.
  d = diagnose_telemetry(
      read_telemetry_files({pasted("profiler_paddle17482-ctr-2gpu-read-op-80pct-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  // Paddle#7944: send is a quarter of the CPU trainer's operators: not what limits it, the
  // convolutions are (healthy, low).
  d = diagnose_telemetry(read_telemetry_files(
      {pasted("profiler_paddle7944-fluid-dist-cpu-20trainers-send-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  // PaddlePaddle/models#697: compute operators only, read and placed by no rule.
  t = read_telemetry_files(
      {pasted("profiler_paddlemodels697-transformer-op-profile-titanx-cutoff.txt")});
  EXPECT_TRUE(t.phases.empty());
  EXPECT_TRUE(t.steps.empty());
  EXPECT_EQ(t.unplaced.size(), 1u);
}

TEST(PastedLogs, IostatsDeviceRowsAlone) {
  // A blog's `iostat -x` of an HDD under small random reads: sda at 93.4 %util, 38.86 ms
  // r_await, 9.45 MB/s. Alone, a disk at its limit is what a job reading from it waits on.
  Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("other_saucejiang-iostat-hdd-small-file-reads.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kIoBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, testing::HasSubstr("sda 93 % busy"));
  // An idle disk says it is not the storage, and nothing more.
  d = diagnose_telemetry(read_text(
      "Device r/s rMB/s rrqm/s %rrqm r_await rareq-sz w/s wMB/s wrqm/s %wrqm w_await wareq-sz d/s "
      "dMB/s drqm/s %drqm d_await dareq-sz f/s f_await aqu-sz %util\nsda 12.50 1.45 0.50 3.65 "
      "0.86 25.31 4.50 0.94 2.50 8.12 0.78 21.33 0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.08 "
      "3.40\n"));
  EXPECT_EQ(d.verdict, Verdict::kUnknown) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("not storage at its limit"));
}

TEST(PastedLogs, WhatTheReviewOfStrategiesLinksAndReportsFound) {
  // A window of steps divides a summed time only: a rate or a mean over it is read as it is.
  EXPECT_EQ(named_values("Throughput (100 iters): 1234 samples/s").front().value, 1234);
  EXPECT_EQ(named_values("Avg step time (100 steps): 0.52s").front().value, 0.52);
  // Strategies (or a link) that cost the same beside idle GPUs: no "the compute sets the pace".
  std::string idle = "DDP:\nthroughput: 410 samples/s\nFSDP:\nthroughput: 400 samples/s\n";
  for (int gpu = 0; gpu < 2; ++gpu) {
    idle += fmt::format(
        "|   {}  Tesla V100-SXM2...  On   | 00000000:00:1{}.0 Off |                    0 |\n"
        "| N/A   40C    P0    60W / 300W |  12000MiB / 16160MiB |     2{}%      Default |\n",
        gpu, gpu, gpu);
  }
  EXPECT_NE(diagnose_telemetry(read_text(idle)).verdict, Verdict::kHealthy);
  // Waits printed before their steps, in a paste cut to start at a step line: each wait is the
  // step's below it.
  const Telemetry first = read_text(
      "step_time: 0.50\ndata_time: 4.5\nstep_time: 5.0\ndata_time: 0.1\nstep_time: 0.6\n");
  ASSERT_EQ(first.steps.size(), 3u);
  EXPECT_FALSE(first.steps[0].has_data);
  EXPECT_NEAR(first.steps[1].data_seconds, 4.5, 1e-12);
  // Paddle's 'OpDetail' parts under an operator are in its total already.
  const Telemetry detail = read_text(
      "Event                            Calls       Total       Min.        Max.        Ave.\n"
      "thread0::read                    10          400         1           100         40\n"
      "thread0::conv2d                  10          600         1           100         60\n"
      "  thread0::conv2d/compute        10          500         1           100         50\n"
      "thread0::send                    10          10          1           1           1\n");
  ASSERT_EQ(detail.steps.size(), 1u);
  EXPECT_NEAR(detail.steps[0].data_seconds / detail.steps[0].step_seconds, 400.0 / 1010, 1e-9);
  // A GPU column of "GPU0", "GPU1": each rank's view of one step, no series of steps.
  EXPECT_TRUE(read_text("| GPU | data_time | step_time |\n|---|---|---|\n| GPU0 | 0.1 | 1.0 |\n| "
                        "GPU1 | 2.0 | 3.0 |\n")
                  .steps.empty());
  // A link named off after a colon, NCCL's variable set, and a negation in another clause.
  EXPECT_EQ(link_setting_of("NVLink: off"), "no nvlink");
  EXPECT_EQ(link_setting_of("NCCL_P2P_DISABLE=true"), "no p2p");
  EXPECT_EQ(link_setting_of("NCCL_P2P_DISABLE=0"), "p2p");
  EXPECT_EQ(link_setting_of("IB disabled, NVLink"), "nvlink");
  // An NVMe drive near 100 %util with sub-millisecond reads is not storage at its limit.
  EXPECT_EQ(diagnose_telemetry(
                read_text("Device r/s rMB/s rrqm/s %rrqm r_await rareq-sz w/s wMB/s wrqm/s %wrqm "
                          "w_await wareq-sz d/s dMB/s drqm/s %drqm d_await dareq-sz f/s f_await "
                          "aqu-sz %util\nnvme0n1 38200.50 945 14.50 3.65 0.20 25.31 4.50 0.94 "
                          "235.50 98.12 0.78 213.33 0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.03 "
                          "92.40\n"))
                .verdict,
            Verdict::kUnknown);
  // A cell's "0,512" is no number with thousands.
  const Telemetry cells = read_text(
      "| Config | Throughput |\n|---|---|\n| ZeRO-1 | 0,512 tok/s |\n| ZeRO-2 | 0,400 tok/s |\n| "
      "ZeRO-3 | 0,300 tok/s |\n");
  for (const ThroughputSample& r : cells.rates) EXPECT_LT(r.per_second, 1000);
  // A step's phases under a "Type" header are one step's breakdown, not configurations.
  for (const RunInfo& r :
       read_text("| Type | Time (ms) |\n|---|---|\n| Forward | 100 |\n| Backward "
                 "| 200 |\n| Data loading | 300 |\n")
           .runs) {
    EXPECT_EQ(r.line, 3);  // no run per row
  }
}

TEST(PastedLogs, AHeaderGivesItsUnitToThePhasesBelowIt) {
  // "Time (ms)" is the unit of the bare numbers below it: 300 ms of loading in a step of 620
  // ms, not a 300-second batch.
  const Telemetry t = read_text(
      "| Type | Time (ms) |\n|---|---|\n| Data loading | 300 |\n| Forward | 100 |\n| Backward | "
      "200 |\n| Optimizer | 20 |\n");
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_NEAR(t.steps[0].data_seconds, 0.3, 1e-9);
  EXPECT_NEAR(t.steps[0].step_seconds, 0.62, 1e-9);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kInputBound);
  EXPECT_NE(d.summary.find("48 %"), std::string::npos) << d.summary;
  // A cell with its own unit keeps it; seconds in brackets are seconds.
  const Telemetry own = read_text(
      "| Phase | Duration [s] |\n|---|---|\n| data | 0.05 |\n| forward | 250 ms |\n| step "
      "| 0.5 |\n");
  ASSERT_EQ(own.steps.size(), 1u);
  EXPECT_NEAR(own.steps[0].data_seconds, 0.05, 1e-9);
  EXPECT_NEAR(own.steps[0].step_seconds, 0.5, 1e-9);
  // Rows of runs under a unit header are the table readers', not phases.
  const Telemetry runs = read_text(
      "| Model | Step (ms) |\n|---|---|\n| ResNet-50 | 300 |\n| ViT-B | 400 |\n| BERT | 500 "
      "|\n");
  for (const StepSample& s : runs.steps) EXPECT_LT(s.step_seconds, 1.0);
}

TEST(PastedLogs, MegatronsMinMaxTimersNestTheirWaitInTheStep) {
  // bigcode Megatron-LM#28: "(min, max)" across ranks in ms, the header cut. batch-generator runs
  // inside forward-backward: the step is forward-backward + grads-all-reduce + optimizer (the
  // slowest rank's), the wait batch-generator's minimum (what every rank spent in it).
  const Telemetry t = read_telemetry_files(
      {pasted("profiler_bigcodemegatron28-ul2-timers-batch-generator-broadcast-data.txt")});
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_NEAR(t.steps[0].data_seconds, 0.40898, 1e-9);
  EXPECT_NEAR(t.steps[0].step_seconds, 5.17715 + 0.19363 + 0.07313, 1e-9);
  EXPECT_EQ(t.steps[0].origin.line, 5);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kHealthy);
  EXPECT_NE(d.summary.find("8 %"), std::string::npos) << d.summary;
  // Each row alone: ms, whatever the header.
  const auto row = named_values("    grads-all-reduce .....................: (193.33, 193.63)");
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0].name, "grads_all_reduce");
  EXPECT_EQ(row[0].unit, "ms");
  EXPECT_DOUBLE_EQ(row[0].value, 193.63);
  // Dots that lead to no pair are no such timer.
  EXPECT_NE(named_values("Throughput ........: 123.4 img/s")[0].unit, "ms");
}

TEST(PastedLogs, WhatWasReadIsSaidWhereNoRuleWeighsIt) {
  // marin#6044: MFU figures alone (a table's two rows, two more in prose), under the share at
  // which GPUs are busy.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_marin6044-tpu-v4-1024-moe-toks-step-time-mfu.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  EXPECT_NE(d.summary.find("read 4 MFU figures"), std::string::npos) << d.summary;
  EXPECT_NE(d.summary.find("MFU figures of 6.6 to 22 %"), std::string::npos) << d.summary;
}

TEST(PastedLogs, TflopsPerGpuAtTwoScalesAreAScalingComparison) {
  // swiss-ai Megatron-LM#29: the model's TFLOP/s per GPU at 16 and 32 nodes ("pre" for "per").
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_megatron-lm29-swissai-llama8b-16-vs-32-nodes-tflops.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy);
  ASSERT_TRUE(d.numbers.scaling);
  EXPECT_NEAR(d.numbers.scaling->efficiency, 413.0 / 430, 1e-9);
  // Shown per GPU: a rate per GPU times the nodes is no rate the job had.
  EXPECT_NE(d.summary.find("430 TFLOP/s per GPU -> 413 TFLOP/s per GPU"), std::string::npos)
      << d.summary;
  // Without "per GPU" the figure may be the job's total: no run's rate.
  EXPECT_TRUE(read_text("32 nodes: 5000 TFLOP/s\n16 nodes: 2600 TFLOP/s\n").rates.empty());
}

TEST(PastedLogs, ATimersLineBelowItsIterationIsThatIterationsWhereNoneFollows) {
  // DeepSpeed#3742, cut after one iteration: "time (ms) | forward: 656.14 | ... | batch
  // generator: 1.22" right below the iteration's line, no iteration line after it.
  const Telemetry t = read_telemetry_files(
      {pasted("datalog_deepspeed3742-bf16-timers-batch-generator-cutoff.txt")});
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_NEAR(t.steps[0].step_seconds, 4.3017, 1e-9);
  EXPECT_NEAR(t.steps[0].data_seconds, 0.00122, 1e-9);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
}

TEST(PastedLogs, ASpeedupColumnBesideGpuCountsIsAScalingComparison) {
  // PaddleSpeech's benchmark: "| # of GPU | Acceleration Rate |" over "| 8 | 6.95 X |".
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_paddlespeechdocs-benchmark-1-2-4-8-v100-acceleration.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy);
  ASSERT_TRUE(d.numbers.scaling);
  EXPECT_NEAR(d.numbers.scaling->efficiency, 6.95 / 8, 1e-9);
  EXPECT_NE(d.summary.find("1x -> 6.95x"), std::string::npos) << d.summary;
  // Beside a rate column, the rate decides.
  const Diagnosis both = diagnose_telemetry(
      read_text("| GPUs | img/s | Speedup |\n|---|---|---|\n| 1 | 100 | 1.0x |\n| 8 | 400 | "
                "4.0x |\n"));
  ASSERT_TRUE(both.numbers.scaling);
  EXPECT_NE(both.summary.find("100 images/s -> 400 images/s"), std::string::npos) << both.summary;
}

TEST(PastedLogs, ARowNamedAsAStepsTimeTimesSteps) {
  // pytorch-frame#474: "time per training step | 0.725 seconds | 0.741 seconds" under "four
  // GPUs | single GPU": each GPU's batch in one step, not the same work at both scales.
  const Telemetry t =
      read_telemetry_files({pasted("scaling_pytorch-frame474-trompt-4xl4-vs-1gpu.txt")});
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_NEAR(t.steps[0].step_seconds, 0.725, 1e-9);
  ASSERT_EQ(t.rates.size(), 2u);
  EXPECT_EQ(t.rates[0].unit, "epochs");  // "time per training epoch"
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kHealthy);
  ASSERT_TRUE(d.numbers.scaling);
  EXPECT_NEAR(d.numbers.scaling->efficiency, 0.741 / 0.725, 1e-9);
}

TEST(PastedLogs, TheEpochsFirstStepAloneIsTheJobsStart) {
  // UniAdapter#1: one line, step 0 of 131135, 19.5 s with a 2 s wait: the job's start.
  const Diagnosis first = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_uniadapter1-first-iter-eta-29-days.txt")}));
  EXPECT_EQ(first.verdict, Verdict::kUnknown);
  EXPECT_NE(first.summary.find("step 0 of 131135"), std::string::npos) << first.summary;
  // A first batch that was there at once still says the loader was ready.
  EXPECT_EQ(diagnose_telemetry(read_text("Epoch 0: [  0/313] iter: 14.7s data: 0.0002s\n")).verdict,
            Verdict::kHealthy);
}

TEST(PastedLogs, RunningAveragesFarAboveThePrintedStepsAreStallsTheWaitDoesNotExplain) {
  // MoCo#38: printed steps of 0.43 s with no wait, their running average 1.64 s 3600 steps in,
  // the average wait 0.22 s: the steps between the printed ones stall on something else.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_moco38-epoch34-time-avg-vs-current-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  EXPECT_NE(d.summary.find("running average is 1.65 s"), std::string::npos) << d.summary;
  // Where the average wait explains the gap, the averages' wait decides (examples#387).
  EXPECT_EQ(diagnose_telemetry(read_telemetry_files({pasted(
                                   "train-log_examples387-imagenet-resnet18-spaces-cutoff.txt")}))
                .verdict,
            Verdict::kInputBound);
}

TEST(PastedLogs, AFallAtAHeadingIsAnotherRun) {
  // nnue-pytorch#342: a small network's bars at ~160 it/s, then under "* large:" the larger
  // network's at ~81 it/s: another run, not a fall within one.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_nnue-pytorch342-lightning-epoch-its-two-commits.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  EXPECT_NE(d.summary.find("at a heading"), std::string::npos) << d.summary;
  // The same fall without the heading is one run's.
  EXPECT_EQ(diagnose_telemetry(read_text("rate: 160 samples/s\nrate: 162 samples/s\nrate: 158 "
                                         "samples/s\nrate: 161 samples/s\nrate: 80 samples/s\n"
                                         "rate: 81 samples/s\nrate: 82 samples/s\n"))
                .verdict,
            Verdict::kInputBound);
}

TEST(PastedLogs, AWholeFirstEpochSecondsLongerIsTheJobsStartNotTheCache) {
  // "0 epoch time: 1.203086" then ~0.01 s epochs (jax#1797): a compile's second, no data set
  // read from storage.
  std::string log = "0 epoch time: 1.203086\n";
  for (int k = 1; k < 8; ++k) log += fmt::format("{} epoch time: 0.0110{}\n", k, k);
  EXPECT_NE(diagnose_telemetry(read_text(log)).verdict, Verdict::kIoBound);
  // Minutes longer is the page cache.
  std::string cold = "0 epoch time: 900.5\n";
  for (int k = 1; k < 8; ++k) cold += fmt::format("{} epoch time: 100.{}\n", k, k);
  EXPECT_EQ(diagnose_telemetry(read_text(cold)).verdict, Verdict::kIoBound);
}

TEST(PastedLogs, PySlowFastsJsonStatsAndAClockWithTheMonthFirst) {
  // SlowFast#625: "dt" the iteration, "dt_data" its wait, "dt_net" the rest.
  const Telemetry t =
      read_telemetry_files({pasted("datalog_slowfast625-ava-json-stats-dt-data-vs-net.txt")});
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_NEAR(t.steps[0].data_seconds, 0.00628, 1e-9);
  EXPECT_NEAR(t.steps[0].step_seconds, 0.00628 + 4.98658, 1e-9);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
  // A forum post's "04/04/2021 15:34:47 | epoch: 2/100, batch: 1/5004": the steps between two
  // stamped counters.
  const Telemetry stamped = read_telemetry_files(
      {pasted("datalog_pytorchforum117049-imagenet-dp-4gpu-later-batches-slower-cutoff.txt")});
  ASSERT_GE(stamped.steps.size(), 2u);
  EXPECT_NEAR(stamped.steps[0].step_seconds, 0.6, 1e-9);  // 60 s for 100 batches
  // A day first where the first part cannot be a month.
  const Telemetry day_first =
      read_text("25/04/2021 23:59:30 | batch: 1/50\n26/04/2021 00:00:30 | batch: 11/50\n");
  ASSERT_EQ(day_first.steps.size(), 1u);
  EXPECT_NEAR(day_first.steps[0].step_seconds, 6.0, 1e-9);
  // Kaldi#3940's DDP trainer: "2020-02-19 13:55:10,646 INFO [ddp_train.py:160] Device (1)
  // processing 1100/4724(23.285351%) ...", then device 0 at 1200 after 44.6 s.
  const Telemetry kaldi =
      read_telemetry_files({pasted("datalog_kaldi3940-ddp-2gpu-device-progress-log.txt")});
  ASSERT_EQ(kaldi.steps.size(), 1u);
  EXPECT_NEAR(kaldi.steps[0].step_seconds, 0.44605, 1e-9);
  EXPECT_THROW(read_text("2020-02-19 13:55:10,646 INFO Processing 100/5000 utterances\n"
                         "2020-02-19 13:58:10,646 INFO Processing 200/5000 utterances\n"),
               Error);
  // SuperPoint#152: the stamp in brackets, "[06/13/2020 08:08:42 INFO] Iter 2000: loss ...".
  const Telemetry bracketed = read_telemetry_files(
      {pasted("datalog_superpoint152-magicpoint-coco-iter-timestamps-cutoff.txt")});
  ASSERT_GE(bracketed.steps.size(), 2u);
  EXPECT_NEAR(bracketed.steps[1].step_seconds, 0.909, 1e-9);  // 909 s for 1000 iterations
}

TEST(PastedLogs, ScalingEfficienciesATableStatesWithoutItsRuns) {
  // A blog's "8 GPU efficiency" column, 95.4-98.0 %: stated, no runs to measure them from.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_willgpaikblog-ddp-bench-weak-scaling-v100-a100-synthetic.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy);
  EXPECT_NE(d.summary.find("95.4 to 98 %"), std::string::npos) << d.summary;
  const std::string table = "| Model | 8 GPU efficiency |\n|---|---|\n| ResNet | 61.0% |\n";
  EXPECT_EQ(diagnose_telemetry(read_text(table)).verdict, Verdict::kCommunicationBound);
  // Of synthetic data they leave the job's own loading out.
  // Of synthetic data: under the bar, the exchange (it cannot wait on the input); over it, the
  // job's own loading is left out.
  EXPECT_EQ(diagnose_telemetry(read_text("Synthetic data:\n" + table)).verdict,
            Verdict::kCommunicationBound);
  EXPECT_EQ(diagnose_telemetry(
                read_text("Synthetic data:\n| Model | 8 GPU efficiency |\n|---|---|\n| ResNet | "
                          "95.0% |\n"))
                .verdict,
            Verdict::kUnknown);
  // A CPU's efficiency is no scaling's.
  EXPECT_THROW(read_text("| Job | CPU Efficiency |\n|---|---|\n| 42 | 61.0% |\n"), Error);
}

TEST(PastedLogs, DliosUtilisationInATableOfRunsWithoutACountColumn) {
  // dlio_benchmark#194: "Test | Throughput (MB/s) | AU (%) | # reader threads" over
  // "Without   patch, 1x H100 | 115.6499 | 59.3728 | 4".
  const Telemetry t = read_telemetry_files(
      {pasted("throughput_dlio_benchmark194-tfreader-au-before-after-patch.txt")});
  ASSERT_EQ(t.accelerator_utilisation.size(), 2u);
  EXPECT_EQ(t.accelerator_utilisation[0].accelerators, 1);
  EXPECT_NEAR(t.accelerator_utilisation[0].percent, 59.3728, 1e-9);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kInputBound);
  EXPECT_NE(d.summary.find("59.4 %"), std::string::npos) << d.summary;
}

TEST(PastedLogs, WhatTheCodeReviewOfHeldOut33sReadersFound) {
  // A kernel's efficiencies are no scaling's.
  EXPECT_THROW(read_text("nvprof metrics:\n\n| Kernel | Warp Execution Efficiency | Global Load "
                         "Efficiency |\n|---|---|---|\n| sgemm | 99.8% | 45.2% |\n| elementwise "
                         "| 62.1% | 25.0% |\n"),
               Error);
  // A speedup of one thing over another, and one whose first run is not 1x, scale nothing.
  for (const char* text :
       {"| GPUs | Speedup (TF32 to mixed precision) |\n|---|---|\n| 1 | 2.10x |\n| 8 | 2.02x |\n",
        "| GPUs | Speedup |\n|---|---|\n| 1 | 2.10x |\n| 8 | 2.02x |\n"}) {
    EXPECT_THROW(read_text(text), Error) << text;
  }
  // A rate's header gives its numbers no seconds.
  EXPECT_NE(diagnose_telemetry(read_text("| Stage | Throughput img/s |\n|---|---|\n| Data loading "
                                         "| 5000 |\n| Training step | 800 |\n"))
                .verdict,
            Verdict::kInputBound);
  // The step's counter, not the epoch's: 30 steps into its epoch, the average still holds the
  // start.
  EXPECT_EQ(
      diagnose_telemetry(
          read_text("Epoch: [600/1000][ 10/5005]\tTime  0.300 ( 1.500)\tData  0.010 ( 0.050)\n"
                    "Epoch: [600/1000][ 20/5005]\tTime  0.310 ( 0.950)\tData  0.010 ( 0.040)\n"
                    "Epoch: [600/1000][ 30/5005]\tTime  0.305 ( 0.760)\tData  0.010 ( 0.030)\n"))
          .verdict,
      Verdict::kHealthy);
  // A "step" longer than forward and backward together is the whole step, not the optimizer's.
  const Telemetry whole = read_text(
      "step 100 | forward: 0.12s | backward: 0.30s | step: 0.50s | data: 0.20s\n"
      "step 200 | forward: 0.12s | backward: 0.30s | step: 0.50s | data: 0.20s\n"
      "step 300 | forward: 0.12s | backward: 0.30s | step: 0.50s | data: 0.20s\n");
  ASSERT_EQ(whole.steps.size(), 3u);
  EXPECT_NEAR(whole.steps[0].step_seconds, 0.5, 1e-12);
  // No copy of a negative or zero rate.
  EXPECT_THROW(
      read_text("Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n"
                "     0 770.13  -5\n     1  0 771.27\n"),
      Error);
  // Megatron's timers at (0, 0) time no step.
  EXPECT_TRUE(read_text("    forward-backward ....: (0.00, 0.00)\n"
                        "    batch-generator .....: (0.00, 0.00)\n")
                  .steps.empty());
}

TEST(PastedLogs, InfinibandAgainstEthernetIsALinkSetting) {
  EXPECT_EQ(link_setting_of("DDP (InfiniBand)"), "infiniband");
  EXPECT_EQ(link_setting_of("DDP (Ethernet)"), "no infiniband");
  EXPECT_EQ(link_setting_of("IB disabled"), "no infiniband");
  EXPECT_EQ(link_setting_of("RoCE"), "infiniband");
  EXPECT_FALSE(link_setting_of("ribbon tcpdump"));  // words of their own only
  // A table with the settings in its columns (a write-up's "DDP (Ethernet) | DDP (InfiniBand)"
  // over "Training time (CIFAR-10, 2 GPUs) | Baseline | 37.7s | **18.1s**").
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_aihpcmu-ddp-ethernet-vs-infiniband-2gpu-cifar10.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound);
  EXPECT_NE(d.summary.find("2.1x slower without InfiniBand"), std::string::npos) << d.summary;
}

TEST(PastedLogs, AMisspeltSyntheticHeadingStillNamesTheRunWithoutLoading) {
  // deeplearningframeworks#81 (Gluon on 4 V100s): "#### Synthethic Data" heads the second run,
  // 8 min 11 s against 9 min 43 s on the job's data: 84 % kept, the input keeps up.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_deeplearningframeworks81-gluon-4xv100-real-vs-synthetic.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("84 % of its 491 s on synthetic data"));
  EXPECT_TRUE(loader_setting_of("#### Synthethic Data").value().synthetic);
  EXPECT_FALSE(loader_setting_of("Speech synthesis, num_workers=4").value().synthetic);
}

TEST(PastedLogs, RatesAtSeveralScalesOnOneLineEachBesideItsOwn) {
  // open_lm#21: "~2.5K tokens/sec/GPU on 256 A100s for OpenLM-7B, and ~9.5K tokens/sec/GPU on
  // 128 A100s for OpenLM-1B. ~11.5K tokens/sec/GPU on 32 A100s for 1B. 7B model gets ~2700
  // tokens/sec/GPU on one node": each rate a run of its own, the two models' series apart.
  const Telemetry t =
      read_telemetry_files({pasted("scaling_open_lm21-tokens-per-sec-per-gpu-1b-7b-nodes.txt")});
  ASSERT_EQ(t.runs.size(), 4u);
  ASSERT_EQ(t.rates.size(), 4u);
  for (size_t r = 0; r < 4; ++r) EXPECT_EQ(t.rates[r].run, static_cast<int>(r));
  EXPECT_EQ(t.runs[0].model, "7B");
  EXPECT_EQ(t.runs[1].model, "1B");
  EXPECT_EQ(t.runs[1].group, t.runs[2].group);
  EXPECT_EQ(t.runs[0].group, t.runs[3].group);
  EXPECT_NE(t.runs[0].group, t.runs[1].group);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("32 -> 128 GPUs"));
  EXPECT_THAT(d.summary, testing::HasSubstr("83 % scaling efficiency"));
  // A rate and its scale in one piece each, joined by "and".
  const Diagnosis two = diagnose_telemetry(
      read_text("I get 1200 images/sec on 1 GPU and 3000 images/sec on 4 GPUs\n"));
  EXPECT_THAT(two.summary, testing::HasSubstr("1 -> 4 GPUs: 1200 images/s -> 3000 images/s"));
  // Not ranks of one run, nor models other than by their size.
  EXPECT_THAT(diagnose_telemetry(read_text("ResNet-50 on 8 GPUs: 2400 img/s; ResNet-152 on 4 GPUs: "
                                           "500 img/s\n"))
                  .summary,
              testing::HasSubstr("a rate alone"));
  EXPECT_THAT(diagnose_telemetry(read_text("rank 0 (1 GPU): 300 img/s, rank 1 (1 GPU): 150 img/s, "
                                           "total on 2 GPUs: 450 img/s\n"))
                  .summary,
              testing::HasSubstr("a rate alone"));
  EXPECT_EQ(model_size_of("we get 2.5k tokens/sec/gpu for openlm-7b,"), "7B");
  EXPECT_EQ(model_size_of("llama-2-13b on 8 gpus"), "13B");
  EXPECT_EQ(model_size_of("a 1.3b model"), "1.3B");
  EXPECT_EQ(model_size_of("7b against 13b"), "");
  EXPECT_EQ(model_size_of("batch 64, fp16, 4.5b"), "");  // a bare size names no model
  EXPECT_EQ(model_size_of("b 64 on 8 gpus, b200"), "");
  // A count of tokens is no model's size (one helper with the MFU rule's named_model_billions).
  EXPECT_EQ(model_size_of("8 gpus: iter 100, consumed 1b tokens, 30000 tokens/sec"), "");
  EXPECT_EQ(model_size_of("qwen3-30b-a3b on 8 gpus"), "");
}

TEST(PastedLogs, TensorflowsFullyConnectedFeedTimesEachStepInParentheses) {
  // tensorflow#838: fully_connected_preloaded.py's "Step 100: loss = 2.22 (0.012 sec)" on the
  // CPU, then "Step 100: loss = 2.13 (2.797 sec)" on the GPU: the step's own time.
  const auto v = named_values("Step 100: loss = 2.22 (0.012 sec)");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[1].name, "loss");
  EXPECT_FALSE(v[1].average);
  EXPECT_EQ(v[2].name, "time");
  EXPECT_DOUBLE_EQ(v[2].value, 0.012);
  const Telemetry t = read_telemetry_files(
      {pasted("datalog_tensorflow838-fully-connected-preloaded-cpu-vs-gpu-step-time.txt")});
  ASSERT_EQ(t.steps.size(), 4u);
  EXPECT_DOUBLE_EQ(t.steps[3].step_seconds, 2.797);
  EXPECT_FALSE(t.steps[3].has_data);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kUnknown);
  // Without the counter first, a metric's unitless average stays one ("loss 2.2 (2.4)").
  EXPECT_DOUBLE_EQ(named_values("loss 2.2 (2.4)").at(0).average.value_or(0), 2.4);
}

TEST(PastedLogs, ACountNamedWithSpacesAndAnEpochTakenOnAverage) {
  // deepspeech.torch#40: "- nGPU =4" over "epoch takes on an avg 55 s", "- nGPU =1" over 48 s.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("scaling_deepspeech-torch40-an4-epoch-time-1-vs-4-gpus.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1 -> 4 GPUs: 48 s -> 55 s for the same epoch"));
  EXPECT_EQ(gpu_count_of("nGPU = 2"), 2);
  EXPECT_EQ(gpu_count_of("ngpus =8 on one machine"), 8);
  EXPECT_EQ(gpu_count_of("gpu = 0"), std::nullopt);  // a device's id
}

TEST(PastedLogs, StGcnsTimeConsumptionIsTheEpochsShareWaitingForData) {
  // MS-G3D#27: "[ Fri Nov 13 20:57:22 2020 ] \tTime consumption: [Data]00%, [Network]99%" at
  // each epoch's end; mmskeleton#48's "[Data]07%, [Network]93%".
  const Telemetry t = read_telemetry_files(
      {pasted("datalog_msg3d27-kinetics-skeleton-epoch-hours-data-0pct-cutoff.txt")});
  ASSERT_EQ(t.steps.size(), 3u);
  EXPECT_TRUE(t.steps[0].shares);
  EXPECT_DOUBLE_EQ(t.steps[0].data_seconds, 0.0);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
  const Telemetry high = read_text(
      "[ Mon Jun 11 04:18:30 2018 ] \tTime consumption: [Data]64%, [Network]36%\n"
      "[ Mon Jun 11 04:38:30 2018 ] \tTime consumption: [Data]61%, [Network]39%\n");
  ASSERT_EQ(high.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(high.steps[0].data_seconds, 0.64);
  EXPECT_EQ(diagnose_telemetry(high).verdict, Verdict::kInputBound);
}

TEST(PastedLogs, AMarkdownTableOfGpusWithTheirUtilisation) {
  // A BEVFusion write-up's table in Chinese headers ("GPU利用率", "显存使用"): six V100S at
  // 97-100 % holding 31 GB each, two idle with 4 MB: not the job's GPUs.
  const Telemetry t =
      read_telemetry_files({pasted("nvsmi_bevproject-bevfusion-6xv100s-workers0-util-97-100.txt")});
  ASSERT_EQ(t.gpus.size(), 8u);
  EXPECT_DOUBLE_EQ(t.gpus[1].util, 100);
  EXPECT_DOUBLE_EQ(t.gpus[1].memory_used_mib.value_or(0), 31218);
  EXPECT_DOUBLE_EQ(t.gpus[7].memory_total_mib.value_or(0), 32768);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("GPUs 6-7 idle with no memory in use"));
  // Idle GPUs that hold memory are ranks: one that lags holds the others back.
  const Diagnosis held = diagnose_telemetry(
      read_text("| GPU | Memory Used | GPU Util |\n|---|---|---|\n| 0 | 30000 MiB | 99% |\n"
                "| 1 | 30000 MiB | 98% |\n| 2 | 29000 MiB | 0% |\n| 3 | 29000 MiB | 0% |\n"));
  EXPECT_EQ(held.verdict, Verdict::kRankImbalance) << held.summary;
  // A GPU whose utilisation reads "N/A" is passed over, not the end of the table.
  const Telemetry na = read_text(
      "| GPU | Memory Used | GPU Util |\n|---|---|---|\n| 0 | 30000 MiB | 99% |\n"
      "| 1 | 30000 MiB | N/A |\n| 2 | 29000 MiB | 5% |\n");
  EXPECT_EQ(na.gpus.size(), 2u);
  // A bare "#" numbers any table's rows: only beside the GPUs' memory is it theirs.
  EXPECT_THROW(read_text("| # | Model | Batch size | GPU Util |\n|---|---|---|---|\n"
                         "| 1 | resnet | 64 | 97% |\n| 2 | vgg | 64 | 95% |\n"),
               Error);
  // A table of runs: its first column counts GPUs.
  const Telemetry runs = read_text(
      "| GPU | img/s | GPU Util |\n|---|---|---|\n| 1 | 400 | 99% |\n| 2 | 780 | 97% |\n");
  EXPECT_TRUE(runs.gpus.empty());
}

TEST(PastedLogs, RunTimesSaidOfEachScale) {
  // policy-agnostic-rl#6: "+ Single 3090 (headless): ~16 hours", "+ 8x 3090 (headless): ~25
  // hours": a list's marker, a note and a hedge around each run's time.
  const Diagnosis rl = diagnose_telemetry(
      read_telemetry_files({pasted("scaling_policyagnosticrl6-1x-vs-8x3090-runtime.txt")}));
  EXPECT_EQ(rl.verdict, Verdict::kCommunicationBound) << rl.summary;
  EXPECT_THAT(rl.summary, testing::HasSubstr("1 -> 8 GPUs: 57600 s -> 90000 s"));
  // A count before its word is no job summary's "GPUs: 8".
  EXPECT_EQ(gpu_count_of("8 GPUs: 25 hours"), 8);
  EXPECT_EQ(gpu_count_of("GPUs: 8"), 8);
  // TF-Slim on Stack Overflow: "running this on a single GPU (Tesla M40) takes around 30mn,
  // while running on 4 GPUs takes 50+ mn".
  const Telemetry slim = read_telemetry_files(
      {pasted("scaling_so43216684-tfslim-resnet50-4gpu-slower-than-1gpu.txt")});
  ASSERT_EQ(slim.rates.size(), 2u);
  EXPECT_DOUBLE_EQ(1 / slim.rates[0].per_second, 1800);
  EXPECT_DOUBLE_EQ(1 / slim.rates[1].per_second, 3000);
  // Not what is left, nor another phase; an epoch's where the clause's subject is one.
  EXPECT_THROW(read_text("On 8 GPUs, the remaining epochs will take about 4 hours\n"), Error);
  EXPECT_THROW(read_text("With 8 GPUs, downloading the dataset alone takes 2 hours\n"), Error);
  const Telemetry epoch = read_text("With 8 GPUs each epoch now takes about 30 minutes.\n");
  ASSERT_EQ(epoch.rates.size(), 1u);
  EXPECT_EQ(epoch.rates[0].unit, "epochs");
  // How long a run took beside step lines leaves the steps to be judged (dora_iclr24#1: an
  // epoch "took about 8 days" on two A100s, batches that wait 1198 s every tenth).
  EXPECT_EQ(diagnose_telemetry(read_telemetry_files({pasted(
                                   "datalog_dora_iclr24-1-dino-video-frames-1198s-every-10th-"
                                   "batch.txt")}))
                .verdict,
            Verdict::kInputBound);
}

TEST(PastedLogs, FlagPerfsTableOfThroughputsByConfiguration) {
  // FlagPerf#480: "| A100单机单卡（1x1） | fp32 | ... | 9.6 | 14.2 | 14.2 |" under "配置 | ... |
  // p_whole | p_train | p_core", then 1x8 at 68.6, 97.5 and 97.6 (a diff's rows).
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_flagperf480-gpt2-a100-1x1-vs-1x8-pwhole-ptrain-pcore.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1 -> 8 GPUs"));
  EXPECT_EQ(meaning_of(NamedValue{"p_train", "", 1, std::nullopt, 0}).rate_unit, "samples");
  // A100单机8卡（1x8）: A100s, one machine, 8 cards.
  EXPECT_EQ(gpu_count_of("A100\xe5\x8d\x95\xe6\x9c\xba"
                         "8\xe5\x8d\xa1\xef\xbc\x88"
                         "1x8\xef\xbc\x89"),
            8);
}

TEST(PastedLogs, AWaitWhereAnEpochStartsAgainIsTheWorkersStarting) {
  // mmdetection#6093: YOLOX's JSON log, "epoch": 1, "iter": 1800 at 0.05 s of 0.54, then
  // "epoch": 2, "iter": 50 at 1.94 s of 2.48 (the workers started again), then 0.02 of 0.55.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_mmdetection6093-yolox-epoch-boundary-data-time-json.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("only 6 %"));
  // The same wait in mid-epoch is the job's.
  const Diagnosis mid = diagnose_telemetry(
      read_text("{\"epoch\": 2, \"iter\": 1750, \"data_time\": 0.04, \"time\": 0.54}\n"
                "{\"epoch\": 2, \"iter\": 1800, \"data_time\": 1.94, \"time\": 2.48}\n"
                "{\"epoch\": 2, \"iter\": 1850, \"data_time\": 0.02, \"time\": 0.55}\n"));
  EXPECT_EQ(mid.verdict, Verdict::kInputBound) << mid.summary;
  // Nor is another rank a few steps behind: "[1][ 60/1051]" above "[1][ 50/1051]".
  const Diagnosis ranks = diagnose_telemetry(read_text(
      "Epoch: [1][ 60/1051] Time 0.540 Data 0.040\nEpoch: [1][ 50/1051] Time 3.100 Data 2.600\n"
      "Epoch: [1][ 70/1051] Time 0.550 Data 0.020\n"));
  EXPECT_EQ(ranks.verdict, Verdict::kInputBound) << ranks.summary;
}

TEST(PastedLogs, RunsTimedInMinutesOrHoursAndRatesOrBandwidthsSpelledOutAreRead) {
  // unsloth#1's table of QLoRA runs on one and two T4s, "23h 15m" each: read, measured in
  // hours, though no rule weighs a run's time beside rows of other models.
  Telemetry t = read_telemetry_files({pasted("scaling_unsloth1-hf-qlora-1xt4-vs-2xt4-hours.txt")});
  ASSERT_EQ(t.unplaced.size(), 8u);
  EXPECT_EQ(t.unplaced[0].second, "duration");
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kUnknown);
  // horovod#2409, in prose: "single(train_time=75min,auc=0.781)  2*workers(train_time=45min".
  t = read_telemetry_files(
      {pasted("scaling_horovod2409-cpu-cluster-criteo-dnn-1-2-4-workers-train-minutes-prose.txt")});
  EXPECT_EQ(t.unplaced.size(), 3u);
  // Durations said in prose, a number before its unit's word (walkwithfastai#19: "taking 4
  // hours an epoch. It used to take about 4 minutes"): two, read and weighed by no rule.
  t = read_telemetry_files({pasted("other_walkwithfastai19-colab-resnet50-4h-vs-4min-epoch.txt")});
  EXPECT_EQ(t.unplaced.size(), 2u);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kUnknown);
  // Times since and times left are no durations of a run (a pasted thread's "commented 3 days
  // ago"; "2 hours left"), and one prose duration alone is the prose's.
  EXPECT_THROW(read_text("alice commented 3 days ago\nbob commented 2 hours ago\n"), Error);
  EXPECT_THROW(read_text("epoch 3 of 10, 2 hours left, 5 hours remaining\n"), Error);
  EXPECT_THROW(read_text("I trained it on 8x H100 for 2 days.\n"), Error);
  // Bandwidths (samudra#281's S3 reads: "Achieved <b>2.446 GB/s</b> throughput", "Throughput:
  // 2.105 GB/s"): measured, weighed by no rule without the job's own times.
  t = read_telemetry_files(
      {pasted("throughput_samudra281-zarr-s3-read-benchmark-gbps-cutoff.txt")});
  ASSERT_EQ(t.unplaced.size(), 2u);
  EXPECT_EQ(t.unplaced[0].second, "bandwidth");
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kUnknown);
  // PyTorch/XLA's metrics report (pytorch/xla#3354: "Metric: CompileTime" over "Accumulator:
  // 07m50s335ms265.522us"): its totals, in one token of parts, are durations.
  t = read_telemetry_files({pasted("profiler_xla3354-metrics-step69-compiletime-cutoff.txt")});
  ASSERT_EQ(t.unplaced.size(), 1u);
  EXPECT_EQ(t.unplaced[0].second, "duration");
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kUnknown);
  EXPECT_THROW(read_text("Metric: InboundData\n  Accumulator: 164.12MB\n"), Error);
  // A size in megabytes or millions is no duration in minutes ("-e 128M", "1.2M images").
  ExpectNothingPlaced("./all_reduce_perf -b 8 -e 128M -f 2 -g 2\n");
  EXPECT_THROW(read_text("So this is 1.2M images. The map size is 1099511627776 * 2.\n"), Error);
  // lightning#7932: "185 iterations/second", a rate spelled out, is the loop's steps.
  t = read_telemetry_files(
      {pasted("throughput_lightning7932-iterations-per-second-vs-dataset-size-cutoff.txt")});
  ASSERT_FALSE(t.steps.empty());
  EXPECT_NEAR(t.steps.back().step_seconds, 1.0 / 235, 1e-9);
}

TEST(PastedLogs, ALoadersQueueShownFullIsTheBatchesWaitingForTheStep) {
  // Detectron#247 (the json_stats of iteration 120000, "mb_qsize": 64) and #918 (six lines at
  // 64): the queue at its capacity, the loader ahead of the GPUs.
  for (const char* name : {"datalog_detectron247-json-stats-mb-qsize.txt",
                           "datalog_detectron918-keypoint-json-stats-time-mb-qsize-cutoff.txt"}) {
    const Diagnosis d = diagnose_telemetry(read_telemetry_files({pasted(name)}));
    EXPECT_EQ(d.verdict, Verdict::kHealthy) << name << ": " << d.summary;
    EXPECT_EQ(d.confidence, Confidence::kMedium) << name;
  }
  // tensorpack#1023: QueueInput/queue_size 50 beside an epoch's GPUUtil of 75 %.
  const Diagnosis tp = diagnose_telemetry(read_telemetry_files(
      {pasted("tensorpack_tensorpack1023-fasterrcnn-monitor-gpuutil-queue-cutoff.txt")}));
  EXPECT_EQ(tp.verdict, Verdict::kHealthy) << tp.summary;
  EXPECT_EQ(tp.confidence, Confidence::kLow);
  // Empty once in the paste: the loader did not keep up, whatever the other lines say.
  const std::string full = "json_stats: {\"iter\": 20, \"mb_qsize\": 64, \"time\": 0.5}\n";
  const std::string empty = "json_stats: {\"iter\": 40, \"mb_qsize\": 0, \"time\": 0.5}\n";
  EXPECT_EQ(diagnose_telemetry(read_text(full + empty)).verdict, Verdict::kInputBound);
  // Half full is neither; full, then draining, is not full throughout (a review's cases).
  const std::string half = "json_stats: {\"iter\": 20, \"mb_qsize\": 30, \"time\": 0.5}\n";
  EXPECT_NE(diagnose_telemetry(read_text(half)).verdict, Verdict::kHealthy);
  const std::string low = "json_stats: {\"iter\": 40, \"mb_qsize\": 2, \"time\": 0.5}\n";
  EXPECT_NE(diagnose_telemetry(read_text(full + low)).verdict, Verdict::kHealthy);
  EXPECT_NE(diagnose_telemetry(read_text("QueueInput/queue_size: 50\nQueueInput/queue_size: 0\n"))
                .verdict,
            Verdict::kHealthy);
}

TEST(PastedLogs, WorkersBesideAnAllreduceColumnAreTrainersNotALoaders) {
  // ElasticDL#2221: "| Workers | speed | total task time | allreduce time | ..." — the workers
  // exchange gradients (allreduce 10.36 s of a 13.76 s task); no setting of a loader.
  const Telemetry t =
      read_telemetry_files({pasted("scaling_elasticdl2221-ftlib-allreduce-resnet50-gpu-tcp.txt")});
  EXPECT_TRUE(std::none_of(t.runs.begin(), t.runs.end(),
                           [](const RunInfo& r) { return !r.loader_setting.empty(); }));
  EXPECT_NE(diagnose_telemetry(t).verdict, Verdict::kInputBoundCpu);
  // The same table without that column is a loader's sweep.
  const Diagnosis loader = diagnose_telemetry(
      read_text("| Workers | speed |\n|---|---|\n| 2 | 148 images/s |\n| 4 | 228 images/s |\n"));
  EXPECT_EQ(loader.verdict, Verdict::kInputBoundCpu) << loader.summary;
}

TEST(PastedLogs, ASettingsRowsThatDoOtherWorkAStepCompareNoSetting) {
  // transformers#9345: TPU cores 1 and 8, at batch 1 and 32 against batch 32 with gradient
  // accumulation 1 and 4: no comparison of the cores (the expert: healthy; not input-bound-cpu).
  const Diagnosis tpu = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_transformers9345-bart-large-tpu-v3-8-s-per-it.txt")}));
  EXPECT_NE(tpu.verdict, Verdict::kInputBoundCpu) << tpu.summary;
  // The same batches under each setting, in any order and number, still compare it.
  const Diagnosis same = diagnose_telemetry(read_text(
      "| num_workers | batch | step time (s) |\n|---|---|---|\n| 0 | 32 | 2.0 |\n| 0 | 64 | 4.0 |\n"
      "| 8 | 64 | 2.0 |\n| 8 | 32 | 1.0 |\n| 8 | 32 | 1.0 |\n"));
  EXPECT_EQ(same.verdict, Verdict::kInputBoundCpu) << same.summary;
  const Diagnosis other =
      diagnose_telemetry(read_text("| num_workers | batch | step time (s) |\n|---|---|---|\n| 0 | "
                                   "32 | 2.0 |\n| 8 | 64 | 2.0 |\n"));
  EXPECT_NE(other.verdict, Verdict::kInputBoundCpu) << other.summary;
  // rikai#468: "Local + no model" beside another table's row that names no storage: no
  // comparison of storage.
  EXPECT_NE(
      diagnose_telemetry(
          read_telemetry_files({pasted(
              "throughput_rikai468-coco-embedded-vs-external-images-aws-workers-cutoff.txt")}))
          .verdict,
      Verdict::kIoBound);
}

TEST(PastedLogs, AGpusUseSaidToSwingBetweenIdleAndBusy) {
  // discuss.pytorch.org#195120: "the GPU is barely used (fast oscillation from 0% to 100%)".
  const Diagnosis vit = diagnose_telemetry(read_telemetry_files(
      {pasted("nvsmi_discusspytorch195120-vit-imagefolder-gpu-0-100-oscillation.txt")}));
  EXPECT_EQ(vit.verdict, Verdict::kInputBound) << vit.summary;
  EXPECT_EQ(vit.confidence, Confidence::kLow);
  EXPECT_THAT(vit.summary, testing::HasSubstr("between 0 % and 100 %"));
  const Telemetry range = read_text("GPU utilization fluctuates between 0 and 100% in training.\n");
  ASSERT_EQ(range.utilisation_swings.size(), 1u);
  EXPECT_EQ(range.utilisation_swings[0].low, 0);
  EXPECT_EQ(range.utilisation_swings[0].high, 100);
  // Busy throughout, or the CPU's too: no swing of the GPU's.
  EXPECT_TRUE(read_text("GPU util fluctuates between 85% and 99%\n").utilisation_swings.empty());
  EXPECT_THROW(read_text("CPU and GPU usage fluctuate between 0 and 100%\n"), Error);
}

TEST(PastedLogs, FlagPerfsCoreThroughputLeavesOutTheWaitForData) {
  // FlagPerf#295 (Iluvatar BI-V100, 1x8): p_train 3604 against p_core 3651, the same run
  // without its data IO: 1.3 % of the time waits for data.
  const Telemetry t =
      read_telemetry_files({pasted("throughput_flagperf295-iluvatar-mobilenetv2-1x8-pcore.txt")});
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_TRUE(t.steps[0].shares);
  EXPECT_NEAR(t.steps[0].data_seconds, 1 - 3604.0 / 3651, 1e-9);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
  // FlagPerf#266 (DETR on 8 A100s): 17 %, input-bound mildly.
  EXPECT_EQ(diagnose_telemetry(
                read_telemetry_files(
                    {pasted("throughput_flagperf266-detr-a100-1x8-pwhole-ptrain-pcore.txt")}))
                .verdict,
            Verdict::kInputBound);
  // A p_core under p_train is no run of FlagPerf's: no share read.
  Telemetry inverted;
  try {
    inverted = read_text("| cfg | p_train | p_core |\n|---|---|---|\n| 1x8 | 3651 | 3604 |\n");
  } catch (const Error&) {
  }
  EXPECT_TRUE(inverted.steps.empty());
}

TEST(PastedLogs, PytorchXlasRatePerDevice) {
  // pytorch/xla#4324: "| Training Device=xla:0/4 Epoch=1 Step=780 Loss=0.00152 Rate=545.11
  // GlobalRate=406.16 Time=01:54:23" from eight devices: each Rate the device's samples/s.
  const Telemetry t = read_telemetry_files(
      {pasted("datalog_xla4324-tpu-resnet-rate-globalrate-per-device-cutoff.txt")});
  ASSERT_FALSE(t.rates.empty());
  EXPECT_EQ(t.rates[0].unit, "samples");
  EXPECT_TRUE(t.rates[0].per_gpu);
  EXPECT_DOUBLE_EQ(t.rates[0].per_second, 545.11);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
  // Each line's Rate alone: GlobalRate, the mean since the start, is no second rate.
  EXPECT_EQ(t.rates.size(), 13u);
}

TEST(PastedLogs, TheWaitsShareOfTheTimeSaidInWords) {
  // discuss.mxnet#107: "nearly half of the time spent on preparation the train_iter ... while
  // the other half is for the model forward/backward/update".
  const Diagnosis mx = diagnose_telemetry(read_telemetry_files(
      {pasted("other_discussmxnet107-8gpu-half-time-preparing-train-iter.txt")}));
  EXPECT_EQ(mx.verdict, Verdict::kInputBound) << mx.summary;
  EXPECT_THAT(mx.summary, testing::HasSubstr("50 %"));
  const auto share = [](const std::string& text) {
    const Telemetry t = read_text(text);
    return t.steps.empty() ? -1.0 : t.steps[0].data_seconds;
  };
  EXPECT_NEAR(share("Profiling shows that 70% of the time is spent in data loading.\n"), 0.7, 1e-9);
  EXPECT_NEAR(share("data loading takes 60 % of each iteration\n"), 0.6, 1e-9);
  EXPECT_NEAR(share("only 5% of the time is spent in the dataloader\n"), 0.05, 1e-9);
  // A share of something else, or of the time spent elsewhere.
  // (The GPU's own use, 80 %, is read as such.)
  const Telemetry busy = read_text("The GPU is busy 80% of the time, the data loader is fine.\n");
  EXPECT_TRUE(busy.steps.empty());
  ASSERT_EQ(busy.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(busy.gpus[0].util, 80);
  EXPECT_THROW(read_text("We spend half of the time on the backward pass; data loading is fast.\n"),
               Error);
}

TEST(PastedLogs, TorchBenchsGpuTimeAgainstItsWallTime) {
  // pytorch/benchmark#900 (timm_nfnet) and #1397 (torchrec_dlrm): "GPU Time: 32.600
  // milliseconds" over "CPU Total Wall Time: 32.625 milliseconds", the GPU busy all the step.
  for (const char* name :
       {"throughput_pytorchbenchmark900-timm-nfnet-amp-train-gpu-vs-wall-time.txt",
        "other_pytorch-benchmark1397-torchrec-dlrm-gpu-vs-wall-time.txt"}) {
    const Telemetry t = read_telemetry_files({pasted(name)});
    EXPECT_EQ(t.gpu_time_against_wall.size(), 2u) << name;
    const Diagnosis d = diagnose_telemetry(t);
    EXPECT_EQ(d.verdict, Verdict::kHealthy) << name << ": " << d.summary;
  }
  // Half the wall time on the GPU: the host holds it back, by its input or its launches.
  const Diagnosis half = diagnose_telemetry(
      read_text("GPU Time: 12.0 milliseconds\nCPU Total Wall Time: 24.0 milliseconds\n"));
  EXPECT_EQ(half.verdict, Verdict::kUnknown);
  EXPECT_THAT(half.summary, testing::HasSubstr("only 50 %"));
}

TEST(PastedLogs, CharRnnsTimePerBatch) {
  // char-rnn#215: "2/9500 (epoch 0.011), train_loss = 4.37, grad/param norm = 8.3750e-01,
  // time/batch = 0.1690s": the step's time, its fetch of the batch (if any) inside it, not
  // given apart.
  const Telemetry t =
      read_telemetry_files({pasted("datalog_char-rnn215-time-per-batch-3-layer-lstm-cutoff.txt")});
  ASSERT_FALSE(t.steps.empty());
  EXPECT_NEAR(t.steps[0].step_seconds, 0.7845, 1e-9);
  EXPECT_FALSE(t.steps[0].has_data);
}

TEST(PastedLogs, AnMfuColumnOneConfigurationARow) {
  // FlagPerf#299 (Aquila2-7B on one A800 node): "| 配置 | parallel | ... | MFU |" over rows of
  // 53.0 %, 38.6 % and 28.2 %, one parallelism each: none is a warm-up, so all three count.
  const Telemetry t = read_telemetry_files(
      {pasted("throughput_flagperf299-aquila2-7b-a800-tp-pp-dp-tokens-mfu-cutoff.txt")});
  ASSERT_EQ(t.mfu_configurations.size(), 3u);
  EXPECT_TRUE(t.mfu.empty());
  EXPECT_DOUBLE_EQ(t.mfu_configurations[0].second, 53.0);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("median of 3 configurations"));
  // A bare fraction may be either a share or a percent: not read; nor a column that is no MFU.
  const auto mfus = [](const std::string& text) {
    try {
      const Telemetry r = read_text(text);
      return r.mfu.size() + r.mfu_configurations.size();
    } catch (const Error&) {
      return size_t{0};
    }
  };
  EXPECT_EQ(mfus("| run | tok/s | MFU |\n|---|---|---|\n| a | 1200 | 0.42 |\n"), 0u);
  EXPECT_EQ(mfus("| run | tok/s | MFU (%) |\n|---|---|---|\n| a | 1200 | 42 |\n"), 1u);
  EXPECT_EQ(mfus("| run | tok/s | HFU vs MFU gap |\n|---|---|---|\n| a | 1200 | 12% |\n"), 0u);
  EXPECT_EQ(mfus("| model | Target MFU |\n|---|---|\n| a | 55% |\n| b | 50% |\n"), 0u);
  // A trainer's warm-up stays out beside a table's row; a table of steps is a trainer's lines.
  const Diagnosis mixed = diagnose_telemetry(read_text(
      "step 10 loss 2.1 mfu: 5.0\nstep 20 loss 2.0 mfu: 40.0\nstep 30 loss 1.9 mfu: 41.0\n\n"
      "| run | MFU |\n|---|---|\n| a | 38% |\n"));
  EXPECT_EQ(mixed.verdict, Verdict::kHealthy) << mixed.summary;
  EXPECT_THAT(mixed.summary, testing::HasSubstr("median of 2 lines and 1 configuration"));
  const Telemetry steps =
      read_text("| step | loss | MFU |\n|---|---|---|\n| 10 | 2.1 | 5% |\n| 20 | 2.0 | 40% |\n");
  EXPECT_EQ(steps.mfu.size(), 2u);
  EXPECT_TRUE(steps.mfu_configurations.empty());
}

TEST(PastedLogs, OneCoreAtItsMaxBesideAnIdleGpu) {
  // Stack Overflow 66597669 (a Keras Sequence): "my GPU is only at 10-20% but one of my CPU
  // Cores is at its max": one process does the host's work, and the GPU waits on it.
  const Telemetry t = read_telemetry_files(
      {pasted("other_exampleacom66597669-keras-sequence-gpu-10-20pct-one-core-max.txt")});
  ASSERT_EQ(t.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(t.gpus[0].util, 10);  // the range's low end, in the percent of its high end
  ASSERT_EQ(t.cpus.size(), 1u);
  EXPECT_DOUBLE_EQ(t.cpus[0].busy, 100);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("one core is 100 % busy"));
  EXPECT_TRUE(one_core_said_full("one core at 100% all the time"));
  EXPECT_TRUE(one_core_said_full("A single core is pegged"));
  // A setting, a question or a denial is no look at a saturated core.
  EXPECT_FALSE(one_core_said_full("num_workers=4, one core per worker"));
  EXPECT_FALSE(one_core_said_full("is one core at 100%?"));
  EXPECT_FALSE(one_core_said_full("one core is not at 100%"));
  // The GPU itself at a percentage, not a comparison on it.
  const auto gpu_util = [](const std::string& text) {
    try {
      const Telemetry r = read_text(text);
      return r.gpus.empty() ? -1.0 : r.gpus[0].util;
    } catch (const Error&) {
      return -1.0;
    }
  };
  EXPECT_DOUBLE_EQ(gpu_util("GPU: 45%\n"), 45);
  EXPECT_DOUBLE_EQ(gpu_util("my GPU is at 15% while training\n"), 15);
  EXPECT_DOUBLE_EQ(gpu_util("PyTorch single GPU is ~20% faster than Chainer single GPU\n"), -1);
  EXPECT_DOUBLE_EQ(gpu_util("the GPU is 20% faster than before\n"), -1);
  EXPECT_DOUBLE_EQ(gpu_util("Memory of the GPU is at 95% during training\n"), -1);
  EXPECT_DOUBLE_EQ(gpu_util("My GPU is at 95% of its memory during training\n"), -1);
  EXPECT_DOUBLE_EQ(gpu_util("my GPU is only at 10 to 20% while training\n"), 10);
  EXPECT_FALSE(one_core_said_full("I set torch.set_num_threads so it uses one thread max"));
  EXPECT_FALSE(one_core_said_full("We evaluate on one core for the full validation set"));
  EXPECT_FALSE(one_core_said_full("With num_workers=8 each worker takes one core at 100%"));
}

TEST(PastedLogs, NodesTimesGpusPerNodeAndTheMetricASentenceNames) {
  // horovod#1181: "num of nodes | num of GPU per node | Speed per process (MPI) | Speed total
  // (MPI) | ..." over "2 | 4 | 143.7 +-7.7 | 1149.3 +-61.9", under "(Performance metric: number
  // of processed images per second when training ResNet50 )": 2 nodes of 4 GPUs are 8 GPUs.
  const Telemetry t = read_telemetry_files(
      {pasted("scaling_horovod1181-gloo-controller-nccl-resnet50-nodes-cutoff.txt")});
  const auto at =
      std::find_if(t.runs.begin(), t.runs.end(), [](const RunInfo& r) { return r.gpus == 8; });
  ASSERT_NE(at, t.runs.end());
  EXPECT_EQ(at->nodes, 2);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1 -> 8 GPUs: 189 images/s -> 1149 images/s"));
  // horovod#1120: "Machine Num | Process per Machine | MPI per Process | MPI Total | ..." under
  // "Benchmark with MPI (Matric: processing image per second based on ResNet50)": machines are
  // nodes, a process's rate is per GPU (here per CPU process), bare numbers with their spread.
  const Diagnosis cpu = diagnose_telemetry(
      read_telemetry_files({pasted("scaling_horovod1120-gloo-vs-mpi-cpu-resnet50-machines.txt")}));
  EXPECT_EQ(cpu.verdict, Verdict::kCommunicationBound) << cpu.summary;
  EXPECT_THAT(cpu.summary, testing::HasSubstr("43 % scaling efficiency"));
  // A measure of each node's is no count of its GPUs.
  const Diagnosis util = diagnose_telemetry(read_text(
      "| nodes | GPU util per node | img/s |\n|---|---|---|\n| 1 | 85 | 2750 |\n| 2 | 80 | 5200 "
      "|\n| 4 | 70 | 9600 |\n"));
  EXPECT_THAT(util.summary, testing::HasSubstr("1 -> 4 nodes")) << util.summary;
  // A column of processes in all, not per node, multiplies nothing (llm.c#426's NumProcess).
  const Telemetry total = read_text(
      "| nodes | processes | tokens/s |\n|---|---|---|\n| 1 | 8 | 395 |\n| 2 | 16 | 674 |\n");
  ASSERT_EQ(total.runs.size(), 2u);
  EXPECT_FALSE(total.runs[0].gpus.has_value());
  EXPECT_EQ(total.runs[1].nodes, 2);
}

TEST(PastedLogs, AScalingEfficiencySaidInProseOrAsASpeedupBesideItsIdeal) {
  // Dell's white paper: "PowerEdge C4130 server scales very well within a node with 97%
  // efficiency and 92% across the nodes".
  const Diagnosis dell = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_dell-scaleup-vs-scaleout-c4130-p100-pcie-multinode-97-92.txt")}));
  EXPECT_EQ(dell.verdict, Verdict::kHealthy) << dell.summary;
  EXPECT_THAT(dell.summary, testing::HasSubstr("97 %"));
  // pytorch#74148: "4nodes total 8cards, speed up ratio is 5.46(idea 8)": 68 % of the ideal.
  const Telemetry t =
      read_telemetry_files({pasted("scaling_pytorch74148-powersgd-speedup-ratio-2-3-4-nodes.txt")});
  ASSERT_EQ(t.stated_scaling_efficiency.size(), 3u);
  EXPECT_NEAR(t.stated_scaling_efficiency[2].second, 100 * 5.46 / 8, 1e-9);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kCommunicationBound);
  // A goal, or someone else's figure, is no measurement of the paste's job (horovod#871, #416).
  const auto stated = [](const std::string& text) {
    try {
      return read_text(text).stated_scaling_efficiency.size();
    } catch (const Error&) {
      return size_t{0};
    }
  };
  EXPECT_EQ(stated("we get 90% scaling efficiency on 64 GPUs\n"), 1u);
  EXPECT_EQ(stated("The goal is to get 90% scaling efficiency for more than 160 gpus.\n"), 0u);
  EXPECT_EQ(stated("From the horovod's README.md , horovod achieves 90% scaling efficiency\n"), 0u);
  // A speedup without its ideal says nothing of the scale it was measured against; an ideal
  // that counts no GPUs on the line is a precision's.
  EXPECT_EQ(stated("8 cards: speed up ratio is 5.46\n"), 0u);
  EXPECT_EQ(stated("AMP speedup: 1.3x (ideal 2x) on the same GPU\n"), 0u);
  // Efficiency on a line about loss scaling or image rescaling is no scaling's; an expectation
  // after a measured one is about another figure.
  EXPECT_EQ(stated("With dynamic loss scaling enabled the tensor cores only reach 45% "
                   "efficiency\n"),
            0u);
  EXPECT_EQ(stated("After rescaling the images to 224 px the data loader runs at 60% "
                   "efficiency\n"),
            0u);
  EXPECT_EQ(stated("scaling_efficiency: 62.5% (expected >90% per the paper)\n"), 1u);
  EXPECT_EQ(stated("We only get 60% scaling efficiency on 32 GPUs, much lower than we "
                   "expected\n"),
            1u);
}

TEST(PastedLogs, TheGpusTimeBesideAWaitForDataIsTheRestOfTheStep) {
  // VietOCR#46: "iter: 000200 - train loss: 3.432 - lr: 4.09e-05 - load time: 0.39 - gpu time:
  // 38.92", each over the last 200 iterations: the loader's share is a sliver.
  const Telemetry t = read_telemetry_files(
      {pasted("datalog_vietocr46-load-time-vs-gpu-time-per-200-iters-cutoff.txt")});
  ASSERT_FALSE(t.steps.empty());
  EXPECT_NEAR(t.steps[0].data_seconds, 0.39, 1e-9);
  EXPECT_NEAR(t.steps[0].step_seconds, 0.39 + 38.92, 1e-9);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
  // Alone, a GPU time is no step (TorchBench's "GPU Time: 32.600 milliseconds" is read apart).
  EXPECT_THROW(read_text("iter 10 gpu time: 38.92 loss 0.3\n"), Error);
}

TEST(PastedLogs, ASpeedupOverOneNodeSaidInProse) {
  // MosaicML's post (quoted by Simon Willison): "4 nodes means a 3.9x gain over one node. On 16
  // nodes, it's 14.4x." — 97.5 % and 90 %, the second sentence keeping the first's baseline.
  const Telemetry t = read_telemetry_files(
      {pasted("scaling_simonwillison-lindenli-mosaic-1p3b-multinode-near-linear.txt")});
  ASSERT_EQ(t.stated_scaling_efficiency.size(), 2u);
  EXPECT_NEAR(t.stated_scaling_efficiency[0].second, 97.5, 1e-9);
  EXPECT_NEAR(t.stated_scaling_efficiency[1].second, 90, 1e-9);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
  EXPECT_EQ(speedups_over_one("with 8 GPUs we only get 3x over a single GPU"),
            std::vector<double>{37.5});
  // No baseline, a wished-for speedup, or another unit's baseline: none.
  EXPECT_TRUE(speedups_over_one("8 GPUs give 5.5x").empty());
  EXPECT_TRUE(speedups_over_one("our goal is 7x over one GPU on 8 GPUs").empty());
  EXPECT_TRUE(speedups_over_one("8 GPUs are 40x faster than one CPU core").empty());
  // GPUs counted with an x are no speedup; two scales leave the speedup's unsaid.
  EXPECT_EQ(speedups_over_one("On 4 nodes of 4x V100 each we measured a 3.7x speedup over one "
                              "node"),
            std::vector<double>{92.5});
  EXPECT_TRUE(speedups_over_one("Each of our 4 nodes has 8 GPUs; with 2 nodes we get a 1.9x "
                                "speedup over one node")
                  .empty());
  EXPECT_TRUE(speedups_over_one("On 16 nodes it is 14.4\xc3\x97 over one node").size() == 1);
}

TEST(PastedLogs, AnEpochsFirstStepAfterATestLineIsTheWorkersStart) {
  // TDRG#3: "27 Epoch, 800 Iter, ... Data time: 0.0003, Batch time: 1.0146", then a test's
  // "Data_time: 0.0030 Batch_time: 0.3576", then "28 Epoch, 0 Iter, ... Data time: 2.6412,
  // Batch time: 3.6502": the next epoch's first step waits for its workers; the test's line
  // between counts no step of either epoch.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_tdrg3-data-time-negligible-epoch-start-spike-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  // A count too long to be one is none (no exception out of the verdict).
  std::string huge;
  for (int k = 0; k < 4; ++k) {
    huge += fmt::format(
        "99999999999999999999 Epoch, {} Iter, Data time: 0.0003, Batch time: 1.01\n", 700 + k);
  }
  EXPECT_NO_THROW(diagnose_telemetry(read_text(huge)));
}

TEST(PastedLogs, ACauseThePasteStatesInWordsWhereTheNumbersDecideNothing) {
  // MosaicML's FFCV post: "We are dataloader bottlenecked — the image per second rate is
  // pegged at ~17,800 images/sec": a rate alone decides nothing; the words say what limits it.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_mosaicml-composer-ffcv-8xa100-dataloader-pegged.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, testing::HasSubstr("as the paste says in words"));
  EXPECT_EQ(cause_said_in_words("This caused the training job to be CPU-bottlenecked, at 2650 "
                                "images/sec on ResNet-50"),
            Verdict::kInputBoundCpu);
  EXPECT_EQ(cause_said_in_words("We found the job was I/O bound on the shared NFS volume"),
            Verdict::kIoBound);
  // Asked, doubted, negated, a condition, a tool's label, or two causes: none.
  EXPECT_FALSE(cause_said_in_words("Is my training CPU bound or GPU bound here?"));
  EXPECT_FALSE(cause_said_in_words("I don't think the job is I/O bound at all"));
  EXPECT_FALSE(cause_said_in_words("If your training is input-bound, add more workers"));
  EXPECT_FALSE(cause_said_in_words("I suspect the dataloader is the bottleneck in this run"));
  EXPECT_FALSE(cause_said_in_words("COMPUTE-BOUND"));
  // Gone, before, in general, hedged: not this job now. Two causes in one sentence: none.
  EXPECT_FALSE(
      cause_said_in_words("After switching to FFCV we removed the dataloader bottleneck "
                          "completely and the GPUs are now fully used"));
  EXPECT_FALSE(
      cause_said_in_words("Before we moved the dataset to local NVMe, the job was I/O "
                          "bound on the shared NFS volume for weeks"));
  EXPECT_FALSE(
      cause_said_in_words("In my experience, ResNet-50 training on eight V100 GPUs is "
                          "usually CPU bound with default transforms"));
  EXPECT_FALSE(cause_said_in_words("It is probably I/O bound because the files are small"));
  EXPECT_FALSE(
      cause_said_in_words("On these runs the T4 box is input bound while the A100 box "
                          "is compute bound for the same model"));
  EXPECT_FALSE(
      cause_said_in_words("The first run was CPU bound. The second run was "
                          "communication bound after the change"));
  // Words alone are no telemetry: a paste that measures nothing is still not read.
  EXPECT_THROW(read_text("We are dataloader bottlenecked on this machine, sadly.\n"), Error);
}

TEST(PastedLogs, AUnitSaidInTheNameAndALaunchersLabelBeforeEachLine) {
  // NeMo 2 (NeMo#10675): "... | reduced_train_loss: 10.84 | train_step_timing in s: 0.9765".
  const Telemetry nemo =
      read_telemetry_files({pasted("datalog_nemo10675-nemo2-train-step-timing-cutoff.txt")});
  ASSERT_FALSE(nemo.steps.empty());
  EXPECT_NEAR(nemo.steps[0].step_seconds, 0.9765, 1e-9);
  const auto values = named_values("iter 3 | fwd_time in ms: 12.5");
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[1].name, "fwd_time");
  EXPECT_EQ(values[1].unit, "ms");
  // RCCL#1490: rccl-tests under `srun --label`, every line after "0: ": its all_gather falls to
  // 0.03 GB/s at 2 MB.
  const Diagnosis rccl = diagnose_telemetry(read_telemetry_files(
      {pasted("other_rccl1490-mi250x-4node-all-gather-perf-cliff-cutoff.txt")}));
  EXPECT_EQ(rccl.verdict, Verdict::kCommunicationBound) << rccl.summary;
  EXPECT_THAT(rccl.summary, testing::HasSubstr("0.03 GB/s"));
}

TEST(PastedLogs, ADurationOfAWindowOfStepsIsOneStepsTimeNTimesOver) {
  // DGL-KE (dgl#1178): "1 GPU speed: 32.530 secs / 1000 steps", then 4 and 8 GPUs: per GPU
  // the step slows by half, 64 % scaling efficiency.
  const Diagnosis per = diagnose_telemetry(
      read_telemetry_files({pasted("scaling_dgl1178-kge-complex-mix-cpu-gpu-1-4-8gpu.txt")}));
  EXPECT_EQ(per.verdict, Verdict::kCommunicationBound) << per.summary;
  EXPECT_THAT(per.summary, testing::HasSubstr("64 % scaling efficiency"));
  // dgl#932: each count under its heading, "500 steps take 10.092 seconds".
  const Diagnosis take = diagnose_telemetry(
      read_telemetry_files({pasted("scaling_dgl932-kge-distmult-1-to-8gpu-500-steps-time.txt")}));
  EXPECT_EQ(take.verdict, Verdict::kCommunicationBound) << take.summary;
  EXPECT_THAT(take.summary, testing::HasSubstr("78 % scaling efficiency"));
  for (const char* line : {"500 steps take 12.295 seconds", "41.6 s per 1000 iterations",
                           "100 iterations took 5.2s"}) {
    const auto v = named_values(line);
    ASSERT_EQ(v.size(), 1u) << line;
    EXPECT_EQ(v[0].name, "time_per_batch") << line;
  }
  // A count of something else is no window of steps, and "iter 300 took 4 s" is one step.
  EXPECT_NE(named_values("12 s per 1000 images").back().name, "time_per_batch");
  EXPECT_EQ(named_values("iter 300 took 4 s").at(0).value, 4);
  EXPECT_EQ(named_values("500 steps takes about 10 seconds").at(0).name, "time_per_batch");
  // A named part of the step keeps its name; what is left of a run, an evaluation's time or the
  // data's loading is no step.
  const auto wait = named_values("train: 30.1 s, data_time: 12.3 s per 100 iters");
  ASSERT_EQ(wait.size(), 2u);
  EXPECT_EQ(wait[1].name, "data_time");
  EXPECT_NEAR(wait[1].value, 0.123, 1e-9);
  for (const char* line : {"eta: 3600 s for 20000 iters", "Validation took 90 s for 100 batches",
                           "data loading took 12.3 s for 100 batches"}) {
    for (const NamedValue& v : named_values(line)) EXPECT_NE(v.name, "time_per_batch") << line;
  }
}

TEST(PastedLogs, ATheanoMpiWindowOfImagesIsOneStepWithItsParts) {
  // Theano-MPI#7 on 16 GPUs: "time per 5120 images: 4.89 (train 3.90 comm 0.87 wait 0.12)".
  const Telemetry mpi = read_telemetry_files(
      {pasted("datalog_theano-mpi7-16gpu-time-per-5120-images-train-comm-wait.txt")});
  ASSERT_FALSE(mpi.steps.empty());
  EXPECT_NEAR(mpi.steps[0].step_seconds, 4.89, 1e-9);
  EXPECT_NEAR(mpi.steps[0].data_seconds, 0.12, 1e-9);
  EXPECT_EQ(diagnose_telemetry(mpi).verdict, Verdict::kHealthy);
}

TEST(PastedLogs, AWallClocksOrAnElapsedTimeInSecondsIsTheWholeRuns) {
  // discuss.pytorch 136017: "WALL training time is 63.598 seconds" on one node, 38.594 under
  // "Training with 3 nodes": 55 % scaling efficiency.
  const Diagnosis wall = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_discusspytorch136017-1-vs-3-nodes-t4-ddp-wall-time.txt")}));
  EXPECT_EQ(wall.verdict, Verdict::kCommunicationBound) << wall.summary;
  EXPECT_THAT(wall.summary, testing::HasSubstr("1 -> 3 nodes: 63.6 s -> 38.6 s"));
  // xgboost#8986: "1 GPU train elapse:17.07s", "2 GPU train elapse:31.37s".
  const Diagnosis elapse = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_xgboost8986-dask-1-vs-2-gpu-train-elapse-cutoff.txt")}));
  EXPECT_EQ(elapse.verdict, Verdict::kCommunicationBound) << elapse.summary;
  EXPECT_THAT(elapse.summary, testing::HasSubstr("1 -> 2 GPUs: 17.1 s -> 31.4 s"));
  // Without the wall clock, a time in seconds is as likely a step's: no run.
  EXPECT_TRUE(read_text("The training time is 38.594 seconds\n").rates.empty());
  // A step's wall time, or a wall in another sentence, is no run's.
  EXPECT_TRUE(read_text("Average per-step wall time is 0.42 seconds\n").rates.empty());
  EXPECT_TRUE(read_text("I hit a wall. Step time is 0.5 seconds\n").rates.empty());
  const Telemetry run = read_text("The wall training time is 38.594 seconds\n");
  ASSERT_EQ(run.rates.size(), 1u);
  EXPECT_EQ(run.rates[0].unit, "runs");
}

TEST(PastedLogs, DLLoggersTotalIpsIsTheJobsImagesASecond) {
  // DeepLearningExamples#881: "DLL 2021-03-23 11:48:38.824370 - (0, 120) total_ips :
  // 2879.142978189404", a line a step.
  const Telemetry dll =
      read_telemetry_files({pasted("throughput_dle881-resnet50-tf-2gpu-total-ips-cutoff.txt")});
  ASSERT_FALSE(dll.rates.empty());
  EXPECT_EQ(dll.rates[0].unit, "images");
  EXPECT_NEAR(dll.rates[0].per_second, 2879.142978189404, 1e-6);
  // Read alone, the rate quoted is the lines' median, not the last line the paste cut short
  // ("total_ips : 2").
  EXPECT_THAT(diagnose_telemetry(dll).summary,
              testing::HasSubstr("a rate alone (2888 images/s, the median of 18 lines)"));
  // punctuator2#8: "PPL: 1.7275; Speed: 281.17 sps", samples a second.
  const Telemetry sps = read_telemetry_files(
      {pasted("throughput_punctuator2-8-macbook-cpu-vs-aws-k80-theano-sps-cutoff.txt")});
  ASSERT_FALSE(sps.rates.empty());
  EXPECT_EQ(sps.rates[0].unit, "samples");
  EXPECT_NEAR(sps.rates[0].per_second, 281.17, 1e-9);
  // DyNet#974: "latest: sent/sec: 280.034", sentences a second.
  const Telemetry sent = read_telemetry_files(
      {pasted("throughput_dynet974-autobatch-latest-vs-old-commit-sent-per-sec.txt")});
  ASSERT_FALSE(sent.rates.empty());
  EXPECT_EQ(sent.rates[0].unit, "samples");
  EXPECT_NEAR(sent.rates[0].per_second, 280.034, 1e-9);
  // Evaluation's rate is not training's.
  EXPECT_NE(meaning_of(named_values("DLL 2021-03-23 11:49:00 - (1,) val.total_ips : 9000.1").back())
                .quantity,
            Quantity::kRate);
  // PaddlePaddle's bare "ips" stays with its step times (reader_cost, batch_cost).
  EXPECT_NE(meaning_of(named_values("samples: 512, ips: 191.79578").back()).quantity,
            Quantity::kRate);
}

TEST(PastedLogs, AScaleColumnsHeaderGivesItsUnitInParentheses) {
  // Paddle#18892: "模型 | 单卡(img/s) | 4卡(img/s) | 4卡加速比 | ..." over "resnet(batch_size=64) |
  // 367.6471851 | 683.0106654 | ...", and the same under "单卡(step/s) | 4卡(step/s)" for a
  // Transformer: one card against four, 46 % scaling efficiency in both.
  const Diagnosis paddle = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_paddle18892-dygraph-4card-allreduce-before-after.txt")}));
  EXPECT_EQ(paddle.verdict, Verdict::kCommunicationBound) << paddle.summary;
  EXPECT_THAT(paddle.summary, testing::HasSubstr("46 % scaling efficiency"));
  EXPECT_THAT(paddle.evidence,
              testing::Contains(testing::HasSubstr("1 -> 4 GPUs: 368 images/s -> 683 images/s")));
  // torch-xpu-ops#1623: "single device(tokens/sec) | 2 card(tokens/sec) | 4 card(tokens/sec)":
  // the LoRA row scales worst, 54 % on four cards, as the table's own "4 card scaling" says.
  const Diagnosis xpu = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_torch-xpu-ops1623-torchtune-fsdp2-tokens-per-sec-1-2-4-cards-cutoff.txt")}));
  EXPECT_EQ(xpu.verdict, Verdict::kCommunicationBound) << xpu.summary;
  EXPECT_THAT(xpu.summary, testing::HasSubstr("1 -> 4 GPUs: 1455 tokens/s -> 3128 tokens/s"));
  // A setting in the parentheses is no unit: "8 GPUs (1 node)" stays a scale of its own.
  const Diagnosis setting = diagnose_telemetry(read_text(
      "model | 1 GPU (1 node) | 8 GPUs (1 node)\n-- | -- | --\nresnet | 300 img/s | 2300 img/s\n"));
  EXPECT_THAT(setting.summary, testing::HasSubstr("1 -> 8 GPUs"));
}

TEST(PastedLogs, ATotalTimeBesideAWaitForDataIsTheStep) {
  // FunASR#2006: "{'data_load': '0.000', 'forward_time': '0.304', 'backward_time': '0.323',
  // 'optim_time': '0.148', 'total_time': '0.777'}" on each rank's line.
  const Telemetry funasr =
      read_telemetry_files({pasted("datalog_funasr2006-multinode-rank-step-timing-cutoff.txt")});
  ASSERT_FALSE(funasr.steps.empty());
  EXPECT_NEAR(funasr.steps[0].step_seconds, 0.777, 1e-9);
  EXPECT_EQ(diagnose_telemetry(funasr).verdict, Verdict::kHealthy);
  // Alone, a total time is a profile's or a run's, not a step; beside an epoch's sums
  // (Ray#56433's "total_batch_fetch_time", "total_batches"), an epoch's.
  EXPECT_TRUE(read_text("total_time: 0.777\ntotal_time: 0.781\n").steps.empty());
  EXPECT_TRUE(read_telemetry_files(
                  {pasted("other_ray56433-raytrain-vs-vanilla-epoch-timing-metrics-cutoff.txt")})
                  .steps.empty());
}

TEST(PastedLogs, ATorchProfilersNcclKernelsAreTheGpusTimeExchanging) {
  // pytorch#102434: FSDP across nodes, "ncclKernel_AllGather_RING_LL_Sum_int8_t(...  42.930s
  // 54.65%" of the profile's Self CUDA.
  const Telemetry fsdp = read_telemetry_files(
      {pasted("profiler_pytorch102434-fsdp-multinode-allgather-55pct-cuda-cutoff.txt")});
  ASSERT_EQ(fsdp.phases.size(), 1u);
  EXPECT_TRUE(fsdp.phases[0].gpu_profile);
  EXPECT_NEAR(fsdp.phases[0].communication_seconds, 42.93, 1e-9);
  const Diagnosis d = diagnose_telemetry(fsdp);
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("55 % of their time in NCCL's kernels"));
  // Two tables (a multi-node profile above a single-node one): each is its own whole, the one
  // whose GPUs spend the most in NCCL is kept; "Self CUDA time total:" under a table is its
  // whole, not what a small row's rounded share gives.
  const std::string header =
      "Name  Self CPU %  Self CPU  CPU total %  CPU total  CPU time avg  Self CUDA  Self CUDA %  "
      "CUDA total  CUDA time avg  # of Calls\n";
  const auto row = [](const char* name, const char* self, const char* pct) {
    return fmt::format("{}  0.00%  0.000us  0.00%  1.000us  0.000us  {}  {}  {}  1.000ms  10\n",
                       name, self, pct, self);
  };
  const Telemetry two = read_text(
      header + row("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*...", "40.000s", "40.00%") +
      row("ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*...", "15.000ms", "0.01%") +
      "Self CUDA time total: 100.000s\n\n" + header +
      row("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*...", "20.000s", "20.00%") +
      "Self CUDA time total: 100.000s\n");
  ASSERT_EQ(two.phases.size(), 1u);
  EXPECT_NEAR(two.phases[0].communication_seconds, 40.015, 1e-9);
  EXPECT_NEAR(two.phases[0].compute_seconds, 59.985, 1e-9);
}

TEST(PastedLogs, WhereThePreprocessingRunsIsALoaderSetting) {
  // nanopath#18: "Augmentation | Compile + fused AdamW | Tiles/second", the CPU's augmentations
  // at ~300 tiles/s against the GPU's at ~420 with compiling off; the rows with compiling on
  // changed the compute too and are left out.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_nanopath18-tiles-per-sec-cpu-vs-gpu-augment-compile.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("300 samples/s with preprocessing on the CPU, 420 "
                                            "samples/s with preprocessing on the GPU"));
  EXPECT_EQ(loader_setting_of("using gpu preprocess time(ms/batch)")->label,
            "preprocessing on the GPU");
  EXPECT_EQ(loader_setting_of("using cpu preprocess time(ms/batch)")->label,
            "preprocessing on the CPU");
  EXPECT_FALSE(loader_setting_of("8 GPUs, cpu_count=64").has_value());
  // A device the line names for the training, not for the augmentation, is no such setting.
  EXPECT_FALSE(loader_setting_of("Training on gpu with augmentation: 310 img/s").has_value());
  EXPECT_FALSE(loader_setting_of("1 gpu, no augmentation: 900 img/s").has_value());
  // Rows with the compute change on come first: the rows with it off are compared.
  const Diagnosis amp = diagnose_telemetry(
      read_text("| num_workers | AMP | img/s |\n|---|---|---|\n| 0 | on | 200 |\n"
                "| 8 | on | 210 |\n| 0 | off | 100 |\n| 8 | off | 400 |\n"));
  EXPECT_EQ(amp.verdict, Verdict::kInputBoundCpu) << amp.summary;
  EXPECT_THAT(amp.summary, testing::HasSubstr("100 images/s with num_workers=0, 400 images/s"));
}

TEST(PastedLogs, AHostNameCutShortAtThePastesStartIsTheSameHost) {
  // DPTNet#1: the paste starts mid-name ("ufee:19773" above "lufee:19773"): one machine, no
  // exchange over sockets.
  const Telemetry t =
      read_telemetry_files({pasted("datalog_dptnet1-nccl-init-first-iter-ms-per-batch.txt")});
  EXPECT_FALSE(t.spans_machines);
  EXPECT_NE(diagnose_telemetry(t).verdict, Verdict::kCommunicationBound);
  // Two hosts of their own names span machines, whatever rings the paste shows.
  EXPECT_TRUE(read_text("gpu-node1:11:12 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
                        "gpu-node2:21:22 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>\n"
                        "gpu-node1:11:12 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC\n"
                        "gpu-node2:21:22 [0] NCCL INFO Ring 00 : 2[0] -> 3[1] via P2P/IPC\n")
                  .spans_machines);
}

TEST(PastedLogs, ACountOfExamplesIsNoStep) {
  // open_x_embodiment#79, TFDS's benchmark: "total: 701184 ex" counts examples; it was read as
  // a step of 701184 s.
  const Telemetry t =
      read_text("Examples/sec (First excluded) 187.48 ex/sec (total: 701184 ex, 3739.99 sec)\n");
  EXPECT_TRUE(t.steps.empty());
  const auto v = named_values("(total: 701184 ex, 3739.99 sec)");
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].name, "total");
  EXPECT_EQ(v[0].unit, "ex");
}

TEST(PastedLogs, AStepTimeAmongRatesIsItsInverseAndASeriesReadTwiceIsShownOnce) {
  // accelerate#192's table, its borders restored: tqdm switches to "1.58s/ite" when a step takes
  // over a second, among "1.26ite/s"; Accelerate's 2-GPU run makes 2/1.58 iterations a second.
  const Diagnosis d = diagnose_telemetry(
      read_text("| | #GPU | speed | #Iteration |\n|--|--|--|--|\n"
                "| trainer | 1-GPU | 1.26ite/s | 870 |\n|   | 2-GPU | 1.13ite/s | 435 |\n"
                "| accelerator | 1-GPU | 1.25ite/s | 870 |\n|   | 2-GPU | 1.58s/ite | 435 |\n"));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  ASSERT_TRUE(d.numbers.scaling);
  EXPECT_NEAR(d.numbers.scaling->efficiency, (2 / 1.58) / (2 * 1.25), 1e-9);
  // The trainer's series, read from the rows as lines and as a table, is evidence once.
  EXPECT_EQ(std::count_if(d.evidence.begin(), d.evidence.end(),
                          [](const std::string& e) { return e.starts_with("another series"); }),
            1);
}

TEST(PastedLogs, ALineProfilerTableTimesTheLineThatDrawsABatch) {
  // StyleTTS2#217: kernprof's table of the training loop, "for i, batch in
  // enumerate(train_dataloader):" at 0.3 % of the function's time.
  const Diagnosis tts = diagnose_telemetry(read_telemetry_files(
      {pasted("profiler_styletts2217-line-profiler-train-loop-dataloader-0.3pct-cutoff.txt")}));
  EXPECT_EQ(tts.verdict, Verdict::kHealthy) << tts.summary;
  // With its header: % Time is of "Total time", also for the rows the paste leaves out.
  const Telemetry t = read_text(
      "Timer unit: 1e-06 s\n\nTotal time: 40.5 s\nFunction: train at line 10\n\n"
      "Line #      Hits         Time  Per Hit   % Time  Line Contents\n"
      "==============================================================\n"
      "    10                                           def train(model, loader):\n"
      "    11       201   28350000.0 141044.8     70.0      for x, y in loader:\n"
      "    12       200     400000.0   2000.0      1.0          x = x.cuda()\n"
      "    13       200   11750000.0  58750.0     29.0          step(model, x, y)\n");
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_NEAR(t.steps[0].step_seconds, 40.5, 1e-9);
  EXPECT_NEAR(t.steps[0].data_seconds, 40.5 * 0.7, 1e-9);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kInputBound);
  // A loop over epochs draws no batch.
  EXPECT_TRUE(
      read_text("Line #      Hits         Time  Per Hit   % Time  Line Contents\n"
                "    11         3     500.0    166.7    100.0      for epoch in range(3):\n")
          .steps.empty());
}

TEST(PastedLogs, WhatAReviewOfTheNewReadersFoundReadWrong) {
  // Storage words are whole words: "use_cache" (Hugging Face's), "fused", a detector "SSD300"
  // name no storage; a table of them is no storage comparison.
  for (const char* table :
       {"| setting | tokens/s |\n|---|---|\n| use_cache=True | 30.5 |\n| use_cache=False | 5.2 |\n",
        "| optimizer | samples/s |\n|---|---|\n| fused adam | 150 |\n| unfused adam | 100 |\n",
        "| model | images/s |\n|---|---|\n| SSD300 | 150 |\n| SSD512 | 60 |\n"}) {
    ExpectNothingPlaced(table);
  }
  // The same storage in every row: what changed is the batch, not where the data is read.
  EXPECT_NE(diagnose_telemetry(read_text("| Batch size | Storage | images/s |\n|---|---|---|\n"
                                         "| 64 | NFS | 300 |\n| 256 | NFS | 900 |\n"))
                .verdict,
            Verdict::kIoBound);
  // Long rows stay apart (their labels are not cut).
  EXPECT_EQ(
      diagnose_telemetry(read_text("| Mount options | images/s |\n|---|---|\n| alluxio-fuse with "
                                   "kernel_cache, attr_timeout=7200s, readtype=NO_CACHE | 300 |\n| "
                                   "alluxio-fuse with kernel_cache, attr_timeout=7200s, "
                                   "readtype=CACHE_PROMOTE | 900 |\n"))
          .verdict,
      Verdict::kIoBound);
  // A GPU's 100 % beside idle cores is no busy CPU.
  const Telemetry idle = read_text(
      "Epoch: [0][10/500]  Time 1.20 (1.20)  Data 0.95 (0.95)  Loss 6.9\n"
      "Epoch: [0][20/500]  Time 1.21 (1.20)  Data 0.96 (0.95)  Loss 6.8\n"
      "The GPU jumps between 0 and 100% and all cores of the CPU are almost idle, so the loader "
      "should not be the problem here.\n");
  EXPECT_TRUE(idle.cpus.empty());
  // A blank-headed column of one count in every row is a label: the settings are compared.
  EXPECT_EQ(diagnose_telemetry(read_text("| | num_workers | images/s |\n|---|---|---|\n| 1 GPU "
                                         "| 2 | 300 |\n| 1 GPU | 8 | 900 |\n"))
                .verdict,
            Verdict::kInputBoundCpu);
  // "4 or 8 GPUs" is one clause: the scaling comparison stays.
  EXPECT_EQ(diagnose_telemetry(read_text("It runs at 1000 images/sec on 1 GPU but only 1100 "
                                         "images/sec on 4 or 8 GPUs, whichever of the two I "
                                         "pick for the job.\n"))
                .verdict,
            Verdict::kCommunicationBound);
  // A load average is no wait for data (the CPU's percentages are its use).
  const Telemetry loads = read_text(
      "cpu: 45%, load: 0.2\ncpu: 45%, load: 0.3\ncpu: 95%, load: 7.5\n"
      "cpu: 45%, load: 0.2\ncpu: 45%, load: 0.25\ncpu: 95%, load: 8.1\n");
  EXPECT_TRUE(loads.lone_waits.empty());
  EXPECT_TRUE(loads.steps.empty());
  EXPECT_EQ(loads.cpus.size(), 6u);
}

TEST(LoaderSettings, ATablesWorkerColumnNamedInTheSingularOrWithAHash) {
  // OpenVINO Geti#2213: "dataset | dataset size | num worker | ... | e2e time | iter time" rows
  // at 0 and 2 workers.
  const Diagnosis geti = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_geti2213-seg-num-workers-0-vs-2-iter-and-data-time-table-cutoff.txt")}));
  EXPECT_EQ(geti.verdict, Verdict::kInputBoundCpu) << geti.summary;
  EXPECT_EQ(loader_setting_of("#workers=4")->workers, 4);
  EXPECT_EQ(loader_setting_of("num worker=2, dataset=x")->workers, 2);
}

TEST(PastedLogs, TwoLinesAtAnEpochsStartAndAProcessCountBesideItsThreads) {
  // PYSKL (mmaction2#2758): "[1][20/5961] ... data_time: 1.078" then "[1][40/5961] ...
  // data_time: 0.008": the first interval carries the workers' start.
  const Diagnosis pyskl = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_mmaction2-2758-pyskl-posec3d-baseline-data-time-0-008s-cutoff.txt")}));
  EXPECT_EQ(pyskl.verdict, Verdict::kHealthy) << pyskl.summary;
  // Without counters two lines are two runs (before and after a change): both count.
  const Diagnosis runs = diagnose_telemetry(
      read_text("time: 1.360, data_time: 1.078\ntime: 0.212, data_time: 0.008\n"));
  EXPECT_EQ(runs.verdict, Verdict::kInputBound) << runs.summary;
  // pocket-tts#289: "loader_procs | io_workers | samples/s": the processes are the setting,
  // the I/O threads are not a worker count.
  EXPECT_EQ(loader_setting_of("loader_procs=1, io_workers=16, ")->workers, 1);
  // A progress bar's "2/4000" counts steps, not GPUs ("4000" also names a Quadro).
  EXPECT_FALSE(gpu_count_of("Steps:   0%|   | 2/4000 [00:27<13:28:05, 12.13s/it, ep=0]"));
  EXPECT_EQ(gpu_count_of("trained on 2 RTX 4000"), 2);
  const Diagnosis tts = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_pockettts289-loader-procs-vs-io-threads-samples-per-sec-lustre.txt")}));
  EXPECT_EQ(tts.verdict, Verdict::kInputBoundCpu) << tts.summary;
}

TEST(LoaderSettings, ACaptionSaysWhatATablesBareNumbersAre) {
  // torchdata#492's layout: "**Training time per epoch ...**" above a num_workers table of
  // bare numbers, one column per pipeline.
  const Diagnosis epochs = diagnose_telemetry(read_text(
      "**Training time per epoch on 100k samples.**\n\n| num_workers | (1) IterDataPipe | (2) "
      "MapDataPipe |\n| --- | --- | --- |\n| 0 | 149 | 128 |\n| 4 | 87 | 70 |\n"));
  EXPECT_EQ(epochs.verdict, Verdict::kInputBoundCpu) << epochs.summary;
  EXPECT_NE(epochs.summary.find("149 s with num_workers=0"), std::string::npos) << epochs.summary;
  // SPDL#303's: "**QPS** (the higher, the better)": a rate.
  const Diagnosis qps = diagnose_telemetry(
      read_text("**QPS** (the higher, the better)\n\n| num_workers | PyTorch |\n|---|---|\n| 1 | "
                "265 |\n| 4 | 446 |\n"));
  EXPECT_EQ(qps.verdict, Verdict::kInputBoundCpu) << qps.summary;
  // Without a caption bare numbers say nothing.
  EXPECT_THROW(read_text("| num_workers | PyTorch |\n|---|---|\n| 1 | 265 |\n| 4 | 446 |\n"),
               Error);
}

TEST(PastedLogs, ATableTimingEachRowsWaitAndStep) {
  // DALI#4806: "  | Waiting time | Train time | Iteration time" (a rendered table without its
  // left border) over "PyTorch baseline | 2.713 ± 4.199 | 0.266 ± 0.119 | 2.978 ± 4.217": each
  // row a step line; the step is the largest step column (the iteration: waiting + training).
  const Telemetry dali = read_telemetry_files(
      {pasted("datalog_dali4806-waiting-vs-train-time-num-threads-resnet18.txt")});
  ASSERT_EQ(dali.steps.size(), 5u);
  EXPECT_NEAR(dali.steps[0].data_seconds, 2.713, 1e-9);
  EXPECT_NEAR(dali.steps[0].step_seconds, 2.978, 1e-9);
  EXPECT_EQ(diagnose_telemetry(dali).verdict, Verdict::kInputBound);
  // Rows of ranks are no series of steps.
  EXPECT_THROW(read_text("rank  data_time  step_time\n144  332.459  48.455\n160  0.053  381.009\n"),
               Error);
  // dgl#1531: "12037.3 * 4" is a rate per GPU times the GPUs.
  const Telemetry dgl =
      read_telemetry_files({pasted("scaling_dgl1531-graphsage-unsup-pairs-per-sec-1-4-8-gpu.txt")});
  ASSERT_GE(dgl.rates.size(), 3u);
  EXPECT_NEAR(dgl.rates[1].per_second, 12037.3 * 4, 1e-6);
}

TEST(Scaling, ATableWithItsScalesAsColumns) {
  // stylegan2encoder#16 quotes StyleGAN2's README: "Configuration | Resolution | Total kimg | 1
  // GPU | 2 GPUs | 4 GPUs | 8 GPUs | GPU mem", durations in days and hours: each row a series.
  const Telemetry style = read_telemetry_files(
      {pasted("scaling_stylegan2encoder16-readme-runtime-table-1-2-4-8-v100-cutoff.txt")});
  ASSERT_EQ(style.rates.size(), 24u);  // 6 rows x 4 GPU columns, a run each
  const auto run_of = [](const Telemetry& t, size_t rate) {
    return t.runs[static_cast<size_t>(t.rates[rate].run)];
  };
  EXPECT_EQ(run_of(style, 0).gpus, 1);
  EXPECT_EQ(run_of(style, 3).gpus, 8);
  EXPECT_EQ(run_of(style, 3).group, run_of(style, 0).group);
  EXPECT_NE(run_of(style, 4).group, run_of(style, 0).group);
  EXPECT_NEAR(1 / style.rates[0].per_second, 69 * 86400 + 23 * 3600, 1e-6);  // "69d 23h"
  EXPECT_EQ(style.rates[0].unit, "runs");
  EXPECT_EQ(diagnose_telemetry(style).verdict, Verdict::kHealthy);
  // pytorch_geometric#3398: "| | \# worker=0 | \# worker=8 |" over "| pyg 1.7.2 | ~96s/epoch |
  // ~35s/epoch |": loader settings as columns, an epoch's time in each cell.
  const Telemetry pyg = read_telemetry_files(
      {pasted("throughput_pytorch_geometric3398-schnet-epoch-time-by-workers-and-version.txt")});
  ASSERT_EQ(pyg.rates.size(), 4u);
  EXPECT_EQ(run_of(pyg, 0).loader_setting, "num_workers=0");
  EXPECT_EQ(run_of(pyg, 1).loader_setting, "num_workers=8");
  EXPECT_EQ(pyg.rates[0].unit, "epochs");
  EXPECT_NEAR(1 / pyg.rates[1].per_second, 35, 1e-9);
  EXPECT_EQ(diagnose_telemetry(pyg).verdict, Verdict::kInputBoundCpu);
  // A header of bare numbers is no scale.
  ExpectNothingPlaced("| batch | 1 | 2 |\n|---|---|---|\n| a | 3 s | 4 s |\n");
}

TEST(Scaling, ScalingThatFallsAsTheRunsGetShorterIsAFixedCostPerRun) {
  // fastai forum #43408: 1 and 2 GPUs at batch 4 to 512, epoch times in mm:ss under the GPU
  // columns (the batch counts under the same headers come first): 1.85x at batch 4, 1.24x at
  // 512. An exchange per step would cost less per sample at larger batches; a cost each epoch
  // pays whole does not shrink with GPUs.
  const Telemetry fastai = read_telemetry_files(
      {pasted("scaling_fastai43408-1gpu-vs-2gpu-epoch-time-by-batch-size.txt")});
  ASSERT_EQ(fastai.rates.size(), 16u);                              // 8 batch sizes x 1 and 2 GPUs
  EXPECT_NEAR(1 / fastai.rates[0].per_second, 15 * 60 + 17, 1e-9);  // "15:17", not "12,500"
  const Diagnosis d = diagnose_telemetry(fastai);
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_NE(d.summary.find("92 % where one run takes 917 s, 62 % where it takes 21 s"),
            std::string::npos)
      << d.summary;
}

TEST(PastedLogs, TimerTablesWithTwoClocksAndOneCutShort) {
  // vissl#372: "read_sample:  133.48 ms  134.55 ms" (host and CUDA-event clocks) down to
  // "train_step_total: 952.28 ms"; the second table is cut off mid-row: no step of it.
  const Telemetry t = read_telemetry_files(
      {pasted("profiler_vissl372-simclr-perf-stats-read-sample-133-233ms-of-950ms-cutoff.txt")});
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_NEAR(t.steps[0].data_seconds, 0.13348, 1e-12);
  EXPECT_NEAR(t.steps[0].step_seconds, 0.95228, 1e-12);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
}

TEST(PastedLogs, WaitsBesideAStepTimedApart) {
  // samudra#634: "data_load_time: 47.413" lines under "Typical per-batch time is ~15s".
  const Telemetry spikes = read_telemetry_files(
      {pasted("datalog_samudra634-ocean-emulator-data-load-time-spikes-cutoff.txt")});
  ASSERT_EQ(spikes.lone_waits.size(), 4u);
  ASSERT_EQ(spikes.steps.size(), 1u);
  EXPECT_NEAR(spikes.steps[0].step_seconds, 15, 1e-9);
  const Diagnosis d = diagnose_telemetry(spikes);
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_NE(d.summary.find("4 longer than a whole step"), std::string::npos) << d.summary;
  // snowfall#101: two waits and no step: read, and unknown.
  const Diagnosis alone = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_snowfall101-mmi-avg-time-waiting-for-batch.txt")}));
  EXPECT_EQ(alone.verdict, Verdict::kUnknown);
  EXPECT_NE(alone.summary.find("2 lines, the longest 0.15 s"), std::string::npos) << alone.summary;
}

TEST(PastedLogs, AProgressBarStillAtItsStartWithTheCpusBusy) {
  // udify#1: "0%|   | 0/46617 [00:00<?, ?it/s]" all night, "Cpu usage is 100% for 1 core".
  const Telemetry stuck = read_telemetry_files(
      {pasted("datalog_udify1-allennlp-stuck-0-of-46617-one-core-100pct.txt")});
  ASSERT_TRUE(stuck.first_batch_pending);
  EXPECT_EQ(diagnose_telemetry(stuck).verdict, Verdict::kInputBoundCpu);
  // allennlp#2259: "0/1", and "The cpu is almost 100% occupied." in words.
  const Telemetry lazy = read_telemetry_files(
      {pasted("datalog_allennlp2259-lazy-reader-stuck-training-0-of-1-cpu-100pct.txt")});
  ASSERT_EQ(lazy.cpus.size(), 1u);
  EXPECT_EQ(lazy.cpus[0].busy, 100);
  EXPECT_EQ(diagnose_telemetry(lazy).verdict, Verdict::kInputBoundCpu);
  // A bar that moves on is no wait for the first batch; without a CPU view the bar alone does
  // not say what the loop waits for.
  EXPECT_FALSE(read_text("  0%|   | 0/10 [00:00<?, ?it/s]\n 10%|#  | 1/10 [00:05<00:45, 5.0s/it]\n"
                         "cpu: 100%\n")
                   .first_batch_pending);
  EXPECT_NE(diagnose_telemetry(read_text("  0%|   | 0/10 [00:00<?, ?it/s]\n")).verdict,
            Verdict::kInputBoundCpu);
}

TEST(PastedLogs, WorkerCountsInWordsAndThousandsWithCommas) {
  // decode#210: "Zero workers: about 33 seconds per Epoch" ... "Eight workers: about 136".
  const Telemetry words = read_telemetry_files(
      {pasted("throughput_decode210-windows-workers-0-4-8-epoch-33-80-136s.txt")});
  ASSERT_EQ(words.rates.size(), 3u);
  EXPECT_EQ(words.runs[static_cast<size_t>(words.rates[0].run)].loader_setting, "num_workers=0");
  EXPECT_EQ(words.runs[static_cast<size_t>(words.rates[2].run)].loader_setting, "num_workers=8");
  // pytorch_geometric#8232's tqdm descriptions: "Loading with 8 workers: 100%|...".
  EXPECT_EQ(loader_setting_of("Loading with 8 workers: 100%| 720/720")->workers, 8);
  EXPECT_EQ(loader_setting_of("Loading with 0 workers: 100%| 720/720")->workers, 0);
  // Horovod's workers are machines.
  EXPECT_FALSE(loader_setting_of("with 4 workers on 8 GPUs"));
  EXPECT_FALSE(loader_setting_of("a worker died"));
  // nanochat#147: "tok/sec: 529,882".
  const auto v = named_values("dt: 989.44ms | tok/sec: 529,882 | mfu: 74.13");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[1].value, 529882);
  // Not a number with thousands: a CSV row's fields, a leading zero, a fraction after.
  EXPECT_EQ(named_values("a: 1,200,3").front().value, 1);
  EXPECT_EQ(named_values("a: 0,100").front().value, 0);
  EXPECT_EQ(named_values("a: 12,345.5").front().value, 12);
}

TEST(PastedLogs, AHighMfuIsAGpuThatComputes) {
  // nanochat#147: "mfu: 74.13" on every step line.
  const Telemetry t =
      read_telemetry_files({pasted("datalog_nanochat147-a100-tok-per-sec-mfu-steady-cutoff.txt")});
  EXPECT_EQ(t.mfu.size(), 7u);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kMedium);
  // nanoGPT#466: "mfu 0.96%" says nothing of why.
  EXPECT_NE(diagnose_telemetry(read_text("iter 340: loss 5.4983, time 33785.52ms, mfu 0.96%\n"
                                         "iter 350: loss 5.4702, time 33798.82ms, mfu 0.96%\n"))
                .verdict,
            Verdict::kHealthy);
}

TEST(PastedLogs, ABackwardFarAboveItsForward) {
  // PickScore#9: "Forward Pass: 0.29", "Backward: 3.94" (seconds, said above), in an
  // accelerate job that logs "Sync Gradients happened": the all-reduce inside the backward.
  const Telemetry pick = read_telemetry_files(
      {pasted("datalog_pickscore9-accelerate-backward-3.9s-vs-forward-0.29s-cutoff.txt")});
  ASSERT_EQ(pick.forward_backward.size(), 1u);
  EXPECT_NEAR(pick.forward_backward[0].backward_seconds, 3.9384946823120117, 1e-12);
  EXPECT_TRUE(pick.data_parallel);
  EXPECT_EQ(diagnose_telemetry(pick).verdict, Verdict::kCommunicationBound);
  // learnable-triangulation#137: the same shape, and nothing says the job exchanges gradients:
  // a forward timed without a synchronize is as likely.
  const Diagnosis one = diagnose_telemetry(read_telemetry_files(
      {pasted("other_learnabletriangulation137-forward-loss-backward-times.txt")}));
  EXPECT_EQ(one.verdict, Verdict::kUnknown);
  EXPECT_NE(one.summary.find("synchronize"), std::string::npos) << one.summary;
  // Caffe's per-layer times ("conv1 forward", "conv1 backward", "relu1 forward" on neighbouring
  // lines) are no steps.
  EXPECT_TRUE(read_text("conv1\tforward: 31.2 ms.\nconv1\tbackward: 49.7 ms.\nrelu1\tforward: 2.5 "
                        "ms.\nrelu1\tbackward: 30.6 ms.\ntime: 1.2 s\n")
                  .forward_backward.empty());
}

TEST(Scaling, CountsAsHeadersArrowsBetweenScalesAndModelsTimesTheirCount) {
  // SPDL#303: "| #workers | 1 | 2 | 4 | 8 | 16 | 32 |" under "**QPS** (the higher, the better)":
  // the first header cell says what the bare numbers of the others count.
  const Telemetry spdl = read_telemetry_files(
      {pasted("throughput_spdl303-pytorch-dataloader-qps-ttfb-vs-workers-cutoff.txt")});
  ASSERT_GE(spdl.rates.size(), 12u);
  EXPECT_EQ(spdl.runs[static_cast<size_t>(spdl.rates[5].run)].loader_setting, "num_workers=32");
  EXPECT_NEAR(spdl.rates[5].per_second, 1763.82, 1e-9);
  EXPECT_EQ(diagnose_telemetry(spdl).verdict, Verdict::kInputBoundCpu);
  // tf_cnn_benchmarks#29: "1GPU: 111 im/s -> 4GPU: 432 im/s", then "2x4=8GPU: only 561 im/s".
  const Telemetry tf = read_telemetry_files(
      {pasted("scaling_tfbenchmarks29-resnet50-1-4-8gpu-two-machines-10gbe.txt")});
  ASSERT_EQ(tf.rates.size(), 3u);
  EXPECT_EQ(tf.rates[0].unit, "images");
  EXPECT_EQ(tf.runs[static_cast<size_t>(tf.rates[1].run)].gpus, 4);
  EXPECT_EQ(tf.runs[static_cast<size_t>(tf.rates[2].run)].gpus, 8);
  EXPECT_EQ(diagnose_telemetry(tf).verdict, Verdict::kCommunicationBound);
  // marian-dev#31: words a second as Marian prints them ("4100 w/s") at 1, 2 and 3 GPUs; the
  // last line's 12000 is a wish ("Would be great to get to >12000 w/s on 3 GPUs"), not a run.
  const Telemetry marian = read_telemetry_files(
      {pasted("scaling_mariandev31-async-sgd-1-2-3-titanx-words-per-sec.txt")});
  ASSERT_EQ(marian.rates.size(), 3u);
  EXPECT_EQ(marian.rates[0].unit, "tokens");
  EXPECT_EQ(marian.rates[2].per_second, 9200);
  EXPECT_EQ(marian.runs[static_cast<size_t>(marian.rates[2].run)].gpus, 3);
  const Diagnosis words = diagnose_telemetry(marian);
  EXPECT_EQ(words.verdict, Verdict::kCommunicationBound) << words.summary;
  EXPECT_THAT(words.summary, testing::HasSubstr("75 % scaling efficiency"));
  EXPECT_NE(meaning_of(NamedValue{"", "kw/s", 4100, std::nullopt, 0}).quantity, Quantity::kRate);
  // A wish after a measured rate leaves the rate measured; iostat's w/s are writes.
  const Diagnosis goal = diagnose_telemetry(
      read_text("1 GPU: 400 img/s\n4 GPUs: 900 img/s; our goal is 1500 img/s\n"));
  EXPECT_THAT(goal.summary, testing::HasSubstr("400 images/s -> 900 images/s, 56 %"));
  EXPECT_TRUE(read_text("sda: 350.0 r/s 120.0 w/s, util 30%\n").rates.empty());
  // An arrow between two numbers without GPU counts is no comparison of scales.
  EXPECT_EQ(read_text("loss: 0.5 -> 0.4, 100 img/s\n").runs.size(), 1u);
  // TinyLlama#1: a "GPU" column of "2*RTX4090" and "1*RTX4090", speeds of "1.8k" tokens/s.
  const Telemetry tiny =
      read_telemetry_files({pasted("throughput_tinyllama1-2x4090-ddp-vs-zero2-tokens-per-s.txt")});
  ASSERT_EQ(tiny.rates.size(), 4u);
  EXPECT_EQ(tiny.rates[0].per_second, 1800);
  EXPECT_EQ(tiny.runs[static_cast<size_t>(tiny.rates[3].run)].gpus, 1);
  EXPECT_EQ(diagnose_telemetry(tiny).verdict, Verdict::kCommunicationBound);
}

TEST(PastedLogs, KerasEpochsUnderTheirOwnLineAndAProfileOfSectionShares) {
  // keras#6503: "Epoch 1/50" on its own line above "1464/1464 [====] - 3943s", then 239 s:
  // the first epoch read the files from disk.
  const Diagnosis cold = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_keras6503-first-epoch-3943s-then-240s-flow-from-directory-png.txt")}));
  EXPECT_EQ(cold.verdict, Verdict::kIoBound) << cold.summary;
  EXPECT_NE(cold.summary.find("16.4x"), std::string::npos) << cold.summary;
  // Steps of one epoch under one "Epoch 1/50" are no epochs.
  EXPECT_NE(diagnose_telemetry(read_text("Epoch 1/50\n10/30 [==>...] - 9s\nEpoch 1/50\n20/30 "
                                         "[====>..] - 1s\nEpoch 1/50\n30/30 [=======] - 1s\n"))
                .verdict,
            Verdict::kIoBound);
  // Blocks' timing (taxi#2): "## Section  Time  % of total" over "Read data  41.36  84.89%".
  const Telemetry blocks = read_telemetry_files(
      {pasted("profiler_taxi2-blocks-timing-read-data-85pct-train-10pct-cutoff.txt")});
  ASSERT_EQ(blocks.steps.size(), 1u);
  EXPECT_NEAR(blocks.steps[0].data_seconds / blocks.steps[0].step_seconds, 0.8489, 1e-9);
  EXPECT_EQ(diagnose_telemetry(blocks).verdict, Verdict::kInputBound);
}

TEST(PastedLogs, AStepBesideItsWaitAndTheirSumOnOneLine) {
  // GCL#3: "Data time: 20.3755, Train time: 2.3035, Iter time: 22.6790": a wait named as one,
  // so "Iter time" is no ESPnet wait but the whole step (the wait and the training together).
  const Telemetry gcl =
      read_telemetry_files({pasted("datalog_gcl3-kitti-registration-data-time-dominates.txt")});
  ASSERT_EQ(gcl.steps.size(), 2u);
  EXPECT_NEAR(gcl.steps[0].data_seconds, 20.3755, 1e-12);
  EXPECT_NEAR(gcl.steps[0].step_seconds, 22.6790, 1e-12);
  EXPECT_EQ(diagnose_telemetry(gcl).verdict, Verdict::kInputBound);
  // ESPnet's own line stays as it was: iter_time is its wait beside train_time.
  const Telemetry espnet = read_text("iter_time=0.01, train_time=0.5\n");
  ASSERT_EQ(espnet.steps.size(), 1u);
  EXPECT_NEAR(espnet.steps[0].data_seconds, 0.01, 1e-12);
  EXPECT_NEAR(espnet.steps[0].step_seconds, 0.5, 1e-12);
  // pytracking (mmtrack#5): "DataTime: 2.217 (0.097) , ForwardTime: 0.762 , TotalTime: 3.076".
  const Telemetry track =
      read_telemetry_files({pasted("datalog_mmtrack5-tracking-datatime-dominates.txt")});
  ASSERT_EQ(track.steps.size(), 2u);
  EXPECT_NEAR(track.steps[0].step_seconds, 3.076, 1e-12);
  EXPECT_NEAR(track.steps[0].data_seconds, 2.217, 1e-12);
}

TEST(Scaling, KerasEpochLinesAtVerboseTwoUnderTheirLaunchers) {
  // KungFu#248: "kungfu-run -np 1 ..." then "[host::stdout]  - 2s - loss: 0.3730 - ...", and
  // "-np 2" with "- 22s - loss": two runs, an epoch's time each.
  // Each run's sentence says it too ("it take 22s for one epoch"): two epochs' times a run.
  const Telemetry t = read_telemetry_files(
      {pasted("datalog_kungfu248-keras-mnist-epoch-2s-single-vs-22s-two-nodes.txt")});
  ASSERT_EQ(t.rates.size(), 4u);
  EXPECT_EQ(t.rates[0].unit, "epochs");
  EXPECT_NEAR(1 / t.rates[1].per_second, 2, 1e-9);
  EXPECT_NEAR(1 / t.rates[2].per_second, 22, 1e-9);
  EXPECT_EQ(t.runs[static_cast<size_t>(t.rates[2].run)].gpus, 2);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kCommunicationBound);
  // A dash-separated line without a loss is no epoch: a duration no rule places.
  const Telemetry release = read_text("release - 2s - done\n");
  EXPECT_TRUE(release.rates.empty());
  EXPECT_TRUE(release.steps.empty());
  EXPECT_EQ(release.unplaced.size(), 1u);
}

TEST(PastedLogs, WhatASecondReviewFoundReadWrong) {
  // A new epoch's bar at 0 after the first epoch ran is no first batch.
  EXPECT_NE(diagnose_telemetry(read_text("Epoch 1: 100%|####| 500/500 [03:25<00:00,  2.44it/s]\n"
                                         "Epoch 2:   0%|    | 0/500 [00:00<?, ?it/s]\nCPU: 100%\n"))
                .verdict,
            Verdict::kInputBoundCpu);
  // A parameter server's or Horovod's "2 workers: 400 images/sec" are machines.
  EXPECT_FALSE(loader_setting_of("2 workers: 400 images/sec"));
  // One load beside the steps is a checkpoint's, not a series of waits.
  EXPECT_EQ(
      diagnose_telemetry(
          read_text("Epoch 1:  20%|##   | 200/1000 [01:22<05:28,  2.43it/s]\nEpoch 1:  40%|## "
                    "  | 400/1000 [02:44<04:06,  2.43it/s]\nSaving checkpoint... save_time: "
                    "3.1s, load_time: 2.5s\n"))
          .verdict,
      Verdict::kUnknown);
  // A list of per-GPU rates, and a CSV row, are no thousands.
  EXPECT_EQ(named_values("throughput per GPU (img/s): 310,305,298,301").front().value, 310);
  EXPECT_EQ(named_values("100,512").front().value, 100);
  // "train_ddpm.py" names no DDP job.
  EXPECT_FALSE(
      read_text("python train_ddpm.py\nforward: 0.041 s, backward: 0.352 s\n").data_parallel);
  // Forward and backward on each iteration's line are steps, not Caffe's layers.
  const Telemetry each = read_text(
      "Using DistributedDataParallel on 4 GPUs\niter 100 | forward: 0.041 s | backward: 0.352 "
      "s\niter 110 | forward: 0.040 s | backward: 0.349 s\n");
  EXPECT_EQ(each.forward_backward.size(), 2u);
  EXPECT_EQ(diagnose_telemetry(each).verdict, Verdict::kCommunicationBound);
  // Keras' first epoch traces its graph: 1.5 s more over 100 steps is no cold page cache.
  EXPECT_NE(diagnose_telemetry(
                read_text("Epoch 1/5\n100/100 [=====] - 4s 21ms/step - loss: 1.2986\nEpoch 2/5\n"
                          "100/100 [=====] - 1s 6ms/step - loss: 0.6420\nEpoch 3/5\n100/100 "
                          "[=====] - 1s 6ms/step - loss: 0.4420\n"))
                .verdict,
            Verdict::kIoBound);
  // "size=1920x1080" counts no GPUs.
  EXPECT_FALSE(gpu_count_of("size=1920x1080, throughput: 40 img/s"));
  // nanoGPT's warm-up "mfu -100.00%" is no reading.
  EXPECT_EQ(read_text("iter 0: loss 10.98, time 12045.32ms, mfu -100.00%\n").mfu.size(), 0u);
  // A setup row under a caption is no measure; "25.6M" is no duration.
  const Telemetry setup = read_text(
      "Training throughput (images/s), higher is better:\n\n| | 1 GPU | 8 GPUs |\n|---|---|---|\n"
      "| ResNet-50 | 390 | 2950 |\n| batch size per GPU | 256 | 256 |\n");
  EXPECT_EQ(setup.rates.size(), 2u);
  EXPECT_THROW(read_text("| Model | 1 GPU | 4 GPUs |\n|---|---|---|\n| params | 25.6M | 25.6M |\n"),
               Error);
  // "| GPUs | 1 | 2 | 4 |": the first cell says what the others count.
  const Diagnosis gpus =
      diagnose_telemetry(read_text("| GPUs | 1 | 2 | 4 |\n|---|---|---|---|\n| ResNet-50 | 400 "
                                   "img/s | 780 img/s | 1100 img/s |\n"));
  EXPECT_NE(gpus.summary.find("1 -> 4 GPUs: 400 images/s -> 1100 images/s"), std::string::npos)
      << gpus.summary;
}

TEST(PastedLogs, ValuesBeforeTheirNamesAndACounterNamedBeforeADuration) {
  // tinygrad#2172: "56.88 ms run,  55.70 ms python,  64.61 ms fetch data, ...": each value
  // before its name; the fetch, timed apart from the run, is above it: the step is the two.
  const Telemetry tiny = read_telemetry_files(
      {pasted("datalog_tinygrad2172-resnet-a100-bs16-run-57ms-fetch-data-65ms.txt")});
  ASSERT_EQ(tiny.steps.size(), 1u);
  EXPECT_NEAR(tiny.steps[0].data_seconds, 0.06461, 1e-12);
  EXPECT_NEAR(tiny.steps[0].step_seconds, 0.05688 + 0.06461, 1e-12);
  EXPECT_EQ(diagnose_telemetry(tiny).verdict, Verdict::kInputBound);
  // tinygrad's own layout behind a step counter; a list of counts is no such line.
  const auto values = named_values("  12   30.10 ms run,   2.00 ms python,   1.50 ms fetch data");
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(values[0].name, "step_time");
  EXPECT_EQ(values[2].name, "fetch_data");
  EXPECT_NE(named_values("3 GPUs, 2 nodes, 8 workers").front().name, "gpus");
  // A bare number's wait ("data 0.9") above its step stays a column that is no wait.
  EXPECT_FALSE(read_text("time 0.1 data 0.9\ntime 0.1 data 0.8\n").steps[0].has_data);
  // SparK#8: "iter: 14.7154s  data: 0.0002s": "iter" with a unit is the step.
  const Telemetry spark = read_telemetry_files(
      {pasted("datalog_spark8-maintainer-32xa100-resnet50-pretrain-log-data-0-0002s-cutoff.txt")});
  ASSERT_EQ(spark.steps.size(), 1u);
  EXPECT_NEAR(spark.steps[0].step_seconds, 14.7154, 1e-12);
  EXPECT_EQ(read_text("iter: 12, loss: 0.5\ntime: 0.3s data: 0.01s\n").steps[0].step_seconds, 0.3);
}

TEST(Scaling, RunsSideBySideInARowAndSyntheticDataThatScales) {
  // fairseq#2487: "K80 GPU (8 GPUs on single node | 3h 23 mins | K80 (16 GPUS across nodes) |
  // 2h 52 mins | 30 mins speed gain": each row two runs, a series of its own.
  const Telemetry fairseq = read_telemetry_files(
      {pasted("scaling_fairseq2487-nmt-training-time-1-node-vs-2-nodes-cutoff.txt")});
  ASSERT_EQ(fairseq.rates.size(), 6u);
  EXPECT_EQ(fairseq.runs[static_cast<size_t>(fairseq.rates[1].run)].gpus, 16);
  EXPECT_NEAR(1 / fairseq.rates[2].per_second, 3600 + 20 * 60, 1e-6);
  const Diagnosis d = diagnose_telemetry(fairseq);
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound);
  EXPECT_NEAR(d.numbers.scaling->efficiency, 4800.0 / (2 * 5760), 1e-9);
  // mxnet#7813: "With 2 GPU, Time-cost : 924 sec" per epoch, and "with synthetic data i see
  // good scalability": the real data's loading is what does not scale.
  const Telemetry mxnet = read_telemetry_files(
      {pasted("scaling_mxnet7813-alexnet-imagenet-epoch-time-1-2-4-gpus.txt")});
  ASSERT_EQ(mxnet.rates.size(), 3u);
  EXPECT_EQ(mxnet.rates[0].unit, "epochs");
  EXPECT_TRUE(mxnet.synthetic_scales);
  EXPECT_EQ(diagnose_telemetry(mxnet).verdict, Verdict::kInputBound);
  // Synthetic data that does not scale either labels the runs as before.
  const std::string runs = "With 1 GPU, Time-cost : 910 sec\nWith 4 GPU, Time-cost : 964 sec\n";
  EXPECT_FALSE(
      read_text(runs + "with synthetic data it doesn't scale well either\n").synthetic_scales);
  EXPECT_EQ(diagnose_telemetry(read_text(runs + "with synthetic data, the same.\n")).verdict,
            Verdict::kCommunicationBound);
}

TEST(PastedLogs, DistDglsSamplingAndDataParallelsFunnelInOneLook) {
  // DGL#3000: "Epoch Time(s): 8.7029, sample+data_copy: 6.0583, forward: 1.2792, ...".
  const Telemetry dgl = read_telemetry_files(
      {pasted("datalog_dgl3000-distdgl-epoch-time-sample-data-copy-per-part-cutoff.txt")});
  ASSERT_FALSE(dgl.steps.empty());
  EXPECT_NEAR(dgl.steps[0].data_seconds, 6.0583, 1e-12);
  EXPECT_NEAR(dgl.steps[0].step_seconds, 8.7029, 1e-12);
  EXPECT_EQ(diagnose_telemetry(dgl).verdict, Verdict::kInputBound);
  // BERT-pytorch#44: GPU 0 at 10296 MiB, the others at 2742 MiB, all under a third busy.
  const Diagnosis funnel = diagnose_telemetry(
      read_telemetry_files({pasted("nvsmi_bert-pytorch44-8xv100-low-util-gpu0-heavy-cutoff.txt")}));
  EXPECT_EQ(funnel.verdict, Verdict::kRankImbalance);
  EXPECT_EQ(funnel.confidence, Confidence::kLow);
  EXPECT_NE(funnel.summary.find("DataParallel"), std::string::npos);
}

TEST(PastedLogs, CaffesMultiGpuQueueWaitingForData) {
  // caffe#3264: "blocking_queue.cpp:50] Waiting for data", line after line, under -gpu all.
  const Telemetry t = read_telemetry_files({pasted(
      "datalog_caffe3264-caffenet-2x-titanx-waiting-for-data-1gpu-6s-per-20-iters-cutoff.txt")});
  EXPECT_EQ(t.loader_warnings.size(), 6u);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kInputBound);
  // The words alone, from any other source, are no Caffe queue.
  EXPECT_THROW(read_text("Waiting for data\n"), Error);
}

TEST(PastedLogs, BasicSrsTimeAndDataAListUnderItsRateAndALoadersTimingPerWorkerCount) {
  // DAT#74 (BasicSR): "time (data): 1.970 (0.708)" is the step and its wait, no average.
  const Telemetry basicsr = read_telemetry_files(
      {pasted("datalog_dat74-basicsr-2gpu-time-data-1.97-0.70-eta-10days.txt")});
  ASSERT_EQ(basicsr.steps.size(), 2u);
  EXPECT_NEAR(basicsr.steps[0].step_seconds, 1.970, 1e-12);
  EXPECT_NEAR(basicsr.steps[0].data_seconds, 0.708, 1e-12);
  EXPECT_EQ(diagnose_telemetry(basicsr).verdict, Verdict::kInputBound);
  // A plain "Time 0.154 (8.010)" keeps its running average.
  EXPECT_TRUE(named_values("Time 0.154 (8.010)").front().average.has_value());
  // benchmarks#359: "Total images/sec result:" above "1 GPU : 3861.48" ... "8 GPU : 2811.72".
  const Telemetry listed =
      read_telemetry_files({pasted("scaling_benchmarks359-alexnet-realdata-1to8-v100-cutoff.txt")});
  ASSERT_EQ(listed.rates.size(), 8u);
  EXPECT_EQ(listed.rates[0].unit, "images");
  EXPECT_TRUE(listed.rates[7].total);
  EXPECT_EQ(listed.runs[static_cast<size_t>(listed.rates[7].run)].gpus, 8);
  EXPECT_NEAR(listed.rates[7].per_second, 2811.72, 1e-9);
  // The list ends at a line that is not one of it.
  EXPECT_EQ(
      read_text("Total images/sec:\n1 GPU : 100\n2 GPU : 190\nloss: 3\n3 GPU : 250\n").rates.size(),
      2u);
  // pytorch#123439: "workers=4: 0.46s" under "numpy=True": the loader timed per setting.
  const Diagnosis loader = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_pytorch123439-dataloader-workers-timing-v222-vs-v201.txt")}));
  EXPECT_EQ(loader.verdict, Verdict::kInputBoundCpu);
}

TEST(Scaling, CountsWithANoteGluedOnAndWorkersThatAreMachines) {
  // tensorpack#1254: "16GPUs(2 nodes): 41 images/s", "32GPUs(4nodes): 80 images/s".
  std::optional<int> nodes;
  EXPECT_EQ(gpu_count_of("16GPUs(2 nodes): 41 images/s", &nodes), 16);
  EXPECT_EQ(nodes, 2);
  nodes.reset();
  EXPECT_EQ(gpu_count_of("32GPUs(4nodes): 80 images/s", &nodes), 32);
  EXPECT_EQ(nodes, 4);
  EXPECT_EQ(gpu_count_of("Total img/sec on 8 GPU(s): 2320.6"), 8);
  EXPECT_EQ(gpu_count_of("DataParallel(two GPUs): 24s/epoch 86.1@15epochs"), 2);
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_tensorpack1254-fasterrcnn-horovod-1to32gpu-images-per-sec.txt")}));
  ASSERT_TRUE(d.numbers.scaling.has_value());
  EXPECT_NEAR(d.numbers.scaling->efficiency, (80.0 / 32) / 5, 1e-9);
  // tensorflow#37913: "strategy | workers | gpus per worker | time per 100 iters": parameter
  // servers' workers are machines, no loader setting.
  const Telemetry ps = read_telemetry_files(
      {pasted("scaling_tensorflow37913-ps-vs-mirrored-workers-gpus-time-per-100-iters.txt")});
  EXPECT_TRUE(std::none_of(ps.runs.begin(), ps.runs.end(),
                           [](const RunInfo& r) { return !r.loader_setting.empty(); }));
  EXPECT_NE(diagnose_telemetry(ps).verdict, Verdict::kInputBoundCpu);
}

TEST(PastedLogs, WhatThisSessionsReviewFoundReadWrong) {
  // An expectation of synthetic data is no statement that it scaled: the runs are synthetic.
  EXPECT_EQ(diagnose_telemetry(
                read_text("I run tf_cnn_benchmarks with synthetic data and expected linear "
                          "scaling on our 4-GPU box, but it does the opposite:\n"
                          "1 GPU: total images/sec: 1180.5\n4 GPUs: total images/sec: 1410.2\n"))
                .verdict,
            Verdict::kCommunicationBound);
  // A heading's "per GPU" goes with its list.
  const Diagnosis per_gpu = diagnose_telemetry(read_text(
      "images/sec per GPU:\n1 GPU : 385.2\n2 GPU : 380.1\n4 GPU : 371.9\n8 GPU : 362.4\n"));
  EXPECT_EQ(per_gpu.verdict, Verdict::kHealthy);
  // Cells naming different jobs side by side are no scaling: their hours are measurements no
  // rule places.
  ExpectNothingPlaced(
      "| Model | Time | Model | Time |\n|---|---|---|---|\n"
      "| ResNet-50 (8 GPUs) | 6h 10 mins | BERT-large (16 GPUs) | 52h |\n"
      "| ViT-B/16 (8 GPUs) | 11h | GPT-2 medium (32 GPUs) | 70h |\n");
  // Workers that are machines (parameter servers, Ray Train's ScalingConfig): no loader's.
  ExpectNothingPlaced(
      "workers=1: 120s\nworkers=8: 240s\nEach worker is a separate machine "
      "with 1 V100.\n");
  ExpectNothingPlaced(
      "TorchTrainer with ScalingConfig(num_workers=N, use_gpu=True)\nnum_workers=1: 410s\n"
      "num_workers=4: 388s\n");
  // An idle or hung job is no funnel, whatever GPU 0 holds.
  const std::string idle =
      "|===============================+======================+======================|\n"
      "|   0  NVIDIA GeForce ...  Off  | 00000000:1A:00.0 Off |                  N/A |\n"
      "| 30%   41C    P2    72W / 350W |  19876MiB / 24268MiB |      0%      Default |\n"
      "+-------------------------------+----------------------+----------------------+\n"
      "|   1  NVIDIA GeForce ...  Off  | 00000000:68:00.0 Off |                  N/A |\n"
      "| 30%   39C    P2    70W / 350W |   9870MiB / 24268MiB |      0%      Default |\n"
      "+-------------------------------+----------------------+----------------------+\n";
  EXPECT_EQ(diagnose_telemetry(read_text(idle)).verdict, Verdict::kUnknown);
  // Caffe's one "Waiting for data" at the start is the queue filling.
  EXPECT_THROW(read_text("I0817 10:24:30.350  4330 blocking_queue.cpp:50] Waiting for data\n"
                         "I0817 10:24:31.912  4321 solver.cpp:228] Iteration 0, loss = 6.91124\n"),
               Error);
  // An iteration's "time cost" is no epoch's.
  const Diagnosis cost = diagnose_telemetry(
      read_text("1 GPU, iteration time cost: 0.21s\n4 GPU, iteration time cost: 0.65s\n"));
  EXPECT_EQ(cost.verdict, Verdict::kUnknown);
  EXPECT_FALSE(cost.numbers.scaling.has_value());
  // "4 GPUs(per node)" counts per node: the runs are by node count.
  const Diagnosis nodes = diagnose_telemetry(
      read_text("2 nodes x 4 GPUs(per node): 4100 img/sec\n1 node x 4 GPUs(per node): 2300 "
                "img/sec\n"));
  ASSERT_TRUE(nodes.numbers.scaling.has_value());
  EXPECT_EQ(nodes.numbers.scaling->scale_unit, "nodes");
  // A unit without a name is no part of tinygrad's line.
  for (const NamedValue& v : named_values("12 ms, 30 ms run, 2 ms fetch data")) {
    EXPECT_NE(v.name, "ms");
    EXPECT_NE(v.name, "step_time");
  }
}

TEST(PastedLogs, TensorFlowsLoggingHookTimesTheStepsSinceItsLastLine) {
  // "loss = 2.30294, step = 15 (1.941 sec)": no step of 15 s averaging 1.941, but the time of
  // the steps since the line before.
  const auto values = named_values("INFO:tensorflow:loss = 2.30294, step = 15 (1.941 sec)");
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(values[1].name, "step_counter");
  EXPECT_EQ(values[2].name, "interval_time");
  EXPECT_NEAR(values[2].value, 1.941, 1e-12);
  // Horovod#372: np=1 logs every 10 steps in ~0.075 s, np=2 in ~0.385 s (each rank prints).
  const Telemetry t =
      read_telemetry_files({pasted("scaling_horovod372-tf-mnist-step-time-np1-vs-np2.txt")});
  ASSERT_FALSE(t.steps.empty());
  EXPECT_NEAR(t.steps[0].step_seconds, 0.072 / 10, 1e-12);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kCommunicationBound);
  // Horovod#92: every line the same counter; the hook's every_n_iter=200 says the steps.
  const Telemetry h = read_telemetry_files(
      {pasted("datalog_horovod92-tf-loggingtensorhook-sec-per-200-steps.txt")});
  ASSERT_FALSE(h.steps.empty());
  EXPECT_NEAR(h.steps[0].step_seconds, 1185.455 / 200, 1e-9);
}

TEST(Scaling, StepTimesThatFallWithTheGpusDivideTheSameWork) {
  // NeMo-RL#888: "2 nodes -> ~40 s/step" ... "64 nodes -> ~6-8 s/step": the step's work is
  // divided among the nodes (a fixed global batch), so each step is the same work: 2 -> 64
  // nodes keeps 40 * 2 / (7 * 64) of the rate per node, not 5x of it.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("scaling_nemorl888-sft-step-time-2-to-64-nodes.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound);
  ASSERT_TRUE(d.numbers.scaling.has_value());
  EXPECT_LT(d.numbers.scaling->efficiency, 0.3);
  // Step times that hold or grow keep the batch per GPU: the rate is the GPUs over the step.
  const Diagnosis weak =
      diagnose_telemetry(read_text("1 GPU: step time 0.50 s\n4 GPUs: step time 0.52 s\n"));
  ASSERT_TRUE(weak.numbers.scaling.has_value());
  EXPECT_NEAR(weak.numbers.scaling->efficiency, 0.50 / 0.52, 1e-9);
}

TEST(Scaling, HorovodsProcessCountAndARunsDurationAsAClock) {
  // Horovod#3785: "with horovod, np = 2, batch_size = 32 * 2" above "duration:  0:02:13.352439".
  EXPECT_EQ(gpu_count_of(" 3. with horovod, np = 2, batch_size = 32 * 2"), 2);
  const Telemetry t =
      read_telemetry_files({pasted("scaling_horovod3785-mnist-duration-np1-2-4.txt")});
  ASSERT_GE(t.rates.size(), 3u);
  EXPECT_NEAR(1 / t.rates.back().per_second, 2 * 60 + 42.104210, 1e-6);
  EXPECT_EQ(t.runs[static_cast<size_t>(t.rates.back().run)].gpus, 4);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kCommunicationBound);
  // A duration in seconds alone is still a step's, not a run's.
  EXPECT_THROW(read_text("duration: 12.5\n"), Error);
}

TEST(PastedLogs, WhatThisSessionsSecondReviewFoundReadWrong) {
  // Two scales whose step falls are as likely a warm-up or a changed batch: read as stated.
  const Diagnosis two = diagnose_telemetry(
      read_text("Per-GPU batch size is fixed at 64.\n1 GPU: 0.62 s/step\n8 GPUs: 0.45 s/step\n"));
  EXPECT_EQ(two.verdict, Verdict::kHealthy);
  // A heading's "per GPU" names the rate's, not any per-GPU word on it.
  EXPECT_EQ(diagnose_telemetry(read_text("images/sec, same batch per GPU:\n1 GPU : 385\n"
                                         "2 GPU : 520\n4 GPU : 802\n8 GPU : 1204\n"))
                .verdict,
            Verdict::kCommunicationBound);
  // Caffe's startup wait in each of two runs is no loader that lags.
  EXPECT_THROW(read_text("I0817 10:24:30.101  4321 solver.cpp:279] Solving CaffeNet\n"
                         "I0817 10:24:30.350  4330 blocking_queue.cpp:50] Waiting for data\n"
                         "I0817 10:24:31.912  4321 solver.cpp:228] Iteration 0, loss = 6.9\n"
                         "I0817 11:24:30.101  4321 solver.cpp:279] Solving CaffeNet\n"
                         "I0817 11:24:30.350  4330 blocking_queue.cpp:50] Waiting for data\n"
                         "I0817 11:24:31.912  4321 solver.cpp:228] Iteration 0, loss = 6.9\n"),
               Error);
  // TensorFlow's hook across two excerpts: the jump between them times no steps.
  const Telemetry tf = read_text(
      "1 GPU run:\nINFO:tensorflow:loss = 0.31, step = 1100 (2.000 sec)\n"
      "INFO:tensorflow:loss = 0.29, step = 1200 (2.000 sec)\n8 GPU run:\n"
      "INFO:tensorflow:loss = 0.33, step = 5100 (2.300 sec)\n"
      "INFO:tensorflow:loss = 0.30, step = 5200 (2.300 sec)\n");
  ASSERT_EQ(tf.steps.size(), 2u);
  EXPECT_NEAR(tf.steps[1].step_seconds, 0.023, 1e-12);
  // "Iteration 100 (25.1 s)" is as often a cumulative clock: not the hook's.
  EXPECT_THROW(read_text("Iteration 100 (25.1 s)\nIteration 200 (50.3 s)\n"), Error);
  // "scales as expected" says it scaled; "I suppose" labels no run synthetic.
  EXPECT_EQ(diagnose_telemetry(read_text("1 GPU: total images/sec: 1180.5\n"
                                         "8 GPUs: total images/sec: 3410.2\n"
                                         "With synthetic data the same model scales as "
                                         "expected (7.6x).\n"))
                .verdict,
            Verdict::kInputBound);
}

TEST(Vocabulary, VerlsStepIsTheSumOfItsTimedPhases) {
  // verl#1208: "timing_s/gen:74.020 - ... - timing_s/update_actor:14.302 -
  // timing_s/step:96.551": generation is most of the step; nothing is left for a wait.
  const Telemetry t = read_telemetry_files(
      {pasted("datalog_verl1208-grpo-step-timing-gen-dominates-gh200-cutoff.txt")});
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_NEAR(t.steps[0].step_seconds, 96.551, 1e-9);
  EXPECT_TRUE(t.steps[0].data_upper_bound);
  EXPECT_NEAR(t.steps[0].data_seconds, 96.551 - (74.020 + 3.566 + 3.420 + 1.167 + 14.302), 1e-9);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kHealthy);
  // Phases that explain little of the step bound nothing: the rest may be an untimed backward.
  const Telemetry few =
      read_text("time: 1.00, forward_time: 0.10s\ntime: 1.02, forward_time: 0.11s\n");
  ASSERT_EQ(few.steps.size(), 2u);
  EXPECT_FALSE(few.steps[0].has_data);
  // verl's per-token timers are not the step's phases.
  EXPECT_EQ(meaning_of(NamedValue{"timing_per_token_ms/gen", "", 0.05, std::nullopt, 0}).quantity,
            Quantity::kNone);
}

TEST(Vocabulary, TheLoaderTimedAloneAgainstTheModelItFeeds) {
  // modern-yolonas#40: "`T_loader` 383 img/s against `T_model` 41 img/s".
  const Diagnosis yolo = diagnose_telemetry(read_telemetry_files(
      {pasted("profiler_modernyolonas40-loader-383-vs-model-41-imgs-stage-breakdown-cutoff.txt")}));
  EXPECT_EQ(yolo.verdict, Verdict::kHealthy);
  EXPECT_EQ(yolo.confidence, Confidence::kMedium);
  EXPECT_THAT(yolo.summary, testing::HasSubstr("9.3x"));
  // Either order; a loader that makes less than the model takes holds it back.
  const Diagnosis slow = diagnose_telemetry(
      read_text("model throughput 3000 samples/s, loader throughput 1200 samples/s\n"));
  EXPECT_EQ(slow.verdict, Verdict::kInputBound);
  // Different units, or a name that says both ("train_loader"), pair nothing.
  EXPECT_TRUE(read_text("dataloader alone: 250 it/s, model: 3000 samples/s\n")
                  .loader_against_model.empty());
  EXPECT_TRUE(read_text("train_loader: 250 it/s, model: 12 it/s\n").loader_against_model.empty());
}

TEST(LoaderSettings, TwoRowsOneNamingItsSettingAndMinutesInTheHeader) {
  // luxonis-ml#147: "| Unoptimized (workers=0) | 117 |" over "| Optimized | 15 :fire: |" under
  // "Time (minutes)".
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_luxonisml147-coco-epoch-117min-workers0-vs-15min-optimized-augs.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu);
  EXPECT_THAT(d.summary, testing::HasSubstr("7020 s with num_workers=0, 900 s with Optimized"));
  // Three rows need two that name a setting: one named among others compares nothing.
  ExpectNothingPlaced(
      "| Version | Time (s) |\n| --- | --- |\n| workers=0 | 117 |\n"
      "| v2 | 15 |\n| v3 | 14 |\n");
}

TEST(Vocabulary, ACounterThenHowLongItTook) {
  // pytorch#41517: "load 0 takes 4.060459852218628 seconds", each epoch's first batch.
  const auto values = named_values("load 0 takes 4.060459852218628 seconds");
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].name, "load");
  EXPECT_NEAR(values[0].value, 4.060459852218628, 1e-12);
  EXPECT_EQ(meaning_of(values[0]).quantity, Quantity::kDataWait);
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_pytorch41517-ddp-8proc-first-batch-4s-then-0.04s-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound);
  // A counter with a unit, or a fraction, is no counter of what took the time.
  EXPECT_EQ(named_values("load 0.5 takes 2 seconds").size(), 2u);
}

TEST(Vocabulary, AWaitForOneBatchLongerThanAnyStep) {
  // remix#2: "Batch load time: 149.7166 seconds" and nothing else.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_remix2-libero90-batch-load-time-149s.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound);
  EXPECT_EQ(d.confidence, Confidence::kLow);
  // Waits of seconds may fit a long step: the share is not known.
  EXPECT_EQ(diagnose_telemetry(read_text("data_time: 12.5\ndata_time: 13.1\n")).verdict,
            Verdict::kUnknown);
}

TEST(Snapshot, HalfBusyBesideCpusSaidToBeAtPeak) {
  // Tacotron#19: "GPU usage ... is on average low, while CPU usage is always at peak" above
  // one nvidia-smi look at 50 %.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("nvsmi_tacotron19-k80-50pct-cpu-at-peak-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu);
  EXPECT_EQ(d.confidence, Confidence::kLow);
  // Words that ask, suppose or deny are no CPU view.
  for (const char* words : {"Is the CPU maxed out?", "If the CPU is maxed out, add workers.",
                            "The CPU is not saturated at all.",
                            "I don't think the cores are pegged.", "We want to max out the CPU."}) {
    EXPECT_TRUE(read_text(fmt::format("{}\nGPU-Util: 50 %\n", words)).cpus.empty()) << words;
  }
  // Half busy without a CPU view says nothing of the cause.
  EXPECT_EQ(diagnose_telemetry(read_text("GPU-Util: 55 %\n")).verdict, Verdict::kUnknown);
}

TEST(Vocabulary, AnAveragingWindowAfterAName) {
  // gotorch#275: "Average GPU utilization(1min): 55%".
  const auto values = named_values("Average GPU utilization(1min): 55%");
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].name, "average_gpu_utilization");
  EXPECT_EQ(values[0].value, 55);
  EXPECT_EQ(meaning_of(values[0]).quantity, Quantity::kGpuUtilisation);
  // A count in parentheses is no window: "batch (64): 0.5s" keeps its numbers.
  EXPECT_EQ(named_values("batch (64): 0.5s").size(), 2u);
}

TEST(Reference, ResNet50FarBelowWhatItsGpuTrainsAt) {
  // gotorch#275: ResNet-50 on a P100 at 33 samples/s, where TensorFlow's benchmarks give 219.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("datalog_gotorch275-resnet50-p100-33-samples-per-sec-gpu-util-55.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound);
  EXPECT_EQ(d.confidence, Confidence::kLow);
  EXPECT_THAT(d.summary, testing::HasSubstr("P100"));
  // At the published rate, or for a detector's ResNet-50 backbone, or two GPU kinds: no say.
  EXPECT_EQ(
      diagnose_telemetry(read_text("ResNet-50 on one V100\nthroughput: 340 images/sec\n")).verdict,
      Verdict::kUnknown);
  EXPECT_EQ(diagnose_telemetry(read_text("Faster R-CNN ResNet-50 FPN on a V100\n"
                                         "throughput: 20 images/sec\n"))
                .verdict,
            Verdict::kUnknown);
  EXPECT_EQ(diagnose_telemetry(read_text("ResNet50 on a V100 and on a T4\n"
                                         "throughput: 20 images/sec\n"))
                .verdict,
            Verdict::kUnknown);
  // A job's rate over its stated GPUs is each GPU's share.
  EXPECT_EQ(diagnose_telemetry(read_text("ResNet50, 8 x V100\n8 GPUs: 2400 images/sec\n")).verdict,
            Verdict::kUnknown);
  EXPECT_EQ(diagnose_telemetry(read_text("ResNet50, 8 x V100\n8 GPUs: 800 images/sec\n")).verdict,
            Verdict::kInputBound);
}

TEST(PastedLogs, MeasurementsNoRulePlacesAreReadAsUnknown) {
  // XMem#86: four phases timed and the run's "about 1.5 -2 days", no step, no data time, no
  // GPU: what they time is said, and what would decide.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_xmem86-step-phase-timing-backward-dominant.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  EXPECT_THAT(d.summary, testing::HasSubstr("5 durations"));
  EXPECT_EQ(d.evidence.size(), 3u);
  ASSERT_FALSE(d.next.empty());
  EXPECT_THAT(d.next[0], testing::HasSubstr("data time against its step time"));
  // One number with a unit is prose's; counts and sizes are no measurements.
  EXPECT_THROW(read_text("It got slow after 3 days and I do not know why.\n"), Error);
  EXPECT_THROW(read_text("I have 2 GPUs, 64 GB of RAM and batch_size: 32, lr: 0.1\n"), Error);
}

TEST(PastedLogs, WhatThisSessionsReviewOfTheNewRulesFound) {
  const auto verdict = [](const std::string& text) {
    return diagnose_telemetry(read_text(text)).verdict;
  };
  // A rank's rate is one GPU's, not the job's over its GPUs; "3090" in a counter is no GPU.
  EXPECT_EQ(verdict("torchrun --nproc_per_node=8 main.py -a resnet50 (8x V100)\n"
                    "[rank0] Epoch 1 throughput: 300 img/s\n"),
            Verdict::kUnknown);
  EXPECT_EQ(verdict("Epoch: [0][3090/5005] Loss 4.5\nResNet-50 training, 100 img/s\n"),
            Verdict::kUnknown);
  // Synthetic data, another input size or a detector's backbone are off the reference.
  EXPECT_EQ(verdict("Dataset: imagenet (synthetic)\nModel: resnet50\n"
                    "Devices: Tesla V100-SXM2-16GB\ntotal images/sec: 105.03\n"),
            Verdict::kHealthy);  // no input in it at all
  EXPECT_EQ(verdict("ResNet-50 at 512x512 on a V100: 90 images/sec\n"), Verdict::kUnknown);
  EXPECT_EQ(verdict("detr_resnet50 training on a V100: 18 images/sec\n"), Verdict::kUnknown);
  // The job on real data, parallelism's pipeline, a model called directly, one process's
  // loader against the job: no loader timed alone against its model.
  for (const char* line : {"Throughput with the real dataset: 850 img/s, model only: 900 img/s\n",
                           "model parallel: 85 samples/s, pipeline parallel: 140 samples/s\n",
                           "Using pipeline: 12 it/s, using the model directly: 50 it/s\n",
                           "dataloader alone: 500 img/s per process, training on 8 GPUs: 2400 "
                           "img/s\n"}) {
    EXPECT_TRUE(read_text(line).loader_against_model.empty()) << line;
  }
  // GPUs seen waiting outweigh a loader timed alone.
  std::string idle =
      "dataloader alone: 250 it/s, training: 12 it/s\n\n"
      "timestamp, name, utilization.gpu [%], memory.used [MiB]\n";
  for (int i = 0; i < 10; ++i) {
    idle += fmt::format("2024/01/01 10:00:{:02}.000, NVIDIA A100-SXM4-40GB, 6 %, 30000 MiB\n", i);
  }
  EXPECT_NE(verdict(idle), Verdict::kHealthy);
  // Two rows of which the unnamed one is another GPU, data set or model compare no setting.
  ExpectNothingPlaced(
      "| Setup | Time (minutes) |\n| --- | --- |\n"
      "| RTX 3090 (workers=8) | 20 |\n| A100 | 9 |\n");
  // "at peak" bounded by a number or a word, or one process's CPU: no CPUs pinned.
  EXPECT_EQ(verdict("GPU-Util: 65 %\nCPU usage at peak was around 40%\n"), Verdict::kUnknown);
  EXPECT_EQ(verdict("GPU-Util 75%. The CPU is rarely at peak.\n"), Verdict::kUnknown);
  EXPECT_EQ(verdict("main process cpu usage: 100%\nGPU-Util: 65 %\n"), Verdict::kUnknown);
  // A total or a first batch is no batch's wait; of two waits the long one may be the first.
  EXPECT_EQ(verdict("Total data loading time: 350.2 s\n"), Verdict::kUnknown);
  EXPECT_EQ(verdict("First batch load time: 95 seconds\n"), Verdict::kUnknown);
  EXPECT_EQ(verdict("Batch load time: 149.7166 seconds\nBatch load time: 0.0012 seconds\n"),
            Verdict::kUnknown);
  // Nested timers are not counted twice: verl's generate_sequences inside gen; a
  // forward_backward beside its forward bounds nothing.
  const Telemetry verl = read_text(
      "step:1 - timing_s/generate_sequences:19.0 - timing_s/gen:20.0 - "
      "timing_s/old_log_prob:10.0 - timing_s/update_actor:55.0 - timing_s/step:100.0\n");
  ASSERT_EQ(verl.steps.size(), 1u);
  EXPECT_NEAR(verl.steps.front().data_seconds, 15.0, 1e-9);
  EXPECT_FALSE(read_text("step_time: 1.0s, forward_backward: 0.45s, forward: 0.2s, backward: "
                         "0.3s, optimizer_step: 0.05s\n")
                   .steps.front()
                   .has_data);
}

TEST(Scaling, ATableOfRunsNamedByTheirGpusWithClockTimes) {
  // h2o-llmstudio#448: "hardware setup | llm backbone | quantization | train | validation" over
  // "8xA10G | h2oai/h2ogpt-4096-llama2-7b | bfloat16 | 11:35 | 3:32", each backbone and
  // quantization at 1, 2, 4 and 8 GPUs.
  const Telemetry t = read_text(
      "hardware setup | llm backbone | train | validation\n--- | --- | --- | ---\n"
      "8xA10G | llama2-7b | 11:35 | 3:32\n4xA10G | llama2-7b | 21:13 | 06:35\n"
      "1xA10G | llama2-7b | 1:25:29 | 15:50\n8xA10G | llama2-13b | 25:07 | 10:58\n"
      "4xA10G | llama2-13b | 48:43 | 21:25\n1xA10G | llama2-13b | 2:44:36 | 1:14:20\n");
  ASSERT_EQ(t.rates.size(), 6u);
  EXPECT_NEAR(1 / t.rates.front().per_second, 11 * 60 + 35, 1e-9);  // train, not validation
  EXPECT_NE(t.runs[0].group, t.runs[3].group);                      // one series per backbone
  const Diagnosis d = diagnose_telemetry(t);
  ASSERT_TRUE(d.numbers.scaling.has_value());
  // A caption that changes with the scale keeps one series (BytePS#59's "single machine" up
  // to 8 cards, "two workers two servers" at 16).
  const Diagnosis byteps = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_byteps59-rdma-image-per-gpu-1-to-16-cards-table.txt")}));
  EXPECT_EQ(byteps.verdict, Verdict::kCommunicationBound);
}

TEST(Vocabulary, MaxTextsSecondsBesideItsCompletedStep) {
  // maxtext#8: "completed step: 15107, seconds: 2.167, TFLOP/s: 36.722, loss: 2.191".
  const Telemetry t = read_telemetry_files(
      {pasted("datalog_maxtext8-v3-8-step-seconds-tflops-per-device-cutoff.txt")});
  ASSERT_FALSE(t.steps.empty());
  EXPECT_NEAR(t.steps.front().step_seconds, 2.167, 1e-9);
  EXPECT_FALSE(t.steps.front().has_data);
  // Without the step's counter, "seconds" names nothing.
  EXPECT_THROW(read_text("seconds: 2.167\n"), Error);
}

TEST(PastedLogs, RatesOfRunsOnSyntheticDataAreTheModels) {
  // oneflow#7290: "输入 fake image 和 fake label" above a table of img/s per framework.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_oneflow7290-vit-base-fake-data-img-per-sec-vs-pytorch.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy);
  EXPECT_EQ(d.confidence, Confidence::kLow);
  // Beside the job's real data, or about scaling, synthetic rates decide nothing alone.
  EXPECT_EQ(diagnose_telemetry(read_text("Tested with synthetic data and with the real dataset.\n"
                                         "throughput: 300 img/s\n"))
                .verdict,
            Verdict::kUnknown);
  EXPECT_EQ(diagnose_telemetry(read_text("The synthetic benchmark gets slower when scaling up.\n"
                                         "throughput: 12 img/s\n"))
                .verdict,
            Verdict::kUnknown);
}

TEST(PastedLogs, TflopsPerGpuAgainstThePeakOfTheGpuThePasteNames) {
  // min-LLM#16: "On 8 A100 ... Estimates: 129.32TFLOPs Avg Iteration Time: 8.01s": 41 % of an
  // A100's 312 dense BF16 TFLOP/s.
  const Telemetry t =
      read_telemetry_files({pasted("throughput_min-llm16-zero3-8xa100-129-tflops.txt")});
  ASSERT_EQ(t.model_tflops.size(), 1u);
  EXPECT_NEAR(t.model_tflops.front().second, 129.32, 1e-9);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kHealthy);
  EXPECT_EQ(d.confidence, Confidence::kMedium);
  EXPECT_THAT(d.summary, testing::HasSubstr("41 % of the GPUs' peak"));
  EXPECT_THAT(d.summary, testing::HasSubstr("A100"));
  // Megatron's "throughput per GPU (TFLOP/s/GPU)" and InternLM's "tflops=" are read too.
  EXPECT_EQ(read_text("iteration 71/ 100 | elapsed time per iteration (ms): 5361.6 | throughput "
                      "per GPU (TFLOP/s/GPU): 243.6 | lm loss: 1.81\n")
                .model_tflops.size(),
            1u);
  EXPECT_EQ(read_text("INFO train.py:317 -- tflops=93.48,step=9,loss=7.50\n").model_tflops.size(),
            1u);
  const auto verdict_of = [](const std::string& text) {
    return diagnose_telemetry(read_text(text)).verdict;
  };
  const std::string steps = "Estimates: 129.32TFLOPs Avg Iteration Time: 8.01s\n";
  // No GPU named, or two: no peak to compare with.
  EXPECT_EQ(verdict_of(steps), Verdict::kUnknown);
  EXPECT_EQ(verdict_of("On 8 A100 and 8 V100:\n" + steps), Verdict::kUnknown);
  // Above the GPU's peak: a job's total, not one GPU's (litgpt#1369's "Measured TFLOPs: 2539").
  EXPECT_EQ(verdict_of("Two machines of 8 A100\nMeasured TFLOPs: 2539.13 iter time: 26.1s\n"),
            Verdict::kUnknown);
  // A quarter of an H100 says nothing of why (Megatron-LM#756's MoE at 243.6).
  EXPECT_EQ(verdict_of("16 H100\nelapsed time per iteration (ms): 5361.6 | throughput per GPU "
                       "(TFLOP/s/GPU): 243.6\n"),
            Verdict::kUnknown);
  // A peak is no measurement.
  EXPECT_TRUE(read_text("A100 peak tflops: 312\nstep time: 1.2s\n").model_tflops.empty());
}

TEST(LoaderSettings, APasteThatEndsInsideATablesLastRow) {
  // torchdata#492 as stored: "| 4  | 87  |" under four columns ends the paste.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files({pasted(
      "throughput_torchdata492-epoch-time-by-workers-expensive-featurisation-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("87 s with num_workers=4"));
  // A short row with lines after it is no cut row: the table ends before it.
  EXPECT_THROW(read_text("**Training time per epoch.**\n\n| num_workers | A | B |\n| --- | --- | "
                         "--- |\n| 0 | 149 | 128 |\n| 4 | 87 |\nmore words\n"),
               Error);
}

TEST(Vocabulary, TqdmsRateNotYetKnownIsNoRate) {
  // tensorpack#681: "0/5000[00:00<?,?it/s][0301 12:56:31 @input_source.py:496]": the "0301" is
  // the next log line's date, glued to the bar; it was read as 301 it/s.
  const Telemetry t = read_telemetry_files(
      {pasted("datalog_tensorpack681-imagenet-shuffle-true-vs-false-it-per-s-cutoff.txt")});
  for (const ThroughputSample& r : t.rates) EXPECT_LT(r.per_second, 300) << r.per_second;
  ASSERT_FALSE(t.steps.empty());
  EXPECT_NEAR(t.steps.front().step_seconds, 1 / 0.48, 1e-9);
}

TEST(PastedLogs, UnplacedMeasurementsInATableOrWithoutAName) {
  // dgl#1274: "| Implementation | Average epoch time | Training example processed per second |"
  // over rows of bare numbers: each cell under a header that names a time or a rate.
  const Diagnosis dgl = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_dgl1274-graphsage-1vs4gpu-epoch-time-throughput.txt")}));
  EXPECT_EQ(dgl.verdict, Verdict::kUnknown);
  EXPECT_THAT(dgl.summary, testing::HasSubstr("4 durations, 4 rates"));
  // Qwen#669: durations with their unit after a name no rule knows ("耗时：103.4079s").
  const Telemetry qwen =
      read_telemetry_files({pasted("scaling_Qwen669-lora-1vs2-A100-time-to-loss.txt")});
  EXPECT_FALSE(qwen.unplaced.empty());
  EXPECT_EQ(diagnose_telemetry(qwen).verdict, Verdict::kUnknown);
  // A header of words over numbers that are neither: counts, accuracies, sizes.
  ExpectNothingPlaced("| Model | Params | Accuracy |\n|---|---|---|\n| A | 25 | 0.76 |\n");
  EXPECT_THROW(read_text("| Model | Params | Accuracy |\n|---|---|---|\n| A | 25 | 0.76 |\n| B | "
                         "60 | 0.78 |\n"),
               Error);
  // A measure header over a row of a different width is no cell of it.
  EXPECT_THROW(read_text("| Name | Epoch time |\n|---|---|\n| A | 30 | 2 | 4 |\n"), Error);
}

TEST(Scaling, ASingleDeviceIsOneGpu) {
  // torchtune#2264: "Training with 3090*4 GPU cards" above tokens_per_second_per_gpu of 576-614,
  // then "However, single device is much faster," above 2479-2558.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_torchtune2264-lora-4x3090-vs-single-tokens-per-gpu-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1 -> 4 GPUs"));
  EXPECT_EQ(gpu_count_of("a single-device run"), 1);
  EXPECT_EQ(gpu_count_of("cuda device 0 is used"), std::nullopt);
}

TEST(PastedLogs, OneJobUnderTwoStrategiesOfExchange) {
  // OLMo#762: "DDP Mode ... Throughput per Device: 8,034 tokens/device/second" against "FSDP
  // Mode ... 1,747" on the same 4 GPUs.
  const Telemetry t = read_telemetry_files(
      {pasted("throughput_olmo762-1b-4gpu-tokens-per-device-ddp-vs-fsdp.txt")});
  ASSERT_GE(t.rates.size(), 3u);
  EXPECT_TRUE(t.rates.front().per_gpu);
  EXPECT_EQ(t.runs[static_cast<size_t>(t.rates.front().run)].exchange_setting, "ddp");
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("4.6x faster under ddp"));
  EXPECT_EQ(exchange_setting_of("sharding_strategy: SHARD_GRAD_OP"), "shard_grad_op");
  EXPECT_EQ(exchange_setting_of("zero_stage=2"), "zero-2");
  EXPECT_EQ(exchange_setting_of("ZeRO stage 3"), "zero-3");
  EXPECT_EQ(exchange_setting_of("DDP vs FSDP"), std::nullopt);  // a comparison, no heading
  const auto verdict_of = [](const std::string& text) {
    return diagnose_telemetry(read_text(text)).verdict;
  };
  // Close rates: the strategy does not set the pace.
  EXPECT_NE(verdict_of("DDP:\nthroughput: 1000 tokens/s\nFSDP:\nthroughput: 900 tokens/s\n"),
            Verdict::kCommunicationBound);
  // One strategy named, or the runs at two scales: no comparison of strategies.
  EXPECT_NE(verdict_of("Strategy: ddp\nthroughput: 1000 tokens/s\nthroughput: 300 tokens/s\n"),
            Verdict::kCommunicationBound);
}

TEST(Vocabulary, AWindowOfNBatchesAndItsParts) {
  // Theano-MPI#23: "time per 40 batches: 48.80 (train 48.68 sync 0.00 comm 0.00 wait 0.12)".
  const auto v =
      named_values("time per 40 batches: 48.80 (train 48.68 sync 0.00 comm 0.00 wait 0.12)");
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].name, "time_per_batch");
  EXPECT_NEAR(v[0].value, 1.22, 1e-9);
  EXPECT_NEAR(v[4].value, 0.003, 1e-9);
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_theanompi23-resnet50-1gpu-train-sync-comm-wait.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  // A rate on the line is no part of the window.
  const auto rate = named_values("time per 10 iters: 5.0, throughput: 320 img/s");
  ASSERT_EQ(rate.size(), 2u);
  EXPECT_NEAR(rate[1].value, 320, 1e-9);
}

TEST(PastedLogs, WhatAReviewOfThisSessionsReadersFound) {
  const auto verdict_of = [](const std::string& text) {
    return diagnose_telemetry(read_text(text)).verdict;
  };
  std::string litgpt =
      "GPU: NVIDIA A100-SXM4-40GB\nEstimated TFLOPs: 165.47\nMeasured TFLOPs: 165.47\n";
  for (int i = 1; i <= 6; ++i) {
    litgpt += fmt::format(
        "Epoch 1 | iter {} step {} | loss train: 9.1, val: n/a | iter time: 2010.33 ms (step)\n", i,
        i);
  }
  // litgpt's "Measured TFLOPs" is one step's FLOPs over all GPUs, not a rate.
  EXPECT_TRUE(read_text(litgpt).model_tflops.empty());
  EXPECT_NE(verdict_of(litgpt), Verdict::kHealthy);
  // A kernel benchmark's TFLOPS, without a training loop's steps or rates: no model's MFU.
  EXPECT_NE(verdict_of("GPU: NVIDIA H100 80GB HBM3\nbf16 matmul 8192x8192 TFLOPS: 702.5\nbf16 "
                       "matmul 16384x16384 TFLOPS: 745.1\n"),
            Verdict::kHealthy);
  // Another accelerator named beside a GPU of the table, a TPU among them, or a timer or model
  // whose name holds a GPU's: no peak to compare with.
  const std::string tflops =
      "step 1 tflops: 400 step time: 2.0s\nstep 2 tflops: 400 step time: 2.0s\n"
      "step 3 tflops: 400 step time: 2.0s\n";
  EXPECT_NE(verdict_of("MI300X; on H100 this config was faster\n" + tflops), Verdict::kHealthy);
  EXPECT_NE(verdict_of("running base.yml on a TPU v3-8 (an A100 was far slower)\n" + tflops),
            Verdict::kHealthy);
  const std::string small =
      "step 1 tflops: 50 step time: 2.0s\nstep 2 tflops: 50 step time: 2.0s\n";
  EXPECT_NE(verdict_of("t1=0.1 t2=0.2 t3=0.3 t4=0.4\n" + small), Verdict::kHealthy);
  EXPECT_NE(verdict_of("model: bert-t4\n" + small), Verdict::kHealthy);
  // A GPU before a colon is named ("V100: 350 images/sec" states its own rate): 40 % of 125.
  EXPECT_EQ(verdict_of("V100: 2 s per step\n" + small), Verdict::kHealthy);
  EXPECT_NE(verdict_of("NVIDIA GeForce RTX 3090 Ti\n" + small), Verdict::kHealthy);
  EXPECT_EQ(verdict_of("NVIDIA GeForce RTX 3090\n" + small), Verdict::kHealthy);  // 70 % of 71
  // A count glued to the GPU's name names it too.
  EXPECT_EQ(verdict_of("trained on 8xA100\n"
                       "step 1 tflops: 150 step time: 2.0s\nstep 2 tflops: 150 step time: 2.0s\n"),
            Verdict::kHealthy);
  // A number cut short in a paste's last row is no number.
  EXPECT_NE(verdict_of("| num_workers | epoch time (s) | samples/s |\n|---|---|---|\n| 0 | 61.2 | "
                       "510 |\n| 2 | 60.3 | 518 |\n| 4 | 6"),
            Verdict::kInputBoundCpu);
  // Names garbled to '?' by a console are names still.
  EXPECT_EQ(read_text("?????: 120.5 samples/s\n?????: 118.2 samples/s\n").rates.size(), 2u);
  // Headers that are no measures: plurals' "(s)", speedups, time steps, counts of times, dates,
  // tokens per sample.
  for (const char* table :
       {"| Node(s) | GPU(s) | Batch size |\n|---|---|---|\n| 1 | 8 | 256 |\n| 2 "
        "| 16 | 512 |\n",
        "| Model | Params (M) | Speedup |\n|---|---|---|\n| ResNet-50 | 25.6 | "
        "1.3 |\n| ViT-B | 86 | 1.8 |\n",
        "| Timestep | Loss |\n|---|---|\n| 1 | 2.5 |\n| 2 | 2.1 |\n",
        "| Layer | Times called |\n|---|---|\n| conv1 | 12 |\n| fc | 3 |\n",
        "| Version | Release time |\n|---|---|\n| 1.0 | 2024 |\n| 2.0 | 2025 |\n",
        "| Model | Tokens/sample | Samples |\n|---|---|---|\n| A | 512 | 100 |\n| "
        "B | 1024 | 50 |\n"}) {
    EXPECT_THROW(read_text(table), Error) << table;
  }
}

TEST(Scaling, AGridTableAndDurationsThatGrowWithTheGpus) {
  // dgl#838: tabulate's grid ("+------+--------------+" between the rows) of each GPU count's
  // running time; each GPU runs its own batch, so the time may be a larger job's.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_dgl838-parallel-apply-running-time-by-gpu-count-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("if both runs did the same work; 30 % if each GPU did "
                                            "as much work as the smaller run"));
  // A run that gets faster with the GPUs states no such alternative.
  const Diagnosis faster = diagnose_telemetry(
      read_text("+------+--------------+\n| GPUs | running time |\n+======+==============+\n| 1    "
                "| 100          |\n+------+--------------+\n| 4    | 30           |\n"
                "+------+--------------+\n"));
  EXPECT_EQ(faster.verdict, Verdict::kHealthy) << faster.summary;
  EXPECT_THAT(faster.summary, testing::Not(testing::HasSubstr("as much work")));
}

TEST(Scaling, TorchrunsProcessCountAndARunsDurationAfterAnArrow) {
  // ignite-examples#75: "- batch size = 32, nproc_per_node = 2 => Runtime: 17:11", one line per
  // GPU count; the 4 GPUs take nearly as long as the one.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_ignite-examples75-cifar10-ddp-runtime-1-to-4-gpus-t4.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1 -> 4 GPUs: 563 s -> 527 s"));
  EXPECT_EQ(gpu_count_of("nproc_per_node = 3"), 3);
  EXPECT_EQ(gpu_count_of("nproc_per_node=3 python train.py"), 3);
  EXPECT_FALSE(gpu_count_of("nproc_per_node = many"));
}

TEST(LoaderSettings, TheLoadersThreadsAndWhatTheyWaitedOn) {
  // pytorch#158218: "--num_threads=1" against "--num_threads=32" in a loop over an S3 dataset;
  // more threads hide the reads' latency.
  const Diagnosis s3 = diagnose_telemetry(read_telemetry_files(
      {pasted("throughput_pytorch158218-s3-loader-per-iter-2.3s-vs-1.0s-threads-cutoff.txt")}));
  EXPECT_EQ(s3.verdict, Verdict::kIoBound) << s3.summary;
  EXPECT_THAT(s3.summary, testing::HasSubstr("with 1 thread, 0.979 batches/s with 32 threads"));
  // vision#818: OMP_NUM_THREADS=6 against 1 beside 8 workers; fewer threads are faster.
  const Diagnosis omp = diagnose_telemetry(read_telemetry_files({pasted(
      "throughput_torchvision818-mobilenetv2-epoch-time-omp-threads-vs-workers-8xv100.txt")}));
  EXPECT_EQ(omp.verdict, Verdict::kInputBoundCpu) << omp.summary;
  EXPECT_THAT(omp.summary, testing::HasSubstr("more threads than the CPUs run at once"));
  // Threads that help where no storage is named: the loader, reads or decoding.
  const std::string table =
      "| num_threads | epoch time (s) |\n|---|---|\n| 1 | 200 |\n| 8 | 100 |\n";
  EXPECT_EQ(diagnose_telemetry(read_text(table)).verdict, Verdict::kInputBound);
  EXPECT_EQ(diagnose_telemetry(read_text("data on NFS\n" + table)).verdict, Verdict::kIoBound);
  EXPECT_EQ(loader_setting_of("ds.map(f, num_parallel_calls=8)")->threads, 8);
  EXPECT_EQ(loader_setting_of("cv2.setNumThreads(0)")->threads, 0);
  EXPECT_EQ(loader_setting_of("preprocess_threads=4, num_workers=2")->label,
            "num_workers=2, 4 threads");
  EXPECT_FALSE(loader_setting_of("Thread(s) per core:    2"));
}

TEST(LoaderWarnings, AReadersOwnLineBesideAnIdleGpu) {
  // snmn#2: "data reader: waiting  for data loading (IO slow)" (quoted once: "I keep getting the
  // following"), and nvidia-smi with the training GPU at 0 %: the reader's words say what the GPU
  // waits on. Once may be the queue filling at the start: low.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("nvsmi_snmn2-io-slow-reader-warning-gtx1080ti-0pct-util-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBound) << d.summary;
  EXPECT_EQ(d.confidence, Confidence::kLow);
  // A sentence about waiting for data is no reader's line.
  EXPECT_TRUE(read_text("We now log how much time we spend waiting for data loading in each of "
                        "the steps: 0.5 s per step and 2 s per step\n")
                  .loader_warnings.empty());
}

TEST(Scaling, NodesTimesGpusAndAScalesGluedCount) {
  // openfold#198: "| 8 A100(40GB) | 4 hours |" over "| 4 * 8 A100(40GB) | 1 hours |".
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("scaling_openfold198-epoch-time-8-vs-32-a100.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("8 -> 32 GPUs: 14400 s -> 3600 s"));
  EXPECT_EQ(gpu_count_of("4 * 8 A100(40GB)"), 32);
  EXPECT_EQ(gpu_count_of("4x8 A100"), 32);
  EXPECT_EQ(gpu_count_of("2 x 8 V100"), 16);
  EXPECT_EQ(gpu_count_of("2 x V100"), 2);
  EXPECT_EQ(gpu_count_of("3 x 224 x 224 images on 8 GPUs"), 8);
  // deep-learning-models#2: "1x2 GPU: 1481.3 img/sec" is the 2 GPUs' rate, not each GPU's; the
  // runs' times above the rates ("training took 6 hrs" on 8, 16 and 64 GPUs) are a series of
  // their own.
  const Diagnosis aws = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_deep-learning-models2-aws-p3-imgsec-by-gpu-count-cutoff.txt")}));
  EXPECT_THAT(aws.summary,
              testing::HasSubstr("1 -> 64 GPUs: 740 images/s -> 37000 images/s, 78 %"));
  EXPECT_TRUE(meaning_of(NamedValue{"img_per_gpu", "img/sec", 50, std::nullopt, 0}).per_gpu);
  EXPECT_FALSE(meaning_of(NamedValue{"x2_gpu", "img/sec", 50, std::nullopt, 0}).per_gpu);
}

TEST(Scaling, IterationsASecondAreStepsOfEachGpusBatch) {
  // accelerate#192: "trainer | 1-GPU | 1.26ite/s | 870 |" over "| 2-GPU | 1.13ite/s | 435 |": each
  // of the 2 GPUs' iterations holds its own batch (half as many of them), 90 % efficiency.
  const Diagnosis acc = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_accelerate192-trainer-vs-accelerator-1v2gpu-table-cutoff.txt")}));
  EXPECT_THAT(acc.summary, testing::HasSubstr("1 -> 2 GPUs: 1.26 batches/s -> 2.26 batches/s, 90 % "
                                              "scaling efficiency"));
  // lingvo#59: steps/sec 0.128 -> 0.105 from 1 to 8 GPUs beside examples/sec 6.5 -> 42.4: both
  // say 82 %.
  const Diagnosis lingvo = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_lingvo59-gpus-steps-per-sec-examples-per-sec-table.txt")}));
  EXPECT_EQ(lingvo.verdict, Verdict::kHealthy) << lingvo.summary;
  // Two scales whose steps would be 1.2x more efficient per GPU at the larger one divide one
  // step's work among the GPUs (espnet#4802: the global batch kept, 0.429 -> 0.323 s a step).
  const Diagnosis espnet = diagnose_telemetry(
      read_telemetry_files({pasted("espnet_espnet4802-1gpu-vs-3gpu-epoch-results.txt")}));
  EXPECT_THAT(espnet.summary, testing::HasSubstr("each step the same work, divided among them"));
  // ... over more scales too, the smallest against the largest: yolact#32's DataParallel
  // timer, 0.65-0.67 s on one GPU, 0.53-0.61 s on two and three, 0.46-0.55 s on four, is a
  // fixed batch of 8 divided among them: 33 %, not 130 %.
  const Diagnosis yolact = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_yolact32-dataparallel-1-to-4-gpu-timer-0-65-to-0-5s-cutoff.txt")}));
  EXPECT_EQ(yolact.verdict, Verdict::kCommunicationBound) << yolact.summary;
  EXPECT_THAT(yolact.summary, testing::HasSubstr("33 % scaling efficiency"));
  // ... and where the paste says the larger run is the slower: tf-pose-estimation#86's "I found
  // it slower than only one gpu" above 50 steps in ~23.4 s on one GPU and 28.6 s on three, each
  // run's --batchsize=60: 27 %, not 82 %.
  const Diagnosis pose = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_tf-pose-estimation86-1gpu-vs-3gpu-step-timestamps-cutoff.txt")}));
  EXPECT_EQ(pose.verdict, Verdict::kCommunicationBound) << pose.summary;
  EXPECT_THAT(pose.summary, testing::HasSubstr("27 % scaling efficiency"));
  EXPECT_THAT(pose.summary, testing::HasSubstr("a larger run the paste calls the slower"));
  // Where each GPU's batch kept already makes the larger run the slower, the words agree with
  // that reading: not divided again (17 %, not 4 %).
  const Diagnosis agreed = diagnose_telemetry(read_text(
      "I found it slower than only one gpu\npython train.py --gpus=1\nstep 1: 0.5 s/it\nstep 2: "
      "0.5 s/it\npython train.py --gpus=4\nstep 1: 3.0 s/it\nstep 2: 3.0 s/it\n"));
  EXPECT_THAT(agreed.summary, testing::HasSubstr("17 % scaling efficiency")) << agreed.summary;
  // imagen-pytorch#214: 1.8 it/s on one P4, 2.6 on two: divided too, 72 %.
  EXPECT_EQ(diagnose_telemetry(
                read_telemetry_files(
                    {pasted("scaling_imagen-pytorch214-accelerate-multinode-p4-it-per-sec.txt")}))
                .verdict,
            Verdict::kCommunicationBound);
}

TEST(Bandwidth, IperfBetweenTwoHosts) {
  // byteps#163: "[  3]  0.0-10.0 sec  5.60 GBytes  4.80 Gbits/sec" between the two machines.
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("other_byteps163-iperf-4.8gbps-distributed-slow.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("iperf between two hosts moves 0.6 GB/s"));
  // horovod#992: UDP rows of 95 Mbits/sec on a LAN beside the job's own lines.
  EXPECT_EQ(diagnose_telemetry(
                read_telemetry_files(
                    {pasted("other_horovod992-iperf-95mbit-lan-two-nodes-1050ti-1060-cutoff.txt")}))
                .verdict,
            Verdict::kCommunicationBound);
  // iperf3's rows, its sender and receiver, and a fast link: not what is slow.
  const Telemetry three = read_text(
      "[ ID] Interval           Transfer     Bitrate         Retr\n"
      "[  5]   0.00-10.00  sec   110 GBytes  94.5 Gbits/sec    0             sender\n"
      "[  5]   0.00-10.00  sec   110 GBytes  94.4 Gbits/sec                  receiver\n");
  ASSERT_EQ(three.bandwidths.size(), 2u);
  EXPECT_NEAR(three.bandwidths[0].bus_gbps, 94.5 / 8, 1e-9);
  EXPECT_NE(diagnose_telemetry(three).verdict, Verdict::kCommunicationBound);
  // A bracketed log line is no iperf row.
  EXPECT_TRUE(read_text("[  3] step 0.0-10.0 sec loss 5.60\n").bandwidths.empty());
}

TEST(Bandwidth, AColumnBeforeTheSizeLabelsEachRow) {
  // nccl#527: "p4dn  size  count  type  redop  time  algbw  busbw  error ..." without its '#',
  // the units' line under it, then a row per node count: 231 GB/s on one p4dn, 29.6 on four.
  const Telemetry t =
      read_telemetry_files({pasted("scaling_nccl527-p4dn-1-to-4-nodes-allreduce-busbw-table.txt")});
  ASSERT_EQ(t.bandwidths.size(), 4u);
  EXPECT_EQ(t.bandwidths[3].group, "nccl-tests table 1 at p4dn 4");
  EXPECT_DOUBLE_EQ(t.bandwidths[3].bus_gbps, 29.61);
  EXPECT_DOUBLE_EQ(t.bandwidths[3].bytes, 1073741824);
  const Diagnosis d = diagnose_telemetry(t);
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("8x slower"));
}

TEST(Bandwidth, NvlinkClassAtLargeMessagesIsNotWhatSlowsAJob) {
  // multi-node-training-guide#7: ml-engineering's all_reduce_bench.py over 16 ranks, 339 GB/s
  // of bus bandwidth at a 4 GB payload.
  const Telemetry bench = read_telemetry_files(
      {pasted("other_multinodetrainingguide7-torch-allreduce-busbw-16-ranks.txt")});
  ASSERT_EQ(bench.bandwidths.size(), 1u);
  EXPECT_DOUBLE_EQ(bench.bandwidths[0].bus_gbps, 338.955);
  EXPECT_DOUBLE_EQ(bench.bandwidths[0].bytes, 4.0 * 1024 * 1024 * 1024);
  const Diagnosis d = diagnose_telemetry(bench);
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("all_reduce_bench's all_reduce busbw at 339 GB/s"));
  // CoreWeave's GB200 NVL72 all_reduce_perf: 835 GB/s at 8.59 GB.
  EXPECT_EQ(diagnose_telemetry(read_telemetry_files({pasted(
                                   "throughput_coreweave-nccl-tests43-gb200-nvl72-allreduce-"
                                   "busbw.txt")}))
                .verdict,
            Verdict::kHealthy);
  // A fast network's rate, or the same rate at messages too small to tell: `unknown`.
  EXPECT_EQ(diagnose_telemetry(read_text("The average bandwidth of all_reduce with a 4.0GB payload "
                                         "(5 trials, 16 ranks):\n algbw: 22.000 GBps (176.0 "
                                         "Gbps)\n busbw: 41.250 GBps (330.0 Gbps)\n"))
                .verdict,
            Verdict::kUnknown);
  EXPECT_EQ(diagnose_telemetry(read_text("The average bandwidth of all_reduce with a 256MB payload "
                                         "(5 trials, 8 ranks):\n busbw: 150.0 GBps\n"))
                .verdict,
            Verdict::kUnknown);
}

TEST(ProcessTimes, FileSystemCommandsThatWaitAreTheStorage) {
  // fluid#1127: "time cp alluxio-2.6.2-bin.tar.gz /dev/null" on Alluxio over Lustre, 1m36s of
  // wall clock with 1 s of CPU time.
  const Diagnosis cp = diagnose_telemetry(
      read_telemetry_files({pasted("cpu_fluid1127-alluxio-lustre-time-cp.txt")}));
  EXPECT_EQ(cp.verdict, Verdict::kIoBound) << cp.summary;
  EXPECT_THAT(cp.summary, testing::HasSubstr("`cp` took 1.61 min"));
  // A training run's time is no file-system command's.
  EXPECT_EQ(diagnose_telemetry(read_text("$ time python train.py\n\nreal    1m36.357s\n"
                                         "user    0m0.014s\nsys     0m1.047s\n"))
                .verdict,
            Verdict::kUnknown);
  // Nor a quick listing.
  EXPECT_EQ(diagnose_telemetry(read_text("$ time ls /data/\na.txt\n\nreal    0m0.004s\n"
                                         "user    0m0.001s\nsys     0m0.002s\n"))
                .verdict,
            Verdict::kUnknown);
}

TEST(ProcessTimes, AShellsTimeOfRunsOfOneJob) {
  // LPSDA#1: bash's `time` before and after a change to the data loading: 44m45s of wall clock
  // with 4366m of user time (102 CPUs busy), then 15m with 105m.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("cpu_lpsda1-time-real-44m-user-4366m-vs-15m-104m-data-loading.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("44.8 min of wall clock with 75.8 h of CPU time"));
  // cleanrl#20: the faster run (on the CPU) spent more CPU time: nothing to say of the input.
  const Diagnosis cleanrl = diagnose_telemetry(
      read_telemetry_files({pasted("other_cleanrl20-dqn-time-gpu-vs-cpu-real-user-sys.txt")}));
  EXPECT_EQ(cleanrl.verdict, Verdict::kUnknown) << cleanrl.summary;
  EXPECT_THAT(cleanrl.summary, testing::HasSubstr("process times only (2 runs"));
  // zsh's line and GNU time -v's fields.
  const Telemetry zsh =
      read_text("python train.py  31.98s user 1.76s system 94% cpu 35.960 total\n");
  ASSERT_EQ(zsh.process_times.size(), 1u);
  EXPECT_NEAR(zsh.process_times[0].cpu_seconds, 33.74, 1e-9);
  EXPECT_NEAR(zsh.process_times[0].real_seconds, 35.96, 1e-9);
  const Telemetry gnu = read_text(
      "\tUser time (seconds): 3000.5\n\tSystem time (seconds): 100.5\n\tPercent of CPU this job "
      "got: 620%\n\tElapsed (wall clock) time (h:mm:ss or m:ss): 8:20.00\n");
  ASSERT_EQ(gnu.process_times.size(), 1u);
  EXPECT_NEAR(gnu.process_times[0].real_seconds, 500, 1e-9);
  EXPECT_NEAR(gnu.process_times[0].cpu_seconds, 3101, 1e-9);
  // Words that are no `time` lines: "real data", "user 3".
  EXPECT_THROW(read_text("real data\nuser 3\nsys admin\n"), Error);
}

TEST(Ranks, ProcessesPrintingOnePointOfTheLoopAtDifferentRates) {
  // mxnet#4941: four dist_sync workers print "Epoch[0] Batch [100]\tSpeed: ..." in turn; one runs
  // at 889 and 816 samples/sec against 1317-1326.
  const Diagnosis d = diagnose_telemetry(read_telemetry_files({pasted(
      "scaling_mxnet4941-dist-sync-4-node-1320-vs-816-890-samples-one-worker-cutoff.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kRankImbalance) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("816 against 1318"));
  // byteps#78: the same "Iter #0" ... "Iter #5" of two set-ups, one block after the other, are
  // two runs, not processes.
  EXPECT_NE(diagnose_telemetry(read_telemetry_files({pasted(
                                   "scaling_byteps78-2x8-vs-1x8-img-per-sec-per-gpu-cutoff.txt")}))
                .verdict,
            Verdict::kRankImbalance);
  // Copies within a quarter of one another are processes in step.
  std::string even;
  for (int b = 100; b <= 300; b += 100) {
    for (const char* speed : {"1300", "1250", "1320"}) {
      even += fmt::format("Epoch[0] Batch [{}]\tSpeed: {} samples/sec\n", b, speed);
    }
  }
  EXPECT_TRUE(read_text(even).repeated_rates.size() == 3u);
  EXPECT_NE(diagnose_telemetry(read_text(even)).verdict, Verdict::kRankImbalance);
  // A rate without a counter before it ("Speed: 1300 samples/sec" on every line) is one process
  // printing again.
  EXPECT_TRUE(read_text("Speed: 1300 samples/sec\nSpeed: 600 samples/sec\nSpeed: 1300 "
                        "samples/sec\n")
                  .repeated_rates.empty());
}

TEST(PastedLogs, WhatAReviewOfTheSecondSessionsReadersFound) {
  const std::string idle_gpu =
      "+-----------------------------------------------------------------------------+\n"
      "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
      "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
      "|===============================+======================+======================|\n"
      "|   0  GeForce GTX 108...  Off  | 00000000:05:00.0  On |                  N/A |\n"
      "|  0%   31C    P2   159W / 250W |   5644MiB / 11178MiB |      0%      Default |\n"
      "+-------------------------------+----------------------+----------------------+\n";
  // One process printing "Epoch 1 | ..." again and again, and two excerpts under headings, are
  // no processes at one point of the loop.
  for (const char* text :
       {"Epoch 1 | throughput: 350.2 img/s\nEpoch 1 | throughput: 812.5 img/s\nEpoch 1 | "
        "throughput: 809.1 img/s\nEpoch 2 | throughput: 410.7 img/s\nEpoch 2 | throughput: 815.3 "
        "img/s\nEpoch 2 | throughput: 811.0 img/s\n",
        "Before the fix:\nEpoch[0] Batch [100]\tSpeed: 808.1 samples/sec\nEpoch[0] Batch "
        "[200]\tSpeed: 810.2 samples/sec\nAfter the fix:\nEpoch[0] Batch [100]\tSpeed: 1319.5 "
        "samples/sec\nEpoch[0] Batch [200]\tSpeed: 1320.3 samples/sec\n"}) {
    EXPECT_NE(diagnose_telemetry(read_text(text)).verdict, Verdict::kRankImbalance) << text;
  }
  // A shell's `time` of more work at the same pace, of another program, or of a CPU run beside
  // a GPU run is no sign of the input.
  for (const char* text :
       {"$ time python train.py --epochs 1\nreal\t10m2.113s\nuser\t40m11.502s\nsys\t2m3.330s\n"
        "$ time python train.py --epochs 3\nreal\t30m5.871s\nuser\t120m20.118s\nsys\t6m1.007s\n",
        "$ time cat /data/train/* > /dev/null\nreal\t6m12.331s\nuser\t0m2.113s\nsys\t1m10.415s\n"
        "$ time python train.py\nreal\t25m40.118s\nuser\t98m3.551s\nsys\t6m12.009s\n",
        "$ time python train.py --device cpu\nreal\t44m10.1s\nuser\t352m0.5s\nsys\t3m1.0s\n"
        "$ time python train.py --device cuda\nreal\t5m1.2s\nuser\t6m0.1s\nsys\t0m20.3s\n"}) {
    EXPECT_EQ(diagnose_telemetry(read_text(text)).verdict, Verdict::kUnknown) << text;
  }
  // A batch written as a product is no GPU count: 32 a GPU on 8.
  EXPECT_EQ(gpu_count_of("global batch size 256 (32 x 8 GPUs): 2600 img/s"), 8);
  // OpenMP's threads are CPU work, whatever storage the paste names; "ssd" in a model's name
  // and a cached data set are no storage read over a network.
  EXPECT_EQ(diagnose_telemetry(read_text("Dataset: ImageNet on local NVMe SSD, 8 DataLoader "
                                         "workers, 4x V100.\nOMP_NUM_THREADS=1: 620 img/s\n"
                                         "OMP_NUM_THREADS=8: 1010 img/s\n"))
                .verdict,
            Verdict::kInputBoundCpu);
  EXPECT_FALSE(names_remote_storage("model: ssd_mobilenet_v2_coco"));
  EXPECT_FALSE(names_remote_storage("Loading cached processed dataset at /root/.cache/x"));
  EXPECT_TRUE(names_remote_storage("streaming from s3://bucket/train"));
  // Workers that are machines, in a key=value line's paste or a table's alike.
  EXPECT_TRUE(names_worker_machines("trainer = TorchTrainer(fn, scaling_config=ScalingConfig("));
  EXPECT_TRUE(names_worker_machines("2 workers and 1 Parameter Server"));
  EXPECT_TRUE(names_worker_machines("/job:worker/replica:0/task:1/device:GPU:0"));
  EXPECT_FALSE(names_worker_machines("DataLoader(num_workers=8, pin_memory=True)"));
  // Workers that change beside the threads: the workers' rule.
  const Diagnosis both =
      diagnose_telemetry(read_text("num_workers=2, OMP_NUM_THREADS=4: 310 img/s\nnum_workers=8, "
                                   "OMP_NUM_THREADS=8: 980 img/s\n"));
  EXPECT_THAT(both.summary, testing::HasSubstr("the loader's setting"));
  // A question about waiting, and a start-up line, are no reader's complaint.
  for (const char* line : {"Is it still waiting for data loading?\n",
                           "rank0: waiting for data loading workers to start\n"}) {
    EXPECT_EQ(diagnose_telemetry(read_text(line + idle_gpu)).verdict, Verdict::kUnknown) << line;
  }
  // iperf3's UDP rows (jitter, lost/total) measure the rate it was told to send.
  EXPECT_TRUE(
      read_text("[  5]   0.00-10.00  sec  1.25 MBytes  1.05 Mbits/sec  0.000 ms  0/906 (0%) "
                " sender\n[  5]   0.00-10.00  sec  1.25 MBytes  1.05 Mbits/sec  0.012 ms  "
                "0/906 (0%)  receiver\nrate: 12 img/s\n")
          .bandwidths.empty());
  // "4x8 A100" in a table's count cell; torchrun's nodes times its processes per node.
  EXPECT_THAT(diagnose_telemetry(read_text("| Hardware | Training time |\n|---|---|\n| 1x8 A100 | "
                                           "8 hours |\n| 4x8 A100 | 4 hours |\n"))
                  .summary,
              testing::HasSubstr("8 -> 32 GPUs"));
  EXPECT_EQ(gpu_count_of("- nnodes = 2, nproc_per_node = 8 => Runtime: 11:00"), 16);
  EXPECT_EQ(gpu_count_of("torchrun --nnodes=2 --nproc_per_node=8 train.py"), 16);
  EXPECT_EQ(gpu_count_of("torchrun --nproc_per_node=8 train.py"), 8);
}

TEST(Scaling, AnEpochsDurationForOneEpochInASentence) {
  // fairseq#4452: "using only 1 GPU ..., it takes 30 seconds for 1 epoch. However, when I use 8
  // GPU, it takes ~70 second for 1 epoch."
  const Diagnosis d = diagnose_telemetry(read_telemetry_files(
      {pasted("scaling_fairseq4452-wav2vec2-1gpu-30s-vs-8gpu-70s-per-epoch.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1 -> 8 GPUs: 30 s -> 70 s for the same epoch"));
  // "for 1 epoch" after a count of them is no duration.
  EXPECT_THROW(read_text("trained for 1 epoch\n"), Error);
}

TEST(Scaling, TheComparedClauseKeepsTheEpochItLeftOut) {
  // nnUNet#795: "takes around 49s per epoch using a single GPU vs. 82s using 4 GPUs".
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("scaling_nnunet795-dp-4xa100-82s-vs-1gpu-49s-per-epoch.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1 -> 4 GPUs: 49 s -> 82 s for the same epoch"));
  // A review's counter-example: the compared clause times all 50 epochs.
  EXPECT_NE(diagnose_telemetry(read_text("Training takes 10 min per epoch on 1 GPU in our setup, "
                                         "but 2 hours for all 50 epochs using 4 GPUs.\n"))
                .verdict,
            Verdict::kCommunicationBound);
  // Only a clause right after an epoch's duration, with a unit and the scale it ran at: else
  // a duration no rule places.
  const Telemetry job = read_text(
      "The job takes 82s using 4 GPUs, which is long for such a small model on this machine\n");
  EXPECT_TRUE(job.rates.empty());
  EXPECT_EQ(diagnose_telemetry(job).verdict, Verdict::kUnknown);
  EXPECT_THAT(diagnose_telemetry(read_text("Our model trains in 2 min per epoch on one GPU, "
                                           "but 5 min with 4 GPUs and it gets worse with more "
                                           "of them\n"))
                  .summary,
              testing::HasSubstr("1 -> 4 GPUs: 120 s -> 300 s"));
}

TEST(Vocabulary, ATimestampsMillisecondsBeforeALoggersNameAreNoNodes) {
  // mxnet#3695: "2016-11-02 15:52:03,188 Node Epoch[0] Batch [450]\tSpeed: 2160.01 samples/sec"
  // (the logger is named "Node"): one run, not 188 nodes.
  std::optional<int> nodes;
  gpu_count_of("2016-11-02 15:52:03,188 Node Epoch[0] Batch [450]", &nodes);
  EXPECT_FALSE(nodes);
  gpu_count_of("trained on 2 nodes", &nodes);
  EXPECT_EQ(nodes, 2);
  EXPECT_EQ(diagnose_telemetry(
                read_telemetry_files({pasted(
                    "datalog_mxnet3695-speed-drops-2200-to-220-samples-per-sec-cutoff.txt")}))
                .verdict,
            Verdict::kUnknown);
}

TEST(Vocabulary, ASpeedLowerThanAnotherScalesIsTheSlower) {
  // keras#11342: the speed "**LOWER** than with a single GPU", the scale in the clause before.
  const std::string keras =
      "Using the [MNIST example](https://github.com/keras-team/keras/blob/master/examples/"
      "mnist_mlp.py) model, when multi_gpu_model is set to 2 GPU, the speed is up to 50% "
      "**LOWER** than with a single GPU on the same system.";
  EXPECT_EQ(larger_scale_slower(keras), true);
  EXPECT_EQ(larger_scale_slower("with 4 GPUs the throughput is 3x higher than with 1 GPU"), false);
  // Lower of another quantity in the clause after the speed's (a review's counter-examples).
  EXPECT_EQ(larger_scale_slower("With 8 GPUs the speed is fine, loss is lower than with 1 GPU "
                                "after the same number of epochs."),
            std::nullopt);
  EXPECT_EQ(larger_scale_slower("With 4 GPUs the speed is great, latency is lower than with 1 "
                                "GPU for the same batch."),
            std::nullopt);
  // Lower or higher of a time is no speed: nothing is read.
  EXPECT_EQ(larger_scale_slower("with 4 GPUs the step time is lower than with 1 GPU"),
            std::nullopt);
  // The clause before names no scale either: nothing is read.
  EXPECT_EQ(larger_scale_slower("After the upgrade, the speed is lower than with 1 GPU"),
            std::nullopt);
  const Diagnosis d = diagnose_telemetry(read_telemetry_files({pasted(
      "other_keras11342-multi-gpu-model-mnist-mlp-2x1070ti-100s-vs-63s-device-mapping.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("the larger run is the slower"));
}

TEST(Epochs, AFirstEpochSaidSeveralTimesSlowerThanALaterOneIsTheStorage) {
  // prototypical-networks#15: "on the first epoch, the training speed is only about 8 it/s,
  // but ... increased to 30 it/s at the third epoch" (the thread: images cached in memory).
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("datalog_protonets15-its-8-to-30-over-first-epochs.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kIoBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("3.8x slower than a later one (8 iterations/s "
                                            "against 30 iterations/s)"));
  // Durations: each belongs to the epoch its clause names, whichever comes first.
  const Telemetry t = read_text(
      "The following epochs take only 440 s each, while the first epoch took about 950 s "
      "to finish\n");
  ASSERT_EQ(t.epochs_compared.size(), 1u);
  EXPECT_EQ(t.epochs_compared[0].first, 950);
  EXPECT_EQ(t.epochs_compared[0].later, 440);
  EXPECT_EQ(diagnose_telemetry(t).verdict, Verdict::kIoBound);
  // A first epoch faster than the later ones (keras#13582's "The first epoch lasts ~550 sec. and
  // the second epoch ~1700 sec.") is no cold cache; nor is a first epoch 1.5x slower.
  EXPECT_NE(diagnose_telemetry(read_text("The first epoch lasts ~550 sec. and the second epoch "
                                         "~1700 sec.\n"))
                .verdict,
            Verdict::kIoBound);
  EXPECT_NE(diagnose_telemetry(read_text("the first epoch runs at 20 it/s and the second epoch at "
                                         "30 it/s\n"))
                .verdict,
            Verdict::kIoBound);
  // One epoch named: nothing compared.
  EXPECT_TRUE(read_text("the first epoch runs at 8 it/s, later it reaches 30 it/s\n")
                  .epochs_compared.empty());
  // DALI#1415: two lines of one paragraph, a range of minutes in words ("an imagenet epoch in
  // 20-30 minutes on 8Vx100 server." over "from the second epoch and forth, ... less than 2
  // minutes per epoch"): its middle, 25 minutes, against 2.
  const Telemetry dali = read_telemetry_files(
      {pasted("throughput_dali1415-rn50-first-epoch-20-30min-later-under-2min-8xv100.txt")});
  ASSERT_EQ(dali.epochs_compared.size(), 1u);
  EXPECT_EQ(dali.epochs_compared[0].first, 1500);
  EXPECT_EQ(dali.epochs_compared[0].later, 120);
  EXPECT_EQ(diagnose_telemetry(dali).verdict, Verdict::kIoBound);
  EXPECT_EQ(read_text("the first epoch takes 20 to 30 minutes, the second epoch 2 minutes\n")
                .epochs_compared.at(0)
                .first,
            1500);
  // Lines apart (a blank line between) are no paragraph.
  EXPECT_TRUE(read_text("my first epoch is very slow, about 30 minutes on 8 GPUs.\n\nfrom the "
                        "second epoch on it takes less than 2 minutes per epoch\n")
                  .epochs_compared.empty());
  // A review's counter-examples: an ordinal inside a larger one, a first epoch that compiles,
  // a checkpoint's save after each epoch.
  for (const char* other :
       {"At the 101st epoch training suddenly dropped to 3 it/s, but the next epoch recovered to "
        "10 it/s.\n",
        "With torch.compile the first epoch took 600 s (compilation) while the second epoch took "
        "90 s.\n",
        "Saving the checkpoint after the first epoch takes 120 s, while after the second epoch it "
        "takes 30 s.\n"}) {
    EXPECT_TRUE(read_text(other).epochs_compared.empty()) << other;
  }
}

TEST(Exchange, TheLibraryThatExchangesLabelsItsLinesMeasures) {
  // byteps#32: BERT on the same 4 V100s, "horovod-bert:  global_step/sec: 1.03465 ..." against
  // "byteps:  global_step/sec: 1.56383 ...".
  const Diagnosis d = diagnose_telemetry(
      read_telemetry_files({pasted("throughput_byteps32-bert-horovod-vs-byteps-4-v100.txt")}));
  EXPECT_EQ(d.verdict, Verdict::kCommunicationBound) << d.summary;
  EXPECT_THAT(d.summary, testing::HasSubstr("1.5x faster under byteps (50 samples/s) than under "
                                            "horovod (33.1 samples/s)"));
  EXPECT_EQ(exchange_setting_of("horovod-bert:  "), "horovod");
  EXPECT_EQ(exchange_setting_of("backend=gloo"), "gloo");
  EXPECT_EQ(exchange_setting_of("horovodrun -np 4"), std::nullopt);  // a launcher, no label
  EXPECT_EQ(exchange_setting_of("nccl vs gloo"), std::nullopt);      // two named: a comparison
  // Within 1.5x: the exchange is not shown to matter.
  EXPECT_NE(diagnose_telemetry(read_text("Using 4 GPUs\nhorovod: examples/sec: 40.0\nbyteps: "
                                         "examples/sec: 50.0\n"))
                .verdict,
            Verdict::kCommunicationBound);
}

}  // namespace
}  // namespace stoker::telemetry
