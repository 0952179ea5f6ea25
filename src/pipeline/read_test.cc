// The read stage alone: retried reads, and read-ahead hints that name each planned batch once
// per epoch, ahead of the workers.
#include "pipeline/read.h"

#include <gtest/gtest.h>

#include <vector>

#include "pipeline/test_util.h"

namespace stoker::pipeline {
namespace {

// Records what the loader hints.
class HintedDataset : public test::MemoryDataset {
 public:
  using MemoryDataset::MemoryDataset;
  void read_ahead(std::span<const int64_t> indices) const override {
    hinted.emplace_back(indices.begin(), indices.end());
  }
  void cancel_read_ahead() const override { ++cancels; }
  mutable std::vector<std::vector<int64_t>> hinted;
  mutable int cancels = 0;
};

TEST(ReadStage, HintsTheBatchBeingScheduledAndTheNextOnce) {
  auto data = std::make_shared<HintedDataset>(test::MemoryImages{.images = 12});
  LoaderConfig c = test::one_rank_config(3);
  const LoaderSetup setup = resolve_setup(*data, c);
  const EpochPlan plan(setup.sampler, 0);
  ReadStage read(data, setup);
  std::vector<int64_t> indices(3);
  std::vector<uint8_t> valid(3);
  const auto batch = [&](int64_t j) {
    plan.batch(j, indices, valid);
    return indices;
  };
  read.next(plan, 0);
  ASSERT_EQ(data->hinted.size(), 2u);
  EXPECT_EQ(data->hinted[0], batch(0));
  EXPECT_EQ(data->hinted[1], batch(1));
  read.next(plan, 1);
  ASSERT_EQ(data->hinted.size(), 3u);
  EXPECT_EQ(data->hinted[2], batch(2));
  read.next(plan, 3);  // the last batch: nothing past the plan
  ASSERT_EQ(data->hinted.size(), 4u);
  EXPECT_EQ(data->hinted[3], batch(3));
  read.reset();  // a new epoch hints from the start again
  EXPECT_EQ(data->cancels, 1);
  read.next(plan, 0);
  EXPECT_EQ(data->hinted.size(), 6u);
}

TEST(ReadStage, TriesAFailedReadAgainAndCountsItsTime) {
  auto data = std::make_shared<test::MemoryDataset>(
      test::MemoryImages{.images = 2, .io_error_index = 1, .io_failures = 2});
  LoaderConfig c = test::one_rank_config(1);
  const LoaderSetup setup = resolve_setup(*data, c);
  ReadStage read(data, setup);
  std::vector<uint8_t> bytes;
  const ReadCost cost = read.read(1, bytes);
  EXPECT_EQ(data->io_error_reads(), 3);  // two failures, then the read that worked
  std::vector<uint8_t> expected;
  data->read(1, expected);
  EXPECT_EQ(bytes, expected);
  EXPECT_GT(cost.wall_seconds, 0.0);
}

}  // namespace
}  // namespace stoker::pipeline
