// The loader's statistics stage. Workers add each sample's times to a counter slot of their
// own thread (no lock shared between threads on the per-sample path); the consumer adds its
// own (waits, queue occupancy, set-up time, deliveries); snapshot() merges the slots into one
// LoaderStats. Stage contract: reset(epoch, consumed) at each epoch start, next(...) at each
// delivered batch, state() the snapshot.
// Thread-safety: add_sample(thread, ...) from that worker thread; snapshot() from any thread;
// the consumer calls (reset, add_setup, add_wait, next) from the consumer (serialised by the
// loader).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "pipeline/setup.h"
#include "stoker/loader.h"
#include "stoker/sampler.h"
#include "util/mutex.h"

namespace stoker::pipeline {

// One sample's cost, as a worker measured it.
struct SampleCost {
  double busy_seconds = 0;       // wall time on the sample
  double read_wall_seconds = 0;  // of which in Dataset::read (I/O waits included)
  StageSeconds cpu;              // thread CPU time: read, decode, augment
};

class StatsStage {
 public:
  explicit StatsStage(const LoaderSetup& setup);
  StatsStage(const StatsStage&) = delete;
  StatsStage& operator=(const StatsStage&) = delete;

  // Worker thread `thread` (the pool's index) finished a sample.
  void add_sample(int thread, const SampleCost& cost);

  // The consumer starts an epoch after `consumed` samples of it; the first call starts the
  // loader's clocks (wall and process CPU time).
  void reset(int64_t epoch, int64_t consumed);
  // The consumer's CPU seconds setting up a batch for the workers.
  void add_setup(double cpu_seconds);
  // At next(): `ready` batches of `prefetch` were complete; the consumer blocked `waited` s.
  void add_wait(int ready, double waited);
  // A batch delivered: its valid images, its skipped slots, its planned valid samples.
  void next(int64_t valid_images, int skipped, const SampleDigest& planned);

  // The counters so far; pool_buffers: the batch pool's allocations.
  LoaderStats snapshot(int64_t pool_buffers) const;

 private:
  struct alignas(64) ThreadSlot {
    mutable util::Mutex mu;
    SampleCost sum STOKER_GUARDED_BY(mu);
  };

  const LoaderSetup& setup_;
  std::unique_ptr<ThreadSlot[]> slots_;  // one per worker thread
  mutable util::Mutex mu_;
  LoaderStats consumer_ STOKER_GUARDED_BY(mu_);  // the consumer's fields of the snapshot
  bool started_ STOKER_GUARDED_BY(mu_) = false;
  std::chrono::steady_clock::time_point start_time_ STOKER_GUARDED_BY(mu_);
  double start_process_cpu_ STOKER_GUARDED_BY(mu_) = 0;
};

}  // namespace stoker::pipeline
