// The parts of the telemetry verdict (stoker/telemetry.h, diagnose_telemetry) that judge what a
// person pastes rather than a monitored series: one look at the GPUs, runs of a job at
// different scale, GPU memory without utilisation. Not a public header.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/telemetry_parse.h"
#include "stoker/diagnose.h"
#include "stoker/telemetry.h"

namespace stoker::telemetry {

// One GPU in a snapshot: its utilisation (the mean of its few samples) and what it holds.
struct SnapshotGpu {
  int file = 0;
  int gpu = 0;
  double util = 0;  // the mean of its looks
  double peak = 0;  // the highest of its looks (a few looks: one may fall between steps)
  std::optional<double> memory_used_mib;
  std::optional<double> power_w, power_cap_w;
  Origin origin;  // its last sample
};

// What the CPUs did while the snapshot was taken, when the paste shows it (top, mpstat, ...).
struct CpuView {
  double busy = 0;
  double iowait = 0;
  int64_t samples = 0;
  // Every sample's line speaks of one process, core or thread ("main process cpu usage:
  // 100%"): one core's use, not the machine's.
  bool one_process = false;
};

// The text of a sample's line ("" when the file keeps none).
std::string_view line_of(const Telemetry& tel, const Origin& o);

// One look at the GPUs (fewer samples than a series needs), judged as an expert would, with a
// calibrated confidence, the innocent explanation and the command that settles it:
//   one GPU busy, the others idle        rank-imbalance ("only GPU k computes"), medium when
//                                        the idle GPUs hold the job's memory, else low
//   most busy, a few idle (2+ busy)      rank-imbalance, low (busy readings of ranks waiting in
//                                        a collective for the idle one)
//   all busy (mean >= gpu_healthy)       healthy, low; communication-bound, low, when they
//                                        draw under a third of their power cap
//   all below gpu_low                    input-bound-cpu (CPU view pinned) / io-bound (iowait),
//                                        low; else unknown naming the deciding measurement
Diagnosis judge_snapshot(const Telemetry& tel, const std::vector<SnapshotGpu>& gpus,
                         const std::optional<CpuView>& cpu, const TelemetryThresholds& th);

// Runs of one job at two or more scales (Telemetry::runs with a GPU or node count, each with a
// rate or step times): the scaling efficiency and why it falls. nullopt with fewer than two
// comparable runs.
std::optional<Diagnosis> judge_scaling(const Telemetry& tel, const TelemetryThresholds& th);

// Runs of one job at one scale under different loader settings (RunInfo::loader_setting:
// num_workers, persistent workers, pinned memory, synthetic data), each with a rate or step
// times: input-bound-cpu, medium, when the rate moves 1.2x or more with the setting; against
// synthetic data, input-bound below 80 % of it, else healthy; healthy, low, when settings move
// it under 10 %. nullopt without two such runs.
std::optional<Diagnosis> judge_loader_settings(const Telemetry& tel);

// Runs of one job at one scale under different strategies of exchange (RunInfo::
// exchange_setting: DDP, FSDP, ZeRO stages, FSDP's sharding) whose rates differ by
// kExchangeMatters or more: `communication-bound`, low (the model and the GPUs are the same;
// how they exchange is what changed). Between strategies that shard more or less of the model
// (DDP, then ZeRO-1, -2, -3 and FSDP's full sharding), the one that exchanges the most slower
// than the one that exchanges the least by kExchangeExposed or more is `communication-bound`
// too; not slower by that, `healthy`, low (its extra exchange hides behind the compute).
// nullopt otherwise, or beside loader settings.
constexpr double kExchangeMatters = 1.5;
constexpr double kExchangeExposed = 1.2;
std::optional<Diagnosis> judge_exchange_settings(const Telemetry& tel);

// Runs of one job at one scale, with and without a link between the GPUs (RunInfo::
// link_setting: NVLink, P2P), under one strategy of exchange: kExchangeExposed or more slower
// without it is `communication-bound`, medium (the link is all that changed, and only the
// exchange crosses it); less than that, `healthy`, low. nullopt otherwise, or beside loader
// settings.
std::optional<Diagnosis> judge_link_settings(const Telemetry& tel);

// The loader timed alone against the model it feeds (Telemetry::loader_against_model, the
// last such line): healthy when the loader makes at least kLoaderMargin times what the model
// takes, input-bound below it; medium confidence (what a loader makes alone it may not make
// beside the training, which shares its CPUs). nullopt without such a line.
std::optional<Diagnosis> judge_loader_against_model(const Telemetry& tel);

// ResNet-50 trained on a GPU the paste names, at under a third of what that GPU trains it at in
// published benchmarks (kResNet50Reference, fp32 or TF32 at 224 px): `input-bound`, low —
// the GPU's arithmetic is not what limits the job. nullopt unless the paste names ResNet-50
// and one GPU of the table, and rates images or samples; never for detection or segmentation
// (a ResNet-50 backbone at other sizes).
std::optional<Diagnosis> judge_against_reference(const Telemetry& tel);

// The one GPU kind the paste names among those with a known dense BF16/FP16 peak (kPeakTflops),
// and that peak in TFLOP/s: what a trainer's TFLOP/s per GPU is a share of. nullopt when it
// names none or several.
struct GpuPeak {
  std::string name;
  double tflops = 0;
};
std::optional<GpuPeak> named_gpu_peak(const Telemetry& tel);

// The parameters of the one dense model the paste names by its size ("Llama-2-7b-hf",
// "Qwen2-7B", "Number of parameters: 3.82B", "a 13B model"), in billions: what a training
// step's FLOPs per token are made of (about 6 per parameter). nullopt when it names none or
// several sizes, a mixture of experts ("Mixtral-8x7B", "30B-A3B", "MoE": its active
// parameters are fewer), or inference (generation, serving, prefill: 2 per parameter).
std::optional<double> named_model_billions(const Telemetry& tel);

// Runs of different models on one setup (RunInfo::model) of which three or more, of two
// models or more, run within 2 % of one another: `input-bound`, medium (a step whose time does
// not depend on the model waits for something else). nullopt otherwise.
std::optional<Diagnosis> judge_models_at_one_pace(const Telemetry& tel);

// GPU memory without utilisation (Telemetry::memory): an uneven share is what DataParallel
// looks like, but memory is not time. nullopt without memory samples.
std::optional<Diagnosis> judge_memory(const Telemetry& tel);

// A trainer's phase timers (Megatron, DeepSpeed): the share of the step spent exchanging
// gradients. `communication-bound` when it is the dominant share of the wait thresholds (30 %
// or more); else, for timers, `healthy` (low: the rest of the timed step is the model's own
// work, but the timers leave out the wait for data), and for a GPU profile's NCCL kernels
// `unknown` saying the exchange is not what limits; nullopt without timers.
std::optional<Diagnosis> judge_phases(const Telemetry& tel, const TelemetryThresholds& th);

// A step's forward and backward timed apart, the backward at 5x its forward or more:
// `communication-bound` (low) where the paste shows a data-parallel job, else `unknown` naming a
// forward timed without a synchronize; nullopt without such pairs or with a lesser backward.
std::optional<Diagnosis> judge_forward_backward(const Telemetry& tel);

// A sentence of the paste saying the larger run was the slower ("2 nodes is significantly
// slower than 1 node"), when nothing measured decides: communication-bound, low confidence
// (what a larger scale adds is the exchange between GPUs), naming the measurement that would
// tell it from an input pipeline that does not scale. nullopt without such a sentence.
// `steps_keep_up`: how little the step log's steps wait for data ("waiting for data 1 % of the
// time"), where they do, said in place of "nothing times the wait".
std::optional<Diagnosis> judge_claims(const Telemetry& tel, std::string_view steps_keep_up = {});
// NCCL's INFO lines saying it exchanges over TCP sockets (no InfiniBand or RoCE):
// communication-bound with low confidence in a paste that shows the job spanning machines, else
// `unknown` saying what holds if it does (on one machine NCCL does not use the network).
std::optional<Diagnosis> judge_nccl_transport(const Telemetry& tel);

// Speedups the paste states for one larger scale, on synthetic data and on its own: its own
// well below the synthetic one is loading that does not keep up at that scale.
std::optional<Diagnosis> judge_speedups(const Telemetry& tel);

// Collective benchmarks (nccl-tests, a benchmark's "AllReduce ... Bandwidth: 5.08 GB/s"): the
// bus bandwidth of each measured group at its largest messages. `communication-bound`, medium,
// when one group runs 5x or more slower than another (the link it crosses sets the pace of the
// exchange over it); low when the only measurement is under 5 GB/s (socket-class); else
// `unknown`: the interconnect measured is not slow. nullopt without such lines.
std::optional<Diagnosis> judge_bandwidth(const Telemetry& tel);

// A trainer's own words that its loading did not keep up (Telemetry::loader_warnings), when
// nothing measured decides: `input-bound`, low (Caffe's queue is also empty once at the start,
// while the first batches are made), naming the measurement that settles it. nullopt without.
std::optional<Diagnosis> judge_loader_warnings(const Telemetry& tel);

// A trainer's loader queue shown full (Telemetry::loader_queue_fill), every reading at 90 % of
// its capacity or more, when nothing measured decides: `healthy`, medium (the batches wait for
// the step). nullopt without, where a reading is lower, or beside a loader warning.
std::optional<Diagnosis> judge_full_loader_queue(const Telemetry& tel);

// The GPU's time against the wall clock's (Telemetry::gpu_time_against_wall), when nothing
// measured decides: `healthy`, medium, where the GPU computes 90 % of the wall time or more in
// every run; else `unknown` (the host holds it back, by its input or its launches). nullopt
// without.
std::optional<Diagnosis> judge_gpu_time_against_wall(const Telemetry& tel);

// A GPU's use said in words to swing between idle and busy (Telemetry::utilisation_swings),
// when nothing measured decides: `input-bound`, low, naming the measurement that settles it.
std::optional<Diagnosis> judge_utilisation_swings(const Telemetry& tel);

// Horovod's stall warning (Telemetry::missing_ranks): `rank-imbalance`, medium, naming the
// rank(s) missing from every stalled collective (the others wait for it); low when the missing
// ranks vary. nullopt without such lines.
std::optional<Diagnosis> judge_stalled_collectives(const Telemetry& tel);

// Process rows of ps or top with the job's processes in state D (Telemetry::processes_in_d):
// `io-bound`, low, with two such rows or a third of the rows listed (a process reading a file
// passes through D; staying there is waiting on storage). nullopt otherwise.
std::optional<Diagnosis> judge_process_states(const Telemetry& tel);

// A shell's `time` of runs of one job (Telemetry::process_times). Two runs or more, the one that
// finished in 0.7x the time or less having spent half the CPU time or less, where the slower kept
// two CPUs busy or more: `input-bound-cpu`, low (its CPU work set its pace; in a GPU job, most
// often the input pipeline's decoding and augmenting). Otherwise `unknown`, saying how many CPUs
// each run kept busy. nullopt without process times.
std::optional<Diagnosis> judge_process_times(const Telemetry& tel);

// One rate printed by several processes at the same point of the loop (Telemetry::
// repeated_rates): where, in two such points or more and in half of them at least, the slowest
// copy runs at 0.75x the fastest or less, one process lags and the others wait for it at each
// synchronisation: `rank-imbalance`, low. nullopt otherwise.
std::optional<Diagnosis> judge_repeated_rates(const Telemetry& tel);

// What to run to judge a job whose logs were too thin.
const std::vector<std::string>& collect_more();

}  // namespace stoker::telemetry
