// The loader's read stage: a sample's bytes from the dataset's storage, I/O errors tried again
// (IoRetryPolicy) before they end the epoch, and read-ahead hints that put remote reads in
// flight before a worker asks (a no-op for local storage). Stage contract: reset() forgets the
// hints (a new epoch, a drained one), next(plan, j) hints what batch j being scheduled brings,
// stop() makes the reads in progress give up (a closing loader: a stalled request or a wait
// between tries ends within 0.1 s, stoker/cancel.h).
// Thread-safety: read() and stop() from any thread; reset() and next() from the consumer only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/setup.h"
#include "stoker/cancel.h"
#include "stoker/dataset.h"
#include "stoker/sampler.h"

namespace stoker::pipeline {

// How long one read took: CPU time of the reading thread, and wall time (I/O waits included).
struct ReadCost {
  double cpu_seconds = 0;
  double wall_seconds = 0;
};

class ReadStage {
 public:
  ReadStage(std::shared_ptr<const Dataset> dataset, const LoaderSetup& setup);

  // Sample `index`'s bytes into `out`: an I/O error is tried again, then thrown; any other
  // error is thrown at once.
  ReadCost read(int64_t index, std::vector<uint8_t>& out) const;
  // Sample `index`'s field `field` (Dataset::read_field), with the same retries.
  ReadCost read_field(int64_t index, const std::string& field, std::string& out) const;

  // Batch j is being scheduled: tells the dataset which samples the workers read next (batch
  // j and the one after it; in shard windows, two windows' batches: the run of the rank's
  // shards being read and the next).
  void next(const EpochPlan& plan, int64_t j);
  // Drops the reads hinted and not yet taken.
  void reset();
  // The reads in progress and any later one fail at once (I/O Error, ECANCELED): for good.
  void stop();

 private:
  std::shared_ptr<const Dataset> dataset_;
  Cancellation stop_;
  const LoaderSetup& setup_;
  int64_t hinted_until_ = 0;  // batches [0, this) of the epoch hinted
  std::vector<int64_t> hint_indices_;
  std::vector<uint8_t> hint_valid_;
};

}  // namespace stoker::pipeline
