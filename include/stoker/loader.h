// The loader: a dataset, a sampler plan and a transform, run by a fork-free thread pool that
// delivers this rank's batches in order.
//
//   auto data = stoker::open_dataset("/data/train");
//   stoker::Loader loader(data, {.batch_size = 256, .threads = 8});
//   loader.set_epoch(0);
//   while (auto batch = loader.next()) { use(*batch); }   // nullptr at the end of the epoch
//
// Guarantees: `threads` workers, at most `prefetch` batches in flight, batches delivered in
// order. Batch memory comes from a pool and returns to it when the last shared_ptr to the batch
// is released; if the consumer holds every buffer, the pool grows (counted in stats) instead of
// deadlocking. Per-sample randomness is keyed by (seed, epoch, sample index): any batch is
// byte-identical for 1 thread or 64.
//
// Bad samples (unreadable, undecodable, a bad label): policy kError (default) rethrows
// stoker::Error from next() naming the file and reason; kSkip zero-fills the slot, marks it
// invalid, logs a warning naming the file, and counts it (with one rank its batch's
// global_valid drops by the skipped count; with several, global_valid stays the planned count,
// since other ranks' skips are not known without a collective). Any other exception in a
// worker is captured and rethrown from next(); workers never terminate the process. After a
// rethrown error the epoch is over: next() returns nullptr, state() counts only the batches
// delivered before the failure, and set_epoch starts again.
//
// Thread-safety: set_epoch/next/the pass calls/load_state/state/num_batches serialise on an
// internal mutex (meant for one consumer thread; calls from others wait their turn); stats() may be
// called from any thread. The destructor stops the workers promptly, even mid-epoch.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stoker/batch_mix.h"
#include "stoker/dataset.h"
#include "stoker/sampler.h"
#include "stoker/transform.h"

namespace stoker {

enum class BadSamplePolicy { kError, kSkip };
BadSamplePolicy parse_bad_sample_policy(const std::string& name);  // "error" | "skip"

// What the workers write. kCpu: each slot's finished output (the transform). kDeferred: each
// sample's decoded region (uint8 HWC, region + DCT-scaled decode, the same crop and flip
// draws) and its resize parameters, packed into the batch's staging area (Batch::staged) for a
// batched augmentation that runs later on the whole batch (the GPU; stoker/cuda.h).
enum class AugmentMode { kCpu, kDeferred };

// Where batch memory comes from (the cuda layer passes page-locked memory). allocate returns
// memory aligned to 64 bytes, or throws stoker::Error; both calls may come from any thread.
class HostMemory {
 public:
  virtual ~HostMemory() = default;
  virtual uint8_t* allocate(size_t bytes) = 0;
  virtual void deallocate(uint8_t* p, size_t bytes) noexcept = 0;
};

namespace detail {
// STOKER_CLOSE_TIMEOUT, else 10 (docs/environment.md); an ArgumentError naming the variable
// when it is malformed.
double default_close_timeout_seconds();
}  // namespace detail

struct LoaderConfig {
  int batch_size = 256;
  int threads = 0;   // 0: default_threads(rank info)
  int prefetch = 0;  // batches in flight; 0: max(2, ceil(4 * threads / batch_size))
  bool shuffle = true;
  uint64_t seed = 0;
  SamplerMode mode = SamplerMode::kExact;
  // Shuffle in shard windows of this many batches (stoker/sampler.h): each rank then reads its
  // shards in order, a run of about this many batches at a time, shuffled within the run.
  // -1: 4 for datasets read best in order (remote WebDataset shards), else 0 (a global
  // shuffle). Needs a dataset with shards (Dataset::shard_ends).
  int shard_window_batches = -1;
  std::optional<int> rank;        // nullopt: discover_rank()
  std::optional<int> world_size;  // nullopt: discover_rank()
  BadSamplePolicy bad_samples = BadSamplePolicy::kError;
  // Under kSkip: this many bad samples in a row (none read well in between) end the epoch with
  // a bad-data Error saying so: data that is all bad is a broken source (a wrong folder, a
  // dead store), not an epoch of skips. 0: no limit.
  int max_bad_in_a_row = 1000;
  TransformConfig transform;
  // MixUp / CutMix of each batch's pairs of slots, by the workers (stoker/batch_mix.h);
  // needs float32 output and AugmentMode::kCpu. Batch::soft_labels then holds the labels.
  BatchMixConfig mix;
  // Per-sample fields delivered beside the images, in Batch::fields (Dataset::has_field /
  // read_field: WebDataset members such as "txt", "json", "json.KEY"; docs/fields.md). Each is
  // read by the worker that reads the sample's image, with the same retries; a sample without
  // one is bad data under `bad_samples`.
  std::vector<std::string> fields;
  AugmentMode augment = AugmentMode::kCpu;
  // kDeferred: staging bytes per sample a new batch buffer starts with (0: 2.25 * size^2 *
  // channels, the decoded area of an average DCT-scaled crop). A batch whose regions do not
  // fit keeps them aside and is moved to a larger buffer before delivery, never truncated.
  size_t staging_bytes_per_sample = 0;
  // kDeferred: JPEGs a GPU decoder takes (image::jpeg_gpu_decodable: judged bad exactly as the
  // CPU decoder judges them) are staged encoded, for the GPU to decode (StagedRegion::
  // encoded_bytes); other images are decoded by the workers as before.
  bool stage_encoded_jpegs = false;
  std::shared_ptr<HostMemory> memory;  // nullptr: ordinary (pageable) memory
  // How often a sample's read that fails with an I/O error is tried (read_with_retries): the
  // sample's only retries, end to end (stoker/io_config.h). Give the IoConfig::retries the
  // dataset was opened with, to have one policy for both.
  IoRetryPolicy read_retries;
  // Seconds the destructor waits for reads in flight (in [0, 86400]); a worker still stuck in
  // a read after that (a hung mount, a stalled server) is abandoned, with a warning, rather
  // than holding the destructor for ever.
  double close_timeout_seconds = detail::default_close_timeout_seconds();
};

// Frees a batch buffer: through `memory` when set, else aligned operator delete.
struct BatchStorageDelete {
  std::shared_ptr<HostMemory> memory;
  size_t bytes = 0;
  void operator()(uint8_t* p) const {
    if (memory) {
      memory->deallocate(p, bytes);
    } else {
      ::operator delete[](p, std::align_val_t{64});
    }
  }
};

// One delivered batch. Image memory: float32/float16/bfloat16 [B, C, S, S] or uint8 [B, S, S, C]
// (AugmentMode::kCpu), or the staging area (kDeferred, see `staged`).
struct Batch {
  int64_t epoch = 0;
  int64_t index = 0;         // j, batch index within this rank's epoch
  int64_t global_valid = 0;  // valid slots of this step across all ranks
  int batch_size = 0;
  OutputKind output = OutputKind::kFloat32;
  bool channels_last = false;  // float images [B, S, S, C] (TransformConfig::channels_last)
  int channels = 3, height = 0, width = 0;
  std::span<uint8_t> images;     // raw bytes of the image tensor
  std::vector<int64_t> labels;   // B (padding slots carry their wrapped sample's label)
  std::vector<int64_t> indices;  // B dataset indices, padding slots included
  std::vector<uint8_t> valid;    // B, 1 = valid
  int skipped = 0;               // slots zero-filled by the skip policy in this batch
  // With LoaderConfig::mix, or from a multi-label dataset: B x num_classes float label rows
  // (row-major): one-hot or multi-hot, mixed pairwise by MixUp/CutMix (a slot with a bad label
  // skipped by the policy has a zero row); num_classes 0 and empty otherwise.
  int num_classes = 0;
  std::vector<float> soft_labels;
  // LoaderConfig::fields: fields[k][i] is field k of slot i (its bytes; "" for a slot the
  // bad-sample policy skipped). Padding slots hold their wrapped sample's, like labels.
  std::vector<std::vector<std::string>> fields;

  // AugmentMode::kDeferred: slot i's decoded region is `width` x `height` pixels of `channels`
  // bytes (HWC) at images[staged[i].offset]; width 0 marks a slot skipped by the bad-sample
  // policy (its output is all zeros). `staged_bytes` of `images` are in use.
  using Staged = StagedRegion;
  std::vector<Staged> staged;
  size_t staged_bytes = 0;

  // Owns `images`: 64-byte aligned, left uninitialised on allocation (every slot is written
  // before delivery).
  // From `memory` when set, else aligned operator new.
  using StorageDelete = BatchStorageDelete;
  std::unique_ptr<uint8_t[], StorageDelete> storage;
};

struct StageSeconds {
  double read = 0, decode = 0, augment = 0, collate = 0;
};

// Counters since the loader's first set_epoch (cumulative; take two snapshots and subtract for
// a window: stoker/loader_stats.h). The stats JSON schema built from them is in docs/doctor.md.
struct LoaderStats {
  int threads = 0;
  int prefetch = 0;
  int rank = 0;
  int world_size = 1;
  int cpus = 0;                    // cores this process may use (available_cpus())
  int64_t batches = 0;             // delivered this loader's lifetime
  int64_t images = 0;              // valid images delivered
  int64_t skipped = 0;             // bad samples skipped
  int64_t pool_buffers = 0;        // batch buffers allocated in total
  int64_t pool_grown = 0;          // allocations beyond prefetch + 2 (in flight, just popped, held)
  double wall_seconds = 0;         // since the first set_epoch
  double wait_seconds = 0;         // consumer blocked in next()
  double busy_seconds = 0;         // workers' wall time on samples, summed over threads
  double read_wall_seconds = 0;    // of busy_seconds, in Dataset::read (I/O waits included)
  double process_cpu_seconds = 0;  // CPU time of the whole process since the first set_epoch
  // Queue occupancy: at each next(), the batches already complete, out of prefetch; summed.
  double queue_ready_sum = 0;
  int64_t queue_checks = 0;
  StageSeconds cpu;  // worker CPU seconds per stage (collate: the consumer's batch set-up)
  // The current epoch: batches delivered in it and the digest of their planned valid sample
  // indices, skipped bad samples included (the cross-rank audit compares digests; sampler.h).
  int64_t epoch = -1;
  int64_t epoch_start = 0;  // samples of the epoch consumed before it started (a resume)
  int64_t epoch_batches = 0;
  SampleDigest epoch_digest;
};

class Loader {
 public:
  Loader(std::shared_ptr<const Dataset> dataset, const LoaderConfig& config);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Starts epoch `epoch` from its beginning, dropping batches in flight; when it is the epoch
  // of a resume state given to load_state and no batch has been delivered since, starts after
  // its consumed samples instead.
  void set_epoch(int64_t epoch);
  // The next batch of this rank, or nullptr at the end of the epoch. Blocks (no spinning).
  std::shared_ptr<const Batch> next();

  // Passes, DataLoader's iteration semantics (what Python's iter(loader) does; the rule is
  // here, not in Python): each pass runs the next epoch (0, 1, 2, ...), unless set_epoch(e)
  // was called since the last pass began: then it runs e. set_epoch(e) after a pass began but
  // before its first batch applies to that pass. After load_state the next pass continues the
  // saved epoch. begin_pass starts the pass's epoch when it needs one and returns the pass's
  // id; check_pass(id), before each next() of that pass, throws stoker::Error when a newer
  // pass or a set_epoch superseded it (only the newest pass is live). pass_epoch: the epoch of
  // the current (or last) pass, or the one set_epoch chose for the next.
  uint64_t begin_pass();
  void check_pass(uint64_t pass);
  int64_t pass_epoch() const;
  // Waits up to `seconds` for what next() would return to be ready; true when next() will not
  // block (also at the end of an epoch or after a failure). A caller that must react to
  // something else meanwhile (Python's Ctrl-C) waits in slices with it, then calls next().
  bool wait_ready(double seconds);

  int64_t num_batches() const;  // K of the current epoch plan, the same on every rank
  int64_t size() const;         // batches per rank of a full epoch
  int rank() const;
  int world_size() const;
  const LoaderConfig& config() const;
  const Dataset& dataset() const;

  // Resume state after the batches delivered so far (same on every rank).
  ResumeState state() const;
  // Takes effect at the next set_epoch(state.epoch) or next() call; the dataset fingerprint,
  // size, mode, shuffle and seed must match (a clear error otherwise).
  void load_state(const ResumeState& state);
  // From the next start of an epoch (set_epoch, or the next() after load_state), makes only
  // batches first, first + stride, first + 2 * stride, ... of the epoch's plan, each with its
  // place in the plan as Batch::index: several loaders of one rank, each given another
  // `first`, make that rank's epoch together (stoker.ray's producers). state() of such a
  // loader is not a resume point of the job (the batches between were made elsewhere).
  // (0, 1): every batch, the default.
  void select_steps(int64_t first, int64_t stride);

  LoaderStats stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stoker
