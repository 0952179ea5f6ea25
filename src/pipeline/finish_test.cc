// The finish stage alone: labels under the bad-sample policy, the MixUp/CutMix pair mixed by
// the second slot to finish, and the float label rows.
#include "pipeline/finish.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "pipeline/batch_pool.h"
#include "pipeline/test_util.h"
#include "util/check.h"

namespace stoker::pipeline {
namespace {

// Labels index % 2, except for one index whose label lookup fails as bad data.
class OneBadLabel : public test::MemoryDataset {
 public:
  OneBadLabel(int images, int64_t bad) : MemoryDataset({.images = images}), bad_(bad) {}
  int64_t label(int64_t index) const override {
    STOKER_CHECK_DATA(index != bad_, "{}: label out of range", name(index));
    return MemoryDataset::label(index);
  }

 private:
  int64_t bad_;
};

struct Fixture {
  Fixture(BadSamplePolicy policy, BatchMixConfig mix = {}) {
    dataset = std::make_shared<OneBadLabel>(4, 2);
    LoaderConfig c = test::one_rank_config(4);
    c.transform.size = 8;
    c.bad_samples = policy;
    c.mix = mix;
    setup = resolve_setup(*dataset, c);
    skip = std::make_unique<SkipPolicy>(setup.config);
    finish = std::make_unique<FinishStage>(dataset, setup, *skip);
    pool = std::make_shared<BatchPool>(4, setup.sample_bytes);
    batch = pool->acquire();
    batch->height = batch->width = 8;
    for (int i = 0; i < 4; ++i) {
      batch->indices[static_cast<size_t>(i)] = 3 - i;  // slots 0..3 hold samples 3..0
      batch->valid[static_cast<size_t>(i)] = 1;
    }
  }
  std::shared_ptr<OneBadLabel> dataset;
  LoaderSetup setup;
  std::unique_ptr<SkipPolicy> skip;
  std::unique_ptr<FinishStage> finish;
  std::shared_ptr<BatchPool> pool;
  std::unique_ptr<Batch> batch;
};

TEST(FinishStage, ABadLabelIsSkippedUnderSkip) {
  Fixture f(BadSamplePolicy::kSkip);
  const LabelError error = f.finish->label(*f.batch);
  EXPECT_FALSE(error.error);
  EXPECT_EQ(f.batch->labels, (std::vector<int64_t>{1, -1, 1, 0}));
  EXPECT_EQ(f.batch->valid, (std::vector<uint8_t>{1, 0, 1, 1}));
  EXPECT_EQ(f.batch->skipped, 1);
}

TEST(FinishStage, ABadLabelIsReportedWithItsSlotUnderError) {
  Fixture f(BadSamplePolicy::kError);
  const LabelError error = f.finish->label(*f.batch);
  ASSERT_TRUE(error.error);
  EXPECT_EQ(error.slot, 1);
  EXPECT_EQ(f.batch->valid, (std::vector<uint8_t>{1, 1, 1, 1}));
  EXPECT_THROW(std::rethrow_exception(error.error), Error);
}

TEST(FinishStage, TheSecondSlotOfAPairMixesItAndTheRowsFollow) {
  BatchMixConfig mix;
  mix.mixup_alpha = 1.0;
  mix.num_classes = 2;
  Fixture f(BadSamplePolicy::kSkip, mix);
  f.finish->label(*f.batch);
  const std::unique_ptr<PairMix> draw = f.finish->draw(*f.batch);
  ASSERT_NE(draw, nullptr);
  ASSERT_EQ(draw->draws[0].kind, BatchMix::Kind::kMixUp);
  const size_t floats = f.setup.sample_bytes / sizeof(float);
  auto* pixels = reinterpret_cast<float*>(f.batch->storage.get());
  for (size_t i = 0; i < 4 * floats; ++i) pixels[i] = static_cast<float>(i / floats);
  std::vector<float> a(pixels, pixels + floats), b(pixels + floats, pixels + 2 * floats);
  mix_pair(a.data(), b.data(), 3, 8, 8, draw->draws[0]);  // the reference
  f.finish->slot_done(*f.batch, *draw, 1, false);         // the first of pair 0: nothing yet
  EXPECT_EQ(pixels[0], 0.0f);
  f.finish->slot_done(*f.batch, *draw, 0, false);  // the second: mixed
  EXPECT_TRUE(std::equal(a.begin(), a.end(), pixels));
  EXPECT_TRUE(std::equal(b.begin(), b.end(), pixels + floats));
  f.finish->slot_done(*f.batch, *draw, 2, false);
  f.finish->slot_done(*f.batch, *draw, 3, true);  // a blank partner: pair 1 is left as it is
  EXPECT_EQ(pixels[2 * floats], 2.0f);
  f.finish->finish(*f.batch, draw.get());
  ASSERT_EQ(f.batch->num_classes, 2);
  ASSERT_EQ(f.batch->soft_labels.size(), 8u);
  // Slot 0 (label 1) mixed with slot 1 (a skipped label: its partner keeps its own row).
  EXPECT_FLOAT_EQ(f.batch->soft_labels[0], 0.0f);
  EXPECT_FLOAT_EQ(f.batch->soft_labels[1], 1.0f);
  EXPECT_EQ(f.batch->soft_labels[2], 0.0f);  // slot 1: no label, a zero row
  EXPECT_EQ(f.batch->soft_labels[3], 0.0f);
  EXPECT_EQ(f.batch->soft_labels[4], 0.0f);  // slot 2: label 1, unmixed (partner blank)
  EXPECT_EQ(f.batch->soft_labels[5], 1.0f);
}

// timm's label smoothing: every labelled row is one_hot(off = s / K, on = 1 - s + off) in
// float32, and a mixed row is timm's y1 * lam + y2 * (1 - lam) of two smoothed rows.
TEST(FinishStage, LabelSmoothingRowsAreTimmsOneHotsMixed) {
  BatchMixConfig mix;
  mix.mixup_alpha = 1.0;
  mix.num_classes = 4;
  mix.label_smoothing = 0.1;
  Fixture f(BadSamplePolicy::kSkip, mix);
  f.finish->label(*f.batch);
  const std::unique_ptr<PairMix> draw = f.finish->draw(*f.batch);
  ASSERT_NE(draw, nullptr);
  for (int slot : {0, 1, 2, 3}) f.finish->slot_done(*f.batch, *draw, slot, false);
  f.finish->finish(*f.batch, draw.get());
  const double off_value = 0.1 / 4;
  const auto off = static_cast<float>(off_value), on = static_cast<float>(1.0 - 0.1 + off_value);
  const auto row = [&](int label) {
    std::vector<float> r(4, off);
    r[static_cast<size_t>(label)] = on;
    return r;
  };
  const auto lam = static_cast<float>(draw->draws[0].label_lam);
  const auto rest = static_cast<float>(1.0 - draw->draws[0].label_lam);
  const auto& soft = f.batch->soft_labels;
  ASSERT_EQ(soft.size(), 16u);
  // Slot 0 (sample 3, label 1): its partner's label was skipped, so its own smoothed row.
  EXPECT_EQ(std::vector<float>(soft.begin(), soft.begin() + 4), row(1));
  // Slot 1: no label, a zero row.
  EXPECT_EQ(std::vector<float>(soft.begin() + 4, soft.begin() + 8), std::vector<float>(4, 0.0f));
  // Slots 2 (label 1) and 3 (label 0) mixed with each other.
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(soft[8 + k], row(1)[k] * lam + row(0)[k] * rest) << k;
    EXPECT_EQ(soft[12 + k], row(0)[k] * lam + row(1)[k] * rest) << k;
  }
}

// timm's mode='elem': each slot of a pair is mixed with the other by its own draw, from the
// unmixed images, and its label row follows its own label_lam.
TEST(FinishStage, ElemModeMixesEachSlotByItsOwnDraw) {
  BatchMixConfig mix;
  mix.mixup_alpha = 0.4;
  mix.cutmix_alpha = 1.0;
  mix.mixup_p = 0.5;
  mix.num_classes = 2;
  mix.mode = BatchMixConfig::Mode::kElem;
  Fixture f(BadSamplePolicy::kSkip, mix);
  f.finish->label(*f.batch);
  const std::unique_ptr<PairMix> draw = f.finish->draw(*f.batch);
  ASSERT_NE(draw, nullptr);
  ASSERT_EQ(draw->draws.size(), 4u);
  const size_t floats = f.setup.sample_bytes / sizeof(float);
  auto* pixels = reinterpret_cast<float*>(f.batch->storage.get());
  for (size_t i = 0; i < 4 * floats; ++i) pixels[i] = static_cast<float>(i % 97);
  const std::vector<float> a(pixels + 2 * floats, pixels + 3 * floats),
      b(pixels + 3 * floats, pixels + 4 * floats);
  for (int slot : {0, 1, 2, 3}) f.finish->slot_done(*f.batch, *draw, slot, false);
  // Pair 1 (slots 2, 3): each from the unmixed pair by its own draw.
  for (int slot : {2, 3}) {
    const BatchMix& d = draw->draws[static_cast<size_t>(slot)];
    const std::vector<float>& own = slot == 2 ? a : b;
    const std::vector<float>& other = slot == 2 ? b : a;
    std::vector<float> want = own;
    if (d.kind == BatchMix::Kind::kMixUp) {
      for (size_t i = 0; i < floats; ++i) {
        want[i] = other[i] * static_cast<float>(1.0 - d.lam) + own[i] * static_cast<float>(d.lam);
      }
    } else if (d.kind == BatchMix::Kind::kCutMix) {
      for (int c = 0; c < 3; ++c) {
        for (int y = d.y1; y < d.y2; ++y) {
          for (int x = d.x1; x < d.x2; ++x) {
            const size_t i = (static_cast<size_t>(c) * 8 + y) * 8 + x;
            want[i] = other[i];
          }
        }
      }
    }
    EXPECT_TRUE(std::equal(want.begin(), want.end(), pixels + slot * floats)) << slot;
  }
  f.finish->finish(*f.batch, draw.get());
  // Slots 2 (label 1) and 3 (label 0): own * lam_i + partner * (1 - lam_i), each its own lam.
  const auto& soft = f.batch->soft_labels;
  for (int slot : {2, 3}) {
    const double lam = draw->draws[static_cast<size_t>(slot)].label_lam;
    const float own_one = slot == 2 ? static_cast<float>(lam) : static_cast<float>(1.0 - lam);
    EXPECT_FLOAT_EQ(soft[static_cast<size_t>(slot) * 2 + 1], own_one) << slot;
  }
}

}  // namespace
}  // namespace stoker::pipeline
