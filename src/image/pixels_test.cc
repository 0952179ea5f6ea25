// Pixel layout kernels (pixels.cc): HWC copy with mirror, float CHW normalisation bit-exact
// with torchvision, every SIMD level.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "image/decoders.h"
#include "image/simd.h"
#include "stoker/image.h"

namespace stoker {
namespace {

TEST(Pixels, CopyHwcFlip) {
  const uint8_t in[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // 2x2 RGB
  uint8_t out[12];
  copy_hwc(out, in, 2, 2, 3, false);
  EXPECT_EQ(0, std::memcmp(out, in, 12));
  copy_hwc(out, in, 2, 2, 3, true);
  const uint8_t flipped[] = {4, 5, 6, 1, 2, 3, 10, 11, 12, 7, 8, 9};
  EXPECT_EQ(0, std::memcmp(out, flipped, 12));
  const uint8_t gray[] = {1, 2, 3, 4, 5, 6};  // 3x2
  uint8_t g[6];
  copy_hwc(g, gray, 3, 2, 1, true);
  const uint8_t gflip[] = {3, 2, 1, 6, 5, 4};
  EXPECT_EQ(0, std::memcmp(g, gflip, 6));
}

TEST(Pixels, NormalizeToChwIsTorchvisionFloat32) {
  const uint8_t in[] = {0, 128, 255, 7, 8, 9};  // 2x1 RGB
  const float mean[] = {0.485f, 0.456f, 0.406f};
  const float std[] = {0.229f, 0.224f, 0.225f};
  float out[6];
  normalize_to_chw(out, in, 2, 1, 3, false, mean, std);
  // ToTensor: float32 v / 255; Normalize: (x - mean) / std, each op rounded to float32.
  auto expect = [&](uint8_t v, int c) {
    volatile float x = static_cast<float>(v) / 255.0f;
    volatile float d = x - mean[c];
    return d / std[c];
  };
  EXPECT_EQ(out[0], expect(0, 0));
  EXPECT_EQ(out[1], expect(7, 0));
  EXPECT_EQ(out[2], expect(128, 1));
  EXPECT_EQ(out[3], expect(8, 1));
  EXPECT_EQ(out[4], expect(255, 2));
  EXPECT_EQ(out[5], expect(9, 2));
  // Known torchvision values (torch 1.13, float32): (1.0 - 0.406) / 0.225 and (0 - .485)/.229.
  EXPECT_FLOAT_EQ(out[4], 2.64f);
  EXPECT_FLOAT_EQ(out[0], -2.117904f);
  normalize_to_chw(out, in, 2, 1, 3, true, mean, std);
  EXPECT_EQ(out[0], expect(7, 0));
  EXPECT_EQ(out[1], expect(0, 0));
}

// Every width class (whole 16-pixel blocks, a tail, both), both flips, every kernel this CPU
// runs, and outputs with and without the 64-byte alignment that enables streaming stores: each
// float must be torchvision's (v / 255 - mean) / std to the bit.
TEST(Normalize, BitExactForEveryWidthFlipAndKernel) {
  const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
  const int best = static_cast<int>(image::best_simd_level());
  for (int channels : {1, 3}) {
    for (int width : {1, 7, 15, 16, 17, 32, 45, 224}) {
      const int height = 3;
      std::vector<uint8_t> in(static_cast<size_t>(width) * height * channels);
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 37 + 11);
      for (int l = 0; l <= best; ++l) {
        const auto level = static_cast<image::SimdLevel>(l);
        for (size_t misalign : {0, 4}) {
          for (bool flip : {false, true}) {
            std::vector<float> storage(in.size() + 32, -99.0f);
            const auto at = reinterpret_cast<uintptr_t>(storage.data());
            float* out = storage.data() + ((64 - at % 64) % 64) / sizeof(float) + misalign;
            image::normalize_to_chw_at(level, out, in.data(), width, height, channels, flip, mean,
                                       std);
            for (int c = 0; c < channels; ++c) {
              for (int y = 0; y < height; ++y) {
                for (int x = 0; x < width; ++x) {
                  const int sx = flip ? width - 1 - x : x;
                  const float v = in[(static_cast<size_t>(y) * width + sx) * channels + c] / 255.0f;
                  const float want = (v - mean[c]) / std[c];
                  ASSERT_EQ(out[(static_cast<size_t>(c) * height + y) * width + x], want)
                      << "level " << to_string(level) << " misalign " << misalign << " channels "
                      << channels << " width " << width << " flip " << flip << " at (" << c << ", "
                      << y << ", " << x << ")";
                }
              }
            }
          }
        }
      }
    }
  }
  // The per-thread tables follow a change of mean/std.
  const float other_mean[3] = {0.5f, 0.5f, 0.5f}, other_std[3] = {0.5f, 0.25f, 0.125f};
  const uint8_t px[3] = {255, 255, 255};
  float out[3];
  normalize_to_chw(out, px, 1, 1, 3, false, other_mean, other_std);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 2.0f);
  EXPECT_EQ(out[2], 4.0f);
}

}  // namespace
}  // namespace stoker
