// The stats stage alone: per-thread sample costs and the consumer's counters merge into one
// snapshot.
#include "pipeline/stats.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "pipeline/test_util.h"

namespace stoker::pipeline {
namespace {

LoaderSetup two_threads() {
  test::MemoryDataset data(test::MemoryImages{.images = 4});
  LoaderConfig c;
  c.batch_size = 2;
  c.threads = 2;
  c.prefetch = 3;
  c.rank = 1;
  c.world_size = 2;
  return resolve_setup(data, c);
}

TEST(StatsStage, MergesEveryThreadsCostsAndTheConsumersCounters) {
  const LoaderSetup setup = two_threads();
  StatsStage stats(setup);
  LoaderStats before = stats.snapshot(0);
  EXPECT_EQ(before.epoch, -1);
  EXPECT_EQ(before.wall_seconds, 0.0);
  stats.reset(3, 8);
  std::vector<std::thread> workers;
  for (int t = 0; t < 2; ++t) {
    workers.emplace_back([&stats, t] {
      for (int i = 0; i < 1000; ++i) {
        stats.add_sample(t, SampleCost{.busy_seconds = 0.5,
                                       .read_wall_seconds = 0.25,
                                       .cpu = {.read = 0.125, .decode = 0.25, .augment = 1}});
      }
    });
  }
  for (auto& w : workers) w.join();
  stats.add_setup(0.5);
  stats.add_wait(3, 2.0);
  stats.add_wait(0, 0.0);
  SampleDigest planned;
  planned.add(5);
  planned.add(7);
  stats.next(1, 1, planned);
  const LoaderStats s = stats.snapshot(7);
  EXPECT_EQ(s.busy_seconds, 1000.0);
  EXPECT_EQ(s.read_wall_seconds, 500.0);
  EXPECT_EQ(s.cpu.read, 250.0);
  EXPECT_EQ(s.cpu.decode, 500.0);
  EXPECT_EQ(s.cpu.augment, 2000.0);
  EXPECT_EQ(s.cpu.collate, 0.5);
  EXPECT_EQ(s.queue_ready_sum, 1.0);  // 3 of 3 ready, then 0 of 3
  EXPECT_EQ(s.queue_checks, 2);
  EXPECT_EQ(s.wait_seconds, 2.0);
  EXPECT_EQ(s.batches, 1);
  EXPECT_EQ(s.images, 1);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.epoch, 3);
  EXPECT_EQ(s.epoch_start, 8);
  EXPECT_EQ(s.epoch_batches, 1);
  EXPECT_EQ(s.epoch_digest, planned);
  EXPECT_EQ(s.threads, 2);
  EXPECT_EQ(s.prefetch, 3);
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.world_size, 2);
  EXPECT_EQ(s.pool_buffers, 7);
  EXPECT_EQ(s.pool_grown, 2);  // beyond prefetch + 2
  stats.reset(4, 0);           // a new epoch keeps the loader's totals
  const LoaderStats next = stats.snapshot(7);
  EXPECT_EQ(next.batches, 1);
  EXPECT_EQ(next.epoch_batches, 0);
  EXPECT_EQ(next.epoch_digest, SampleDigest{});
}

}  // namespace
}  // namespace stoker::pipeline
