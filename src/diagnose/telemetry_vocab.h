// Reading pasted text by vocabulary (docs/doctor.md, "Pasted messages"): every number a line
// names, whatever the separators, and what the name means. Not a public header.
//
// A training loop, a benchmark or a cluster tool prints "name: number" in many layouts —
// "time: 8.9139  data_time: 7.4351", "iter_time: 0.666s, data_time: 0.047s",
// "bch(ms): 557.78 | smp(ms): 538.41", "Time 0.154 (8.010)\tData 0.001 (7.720)",
// "images/sec: 198.0 +/- 0.0", "[00:59<00:05,  5.95s/it]", "GPU utilization [||||   33%]".
// named_values() splits a line into such pairs in one left-to-right pass (no regular
// expressions: linear time and constant stack on any input), and one synonym table says which
// names are a step's time, its wait for data, a throughput or a utilisation.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::telemetry {

// Lines longer than this are passed over by the pasted-text scanners (and counted): no log
// line of the tools read is near it, base64 and minified blobs are.
constexpr size_t kMaxPastedLineBytes = 16 * 1024;

// A number and the name before it.
struct NamedValue {
  std::string name;  // lower case, runs of spaces, '-' and '_' as one '_': "data_time", "bch"
  std::string unit;  // lower case, from a suffix ("0.5s", "87 %", "5.95s/it") or a name's
                     // "(ms)"; empty when none
  double value = 0;
  std::optional<double> average;  // "(avg)" right after it: a running average
  size_t column = 0;              // where the number starts in the line
};

// The named numbers of one line, in order. Clock times ("8:29:46") and counters ("24/1051")
// are skipped; a number with no name before it (a rate after a comma) has an empty name.
std::vector<NamedValue> named_values(std::string_view line);

// Whether a value counts the loop's steps: named step, iter, iteration or batch, without a unit,
// a whole number ("Step 106", "iter: 1800", "batch 50").
bool counts_steps(const NamedValue& v);

// Megatron-LM's timers logged as "(min, max) time across ranks (ms):", one a line with dot
// leaders ("    batch-generator ....................: (408.98, 817.78)"): always
// milliseconds, whether or not the header was pasted. Of the two, a wait's minimum is the time
// every rank spent in it (a rank that arrives early waits longer and delays no one), any other
// timer's maximum the slowest rank's, which the others wait for. Empty for other lines.
std::vector<NamedValue> min_max_timer(std::string_view line);

// The Chinese words of pasted text that the reader knows, in English ("单卡" is " single  card
// "); other characters are kept.
std::string in_english(std::string_view line);

// What a name means, from the synonym table (docs/doctor.md lists it).
enum class Quantity {
  kNone,
  kDataWait,         // data, data_time, Data, smp, load, fetch, wait, ...
  kStep,             // time, iter_time, batch_time, Batch, bch, step, train_time, ...
  kStepWithoutData,  // LeRobot's updt_s: the step is it plus the data wait
  kRate,             // images/sec, img/s, samples/s, it/s, tokens/s, ...
  kGpuUtilisation,   // GPU utilization, GPU-Util, gpu_util (percent)
  kCpuUtilisation,   // CPU utilization, CPU Efficiency, cpu_util (percent)
  kCommunication,    // a timer of gradient exchange: all-reduce, reduce-scatter, all-gather
  kCompute,          // a timer of the step's compute: forward, backward, optimizer
};

struct Meaning {
  Quantity quantity = Quantity::kNone;
  int priority = 0;        // among several step names on one line, the highest is the step
  bool per_gpu = false;    // a rate per GPU ("img/sec per GPU", "samples_per_second_per_gpu")
  bool total = false;      // a rate of the whole job ("total images/sec")
  std::string rate_unit;   // kRate: "images", "samples", "tokens", "iterations"
  std::optional<int> gpu;  // kGpuUtilisation named by its GPU ("[GPU0 0%]", "gpu_1: 35%")
};

// A value's name without the words prose puts between a name and its number ("GPU utilization
// is almost 100%", "the data time was only 0.4 s"): "is", "was", "only", ... dropped from its
// end, "the" from its start.
std::string_view without_filler(std::string_view name);

// The meaning of a value by its name and unit (a nameless "5.95s/it" is a step, "1.47it/s" a
// rate of iterations).
Meaning meaning_of(const NamedValue& v);

// Seconds of a step-like value: "ms" and a name's "(ms)" divided by 1000, "s/it" as is,
// "it/s" inverted; nullopt for a unit that is not a duration.
std::optional<double> seconds_of(const NamedValue& v);

// Seconds per unit of a duration ("s", "sec", "ms", "us"); nullopt for other units.
std::optional<double> duration_scale(std::string_view unit);
// The seconds of a step's unit per iteration ("s/it" 1, "ms/batch" 0.001, "ms/b"); nullopt for
// any other unit.
std::optional<double> per_iteration_scale(std::string_view unit);

// A word naming GPUs, lower case: "gpu", "gpus", "gpu(s)", "cards", or a model ("v100",
// "a100", "h100", "1080ti", "rtx4090", "titan", ...).
bool gpu_word(std::string_view w);

// The GPU count a line states ("8 GPUs", "on 8 GPU(s)", "1 gpu", "2 x V100", "8xA100",
// "single GPU", "--nproc_per_node=8", "-np 4", "2 nodes", "2x4=8GPU"); nullopt when none.
// `nodes` gets a node count when the line states one; `from_flag` says whether the count is a
// command line's flag ("--gpus 2" is a count to Lightning and a device id to MXNet: a heading
// in words wins).
std::optional<int> gpu_count_of(std::string_view line, std::optional<int>* nodes = nullptr,
                                bool* from_flag = nullptr);

// A sentence comparing two scales of one job: "2 nodes is significantly slower than 1 node
// 8 gpus" and "multi gpu mode is much slower than single gpu" give true (the larger scale is
// the slower), "8 GPUs are 5x faster than 1 GPU" false, "8 GPUs is not faster than 1 GPU"
// true; nullopt when the line compares no two scales.
std::optional<bool> larger_scale_slower(std::string_view line);

// The sentences of a paragraph: each ends at a `.`, `?` or `!` followed by a space or the
// paragraph's end (the points of "1.5" and "p2.16xlarge" end none).
std::vector<std::string_view> sentences_of(std::string_view text);

// What a sentence says the job's speed does not change with: "the training speed remains about
// 1 images/second no matter how many gpus are used" and "even with ddp on 4 gpu cards, the
// training speed does not reduce at all" give kGpus, "the speed stays the same regardless of
// the number of machines" kNodes; nullopt when no sentence says a speed is the same at two
// scales (or names what else it varied: workers, threads, the batch, the precision).
enum class ScaleKind { kGpus, kNodes };
std::optional<ScaleKind> speed_unchanged_with(std::string_view line);

// The GPUs' utilisation a sentence gives at two scales: "The GPU utilization is around 95% on
// a single machine, but it drops to only 63% when training on two machines" gives 1 machine at
// 95 % and 2 at 63 %; each percentage takes the scale its clause names (clauses end at `,`
// `but` `while` `whereas` `and`). nullopt when no sentence of the line gives two.
struct UtilisationAtScales {
  int smaller_scale = 0, larger_scale = 0;  // GPUs or machines
  double smaller = 0, larger = 0;           // percent at each
  ScaleKind kind = ScaleKind::kGpus;
};
std::optional<UtilisationAtScales> utilisation_at_scales(std::string_view line);

// The GPU ids a line says the job runs on: "I'm using GPU 1 and 3", "using gpus 0,1",
// "CUDA_VISIBLE_DEVICES=2,3 python train.py"; empty when it names none.
std::vector<int> job_gpus_of(std::string_view line);

// A setting of the input pipeline that labels a run people compare with another:
// "num_workers=2", "--workers 8", "4 dataloader workers", "-- Persistent worker + Pin memory",
// "GoTorch, random data", "synthetic". `label` is canonical ("num_workers=2, pinned memory"), so
// that lines naming the same setting in other words are one run. nullopt when `line` names none.
struct LoaderSetting {
  std::optional<int> workers;
  std::optional<int> threads;    // the loader's or the decoder's threads ("--num_threads=32")
  bool compute_threads = false;  // ... threads of CPU work (OMP_NUM_THREADS, a decoder's, a map's)
  bool synthetic = false;        // synthetic, random, fake or dummy data: no loading at all
  std::string label;
};
std::optional<LoaderSetting> loader_setting_of(std::string_view line);

// The sizes of models lower-case text names, in billions of parameters: a size among a name's
// parts between '-' and '_' ("openlm-7b", "llama-2-13b", "qwen2.5-0.5b"), or alone where the
// words beside it say it counts parameters ("a 7B model", "parameters: 3.82B"); not a count of
// tokens ("1B tokens"), a GPU's UUID or a hash. `active`: a mixture of experts' active count
// beside its total ("30b-a3b"), no one size.
struct ModelSizes {
  std::set<double> billions;
  bool active = false;
};
ModelSizes model_sizes_named(std::string_view low);

// The one model size lower-case text names, as "7B", "13B", "1.3B"; empty when it names none,
// several, or a mixture of experts' two.
std::string model_size_of(std::string_view low);

// The words by which lower-case text names data that is not loaded at all: synthetic data
// ("synthethic" too, a common misspelling of a heading), dummy, fake or random data.
inline constexpr std::string_view kSyntheticDataWords[] = {
    "synthetic",  "synthethic", "dummy data",   "fake data",
    "fake image", "fake input", "random input", "random data"};
bool says_synthetic_data(std::string_view low);

// The words of lower-case text, runs of letters and digits ('_' joining them too where asked:
// "ssd_mobilenet" is one word then), in order.
std::vector<std::string> alnum_words(std::string_view low, bool underscore_joins);

// Whether text names where or how data is read, in whole words: a file system or disk (NFS,
// SSD, NVMe, Lustre, tmpfs, /dev/shm), a cache on or off ("NO_CACHE", "cached"; not an LLM's
// "kv cache" or "use_cache"), a FUSE mount, object storage (S3, GCS), Alluxio's "readtype".
bool names_storage(std::string_view text);

// Whether text names storage whose reads wait on a network or a spinning disk, in whole words
// ('_' joins a word: "ssd_mobilenet" is a model): NFS, S3, GCS, EFS, Lustre, GPFS, Ceph, HDFS, a
// FUSE mount of a bucket (gcsfuse, s3fs, blobfuse), MinIO, an HDD.
bool names_remote_storage(std::string_view text);

// Whether text says a job's "workers" are machines or GPUs, not a loader's processes: Ray
// Train's ScalingConfig, a parameter server's or Horovod's workers, TensorFlow's /job:worker,
// "each worker is a machine". Its "workers=4" lines and "1 worker | 2 workers" columns then
// count machines.
bool names_worker_machines(std::string_view text);

// The one storage medium a line says data is read from, canonical ("nvme", "ssd", "hdd",
// "nfs", "s3", "minio", "lustre", "tmpfs", ...): "Using the .beton file from SSD, ... 7 it/s",
// "made available via a MinIO server, the results are:". Whole words ('_' joins one: an
// "ssd_mobilenet" is a model); nullopt when it names none, or two kinds ("SSD vs HDD"
// compares them). A cache is not a medium: whether data is cached is a state of any of them.
std::optional<std::string> storage_medium_of(std::string_view text);

// How the GPUs of a data-parallel job exchange, when a short line names one strategy: "DDP
// Mode", "Distributed Strategy: fsdp", "ZeRO-3", "zero stage 2", "sharding_strategy:
// SHARD_GRAD_OP", "HYBRID_SHARD" — canonical ("ddp", "fsdp", "zero-3", "shard_grad_op"). nullopt
// when it names none, or several ("DDP vs FSDP" compares them).
std::optional<std::string> exchange_setting_of(std::string_view line);

// The link between the GPUs a short label names, on or off: "w/ NVlink" is "nvlink", "w/o
// NVlink", "without nvlink", "NVLink disabled" are "no nvlink"; "NCCL_P2P_DISABLE=1", "P2P
// disabled" are "no p2p", "NCCL_P2P_DISABLE=0" is "p2p". nullopt for a longer line or one
// naming neither.
std::optional<std::string> link_setting_of(std::string_view label);

// Whether a value is the model's TFLOP/s per GPU as a trainer prints it: named "tflops",
// "tflop/s", "TFLOP/s/GPU", "tflops_per_gpu" (or ending so: "..._metrics_tflops"), or a value in
// the unit ("Estimates: 129.32TFLOPs"). Totals, peaks and theoretical figures are not.
bool names_model_tflops(const NamedValue& v);

}  // namespace stoker::telemetry
