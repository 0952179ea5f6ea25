// Raw-pixel payloads (stoker/raw_image.h): round trips, regions, channel conversion, and a
// clear error for each malformed header.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/packed_format.h"
#include "io/test_util.h"
#include "stoker/raw_image.h"

namespace stoker {
namespace {

using test::error_of;
using ::testing::HasSubstr;

std::vector<uint8_t> pixels(int width, int height, int channels) {
  std::vector<uint8_t> p(static_cast<size_t>(width) * height * channels);
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<uint8_t>(i * 7 + i / 13);
  return p;
}

TEST(RawImageTest, RoundTripWholeAndRegionWithAndWithoutZstd) {
  const int w = 37, h = 23;
  const auto p = pixels(w, h, 3);
  for (int level : {0, 1, 19}) {
    const auto bytes = encode_raw_image(p.data(), w, h, 3, level);
    ASSERT_TRUE(is_raw_image(bytes));
    const RawImageInfo info = probe_raw(bytes, "a");
    EXPECT_EQ(info.width, w);
    EXPECT_EQ(info.height, h);
    EXPECT_EQ(info.channels, 3);
    EXPECT_EQ(info.compression, level == 0 ? 0 : 1);
    DecodedRegion r;
    decode_raw_region(r, bytes, Rect{0, 0, w, h}, 3, "a");
    EXPECT_EQ(r.pixels, p);
    EXPECT_EQ(r.scale, 1.0);
    EXPECT_EQ(r.scaled_width, w);

    // A region, partly outside the image: clipped.
    decode_raw_region(r, bytes, Rect{30, 10, 20, 5}, 3, "a");
    EXPECT_EQ(r.x0, 30);
    EXPECT_EQ(r.y0, 10);
    ASSERT_EQ(r.width, 7);
    ASSERT_EQ(r.height, 5);
    for (int y = 0; y < 5; ++y) {
      for (int x = 0; x < 7; ++x) {
        for (int c = 0; c < 3; ++c) {
          EXPECT_EQ(r.pixels[(y * 7 + x) * 3 + c], p[((10 + y) * w + 30 + x) * 3 + c]);
        }
      }
    }
  }
  EXPECT_EQ(encode_raw_image(p.data(), w, h, 3, 5), encode_raw_image(p.data(), w, h, 3, 5));
}

TEST(RawImageTest, ChannelConversion) {
  const auto rgb = pixels(4, 3, 3);
  DecodedRegion r;
  decode_raw_region(r, encode_raw_image(rgb.data(), 4, 3, 3, 0), Rect{0, 0, 4, 3}, 1, "a");
  ASSERT_EQ(r.pixels.size(), 12u);
  // PIL's convert("L"): (R*19595 + G*38470 + B*7471 + 0x8000) >> 16.
  EXPECT_EQ(r.pixels[5], (rgb[15] * 19595 + rgb[16] * 38470 + rgb[17] * 7471 + 0x8000) >> 16);
  const auto gray = pixels(4, 3, 1);
  decode_raw_region(r, encode_raw_image(gray.data(), 4, 3, 1, 0), Rect{0, 0, 4, 3}, 3, "a");
  ASSERT_EQ(r.pixels.size(), 36u);
  EXPECT_EQ(r.pixels[6], gray[2]);
  EXPECT_EQ(r.pixels[8], gray[2]);
}

TEST(RawImageTest, MalformedHeadersAreNamed) {
  const auto p = pixels(8, 8, 3);
  const auto good = encode_raw_image(p.data(), 8, 8, 3, 0);
  const auto zgood = encode_raw_image(p.data(), 8, 8, 3, 3);
  auto with = [](std::vector<uint8_t> b, size_t at, uint8_t v) {
    b[at] = v;
    return b;
  };
  auto probe = [](const std::vector<uint8_t>& b) {
    return error_of([&] { probe_raw(b, "x.raw"); });
  };
  auto decode = [](const std::vector<uint8_t>& b) {
    return error_of([&] {
      DecodedRegion r;
      decode_raw_region(r, b, Rect{0, 0, 8, 8}, 3, "x.raw");
    });
  };
  EXPECT_THAT(probe(std::vector<uint8_t>(good.begin(), good.begin() + 12)),
              HasSubstr("x.raw: raw image: truncated header"));
  EXPECT_THAT(probe(std::vector<uint8_t>(good.begin(), good.end() - 1)), HasSubstr("data bytes"));
  EXPECT_THAT(probe(with(good, packed::raw::kChannels, 4)), HasSubstr("4 channels"));
  EXPECT_THAT(probe(with(good, packed::raw::kCompression, 9)), HasSubstr("unknown compression"));
  EXPECT_THAT(probe(with(good, packed::raw::kWidth, 9)), HasSubstr("9x8x3"));
  EXPECT_THAT(probe(with(good, packed::raw::kWidth + 3, 0x10)), HasSubstr("above the cap"));
  EXPECT_THAT(probe(with(good, 0, 'X')), HasSubstr("bad magic"));
  // zstd: a corrupt frame, and a frame whose content size disagrees with the header.
  auto z = zgood;
  z[packed::kRawHeaderSize + 8] ^= 0xFF;
  EXPECT_THAT(decode(z), HasSubstr("x.raw: raw image:"));
  EXPECT_THAT(decode(with(zgood, packed::raw::kWidth, 4)), HasSubstr("content size"));
  DecodeLimits tiny;
  tiny.max_pixels = 10;
  EXPECT_THAT(error_of([&] { probe_raw(good, "x.raw", tiny); }), HasSubstr("cap"));
}

}  // namespace
}  // namespace stoker
