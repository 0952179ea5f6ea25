// Telemetry: the logs people already have (GPU and CPU utilisation over time, stoker's own stats
// lines), read into typed samples, and the doctor's verdict from them (docs/doctor.md,
// "Telemetry").
//
// Kinds, detected from the content (never the file name): nvidia-smi-csv, nvidia-smi-dmon,
// mpstat, sar, vmstat, stoker-stats, stoker-monitor; what each accepts is docs/doctor.md's
// "Kinds of logs" table. CPU busy is always 100 - %idle - %iowait, so every kind agrees on what
// "busy" means.
//
// Failure: every function throws stoker::Error. A file of no known kind: "FILE: not a telemetry
// log stoker reads ...". Malformed content of a recognised kind: "FILE:LINE: reason" (a field
// count that does not match the header, text where a number belongs, a percentage outside
// 0..100, a bad timestamp, invalid JSON or a missing required key). Blank lines, repeated headers
// and trailing spaces are fine.
//
// Thread-safety: plain values and pure functions; distinct objects may be used concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/diagnose.h"

namespace stoker {

enum class TelemetryKind {
  kNvidiaSmiCsv,
  kNvidiaSmiDmon,
  kMpstat,
  kSar,
  kVmstat,
  kStokerStats,
  kStokerMonitor,
  // Found inside a pasted text (read_pasted): any of these may be mixed in one message.
  kNvidiaSmiTable,     // the plain nvidia-smi table, every driver era, with its processes
  kGpustat,            // gpustat lines
  kTrainLog,           // a training loop's data time against step time
  kLightningProfiler,  // PyTorch Lightning's profiler summary
  kTorchProfiler,      // torch.profiler's key_averages() table
  kNvidiaSmiTopo,      // nvidia-smi topo -m
  kIostat,             // sysstat iostat's avg-cpu lines and -x device rows
  kTop,                // top's %Cpu(s) summary lines, htop's CPU bars, ps's and top's process
                       // rows' states
  kThroughput,         // a benchmark's or trainer's rate lines (images/sec, samples/s, it/s)
  kJobSummary,         // Slurm jobstats / seff: a job's mean CPU and GPU utilisation
  kGpuPanel,           // a monitoring panel pasted as text (DIGITS: "GPU Utilization" / "99%")
  kDcgmDmon,           // dcgmi dmon field output (GPUTL, GRACT, SMACT, ...)
  kCollectiveBench,    // nccl-tests tables, collective benchmarks' bandwidth lines
  kPythonProfiler,     // cProfile / profile tables (pstats' print_stats)
  kProcessTimes,       // a shell's `time` (real/user/sys), GNU time -v: a run's wall and CPU time
  kInputProfile,       // a TPU or TensorFlow profiler's share of the step waiting for input,
                       // the DLIO benchmark's accelerator utilisation (AU)
  kPaddleProfiler,     // PaddlePaddle's profiling report: each operator's total time
};
// "nvidia-smi-csv", "nvidia-smi-dmon", "mpstat", "sar", "vmstat", "stoker-stats",
// "stoker-monitor", "nvidia-smi-table", "gpustat", "train-log", "lightning-profiler",
// "torch-profiler", "nvidia-smi-topo", "iostat", "top", "throughput", "job-summary",
// "gpu-panel", "dcgm-dmon", "collective-bench", "python-profiler", "process-times",
// "input-profile", "paddle-profiler".
const char* to_string(TelemetryKind kind);

// How a file's sample times are known.
enum class TimeBase {
  kAbsolute,   // date and time of day: seconds since 1970-01-01 of the logged wall clock
  kTimeOfDay,  // time of day only (no date): seconds since the first day's midnight
  kSequence,   // no clock in the log: sample order, 1 s apart (the tools' default interval)
};

// Where a sample came from: Telemetry::files[file] and its 1-based line number
// (Telemetry::cite quotes it).
struct Origin {
  int file = 0;
  int64_t line = 0;
};

struct GpuSample {
  Origin origin;
  double time = 0;    // seconds, see the file's TimeBase
  int gpu = 0;        // the GPU's index within its file (GPUs of different files are distinct)
  int64_t round = 0;  // this GPU's sample count before this one: equal rounds are simultaneous
  double util = 0;    // utilization.gpu / dmon sm, percent
  std::optional<double> memory_util;       // percent
  std::optional<double> memory_used_mib;   // MiB
  std::optional<double> pcie_rx_mbps;      // MB/s
  std::optional<double> pcie_tx_mbps;      // MB/s
  std::optional<double> memory_total_mib;  // MiB (nvidia-smi table, gpustat)
  std::optional<double> power_w;           // draw, W (nvidia-smi table)
  std::optional<double> power_cap_w;       // cap, W (nvidia-smi table)
};

// A process on a GPU (the nvidia-smi table's process rows, gpustat's user(memory) lists).
struct GpuProcess {
  Origin origin;
  int gpu = 0;      // index within its file, as GpuSample::gpu
  int64_t pid = 0;  // 0 when not shown (gpustat without -p)
  std::string name;
  std::optional<double> memory_mib;
};

// How long a training step took and how long of it waited for data (a training loop's own log
// line, or a profiler's totals).
struct StepSample {
  Origin origin;
  double time = 0;  // sample order (kSequence) unless the log has a date
  double step_seconds = 0;
  double data_seconds = 0;  // 0 when !has_data
  bool average = false;     // the log's running averages (ImageNet's "(avg)") or a profile's totals
  bool has_data = true;     // false: the line times the step only ("5.95s/it")
  bool data_upper_bound = false;  // data_seconds is at most the wait (a profile's epoch time
                                  // outside its batches)
  int run = 0;                    // Telemetry::runs index
  // The line gives the step's phases as percentages of it ("time stat: data 0.1%, forward
  // 0.9%, backward 49.7%"): step_seconds is 1 and data_seconds the wait's share, no seconds.
  bool shares = false;
};

// One step's phases as a trainer's timers print them (Megatron's and DeepSpeed's "time (ms) |
// forward-compute: ... | backward-params-all-reduce: ..."): the time spent exchanging
// gradients against the time computing.
struct PhaseSample {
  Origin origin;
  double communication_seconds = 0;  // all-reduce, reduce-scatter, all-gather timers
  double compute_seconds = 0;        // forward, backward and optimizer timers
  // A profile's GPU time (torch.profiler's "Self CUDA"): communication_seconds is NCCL's kernels,
  // compute_seconds the rest of the GPUs' time.
  bool gpu_profile = false;
};

// A step's forward and backward timed apart ("Forward Pass: 0.29", "Backward: 3.94", on one
// line or on rows of a timer table): a backward far above its forward holds something besides
// arithmetic, most often the gradient all-reduce that runs inside it.
struct ForwardBackward {
  Origin origin;  // the line that completed the pair
  double forward_seconds = 0, backward_seconds = 0;
  bool unit_stated = true;  // false: bare fractions ("Forward Pass: 0.29"), seconds or not
};

// One collective's measured bandwidth (nccl-tests' "size ... time algbw busbw" rows, a
// benchmark's "AllReduce: [[0, 1, 2, 3]] Bytes: 2.00000 GB Time: 0.01403 s Bandwidth: 213.81
// GB/s"): how fast the GPUs of that group exchange data.
struct BandwidthSample {
  Origin origin;
  double bytes = 0;     // the message size; 0 when not stated
  double bus_gbps = 0;  // bus bandwidth (nccl-tests' busbw), else the bandwidth stated, GB/s
  std::string group;    // what was measured: the table, or the ranks and collective named
  // nccl-tests' "# Avg bus bandwidth : 92.34": the mean of a sweep's rows, small messages'
  // latency-bound ones with the large, so no one link's rate.
  bool sweep_average = false;
};

// A sentence comparing two scales of one job ("2 nodes is significantly slower than 1 node",
// "multi gpu mode is much slower than single gpu"): what the person measured, in words.
struct ScalingClaim {
  Origin origin;
  bool larger_is_slower = false;  // more GPUs (or nodes) ran slower, or no faster ("not faster")
  // The speed said to be the same at every scale ("no matter how many GPUs"), and whether the
  // scales are machines or one machine's GPUs.
  bool unchanged = false;
  bool across_nodes = false;
  // The GPUs' utilisation said at each scale, where the sentence gives it ("95% on a single
  // machine, ... only 63% when training on two machines"): percent at the smaller and larger.
  struct Utilisation {
    int smaller_scale = 0, larger_scale = 0;
    double smaller = 0, larger = 0;
  };
  std::optional<Utilisation> utilisation;
};

// A rate a trainer or benchmark printed: "images/sec: 198.0", "total images/sec: 1743.2",
// "Img/sec per GPU: 290.1", "29.7 samples/s", "1.47it/s".
struct ThroughputSample {
  Origin origin;
  double per_second = 0;
  std::string unit;         // what is counted: "images", "samples", "tokens", "iterations"
  bool per_gpu = false;     // one GPU's (or rank's) rate
  bool total = false;       // the job's rate over all its GPUs ("total images/sec")
  std::optional<int> gpus;  // GPUs the line itself names ("on 8 GPU(s)")
  int run = 0;              // Telemetry::runs index
};

// One run of a job in the logs: each file is one, and a paste holding several (a 1-GPU and an
// 8-GPU log, each under its own heading) has one per heading that states a GPU count.
struct RunInfo {
  std::string source;       // the file or paste it was read from
  int64_t line = 0;         // its heading (or first) line
  std::optional<int> gpus;  // as the heading, a launcher flag or the log states it
  std::optional<int> nodes;
  bool synthetic = false;       // the run reads synthetic data ("synthetic", "fake data", no input)
  bool exchange_heavy = false;  // the text says the job spans machines or shards its model
                                // ("2 nodes", "two machines", "multi-node", FSDP, ZeRO-3)
  // The loader setting the run was labelled with, when a paste compares settings of one job
  // ("num_workers=2", "persistent workers, pinned memory", "synthetic data"); empty when none.
  std::string loader_setting;
  // The loader's threads, when its setting names them ("--num_threads=32",
  // "num_parallel_calls=8", "OMP_NUM_THREADS=1").
  std::optional<int> loader_threads;
  bool compute_threads = false;       // ... threads of CPU work (OMP_NUM_THREADS), not a loader's
  std::optional<int> loader_workers;  // the loader's worker processes, when its setting names them
  // Where or how the data is read, as a table's row says it ("readtype=NO_CACHE, data
  // cached=True", "NFS"): the storage cells of the row; empty when the row names none.
  std::string storage;
  // How the GPUs exchange, when a paste compares strategies of one job on the same GPUs
  // ("ddp", "fsdp", "zero-3", "shard_grad_op"); empty when none is named.
  std::string exchange_setting;
  // The link between the GPUs a run is labelled with, when a paste compares runs with and
  // without it ("w/ NVlink", "w/o NVlink", "NCCL_P2P_DISABLE=1"): "nvlink", "no nvlink", "p2p",
  // "no p2p"; empty when none is named.
  std::string link_setting;
  // The model a table's row names when a paste compares models on one setup ("Resnet_50 |
  // 256x192 | 64 | 0.88"); empty when none.
  std::string model;
  int group = 0;  // runs of one series: a scale seen again (two models' 1-4 GPU runs in one
                  // paste) or another column of a table starts the next group
};

// GPU memory without utilisation (an `nvidia-smi --query-gpu=memory.used,memory.free` CSV).
struct GpuMemorySample {
  Origin origin;
  int gpu = 0;
  double used_mib = 0;
  std::optional<double> total_mib;
};

// One device row of `iostat -x`: how busy the storage was.
struct DiskSample {
  Origin origin;
  std::string device;
  double util = 0;                   // %util
  std::optional<double> read_await;  // r_await (ms), when the row has it
};

// Something read that a verdict must not be misled by (a trap), quoted with its line.
struct TelemetryNote {
  Origin origin;
  std::string text;
};

// nvidia-smi topo -m: how the GPUs are connected.
struct GpuTopology {
  Origin origin;
  int gpus = 0;
  int nvlink_pairs = 0;  // GPU pairs linked by NV#
  int sys_pairs = 0;     // GPU pairs whose traffic crosses the CPUs' interconnect (SYS)
  int pairs = 0;         // GPU pairs
};

struct CpuSample {
  Origin origin;
  double time = 0;
  int cpu = -1;       // -1: all CPUs together, else the CPU number
  double busy = 0;    // percent: 100 - idle - iowait
  double iowait = 0;  // percent
  double idle = 0;    // percent
};

// One stoker stats line: one rank's window.
struct RankSample {
  Origin origin;
  double time = 0;  // seconds since 1970
  int rank = 0;
  int world_size = 1;
  PipelineWindow window;
};

struct TelemetryFile {
  std::string path;
  TelemetryKind kind = TelemetryKind::kNvidiaSmiCsv;
  TimeBase time_base = TimeBase::kSequence;
  std::vector<std::string> lines;  // every line, trailing spaces removed (for quoting)
  std::string gpu_source;          // stoker-monitor: "nvml", "nvidia-smi" or "none"
  std::optional<int> exit_status;  // stoker-monitor: the command's exit status, when it ended
  bool gpus_guessed = false;       // nvidia-smi rows without their GPU: all read as GPU 0
  std::string stats_file;          // stoker-monitor: where the job's loaders wrote stats lines
  // job-summary: each sample is a mean over the whole run (of every GPU, for a GPU sample), not
  // an instant.
  bool run_means = false;
  int64_t long_lines = 0;  // pasted lines over 16 KiB (base64, minified blobs): not read
};

// Samples of every file read, in file order and, within a file, in line order.
struct Telemetry {
  std::vector<TelemetryFile> files;
  std::vector<GpuSample> gpus;
  std::vector<CpuSample> cpus;
  std::vector<RankSample> ranks;
  std::vector<GpuProcess> processes;
  std::vector<StepSample> steps;
  std::vector<GpuTopology> topologies;
  std::vector<TelemetryNote> notes;
  std::vector<DiskSample> disks;
  std::vector<ThroughputSample> rates;
  std::vector<RunInfo> runs;  // at least one per file that has steps or rates
  std::vector<GpuMemorySample> memory;
  std::vector<PhaseSample> phases;
  std::vector<ForwardBackward> forward_backward;
  // The paste says its job exchanges gradients between GPUs: a data-parallel engine or its
  // collectives named (DDP, DeepSpeed, Horovod, NCCL, all-reduce, "Sync Gradients"), or runs on
  // more than one GPU or node.
  bool data_parallel = false;
  // A sentence of the paste says the job scales on synthetic data, its runs (on its own data)
  // being the ones that do not.
  bool synthetic_scales = false;
  // The paste states a batch per GPU ("batch 32 per GPU", "per-GPU batch size is fixed"): step
  // times at each scale then time that batch, whatever their trend.
  bool batch_per_gpu_stated = false;
  // The paste counts its run in iterations ("I use 74000 iterations", "max_iters=40000"), the
  // schedule of OpenMMLab's and Detectron2's trainers: each iteration one batch on every GPU, so
  // a run's duration at each scale times the same steps, and more GPUs do more work in them.
  bool run_in_iterations = false;
  std::vector<ScalingClaim> claims;
  // A speedup the paste states for its larger scale, each said of synthetic data or of the
  // job's own ("with synthetic data, my speedup is 1.97x, and with real imagenet data, the
  // speedup is 1.45x", horovod#21).
  struct SpeedupSaid {
    Origin origin;
    double times = 0;
    bool synthetic = false;
  };
  std::vector<SpeedupSaid> speedups;
  // A sentence setting the first epoch's speed against a later one's ("on the first epoch,
  // the training speed is only about 8 it/s, but ... increased to 30 it/s at the third
  // epoch"): how many times slower the first epoch ran (its time over the later one's).
  struct EpochsCompared {
    Origin origin;
    double first, later;  // the two values as the sentence gives them, in `unit`
    std::string unit;     // a rate's ("iterations/s") or "s"
    double first_slower_by = 0;
  };
  std::vector<EpochsCompared> epochs_compared;
  std::vector<BandwidthSample> bandwidths;
  // Lines in which a trainer says itself that its data loading could not keep up (darknet's
  // "Loaded: 1.17 seconds - performance bottleneck on CPU or Disk HDD/SSD", Caffe's "Data layer
  // prefetch queue empty", its multi-GPU "blocking_queue.cpp:50] Waiting for data").
  std::vector<Origin> loader_warnings;
  // A trainer's loader queue of ready batches, each line's fill against the queue's default
  // capacity, 0 to 1 (Detectron's json_stats "mb_qsize": 64 of 64, tensorpack's monitor
  // "QueueInput/queue_size: 50" of 50): full throughout, the batches wait for the step, not the
  // step for them.
  std::vector<std::pair<Origin, double>> loader_queue_fill;
  // A sentence saying the GPU's use swings between idle and busy ("the GPU is barely used (fast
  // oscillation from 0% to 100%)", "GPU utilization fluctuates between 0 and 100%"): its low
  // and high percentages, the low at most 30, the high at least 70.
  struct UtilisationSwing {
    Origin origin;
    double low = 0, high = 0;
  };
  std::vector<UtilisationSwing> utilisation_swings;
  // Process rows of ps or top: how many were read, and those in state D (uninterruptible
  // sleep, in the kernel waiting on storage or a network file system).
  int64_t process_rows = 0;
  std::vector<Origin> processes_in_d;
  // A run's wall-clock and CPU time (user + sys) as a shell's `time` or GNU time -v reports it:
  // how many CPUs its process kept busy on average, and, between runs of one job, whether the
  // one that spent less CPU time finished sooner.
  struct ProcessTimes {
    Origin origin;
    double real_seconds = 0;
    double cpu_seconds = 0;
    std::string command;  // what was timed, when the paste shows it ("python train.py ..."); or ""
  };
  std::vector<ProcessTimes> process_times;
  // One rate printed by several processes at the same point of the loop, each its own line
  // within a few of the first: the same text up to the rate, a counter in it ("Epoch[0] Batch
  // [100]\tSpeed: 1326.73 samples/sec" from each of MXNet's dist_sync workers). The rates in
  // the order printed.
  struct RepeatedRate {
    Origin first;
    std::vector<std::pair<Origin, double>> copies;
  };
  std::vector<RepeatedRate> repeated_rates;
  // A feeder's own count of the batches it made and how long that took (Tacotron's "Generated
  // 32 batches of size 32 in 126.923 sec"): seconds per batch.
  std::vector<std::pair<Origin, double>> feeder_batch_seconds;
  // The GPU's time against the wall clock's for the same iterations, as TorchBench's run.py
  // prints them ("GPU Time: 32.600 milliseconds" over "CPU Total Wall Time: 32.625
  // milliseconds"): the share of the time the GPU computes.
  struct GpuTimeAgainstWall {
    Origin origin;  // the wall time's line
    double gpu = 0, wall = 0;
  };
  std::vector<GpuTimeAgainstWall> gpu_time_against_wall;
  // Measurements of a paste that no reader placed (durations, rates, utilisations under names
  // no rule weighs: "Time taken for loss_backward: 0.566"), each its line and its kind
  // ("duration", "rate", "utilisation"; "TPU idle time", the TPU monitor's idle share without
  // its infeed share): read only when nothing else was (the TPU's idle time: wherever it is),
  // to say what the paste measures and what it would take to judge.
  std::vector<std::pair<Origin, std::string>> unplaced;
  // The loader timed alone beside the model (or the training) it feeds, in one unit, on one
  // line ("`T_loader` 383 img/s against `T_model` 41 img/s"): a loader that makes more than the
  // model takes is not what holds the job back.
  struct LoaderAgainstModel {
    Origin origin;
    double loader_per_second = 0, model_per_second = 0;
    std::string unit;
  };
  std::vector<LoaderAgainstModel> loader_against_model;
  // Model FLOPs utilisation a trainer prints ("mfu: 74.13", "mfu 0.96%"), in percent: the
  // share of the GPUs' peak arithmetic the model's own FLOPs use.
  std::vector<std::pair<Origin, double>> mfu;
  // MFU figures of a table's rows, one configuration each (scan_mfu_table), in percent: not a
  // trainer's lines one after another, so none of them is a warm-up.
  std::vector<std::pair<Origin, double>> mfu_configurations;
  // The model's TFLOP/s per GPU a trainer prints ("throughput per GPU (TFLOP/s/GPU): 243.6",
  // "Estimates: 129.32TFLOPs", "tflops=93.48"): against the peak of the GPU the paste names,
  // the same share as mfu.
  std::vector<std::pair<Origin, double>> model_tflops;
  // A scaling efficiency the paste states, in percent ("Scaling efficiency 41.8%"): which of
  // two readings of its step times the person used, each GPU's batch fixed or one batch
  // divided among the GPUs.
  std::vector<std::pair<Origin, double>> stated_scaling_efficiency;
  // A progress bar standing at its start, without a rate yet ("0%|   | 0/46617 [00:00<?,
  // ?it/s]"), that no later line of the paste moves: the loop still waits for its first batch.
  std::optional<Origin> first_batch_pending;
  // A cause the paste's own words state as found ("We are dataloader bottlenecked", "caused the
  // training job to be single-threaded-CPU-bottlenecked"), not asked, doubted or made a
  // condition of: read only beside what the paste measures, and weighed only where the
  // measurements alone decide nothing.
  struct StatedCause {
    Origin origin;
    Verdict verdict = Verdict::kUnknown;
  };
  std::vector<StatedCause> stated_causes;
  // Waits for data timed on lines that do not time their step ("data: 53577ms, mem: 24269M"),
  // in seconds: read only when the log has no step lines to pair them with.
  std::vector<std::pair<Origin, double>> lone_waits;
  // Horovod's stall warning, per stalled op: the ranks the others wait for ("[missing ranks:
  // 0]").
  std::vector<std::pair<Origin, std::vector<int>>> missing_ranks;
  // NCCL's INFO line saying it exchanges over TCP sockets, not InfiniBand or RoCE ("NET/Socket
  // : Using [0]bond0", "Using network Socket"); whether its RDMA library failed to load
  // ("Failed to open libibverbs"); and whether the paste shows the job spanning machines (two
  // hosts in NCCL's lines, a channel "via NET/", or words such as "cross-node", "2 nodes").
  std::optional<Origin> nccl_over_sockets;
  bool nccl_without_verbs = false;
  bool spans_machines = false;
  // The GPUs the paste says the job runs on ("I'm using GPU 1 and 3", CUDA_VISIBLE_DEVICES=1,3):
  // on a shared machine the others in a snapshot are someone else's. Empty when not said.
  std::vector<int> job_gpus;
  // The DLIO benchmark's accelerator utilisation (AU %, the emulated compute's share of the
  // run's time) at each accelerator count a table gives, with the CPUs' idle share where a
  // column gives it beside. DLIO emulates each step's compute and exchanges no gradients: the
  // rest of its time is the wait for its input.
  struct UtilisationAtScale {
    Origin origin;
    int accelerators = 0;
    double percent = 0;
    std::optional<double> cpu_idle;  // percent
    std::string series;              // the row's words (a workload's name): one series each
  };
  std::vector<UtilisationAtScale> accelerator_utilisation;
  // PyTorch Lightning's warning that a loader has few workers ("The 'train_dataloader' does not
  // have many workers which may be a bottleneck. Consider increasing the value of the
  // `num_workers` argument` to `num_workers=31`"): printed from the loader's setting (2 workers
  // or fewer on a machine with more CPUs), not from a measured wait. Which loader it names
  // ("train_dataloader", "val dataloader 0") and the worker count it suggests (the CPUs).
  struct FewWorkersWarning {
    Origin origin;
    std::string loader;
    std::optional<int> suggested;
  };
  std::vector<FewWorkersWarning> few_workers_warnings;

  // "FILE:LINE: <the line>" (long lines shortened), for evidence.
  std::string cite(const Origin& origin) const;
};

// The kind of a log from its first lines; `name` is only used in the error message.
TelemetryKind detect_telemetry_kind(std::string_view content, const std::string& name);

// Detects the kind of `content` and appends its samples (and a TelemetryFile named `name`);
// when it throws, `into` is left as it was. Markdown noise is read through first (`> ` quotes,
// code fences, `\#` escapes, `**bold**`, backticks, CRLF; line numbers are kept). A content of
// no single log kind is read as a pasted message (read_pasted).
void parse_telemetry(std::string_view content, const std::string& name, Telemetry& into);

// A pasted message: every nvidia-smi table, gpustat line, training-log step line, Lightning
// profile and topo matrix in it, alone or mixed with prose (one TelemetryFile per kind found,
// all named `name`). Throws "NAME: not a telemetry log stoker reads ..." when none is found.
void read_pasted(std::string_view content, const std::string& name, Telemetry& into);

// `content` with Markdown noise removed, line for line (so that line numbers still match).
std::string strip_markdown(std::string_view content);

// Reads and parses each file ("-": standard input, named "<stdin>"), and a stoker monitor
// log's stats file when it exists; errors name the file (unreadable, unknown kind, FILE:LINE).
Telemetry read_telemetry_files(const std::vector<std::string>& paths);

// Thresholds of the telemetry verdict, in percent unless said otherwise (docs/doctor.md).
struct TelemetryThresholds {
  int min_samples = 5;         // fewer GPU samples (or CPU samples, where needed): unknown
  double gpu_low = 50;         // mean GPU utilisation below this: the GPUs are underused
  double gpu_healthy = 80;     // mean GPU utilisation at or above this: healthy
  double cpu_pinned = 85;      // CPU busy at or above this: the CPUs are saturated
  double cpu_low = 50;         // CPU busy below this: the CPUs are not what limits
  double iowait_high = 20;     // iowait at or above this (GPUs and CPUs low): io-bound
  double imbalance_busy = 60;  // rank-imbalance: the busiest GPU's mean at or above this ...
  double imbalance_idle = 20;  // ... while the other GPUs' mean is at or below this
  double dip_fraction = 0.2;   // communication-bound: at least this share of the rounds has
                               // every GPU below gpu_low ...
  double dip_together = 0.6;   // ... and of the rounds with some GPU below gpu_low, at
                               // least this share has all of them below it ...
  double interconnect_high_mbps = 1000;  // ... while PCIe rx + tx per GPU in those rounds
                                         // averages at least this (MB/s)
  StragglerThresholds straggler;         // stats lines: the straggler rule (stoker/diagnose.h)
  WaitThresholds wait;           // training-loop logs: the share of the step waiting for data
  double scaling_healthy = 0.8;  // runs at several scales: per-GPU rate kept at least this
};

// The verdict from telemetry: rank-imbalance, healthy, input-bound-cpu, io-bound,
// communication-bound or unknown, with the numbers in the summary, quoted log lines
// ("FILE:LINE: <line>") and per-GPU means as evidence, and fixes. Stats lines go through
// diagnose_pipeline per rank. GPU and CPU logs are compared over the time they overlap when
// both have dates, else by whole-file means. Never throws for well-formed input.
Diagnosis diagnose_telemetry(const Telemetry& telemetry, const TelemetryThresholds& t = {});

// The verdict from step times measured in a training loop (stoker.torch.watch times a
// DataLoader): step i took step_seconds[i], of which data_seconds[i] waiting for its batch.
// The same judgement as a training log's Time/Data lines (diagnose_telemetry); `source` names
// the loop in the evidence.
Diagnosis diagnose_step_times(const std::vector<double>& step_seconds,
                              const std::vector<double>& data_seconds, const std::string& source);

}  // namespace stoker
