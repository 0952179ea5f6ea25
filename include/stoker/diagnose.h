// The doctor's vocabulary: one verdict set for everything stoker says about a job, live (from
// LoaderStats), from a capacity test, from a cross-rank audit, or from monitoring logs.
//
//   input-bound          the training step waits for data, and the evidence does not say
//                        whether the CPUs or the storage hold the input back
//   input-bound-cpu      the consumer (GPU) waits for batches while the CPUs are saturated
//   io-bound             reading dominates: workers wait on storage; CPUs and GPUs both low
//   rank-imbalance       one rank/GPU does the work while the others idle or repeat it
//                        (unsharded data, a single-GPU funnel, a straggler)
//   communication-bound  GPUs stall together while interconnect traffic is high, CPUs not
//                        pinned
//   healthy              the consumer rarely waits: the GPU is the limit
//   unknown              the evidence is too thin to say
//
// A Diagnosis carries the verdict, a one-line summary with numbers, the evidence (each a
// human-readable line, citing FILE:LINE for logs) and ranked fixes. Its JSON form is the
// contract of `stoker doctor --json` and Python's `diagnose()` (docs/doctor.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace stoker {

enum class Verdict {
  kInputBound,
  kInputBoundCpu,
  kIoBound,
  kRankImbalance,
  kCommunicationBound,
  kHealthy,
  kUnknown
};
const char* to_string(Verdict verdict);  // "input-bound", "input-bound-cpu", ...
Verdict parse_verdict(const std::string& name);

// A change the user can make, with its effect when it was measured.
struct Fix {
  std::string action;             // "stoker pack DATA OUT --mode jpeg --max-side 256 --quality 90"
  std::string reason;             // why it helps this job
  std::optional<double> speedup;  // measured images/s ratio against the current setup
  std::optional<double> images_per_second;  // measured rate with the fix
  std::string measured_on;                  // "200 of your images, 2 threads"; empty: estimate
};

// The measured values behind a verdict, one part per source; to_json writes the parts that are
// set as the "numbers" object of docs/doctor.md (keys as the fields are named).

// The live verdict's window (diagnose_pipeline).
struct PipelineNumbers {
  double seconds = 0;
  double images_per_second = 0;
  double wait_fraction = 0;
  double busy_fraction = 0;
  double read_fraction = 0;
  double cpu_utilisation = 0;
  int threads = 0;
  int cpus = 0;
  std::optional<double> step_images_per_second = std::nullopt;  // the step's own pace, if known
};

// The capacity test's plan (run_capacity).
struct CapacityNumbers {
  double demand_images_per_second = 0;     // all GPUs together
  double delivered_images_per_second = 0;  // min(demand, pipeline)
  double pipeline_images_per_second = 0;   // the setup as is
  double gpu_idle_fraction = 0;            // at the planned GPU count
  int gpus_fed = 0;
};

// GPU and CPU utilisation logs (diagnose_telemetry).
struct GpuUtilisation {
  std::string file;  // printable path of the log
  int index = 0;     // the GPU's index in it
  double mean_util = 0;
  int64_t samples = 0;
};
struct UtilisationNumbers {
  std::vector<GpuUtilisation> gpus;
  double gpu_util_mean = 0;
  int64_t cpu_samples = 0;
  std::optional<double> cpu_busy_mean, cpu_iowait_mean;  // with CPU samples
  std::string combined;                    // "time" (logs overlap in time) or "file-means"
  std::optional<double> overlap_seconds;   // "time": how long they overlap
  std::optional<double> others_util_mean;  // 2+ GPUs: all but the busiest
  std::optional<double> dip_fraction, dip_together, interconnect_mbps_in_dips;
};

// stoker stats lines per rank (diagnose_telemetry).
struct RankNumbers {
  int rank = 0;
  int64_t lines = 0;
  Verdict verdict = Verdict::kUnknown;
  double images_per_second = 0;
  double wait_fraction = 0;
  double busy_fraction = 0;
  bool straggler = false;  // named by find_stragglers
};
struct RankStatsNumbers {
  std::optional<PipelineNumbers> agreed;  // when the ranks agree: the chosen rank's window
  std::vector<RankNumbers> ranks;
};

struct TelemetryFileNumbers {
  std::string path;  // printable
  std::string kind;  // to_string(TelemetryKind)
};

// A training loop's step times (telemetry: train logs, Lightning profiles).
struct StepNumbers {
  double data_fraction = 0;    // of the step time, waiting for data
  double step_seconds = 0;     // mean step time behind it
  int64_t lines = 0;           // step lines read (1 for a profile's totals)
  bool from_averages = false;  // the log's own running averages or a profile's totals
  bool upper_bound = false;    // data_fraction is at most this (a profile without a fetch row)
};

// Runs of one job at different scale (two logs, or one paste holding both).
struct ScalingRun {
  std::string source;                   // printable file name
  int64_t line = 0;                     // its heading (or first) line
  int scale = 0;                        // GPUs (or nodes, see ScalingNumbers::scale_unit)
  double per_second = 0;                // the run's rate: `unit` per second over all its GPUs
  std::optional<double> data_fraction;  // the steps' wait for data, when the log times it
};
struct ScalingNumbers {
  std::string scale_unit;        // "gpus" or "nodes"
  std::string unit;              // what per_second counts: "images", "samples", "tokens",
                                 // "iterations" or "steps" (1 / step time, the batch per GPU fixed)
  std::vector<ScalingRun> runs;  // smallest scale first
  double efficiency = 0;         // the largest run's rate per GPU (node) over the smallest run's
};

struct DiagnosisNumbers {
  std::optional<PipelineNumbers> pipeline;
  std::optional<StepNumbers> steps;
  std::optional<ScalingNumbers> scaling;
  std::optional<CapacityNumbers> capacity;
  // Telemetry: the part that decided is written at the top level, the other, when present,
  // attached under "utilisation" or "stats".
  std::optional<UtilisationNumbers> utilisation;
  std::optional<RankStatsNumbers> stats;
  bool stats_decided = false;
  std::optional<std::vector<TelemetryFileNumbers>> files;  // the logs read
};

// How far the evidence carries the verdict: kLow for one snapshot or a few lines, kHigh for
// long series or a profile's totals; "low", "medium", "high".
enum class Confidence { kLow, kMedium, kHigh };
const char* to_string(Confidence confidence);

struct Diagnosis {
  Verdict verdict = Verdict::kUnknown;
  Confidence confidence = Confidence::kMedium;
  std::string summary;                // one line with the numbers that decided
  std::vector<std::string> evidence;  // supporting lines
  std::vector<Fix> fixes;             // best first
  std::vector<std::string> next;      // what to collect to be surer: commands to run
  DiagnosisNumbers numbers;           // the measured values behind the verdict
};

// The JSON form (docs/doctor.md): {"verdict", "confidence", "summary", "evidence", "fixes",
// "next", "numbers"}, compact, invalid UTF-8 replaced.
std::string to_json_text(const Diagnosis& diagnosis);
// Plain-text rendering for the terminal: verdict, summary, evidence, fixes.
std::string format_diagnosis(const Diagnosis& diagnosis);

// What one rank's input pipeline did over a window of time: from two LoaderStats snapshots
// (pipeline_window in stoker/loader_stats.h) or from stoker stats JSON lines in a log.
struct PipelineWindow {
  double seconds = 0;          // wall time of the window
  int64_t images = 0;          // valid images delivered in it
  double wait_fraction = 0;    // of the window, the consumer blocked waiting for a batch
  double busy_fraction = 0;    // of threads x window, workers were working on samples
  double read_fraction = 0;    // of the workers' busy time, spent reading (I/O waits included)
  double cpu_utilisation = 0;  // process CPU time / (window x cores the process may use)
  double queue_occupancy = 0;  // mean fraction of prefetch batches complete at each next()
  int threads = 0;
  int cpus = 0;  // cores the process may use
  double images_per_second() const { return seconds > 0 ? images / seconds : 0.0; }
};

// How much of its time a training step may wait for data before the input is what limits it:
// one rule for the live verdict, the cross-rank audit, a training loop's logged data time and
// the demo (docs/doctor.md, "Waiting for data").
struct WaitThresholds {
  double healthy_below = 0.15;  // waiting less than this share: the input keeps up (healthy)
  double dominant = 0.30;       // at or above: input-bound; from healthy_below up to it, mildly
};

// "mildly " for a wait share between healthy_below and dominant, else "": the one wording of a
// mild input-bound verdict ("input-bound, mildly: ...").
const char* mildly(double wait_fraction, const WaitThresholds& t = {});

// Thresholds of the live verdict (docs/doctor.md explains them).
struct PipelineThresholds {
  double min_seconds = 0.5;      // shorter windows are `unknown`
  WaitThresholds wait;           // the consumer waits less than wait.healthy_below: healthy
  double busy_saturated = 0.80;  // workers busier than this: the pool is saturated
  double read_dominates = 0.50;  // reading takes more than this of the busy time: io-bound
};

// The live verdict: healthy (the consumer rarely waits), input-bound-cpu (it waits while the
// pool is saturated; "mildly" below wait.dominant), io-bound (it waits and reading dominates
// the workers' time), unknown (too short a window, or waits with an idle pool). Fixes are
// listed unmeasured; the capacity test (stoker doctor DATA) measures them.
Diagnosis diagnose_pipeline(const PipelineWindow& window, const PipelineThresholds& t = {});

// The straggler rule, the one the cross-rank audit (stoker/audit.h) and the telemetry verdict's
// stats lines (stoker/telemetry.h) both apply (docs/doctor.md). Each rank is compared with the
// median of the OTHER ranks: with eight ranks that is the group's pace whichever rank is slow,
// and with two it is the other rank (a median over both would be pulled halfway to the
// straggler, and the fastest rank as reference would let one fast outlier make stragglers of
// all the others).
struct StragglerThresholds {
  double rate = 0.67;  // images/s below this x the others' median: a straggler (slow) ...
  double wait = 0.25;  // ... or a consumer wait fraction at least this above the others'
                       // median (under DDP's lockstep the late rank is the one waiting) ...
  double ahead = 1.1;  // ... while its images/s is at most this x the others' median
};

// What the rule reads of one rank.
struct RankPace {
  double images_per_second = 0;
  double wait_fraction = 0;
};

struct Straggler {
  size_t rank = 0;                      // index into the paces given
  bool slow = false;                    // by its rate; false: by its wait alone
  double others_images_per_second = 0;  // the median of the other ranks
  double others_wait_fraction = 0;      // the median of the other ranks
};

// The stragglers among `ranks`, in rank order: none with fewer than two ranks or when no rank
// has a rate above 0 (nothing was timed). Never throws.
std::vector<Straggler> find_stragglers(const std::vector<RankPace>& ranks,
                                       const StragglerThresholds& t = {});

}  // namespace stoker
