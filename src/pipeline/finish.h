// The loader's finish stage: what a batch carries besides its pixels. On the consumer, as a
// batch is scheduled, each slot's label (a label is data too: the skip policy applies to it)
// and the batch's MixUp/CutMix draw; on the workers, each finished pair of slots mixed by the
// second of the two; on the consumer again, before delivery, the float label rows (one-hot or
// multi-hot, mixed pairwise). This is the only MixUp/CutMix of stoker: Python's MixUp and
// CutMix configure it.
// Thread-safety: label/draw/finish from the consumer; slot_done from the workers, once per
// slot of a batch.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "pipeline/sample.h"
#include "pipeline/setup.h"
#include "stoker/batch_mix.h"
#include "stoker/dataset.h"
#include "stoker/loader.h"

namespace stoker::pipeline {

// A batch's MixUp / CutMix in flight: the draw, and per pair of slots (2k, 2k + 1) how many of
// its samples are finished; the worker that finishes the second mixes the pair.
struct PairMix {
  std::vector<BatchMix> draws;                   // draw_batch_mixes: one per batch, pair or slot
  std::unique_ptr<std::atomic<int>[]> finished;  // per pair
  std::vector<uint8_t> blank;                    // per slot: zero-filled by the skip policy
  explicit PairMix(int batch_size);
};

// A label that failed while the batch was set up: its lowest slot and the error, reported if
// no sample of a lower slot failed, so that the error reported does not depend on timing.
struct LabelError {
  int slot = -1;
  std::exception_ptr error;
};

class FinishStage {
 public:
  FinishStage(std::shared_ptr<const Dataset> dataset, const LoaderSetup& setup, SkipPolicy& skip);

  // Fills batch.labels (-1 for a bad label); a bad label under the skip policy clears the
  // slot's valid flag and counts in batch.skipped.
  LabelError label(Batch& batch);
  // The batch's MixUp/CutMix draw, keyed by (seed, epoch, batch, rank, world); nullptr
  // without LoaderConfig::mix.
  std::unique_ptr<PairMix> draw(const Batch& batch) const;
  // Slot `slot` is written (blank: zero-filled by the skip policy); mixes its pair when it is
  // the second of the two. acq_rel: the partner's pixels are visible to the one that mixes.
  void slot_done(Batch& batch, PairMix& mix, int slot, bool blank) const;
  // Before delivery: the float label rows, when the setup has num_classes.
  void finish(Batch& batch, const PairMix* mix) const;

 private:
  std::shared_ptr<const Dataset> dataset_;
  const LoaderSetup& setup_;
  SkipPolicy& skip_;
};

}  // namespace stoker::pipeline
