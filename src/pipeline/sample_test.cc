// The sample stage alone: one slot read, decoded and transformed exactly as transform_sample
// does it, and the bad-sample policy (skip, error, storage failures, the in-a-row limit).
#include "pipeline/sample.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "pipeline/batch_pool.h"
#include "pipeline/test_util.h"
#include "stoker/rng.h"

namespace stoker::pipeline {
namespace {

class SampleStageTest : public ::testing::Test {
 protected:
  void make(const test::MemoryImages& images, BadSamplePolicy policy, int max_in_a_row = 1000) {
    dataset_ = std::make_shared<test::MemoryDataset>(images);
    LoaderConfig c = test::one_rank_config(4);
    c.transform.size = 32;
    c.bad_samples = policy;
    c.max_bad_in_a_row = max_in_a_row;
    setup_ = resolve_setup(*dataset_, c);
    pool_ = std::make_shared<BatchPool>(4, setup_.sample_bytes);
    read_ = std::make_unique<ReadStage>(dataset_, setup_);
    skip_ = std::make_unique<SkipPolicy>(setup_.config);
    sample_ = std::make_unique<SampleStage>(dataset_, setup_, *read_, *skip_);
    batch_ = pool_->acquire();
    batch_->epoch = 2;
    for (int i = 0; i < 4; ++i) {
      batch_->indices[static_cast<size_t>(i)] = i;
      batch_->valid[static_cast<size_t>(i)] = 1;
    }
  }
  std::span<const uint8_t> slot(int i) const {
    return {batch_->storage.get() + static_cast<size_t>(i) * setup_.sample_bytes,
            setup_.sample_bytes};
  }

  std::shared_ptr<test::MemoryDataset> dataset_;
  LoaderSetup setup_;
  std::shared_ptr<BatchPool> pool_;
  std::unique_ptr<ReadStage> read_;
  std::unique_ptr<SkipPolicy> skip_;
  std::unique_ptr<SampleStage> sample_;
  std::unique_ptr<Batch> batch_;
};

TEST_F(SampleStageTest, WritesTheSlotTransformSampleWritesWithTheSamplesOwnRandomness) {
  make({.images = 4}, BadSamplePolicy::kError);
  const SampleOutcome outcome = sample_->run(*batch_, nullptr, 1, 0);
  EXPECT_FALSE(outcome.blank);
  EXPECT_FALSE(outcome.skipped);
  EXPECT_GE(outcome.cost.busy_seconds, outcome.cost.read_wall_seconds);
  std::vector<uint8_t> bytes;
  dataset_->read(1, bytes);
  std::vector<uint8_t> expected(setup_.sample_bytes);
  Rng rng(stream_key(0, 2, 1));  // (seed, epoch, sample index)
  TransformScratch scratch;
  transform_sample(expected.data(), bytes, dataset_->name(1), setup_.config.transform, rng,
                   scratch);
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), slot(1).begin()));
}

TEST_F(SampleStageTest, SkipZeroFillsAndMasksABadSampleOnce) {
  make({.images = 4, .bad_index = 2}, BadSamplePolicy::kSkip);
  std::fill_n(batch_->storage.get(), 4 * setup_.sample_bytes, uint8_t{7});
  const SampleOutcome outcome = sample_->run(*batch_, nullptr, 2, 0);
  EXPECT_TRUE(outcome.blank);
  EXPECT_TRUE(outcome.skipped);
  EXPECT_EQ(batch_->valid[2], 0);
  EXPECT_TRUE(std::all_of(slot(2).begin(), slot(2).end(), [](uint8_t v) { return v == 0; }));
  // A padding slot repeating the bad sample: blank, but not counted again.
  batch_->indices[3] = 2;
  batch_->valid[3] = 0;
  const SampleOutcome padding = sample_->run(*batch_, nullptr, 3, 0);
  EXPECT_TRUE(padding.blank);
  EXPECT_FALSE(padding.skipped);
}

TEST_F(SampleStageTest, ErrorPolicyRethrowsTheBadSampleNamingIt) {
  make({.images = 4, .bad_index = 2}, BadSamplePolicy::kError);
  try {
    sample_->run(*batch_, nullptr, 2, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadData);
    EXPECT_NE(e.message().find("mem2.jpg"), std::string::npos) << e.message();
  }
}

TEST_F(SampleStageTest, AFailedReadIsNeverSkipped) {
  make({.images = 4, .io_error_index = 1, .io_failures = 100}, BadSamplePolicy::kSkip);
  try {
    sample_->run(*batch_, nullptr, 1, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
  }
  EXPECT_EQ(dataset_->io_error_reads(), 3);  // IoRetryPolicy's default attempts
}

TEST_F(SampleStageTest, TooManyBadSamplesInARowEndTheEpoch) {
  make({.images = 4, .all_bad = true}, BadSamplePolicy::kSkip, 3);
  EXPECT_TRUE(sample_->run(*batch_, nullptr, 0, 0).skipped);
  EXPECT_TRUE(sample_->run(*batch_, nullptr, 1, 0).skipped);
  try {
    sample_->run(*batch_, nullptr, 2, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadData);
    EXPECT_NE(e.message().find("3 bad samples in a row"), std::string::npos) << e.message();
  }
}

TEST(SkipPolicy, AGoodSampleResetsTheCountInARow) {
  LoaderConfig c;
  c.bad_samples = BadSamplePolicy::kSkip;
  c.max_bad_in_a_row = 2;
  SkipPolicy skip(c);
  const Error bad(ErrorKind::kBadData, "bad");
  EXPECT_TRUE(skip.skips(bad));
  EXPECT_FALSE(skip.skips(Error(ErrorKind::kIo, "eio")));
  skip.bad(bad);
  skip.good();
  skip.bad(bad);
  EXPECT_THROW(skip.bad(bad), Error);
  c.bad_samples = BadSamplePolicy::kError;
  EXPECT_FALSE(SkipPolicy(c).skips(bad));
}

}  // namespace
}  // namespace stoker::pipeline
