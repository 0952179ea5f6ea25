// The loader's sample stage: one slot of a batch on a worker thread -- read (the read stage),
// decode and transform into the slot (AugmentMode::kCpu) or decode the crop region, or keep the
// JPEG bytes, into the batch's staging area (kDeferred) -- and the bad-sample policy
// (LoaderConfig::bad_samples) with its bad-in-a-row limit.
// Thread-safety: run() from the pool's threads, one call per (batch, slot), `thread` the
// pool's thread index; SkipPolicy's calls from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/read.h"
#include "pipeline/setup.h"
#include "pipeline/staging.h"
#include "pipeline/stats.h"
#include "stoker/error.h"
#include "stoker/loader.h"
#include "stoker/transform.h"

namespace stoker::pipeline {

// LoaderConfig::bad_samples applied to one bad sample or label at a time.
class SkipPolicy {
 public:
  explicit SkipPolicy(const LoaderConfig& config);

  // Whether `e` is skipped: only bad data, and only under BadSamplePolicy::kSkip. Anything
  // else (the storage failed, a broken invariant) ends the epoch whatever the policy: a dead
  // mount must not look like a corrupt image.
  bool skips(const Error& e) const;
  // A warning naming the skipped sample, for the first 100; then one line saying the rest are
  // only counted (a broken source must not bury the terminal under millions of lines).
  void warn(int64_t index, const std::string& why);
  // A sample read well / a sample skipped: past max_bad_in_a_row skips with none read well in
  // between, throws the bad-data Error that ends the epoch (the source is broken).
  void good();
  void bad(const Error& e);

 private:
  const BadSamplePolicy policy_;
  const int max_bad_in_a_row_;
  std::atomic<int64_t> in_a_row_{0};  // samples skipped since one read well
  std::atomic<int64_t> warnings_{0};  // "skipping bad sample" lines so far
};

// Padding slots that repeat a sample an earlier slot of the batch holds (the last batches of an
// epoch wrap around; --batch 8000 over 32 images repeats each sample 250 times). A sample's
// pixels are a function of (seed, epoch, sample), so a repeat is a copy of the earlier slot,
// written by that slot's task before either is mixed: padding costs no decode.
struct Repeats {
  std::vector<int> of;               // per slot: the earlier slot of the same sample, or -1
  std::vector<std::vector<int>> by;  // per slot: the later slots repeating it
  bool empty() const { return of.empty(); }
};
Repeats find_repeats(const Batch& batch);

// What became of one slot.
struct SampleOutcome {
  bool blank = false;    // zero-filled by the skip policy
  bool skipped = false;  // and it was a valid slot (counted as skipped; a padding slot
                         // repeating a bad sample is already invalid and not counted twice)
  SampleCost cost;
};

class SampleStage {
 public:
  SampleStage(std::shared_ptr<const Dataset> dataset, const LoaderSetup& setup,
              const ReadStage& read, SkipPolicy& skip);

  // Slot `slot` of `batch`: the output sample (staging == nullptr) or the staged region.
  // A skipped sample clears batch.valid[slot]. Throws what ends the epoch.
  SampleOutcome run(Batch& batch, Staging* staging, int slot, int thread);

 private:
  // What a worker thread keeps between samples.
  struct Scratch {
    std::vector<uint8_t> bytes;
    TransformScratch transform;
  };

  // AugmentMode::kDeferred: decode into scratch, then copy into the batch's staging area (the
  // copy counts as augment time: it is all the CPU does of the augmentation).
  void stage_into(Staging& staging, int slot, const std::string& name, Rng& rng, Scratch& scratch,
                  TransformTimings& timings) const;

  std::shared_ptr<const Dataset> dataset_;
  const LoaderSetup& setup_;
  const ReadStage& read_;
  SkipPolicy& skip_;
  std::vector<Scratch> scratch_;  // one a worker thread, by the pool's thread index
};

}  // namespace stoker::pipeline
