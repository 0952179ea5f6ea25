// MixUp / CutMix: the Beta draws, the per-batch draw, the pair arithmetic, the soft labels.

#include "stoker/batch_mix.h"

#include <gtest/gtest.h>

#include <vector>

#include "stoker/error.h"

namespace stoker::test {
namespace {

// Beta(a, a) from the two gamma draws: mean 1/2 and variance 1 / (4 (2a + 1)), for the
// alphas of the recipe (MixUp 0.2, CutMix 1.0) and a large one; deterministic draws, so the
// bounds are checked once and hold on every run.
TEST(BatchMix, BetaHasItsMomentsAndTheDrawsAreInRange) {
  for (const double alpha : {0.2, 1.0, 5.0}) {
    Rng rng(stream_key(7, static_cast<uint64_t>(alpha * 10)));
    const int n = 40000;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; ++i) {
      const double x = sample_beta(rng, alpha);
      ASSERT_GE(x, 0.0);
      ASSERT_LE(x, 1.0);
      sum += x;
      sq += x * x;
    }
    const double mean = sum / n, var = sq / n - mean * mean;
    EXPECT_NEAR(mean, 0.5, 0.01) << alpha;
    EXPECT_NEAR(var, 1.0 / (4 * (2 * alpha + 1)), 0.01) << alpha;
  }
  BatchMixConfig both;
  both.mixup_alpha = 0.2;
  both.cutmix_alpha = 1.0;
  both.num_classes = 10;
  both.validate();
  int mixups = 0;
  for (int64_t j = 0; j < 400; ++j) {
    Rng rng(batch_mix_key(3, 0, j, 1, 2));
    const BatchMix m = draw_batch_mix(both, rng, 30, 40);
    mixups += m.kind == BatchMix::Kind::kMixUp;
    if (m.kind == BatchMix::Kind::kCutMix) {
      ASSERT_TRUE(0 <= m.x1 && m.x1 <= m.x2 && m.x2 <= 40 && 0 <= m.y1 && m.y1 <= m.y2 &&
                  m.y2 <= 30);
      EXPECT_DOUBLE_EQ(m.label_lam, 1.0 - (m.x2 - m.x1) * (m.y2 - m.y1) / 1200.0);
    }
  }
  EXPECT_GT(mixups, 160);  // RandomChoice's p = 0.5
  EXPECT_LT(mixups, 240);
  BatchMixConfig no_classes = both;
  no_classes.num_classes = 0;
  EXPECT_THROW(no_classes.validate(), Error);
}

// timm's prob: the share of batches mixed at all (at 1, the default, no draw is added: the
// loader digests of docs/perf.md are unchanged); prob and label_smoothing are checked.
TEST(BatchMix, ProbIsTheShareOfBatchesMixed) {
  BatchMixConfig config;
  config.mixup_alpha = 0.8;
  config.cutmix_alpha = 1.0;
  config.num_classes = 10;
  for (double prob : {0.0, 0.3, 1.0}) {
    config.prob = prob;
    int mixed = 0;
    for (int64_t b = 0; b < 4000; ++b) {
      Rng rng(batch_mix_key(5, 0, b, 0, 1));
      mixed += draw_batch_mix(config, rng, 32, 32).kind != BatchMix::Kind::kNone;
    }
    EXPECT_NEAR(mixed / 4000.0, prob, 0.03) << prob;
  }
  config.prob = 1.5;
  EXPECT_THROW(config.validate(), Error);
  config.prob = 1.0;
  config.label_smoothing = 1.0;
  EXPECT_THROW(config.validate(), Error);
}

TEST(BatchMix, PairsMixBothWaysAndCutMixSwapsTheBox) {
  std::vector<float> a(2 * 3 * 4), b(a.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i), b[i] = 100.0f + i;
  auto a2 = a, b2 = b;
  BatchMix mix;
  mix.kind = BatchMix::Kind::kMixUp;
  mix.lam = 0.25;
  mix_pair(a2.data(), b2.data(), 2, 3, 4, mix);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a2[i], b[i] * 0.75f + a[i] * 0.25f);
    EXPECT_EQ(b2[i], a[i] * 0.75f + b[i] * 0.25f);
  }
  a2 = a, b2 = b;
  mix.kind = BatchMix::Kind::kCutMix;
  mix.x1 = 1, mix.x2 = 3, mix.y1 = 0, mix.y2 = 2;
  mix_pair(a2.data(), b2.data(), 2, 3, 4, mix);
  for (int c = 0; c < 2; ++c) {
    for (int y = 0; y < 3; ++y) {
      for (int x = 0; x < 4; ++x) {
        const size_t i = (c * 3 + y) * 4 + x;
        const bool in = x >= 1 && x < 3 && y < 2;
        EXPECT_EQ(a2[i], in ? b[i] : a[i]);
        EXPECT_EQ(b2[i], in ? a[i] : b[i]);
      }
    }
  }
  std::vector<float> row(4);
  const std::vector<float> one{0, 1, 0, 0}, three{0, 0, 0, 1}, two{0, 0, 1, 0}, multi{1, 0, 1, 1};
  mix_label_rows(row, one, three, 0.75);
  EXPECT_EQ(row, (std::vector<float>{0, 0.75f, 0, 0.25f}));
  mix_label_rows(row, two, two, 0.6);
  EXPECT_EQ(row[2], 0.4f + 0.6f);
  mix_label_rows(row, multi, one, 0.5);  // multi-hot rows mix the same way
  EXPECT_EQ(row, (std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f}));
}

}  // namespace
}  // namespace stoker::test
