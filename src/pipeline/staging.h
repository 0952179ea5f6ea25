// The staging area of one batch assembled in AugmentMode::kDeferred (loader.h): workers append
// their samples' decoded regions (or, for the GPU decode, JPEG bytes) to the batch's buffer
// concurrently; a region that does not fit is kept aside and moved in by finish(), on a larger
// buffer, before the batch is delivered. Thread-safety: put/blank from any thread for distinct
// slots; finish once, after every slot.
#pragma once

#include <atomic>
#include <span>
#include <utility>
#include <vector>

#include "pipeline/batch_pool.h"
#include "stoker/image.h"
#include "stoker/loader.h"
#include "stoker/transform.h"

namespace stoker::pipeline {

class Staging {
 public:
  // Clears the batch's staging records (batch.staged: one per slot, all blank).
  explicit Staging(Batch& batch);

  // Copies slot `slot`'s decoded region (channels per pixel) and its resize parameters.
  void put(int slot, const DecodedRegion& region, const StagedSample& sample);
  // Copies slot `slot`'s JPEG bytes, left for the GPU to decode (StagedRegion::encoded_bytes).
  void put_encoded(int slot, std::span<const uint8_t> jpeg, const EncodedStage& encoded,
                   const StagedSample& sample);
  // Marks the slot blank (skipped: its output is all zeros).
  void blank(int slot);
  // Moves the regions kept aside into a buffer from `pool` large enough for all, and sets
  // batch.staged_bytes. Returns whether the buffer had to grow.
  bool finish(BatchPool& pool);

  // Offsets are multiples of this (a worker's region never shares a cache line).
  static constexpr size_t kAlign = 64;

 private:
  void copy_in(int slot, std::span<const uint8_t> data);

  Batch& batch_;
  std::atomic<size_t> used_{0};
  util::Mutex aside_mu_;
  std::vector<std::pair<int, std::vector<uint8_t>>> aside_ STOKER_GUARDED_BY(aside_mu_);
};

}  // namespace stoker::pipeline
