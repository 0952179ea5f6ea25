#include "pipeline/stats.h"

#include <algorithm>

#include "stoker/clock.h"

namespace stoker::pipeline {

using util::MutexLock;

StatsStage::StatsStage(const LoaderSetup& setup)
    : setup_(setup), slots_(std::make_unique<ThreadSlot[]>(static_cast<size_t>(setup.threads))) {}

void StatsStage::add_sample(int thread, const SampleCost& cost) {
  ThreadSlot& slot = slots_[static_cast<size_t>(thread)];
  MutexLock lock(slot.mu);
  slot.sum.busy_seconds += cost.busy_seconds;
  slot.sum.read_wall_seconds += cost.read_wall_seconds;
  slot.sum.cpu.read += cost.cpu.read;
  slot.sum.cpu.decode += cost.cpu.decode;
  slot.sum.cpu.augment += cost.cpu.augment;
}

void StatsStage::reset(int64_t epoch, int64_t consumed) {
  MutexLock lock(mu_);
  if (!started_) {
    started_ = true;
    start_time_ = std::chrono::steady_clock::now();
    start_process_cpu_ = process_cpu_seconds();
  }
  consumer_.epoch = epoch;
  consumer_.epoch_start = consumed;
  consumer_.epoch_batches = 0;
  consumer_.epoch_digest = {};
}

void StatsStage::add_setup(double cpu_seconds) {
  MutexLock lock(mu_);
  consumer_.cpu.collate += cpu_seconds;
}

void StatsStage::add_wait(int ready, double waited) {
  MutexLock lock(mu_);
  consumer_.queue_ready_sum += static_cast<double>(ready) / setup_.prefetch;
  ++consumer_.queue_checks;
  consumer_.wait_seconds += waited;
}

void StatsStage::next(int64_t valid_images, int skipped, const SampleDigest& planned) {
  MutexLock lock(mu_);
  ++consumer_.batches;
  consumer_.images += valid_images;
  consumer_.skipped += skipped;
  ++consumer_.epoch_batches;
  consumer_.epoch_digest += planned;
}

LoaderStats StatsStage::snapshot(int64_t pool_buffers) const {
  LoaderStats s;
  {
    MutexLock lock(mu_);
    s = consumer_;
    s.wall_seconds =
        started_
            ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time_).count()
            : 0.0;
    s.process_cpu_seconds = started_ ? process_cpu_seconds() - start_process_cpu_ : 0.0;
  }
  for (int t = 0; t < setup_.threads; ++t) {
    const ThreadSlot& slot = slots_[static_cast<size_t>(t)];
    MutexLock lock(slot.mu);
    s.busy_seconds += slot.sum.busy_seconds;
    s.read_wall_seconds += slot.sum.read_wall_seconds;
    s.cpu.read += slot.sum.cpu.read;
    s.cpu.decode += slot.sum.cpu.decode;
    s.cpu.augment += slot.sum.cpu.augment;
  }
  s.threads = setup_.threads;
  s.prefetch = setup_.prefetch;
  s.rank = setup_.rank.rank;
  s.world_size = setup_.rank.world_size;
  s.cpus = setup_.cpus;
  s.pool_buffers = pool_buffers;
  s.pool_grown = std::max<int64_t>(0, pool_buffers - (setup_.prefetch + 2));
  return s;
}

}  // namespace stoker::pipeline
