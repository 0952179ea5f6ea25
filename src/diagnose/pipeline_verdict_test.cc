// The live verdict (diagnose_pipeline) on real loaders: a slow consumer is healthy, a fast
// consumer of an undersized pool is input-bound-cpu, a slow store is io-bound.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "diagnose/report.h"
#include "pipeline/test_util.h"
#include "stoker/diagnose.h"
#include "stoker/error.h"
#include "stoker/image.h"
#include "stoker/loader_stats.h"
#include "stoker/rng.h"

namespace stoker {
namespace {

using test::MemoryDataset;
using test::MemoryImages;
using test::one_rank_config;

// Square noise JPEGs held in memory; reads can be made slow to stand in for a slow store.
std::shared_ptr<MemoryDataset> memory_images(int images, int side,
                                             std::chrono::microseconds read_delay = {},
                                             int bad_index = -1) {
  return std::make_shared<MemoryDataset>(MemoryImages{
      .images = images, .side = side, .seed = 5, .read_delay = read_delay, .bad_index = bad_index});
}

// Runs epochs for at least `seconds`, sleeping `step` per batch like a training step would.
Diagnosis run_and_diagnose(Loader& loader, double seconds, std::chrono::milliseconds step) {
  StatsSampler sampler(loader);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t epoch = 0;; ++epoch) {
    loader.set_epoch(epoch);
    while (auto batch = loader.next()) {
      if (step.count() > 0) std::this_thread::sleep_for(step);
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= seconds)
      break;
  }
  sampler.sample();
  return diagnose_pipeline(sampler.last_window());
}

TEST(LiveVerdict, SlowConsumerIsHealthy) {
  // An epoch's first batch is always waited for (nothing is prepared before set_epoch), so the
  // epoch is long, 64 batches: that wait stays a small share on a slow machine too (with 8
  // batches, the aarch64 run under qemu on a loaded machine measured a wait fraction of 0.13).
  Loader loader(memory_images(256, 32), one_rank_config(2, 4, 16));
  const Diagnosis d = run_and_diagnose(loader, 0.8, std::chrono::milliseconds(20));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << format_diagnosis(d);
  EXPECT_LT(d.numbers.pipeline->wait_fraction, 0.1);
  EXPECT_TRUE(d.fixes.empty());
}

TEST(LiveVerdict, FastConsumerOfOneThreadIsInputBoundCpu) {
  Loader loader(memory_images(16, 384), one_rank_config(1, 4, 64));
  const Diagnosis d = run_and_diagnose(loader, 0.8, std::chrono::milliseconds(0));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << format_diagnosis(d);
  EXPECT_GT(d.numbers.pipeline->wait_fraction, 0.5);
  EXPECT_GT(d.numbers.pipeline->busy_fraction, 0.8);
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_NE(d.fixes[0].action.find("pack"), std::string::npos);
}

TEST(LiveVerdict, SlowStoreIsIoBound) {
  Loader loader(memory_images(16, 16, std::chrono::microseconds(4000)), one_rank_config(2, 4, 16));
  const Diagnosis d = run_and_diagnose(loader, 0.8, std::chrono::milliseconds(0));
  EXPECT_EQ(d.verdict, Verdict::kIoBound) << format_diagnosis(d);
  EXPECT_GT(d.numbers.pipeline->read_fraction, 0.5);
  // Sleeping in read() is not CPU work: the process is far from its cores' capacity.
  EXPECT_LT(d.numbers.pipeline->cpu_utilisation, 0.5);
}

TEST(LiveVerdict, ShortWindowIsUnknown) {
  PipelineWindow w;
  w.seconds = 0.1;
  w.images = 10;
  EXPECT_EQ(diagnose_pipeline(w).verdict, Verdict::kUnknown);
  w.seconds = 2;
  w.images = 0;
  EXPECT_EQ(diagnose_pipeline(w).verdict, Verdict::kUnknown);
  // Waiting with idle workers is not the pool's fault: unknown, with a hint.
  w.images = 100;
  w.wait_fraction = 0.5;
  w.busy_fraction = 0.3;
  const Diagnosis d = diagnose_pipeline(w);
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  ASSERT_EQ(d.fixes.size(), 1u);
  EXPECT_NE(d.fixes[0].action.find("prefetch"), std::string::npos);
}

}  // namespace
}  // namespace stoker
