// timm's policies: the parse of its strings, the draws' reproducibility, and every op on
// grayscale and tiny images (what the PIL comparison in tests/python/test_timm.py does not
// reach).
#include "stoker/timm_augment.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "stoker/error.h"

namespace stoker {
namespace {

std::vector<uint8_t> gradient(int w, int h, int ch) {
  std::vector<uint8_t> px(static_cast<size_t>(w) * h * ch);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>((i * 37 + i / 7) % 256);
  return px;
}

TEST(TimmAugmentTest, RandStringsParseToTimmsSections) {
  const TimmAugment a = parse_timm_augment("rand-m9-n3-mstd0.5-inc1");
  EXPECT_EQ(a.kind, TimmAugment::Kind::kRandAugment);
  EXPECT_EQ(a.num_layers, 3);
  ASSERT_EQ(a.ops.size(), 15u);
  EXPECT_STREQ(to_string(a.ops[4].op), "PosterizeIncreasing");
  EXPECT_EQ(a.ops[4].prob, 0.5);
  EXPECT_EQ(a.ops[4].magnitude, 9);
  EXPECT_EQ(a.hparams.magnitude_std, 0.5);
  EXPECT_TRUE(a.weights.empty());

  const TimmAugment u = parse_timm_augment("rand-m10-mstd101-p0.7-mmax15");
  EXPECT_TRUE(std::isinf(u.hparams.magnitude_std));  // timm: > 100 means uniform
  EXPECT_EQ(u.hparams.magnitude_max, 15);
  EXPECT_EQ(u.ops[0].prob, 0.7);
  EXPECT_STREQ(to_string(u.ops[4].op), "Posterize");

  const TimmAugment w = parse_timm_augment("rand-mstd1-tweights");
  ASSERT_EQ(w.weights.size(), w.ops.size());
  double total = 0;
  for (const double x : w.weights) total += x;
  EXPECT_NEAR(total, 1.0, 1e-12);
}

TEST(TimmAugmentTest, AutoAugmentAndAugMixParse) {
  const TimmAugment r = parse_timm_augment("originalr-mstd0.5");
  EXPECT_EQ(r.kind, TimmAugment::Kind::kAutoAugment);
  ASSERT_EQ(r.policy.size(), 25u);
  EXPECT_STREQ(to_string(r.policy[0][0].op), "PosterizeIncreasing");  // the research variant
  EXPECT_EQ(r.hparams.magnitude_std, 0.5);
  const TimmAugment m = parse_timm_augment("augmix-m5-w4-d2-a0.5-b1");
  EXPECT_EQ(m.kind, TimmAugment::Kind::kAugMix);
  EXPECT_EQ(m.width, 4);
  EXPECT_EQ(m.depth, 2);
  EXPECT_EQ(m.alpha, 0.5);
  EXPECT_TRUE(m.blended);
  EXPECT_TRUE(std::isinf(m.hparams.magnitude_std));  // AugMix's default: uniform magnitudes
  EXPECT_EQ(parse_timm_augment("augmix-m5-mstd0.3").hparams.magnitude_std, 0.3);
  TimmHparams given;
  given.magnitude_std = 2;  // hparams.setdefault: the caller's value wins over the string's
  EXPECT_EQ(parse_timm_augment("rand-m9-mstd0.5", given).hparams.magnitude_std, 2);
}

TEST(TimmAugmentTest, UnreadableStringsNameTheSection) {
  for (const auto& [bad, words] :
       std::vector<std::pair<std::string, std::string>>{{"rand-m9-x2", "section 'x2'"},
                                                        {"rand-m9.5", "not an integer"},
                                                        {"rand-t3a", "'t3a' is not offered"},
                                                        {"augmix-w0", "1 <= w"},
                                                        {"v0-n2", "AutoAugment section 'n2'"},
                                                        {"3a", "'3a'"},
                                                        {"", "expected 'rand-...'"}}) {
    try {
      parse_timm_augment(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
}

TEST(TimmAugmentTest, SamePolicyAndKeySameBytesOnAnyImageShape) {
  for (const char* config : {"rand-m9-mstd0.5-inc1", "rand-mstd1-tweights", "original", "v0r",
                             "augmix-m5-w3", "augmix-m3-w2-d1-b1"}) {
    TimmHparams train;  // create_transform's aa_params for 8 px and mean (0.5, 0.4, 0.3)
    train.translate_const = 3;
    train.fill = {128, 102, 76};
    const TimmAugment a = parse_timm_augment(config, train);
    for (const auto& [w, h, ch] : std::vector<std::array<int, 3>>{
             {31, 17, 3}, {24, 24, 1}, {1, 1, 3}, {2, 5, 1}, {3, 3, 3}}) {
      for (uint64_t key = 0; key < 20; ++key) {
        std::vector<uint8_t> scratch;
        std::vector<uint8_t> first = gradient(w, h, ch), second = first;
        Rng r1(key), r2(key);
        std::vector<TimmApplied> t1, t2;
        apply_timm_augment(a, r1, PixelImage{first.data(), w, h, ch}, scratch, &t1);
        apply_timm_augment(a, r2, PixelImage{second.data(), w, h, ch}, scratch, &t2);
        ASSERT_EQ(first, second) << config << " key " << key;
        ASSERT_EQ(t1.size(), t2.size());
      }
    }
  }
}

TEST(TimmAugmentTest, PosterizeToNoBitsIsBlack) {
  // PosterizeIncreasing at level 10 keeps 0 bits (black, as Pillow < 13 gives; Pillow 13 refuses).
  std::vector<uint8_t> px = gradient(4, 4, 3), scratch;
  apply_timm_op(TimmOp::kPosterizeIncreasing,
                timm_level_to_arg(TimmOp::kPosterizeIncreasing, 10, {}, false),
                PixelImage{px.data(), 4, 4, 3}, {0, 0, 0}, TimmResample::kBilinear, scratch);
  for (const uint8_t v : px) EXPECT_EQ(v, 0);
}

}  // namespace
}  // namespace stoker
