// The plan stage alone: batches handed out, resume state, and the pass rule (which epoch each
// iter() runs) that Python's Loader used to keep.
#include "pipeline/plan.h"

#include <gtest/gtest.h>

#include "pipeline/test_util.h"

namespace stoker::pipeline {
namespace {

class PlanStageTest : public ::testing::Test {
 protected:
  PlanStageTest()
      : dataset_(std::make_shared<test::MemoryDataset>(test::MemoryImages{.images = 10})) {
    LoaderConfig c = test::one_rank_config(3);
    setup_ = resolve_setup(*dataset_, c);
  }
  std::shared_ptr<test::MemoryDataset> dataset_;
  LoaderSetup setup_;
};

TEST_F(PlanStageTest, HandsOutEachBatchOfThePlanOnceInOrder) {
  PlanStage plan(dataset_, setup_);
  EXPECT_FALSE(plan.started());
  EXPECT_EQ(plan.num_batches(), 4);  // ceil(10 / 3)
  plan.start(2);
  const EpochPlan reference(setup_.sampler, 2);
  Batch batch;
  batch.indices.resize(3);
  batch.valid.resize(3);
  std::vector<int64_t> indices(3);
  std::vector<uint8_t> valid(3);
  for (int64_t j = 0; j < 4; ++j) {
    ASSERT_FALSE(plan.all_scheduled());
    plan.next(batch);
    EXPECT_EQ(batch.epoch, 2);
    EXPECT_EQ(batch.index, j);
    EXPECT_EQ(batch.global_valid, reference.batch(j, indices, valid));
    EXPECT_EQ(batch.indices, indices);
    EXPECT_EQ(batch.valid, valid);
  }
  EXPECT_TRUE(plan.all_scheduled());
  EXPECT_FALSE(plan.finished());
  for (int j = 0; j < 4; ++j) plan.delivered();
  EXPECT_TRUE(plan.finished());
  EXPECT_EQ(plan.state().consumed, 10);
}

TEST_F(PlanStageTest, AStateResumesItsEpochOnlyUntilABatchOfItIsDelivered) {
  PlanStage plan(dataset_, setup_);
  plan.start(1);
  plan.delivered();
  ResumeState saved = plan.state();
  EXPECT_EQ(saved.epoch, 1);
  EXPECT_EQ(saved.consumed, 3);

  PlanStage resumed(dataset_, setup_);
  resumed.reset(saved);
  EXPECT_EQ(resumed.state().consumed, 3);  // before any start: the state as loaded
  EXPECT_EQ(resumed.implicit_epoch(), 1);
  EXPECT_EQ(resumed.num_batches(), 3);  // 7 samples left
  EXPECT_EQ(resumed.start(1).consumed_at_start(), 3);
  EXPECT_EQ(resumed.start(1).consumed_at_start(), 3);  // no batch delivered yet: still kept
  resumed.delivered();
  EXPECT_EQ(resumed.state().consumed, 6);
  EXPECT_EQ(resumed.start(1).consumed_at_start(), 0);  // a new start of it: the beginning
}

TEST_F(PlanStageTest, RefusesAStateOfAnotherConfiguration) {
  PlanStage plan(dataset_, setup_);
  ResumeState s = plan.state();
  s.seed = 7;
  EXPECT_THROW(plan.reset(s), Error);
  s = plan.state();
  s.dataset_size = 11;
  EXPECT_THROW(plan.reset(s), Error);
  s = plan.state();
  s.consumed = 11;
  EXPECT_THROW(plan.reset(s), Error);
  EXPECT_THROW(plan.start(-1), Error);
}

// What DataLoader users (and Lightning) rely on, pass by pass.
TEST_F(PlanStageTest, EachPassRunsTheNextEpochUnlessSetEpochChoseOne) {
  PlanStage plan(dataset_, setup_);
  PlanStage::Pass first = plan.begin_pass();  // a fresh loader: epoch 0, started implicitly
  EXPECT_FALSE(first.start_epoch.has_value());
  EXPECT_EQ(plan.pass_epoch(), 0);
  EXPECT_TRUE(plan.take(first.id));
  PlanStage::Pass second = plan.begin_pass();
  EXPECT_EQ(second.start_epoch, 1);
  EXPECT_FALSE(plan.take(first.id));  // superseded
  EXPECT_TRUE(plan.take(second.id));
  plan.epoch_set(5);  // after the pass took a batch: the next pass runs 5
  EXPECT_FALSE(plan.take(second.id));
  PlanStage::Pass third = plan.begin_pass();
  EXPECT_FALSE(third.start_epoch.has_value());  // set_epoch already started it
  EXPECT_EQ(plan.pass_epoch(), 5);
  EXPECT_TRUE(plan.take(third.id));
  PlanStage::Pass fourth = plan.begin_pass();
  EXPECT_EQ(fourth.start_epoch, 6);
}

TEST_F(PlanStageTest, SetEpochBeforeAPassTakesItsFirstBatchAppliesToThatPass) {
  PlanStage plan(dataset_, setup_);
  PlanStage::Pass first = plan.begin_pass();
  ASSERT_TRUE(plan.take(first.id));
  PlanStage::Pass second = plan.begin_pass();  // iter() ...
  plan.epoch_set(3);                           // ... then set_epoch (Lightning's order)
  EXPECT_TRUE(plan.take(second.id));           // the same pass, now of epoch 3
  EXPECT_EQ(plan.pass_epoch(), 3);
  EXPECT_EQ(plan.begin_pass().start_epoch, 4);
}

TEST_F(PlanStageTest, APassAfterALoadedStateContinuesTheSavedEpoch) {
  PlanStage plan(dataset_, setup_);
  plan.start(4);
  plan.delivered();
  const ResumeState saved = plan.state();
  PlanStage resumed(dataset_, setup_);
  PlanStage::Pass before = resumed.begin_pass();
  resumed.reset(saved);
  EXPECT_FALSE(resumed.take(before.id));  // a pass begun before the load is over
  PlanStage::Pass pass = resumed.begin_pass();
  EXPECT_FALSE(pass.start_epoch.has_value());  // the loaded epoch, started implicitly
  EXPECT_EQ(resumed.pass_epoch(), 4);
  EXPECT_EQ(resumed.implicit_epoch(), 4);
  EXPECT_EQ(resumed.begin_pass().start_epoch, 5);
}

}  // namespace
}  // namespace stoker::pipeline
