// The JPEG decoder and encoder (jpeg.cc): region decode equals full decode, the DCT scale
// chosen for an output size, and encoding round trips.
#include <gtest/gtest.h>

#include <vector>

#include "image/decoders.h"
#include "image/test_util.h"
#include "stoker/error.h"
#include "stoker/image.h"

namespace stoker::test {
namespace {

// A region decode (crop + skip + abort) gives the same pixels as the full decode at the same
// DCT scale, for sequential 4:2:0, gray, and progressive input and at every scale.
TEST(JpegRegion, EqualsFullDecode) {
  const int w = 643, h = 481;  // not multiples of the iMCU size
  struct Source {
    std::string label;
    std::vector<uint8_t> bytes;
  };
  std::vector<Source> sources;
  const auto rgb = synthetic(w, h, 3);
  sources.push_back({"rgb420", encode_jpeg(rgb.data(), w, h, 3, 90)});
  const auto gray = synthetic(w, h, 1);
  sources.push_back({"gray", encode_jpeg(gray.data(), w, h, 1, 90)});
  const Rect regions[] = {{0, 0, w, h},       {37, 53, 200, 150}, {0, 0, 1, 1},
                          {600, 400, 43, 81}, {321, 17, 1, 300},  {w - 5, h - 7, 5, 7}};
  int max_diff_seen = 0;
  for (const Source& s : sources) {
    const ImageHeader hdr = probe_image(s.bytes, s.label);
    for (int num : {8, 4, 2, 1}) {
      // min sizes that select exactly scale num/8 for the full image.
      DecodedRegion full;
      const int min_w = (w * num + 7) / 8, min_h = (h * num + 7) / 8;
      decode_region(full, s.bytes, hdr, Rect{0, 0, w, h}, (w * num) / 8, (h * num) / 8, 3, s.label);
      ASSERT_EQ(full.scale, num / 8.0) << s.label;
      ASSERT_EQ(full.width, min_w);
      ASSERT_EQ(full.height, min_h);
      ASSERT_EQ(full.scaled_width, min_w);
      for (const Rect& need : regions) {
        DecodedRegion r;
        // Ask for the same scale: min sizes proportional to the region.
        decode_region(r, s.bytes, hdr, need, need.width * num / 8, need.height * num / 8, 3,
                      s.label);
        if (r.scale != full.scale) continue;  // tiny regions fall back to scale 1 by design
        // The decoded window covers the region in scaled coordinates.
        EXPECT_LE(r.x0, need.x * num / 8);
        EXPECT_LE(r.y0, need.y * num / 8);
        EXPECT_GE(r.x0 + r.width, std::min(full.width, ((need.x + need.width) * num + 7) / 8));
        EXPECT_GE(r.y0 + r.height, std::min(full.height, ((need.y + need.height) * num + 7) / 8));
        int max_diff = 0;
        for (int y = 0; y < r.height; ++y) {
          for (int x = 0; x < r.width * 3; ++x) {
            const int a = r.pixels[(static_cast<size_t>(y) * r.width) * 3 + x];
            const int b = full.pixels[(static_cast<size_t>(y + r.y0) * full.width + r.x0) * 3 + x];
            max_diff = std::max(max_diff, std::abs(a - b));
          }
        }
        EXPECT_EQ(max_diff, 0) << s.label << " scale " << num << "/8 region " << need.x << ","
                               << need.y << " " << need.width << "x" << need.height;
        max_diff_seen = std::max(max_diff_seen, max_diff);
      }
    }
  }
  std::printf("  region vs full decode: max diff %d\n", max_diff_seen);
}

TEST(JpegRegion, ProgressiveAndCmykRegionsEqualFullDecode) {
  for (const char* name : {"progressive.jpg", "cmyk.jpg", "gray.jpg"}) {
    const auto bytes = read_file(fixture(name));
    const DecodedRegion full = decode_all(bytes, name);
    const ImageHeader h = probe_image(bytes, name);
    DecodedRegion r;
    DecodeConfig exact;
    exact.dct_scaling = false;
    decode_region(r, bytes, h, Rect{19, 11, 9, 7}, 1, 1, 3, name, exact);
    for (int y = 0; y < r.height; ++y) {
      ASSERT_EQ(0,
                std::memcmp(&r.pixels[static_cast<size_t>(y) * r.width * 3],
                            &full.pixels[(static_cast<size_t>(y + r.y0) * full.width + r.x0) * 3],
                            static_cast<size_t>(r.width) * 3))
          << name << " row " << y;
    }
  }
}

TEST(JpegScale, SmallestScaleCoveringTheOutput) {
  const int w = 801, h = 601;
  const auto rgb = synthetic(w, h, 3);
  const auto bytes = encode_jpeg(rgb.data(), w, h, 3, 85);
  const ImageHeader hdr = probe_image(bytes, "s.jpg");
  struct Case {
    Rect need;
    int min;
    bool dct;
    double scale;
    int scaled_w, scaled_h;
  } cases[] = {
      {{0, 0, w, h}, 224, true, 0.5, 401, 301},   // 1/4 gives 200x150 < 224
      {{0, 0, w, h}, 150, true, 0.25, 201, 151},  // 1/4 gives 200.25 x 150.25 >= 150
      {{0, 0, w, h}, 75, true, 0.125, 101, 76},   // 1/8: 100.1 x 75.1 >= 75
      {{0, 0, w, h}, 76, true, 0.25, 201, 151},   // 1/8: 75.1 < 76
      {{0, 0, w, h}, 602, true, 1.0, w, h},       // nothing covers: never above 1
      {{0, 0, w, h}, 224, false, 1.0, w, h},      // exact mode
      {{100, 100, 448, 448}, 224, true, 0.5, 401, 301},
      {{100, 100, 447, 448}, 224, true, 1.0, w, h},  // 223.5 < 224
  };
  for (const Case& c : cases) {
    DecodeConfig options;
    options.dct_scaling = c.dct;
    DecodedRegion r;
    decode_region(r, bytes, hdr, c.need, c.min, c.min, 3, "s.jpg", options);
    EXPECT_EQ(r.scale, c.scale) << "min " << c.min << " need " << c.need.width;
    EXPECT_EQ(r.scaled_width, c.scaled_w);
    EXPECT_EQ(r.scaled_height, c.scaled_h);
    EXPECT_EQ(r.pixels.size(), static_cast<size_t>(r.width) * r.height * 3);
  }
}

TEST(Encode, RoundTripsCloseToTheInput) {
  const auto rgb = synthetic(64, 48, 3);
  const auto bytes = encode_jpeg(rgb.data(), 64, 48, 3, 95);
  const DecodedRegion r = decode_all(bytes, "rt.jpg");
  ASSERT_EQ(r.pixels.size(), rgb.size());
  EXPECT_LT(diff(r.pixels.data(), rgb.data(), rgb.size()).mean, 12.0);
  EXPECT_THROW(encode_jpeg(rgb.data(), 64, 48, 2, 90), Error);
  EXPECT_THROW(encode_jpeg(rgb.data(), 64, 48, 3, 0), Error);
}

}  // namespace
}  // namespace stoker::test
