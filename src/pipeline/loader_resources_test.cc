// Bounded resources of the engine: resident memory stays flat over many epochs, no thread
// outlives its loader (1,000 constructions and destructions), and destroying a loader
// mid-epoch returns promptly without decoding the rest of the epoch.
//
// Memory figures come from /proc/self/statm, threads from /proc/self/task. The RSS test is
// skipped under AddressSanitizer, whose quarantine holds freed memory on purpose.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "pipeline/test_util.h"
#include "stoker/error.h"
#include "stoker/image.h"
#include "stoker/loader.h"
#include "stoker/rng.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STOKER_SANITIZED 1
#else
#define STOKER_SANITIZED 0
#endif

namespace stoker {
namespace {

namespace fs = std::filesystem;

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  EXPECT_TRUE(statm.good()) << "cannot read /proc/self/statm";
  return resident * ::sysconf(_SC_PAGESIZE);
}

int thread_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// The thread count once it has come to `expected`, or as it is after 10 s. pthread_join
// returns when the kernel clears the exiting thread's id, a moment before it removes the task
// from /proc/self/task (a moment that qemu-user, running the arm64 tests, stretches): a joined
// thread may still be listed just after its loader is gone.
int settled_thread_count(int expected) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int n = thread_count();
  while (n != expected && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = thread_count();
  }
  return n;
}

using test::MemoryDataset;
using test::one_rank_config;

// Small noise JPEGs of 16..24 pixels a side; optionally each read sleeps (a slow disk).
std::shared_ptr<MemoryDataset> memory_images(int images, int side,
                                             std::chrono::milliseconds read_delay = {}) {
  return std::make_shared<MemoryDataset>(test::MemoryImages{.images = images,
                                                            .side = side,
                                                            .spread = side / 2,
                                                            .seed = 11,
                                                            .quality = 80,
                                                            .read_delay = read_delay});
}

// 20 epochs of 6 float batches of 8 x 3 x 128 x 128 (1.5 MiB each). Resident memory after
// epoch 2 (pool, scratch buffers and allocator arenas warmed up) is the baseline; no later
// epoch may be more than 4 MiB above it. A leak of one batch buffer per epoch would add
// 1.5 MiB an epoch, 25 MiB by the end; a leak of one decoded sample per epoch would show too
// through the exact delivered-count check.
TEST(LoaderResources, ResidentMemoryIsFlatOverTwentyEpochs) {
  if (STOKER_SANITIZED) GTEST_SKIP() << "sanitizer runtimes keep freed memory on purpose";
  auto data = memory_images(45, 96);
  Loader loader(data, one_rank_config(2, 8, 128));
  constexpr int64_t kTolerance = 4 << 20;
  int64_t baseline = 0, peak = 0;
  for (int epoch = 0; epoch < 20; ++epoch) {
    loader.set_epoch(epoch);
    int64_t valid = 0;
    while (auto batch = loader.next()) {
      for (uint8_t v : batch->valid) valid += v;
    }
    ASSERT_EQ(valid, data->size()) << "epoch " << epoch;
    const int64_t rss = resident_bytes();
    if (epoch == 2) baseline = rss;
    if (epoch > 2) peak = std::max(peak, rss);
    std::printf("  epoch %2d: rss %.1f MiB\n", epoch, static_cast<double>(rss) / (1 << 20));
  }
  EXPECT_LE(peak - baseline, kTolerance)
      << "resident memory grew by " << (peak - baseline) << " bytes over epochs 3..19";
  EXPECT_EQ(loader.stats().pool_grown, 0);
}

// 1,000 loaders of 2 workers each: every thread is joined by the destructor, whether the
// loader never started, was mid-epoch, or was left with its batch held by the consumer.
TEST(LoaderResources, NoThreadOutlivesAThousandLoaders) {
  auto data = memory_images(6, 16);
  const int before = thread_count();
  std::shared_ptr<const Batch> held;
  for (int i = 0; i < 1000; ++i) {
    Loader loader(data, one_rank_config(2, 2, 16));
    if (i % 100 == 0) {
      ASSERT_EQ(settled_thread_count(before + 2), before + 2)
          << "loader " << i << " should run 2 workers";
    }
    if (i % 4 == 1) {
      loader.set_epoch(i);  // workers busy on the epoch when the loader goes
    } else if (i % 4 == 2) {
      loader.set_epoch(i);
      held = loader.next();  // the batch outlives its loader
      ASSERT_TRUE(held);
    }
  }
  EXPECT_EQ(settled_thread_count(before), before);
  ASSERT_TRUE(held);
  EXPECT_EQ(held->batch_size, 2);  // still readable after its loader is gone
}

// Reads take 20 ms and an epoch 240 of them. Destroying the loader after its first batches
// stops its workers after what was in flight (prefetch batches plus one sample per worker),
// not the rest of the epoch, and no read happens after the destructor returned. (How long the
// destructor takes is left to no test: a hang is caught by ctest's timeout.)
TEST(LoaderResources, DestroyingMidEpochReadsOnlyWhatWasInFlight) {
  auto data = memory_images(240, 16, std::chrono::milliseconds(20));
  auto c = one_rank_config(2, 4, 16);
  c.prefetch = 2;
  int64_t reads_at_destruction = 0;
  {
    auto loader = std::make_unique<Loader>(data, c);
    loader->set_epoch(0);
    ASSERT_TRUE(loader->next());
    ASSERT_TRUE(loader->next());
    reads_at_destruction = data->reads();
    loader.reset();
  }
  // In flight at most: 2 delivered batches + prefetch 2 batches scheduled = 16 samples.
  EXPECT_LE(data->reads(), 4 * 4);
  EXPECT_GE(data->reads(), reads_at_destruction);
  const int64_t reads_after = data->reads();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(data->reads(), reads_after) << "nothing reads after the destructor returned";
}

}  // namespace
}  // namespace stoker
