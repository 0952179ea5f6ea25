// The JPEG decoder and encoder (jpeg.cc): region decode equals full decode, the DCT scale
// chosen for an output size, and encoding round trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "image/decoders.h"
#include "image/test_util.h"
#include "stoker/error.h"
#include "stoker/image.h"
#include "stoker/rng.h"

namespace stoker::test {
namespace {

using image::jpeg_restart_cut;

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

// Restart segments: a region of a JPEG with restart markers decodes from a cut of only the
// segments around it, to the same bytes as the full decode of the same image written without
// markers (the coefficients are the same), at every DCT scale, for 4:2:0 RGB and gray, for
// intervals of one MCU, a few, and a whole row, and for regions on every edge.
TEST(JpegRestart, SegmentCutEqualsFullDecode) {
  struct Source {
    std::string label;
    int width, height, channels;
    std::vector<int> intervals;  // each divides the MCUs per row
  };
  const Source sources[] = {
      {"rgb 640x480", 640, 480, 3, {1, 2, 4, 5, 40}},  // 40 MCUs of 16 px per row
      {"rgb 250x170", 250, 170, 3, {2, 16}},           // 16 MCUs, the last one partial
      {"gray 643x481", 643, 481, 1, {3, 81}},          // 81 MCUs of 8 px, partial
  };
  Rng rng(7);
  int cuts = 0, regions = 0;
  for (const Source& src : sources) {
    const int w = src.width, h = src.height;
    const auto pixels = synthetic(w, h, src.channels, 3);
    const auto plain = encode_jpeg(pixels.data(), w, h, src.channels, 90);
    const ImageHeader hdr = probe_image(plain, src.label);
    for (int interval : src.intervals) {
      const auto marked = encode_jpeg(pixels.data(), w, h, src.channels, 90, interval);
      ASSERT_GT(marked.size(), plain.size());
      for (int num : {8, 4, 2, 1}) {
        DecodeConfig whole;
        whole.restart_segments = false;
        DecodedRegion full;
        decode_region(full, plain, hdr, Rect{0, 0, w, h}, (w * num) / 8, (h * num) / 8, 3,
                      src.label, whole);
        ASSERT_EQ(full.scale, num / 8.0);
        std::vector<Rect> needs = {{0, 0, w, h},      {0, 0, 40, 30},    {w - 40, h - 30, 40, 30},
                                   {w / 2, 0, 33, h}, {0, h / 2, w, 17}, {17, 1, 1, 1}};
        for (int k = 0; k < 40; ++k) {  // RandomResizedCrop-like regions
          const int rw = 8 + static_cast<int>(rng.uniform01() * (w - 8));
          const int rh = 8 + static_cast<int>(rng.uniform01() * (h - 8));
          needs.push_back({static_cast<int>(rng.uniform01() * (w - rw)),
                           static_cast<int>(rng.uniform01() * (h - rh)), rw, rh});
        }
        for (const Rect& need : needs) {
          const int min_w = need.width * num / 8, min_h = need.height * num / 8;
          DecodedRegion r;
          decode_region(r, marked, hdr, need, min_w, min_h, 3, src.label);
          if (r.scale != full.scale) continue;  // tiny regions fall back to scale 1
          ++regions;
          if (jpeg_restart_cut(marked, hdr, need, num).has_value()) ++cuts;
          EXPECT_FALSE(jpeg_restart_cut(plain, hdr, need, num).has_value());
          const std::string what = src.label + " interval " + std::to_string(interval) + " scale " +
                                   std::to_string(num) + "/8 region " + std::to_string(need.x) +
                                   "," + std::to_string(need.y) + " " + std::to_string(need.width) +
                                   "x" + std::to_string(need.height);
          ASSERT_EQ(r.scaled_width, full.width) << what;
          ASSERT_EQ(r.scaled_height, full.height) << what;
          // The delivered window covers the region and holds the full decode's bytes.
          ASSERT_LE(r.x0, need.x * num / 8) << what;
          ASSERT_LE(r.y0, need.y * num / 8) << what;
          ASSERT_GE(r.x0 + r.width, std::min(full.width, ((need.x + need.width) * num + 7) / 8))
              << what;
          ASSERT_GE(r.y0 + r.height, std::min(full.height, ((need.y + need.height) * num + 7) / 8))
              << what;
          for (int y = 0; y < r.height; ++y) {
            ASSERT_EQ(0, std::memcmp(
                             &r.pixels[static_cast<size_t>(y) * r.width * 3],
                             &full.pixels[(static_cast<size_t>(y + r.y0) * full.width + r.x0) * 3],
                             static_cast<size_t>(r.width) * 3))
                << what << " row " << y;
          }
        }
      }
    }
  }
  // Most regions were decoded from a cut (the whole image and full-width strips are not).
  std::printf("  %d of %d regions decoded from a restart-segment cut\n", cuts, regions);
  EXPECT_GT(cuts, regions / 2);
}

// Only a well-formed segment layout is cut; anything else takes the ordinary path and is
// judged as before (a truncated file stays bad, a misnumbered marker decodes as libjpeg does).
TEST(JpegRestart, MalformedLayoutsFallBack) {
  const int w = 256, h = 192;
  const auto pixels = synthetic(w, h, 3, 5);
  const auto marked = encode_jpeg(pixels.data(), w, h, 3, 90, 2);
  const ImageHeader hdr = probe_image(marked, "m.jpg");
  const Rect need{100, 90, 60, 50};
  ASSERT_TRUE(jpeg_restart_cut(marked, hdr, need, 8).has_value());
  // An interval that does not divide the 16 MCUs per row: segments straddle rows.
  const auto straddle = encode_jpeg(pixels.data(), w, h, 3, 90, 3);
  EXPECT_FALSE(jpeg_restart_cut(straddle, hdr, need, 8).has_value());
  // A marker renumbered out of sequence.
  auto misnumbered = marked;
  for (size_t i = 0; i + 1 < misnumbered.size(); ++i) {
    if (misnumbered[i] == 0xFF && misnumbered[i + 1] == 0xD3) {
      misnumbered[i + 1] = 0xD5;
      break;
    }
  }
  EXPECT_FALSE(jpeg_restart_cut(misnumbered, hdr, need, 8).has_value());
  // Truncated: no EOI, no cut, and the decode is refused exactly as without markers.
  const std::vector<uint8_t> cut_short(marked.begin(), marked.begin() + marked.size() / 2);
  EXPECT_FALSE(jpeg_restart_cut(cut_short, hdr, need, 8).has_value());
  DecodedRegion r;
  EXPECT_THROW(decode_region(r, cut_short, hdr, need, 60, 50, 3, "m.jpg"), Error);
  // A region at the top-left corner of the whole image saves nothing: no cut.
  EXPECT_FALSE(jpeg_restart_cut(marked, hdr, Rect{0, 0, w, h}, 8).has_value());
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

// The GPU decode's worker check (jpeg_gpu_decodable) judges a file as the CPU decoder does: a
// file it rejects is rejected by decode_region with the same message, at scale 1 and at the
// DCT scale and region a training crop uses; a file it hands to the GPU decodes on the CPU.
// Corpus: every JPEG fixture (baseline, 4:4:4, gray, progressive, CMYK, restart markers, a
// progressive file with endless scans) and, of the baseline ones, truncations at 40 points,
// 300 single-byte corruptions (headers and entropy data) and an appended second scan.
struct Verdict {
  bool threw = false;
  std::string message;
  bool gpu = false;
};

Verdict gpu_check(const std::vector<uint8_t>& bytes, const ImageHeader& h) {
  Verdict v;
  try {
    v.gpu = image::jpeg_gpu_decodable(bytes, h, "f.jpg", DecodeConfig{});
  } catch (const Error& e) {
    v.threw = true;
    v.message = e.what();
  }
  return v;
}

Verdict cpu_decode(const std::vector<uint8_t>& bytes, const ImageHeader& h, const Rect& need,
                   bool dct_scaling) {
  Verdict v;
  DecodeConfig options;
  options.dct_scaling = dct_scaling;
  DecodedRegion out;
  try {
    decode_region(out, bytes, h, need, 56, 56, 3, "f.jpg", options);
  } catch (const Error& e) {
    v.threw = true;
    v.message = e.what();
  }
  return v;
}

// A fuzz corpus entry: the fuzzer's parameter bytes, then the JPEG from its SOI marker on.
std::vector<uint8_t> corpus_jpeg(const std::string& path) {
  const std::vector<uint8_t> entry = read_file(path);
  for (size_t i = 0; i + 1 < entry.size(); ++i) {
    if (entry[i] == 0xFF && entry[i + 1] == 0xD8) {
      return std::vector<uint8_t>(entry.begin() + static_cast<std::ptrdiff_t>(i), entry.end());
    }
  }
  ADD_FAILURE() << path << " holds no JPEG";
  return {};
}

TEST(JpegGpuCheck, JudgesEveryFileAsTheCpuDecoder) {
  std::vector<std::vector<uint8_t>> corpus;
  const std::string dir = std::string(STOKER_SOURCE_DIR) + "/fuzz/corpus/image_decode_fuzz/";
  for (const char* name :
       {"baseline.jpg", "s444.jpg", "gray.jpg", "progressive.jpg", "cmyk.jpg", "restart.jpg",
        "restart_444.jpg", "restart_gray.jpg", "restart_rows.jpg", "endless_scans.jpg"}) {
    corpus.push_back(corpus_jpeg(dir + name));
  }
  for (const char* name : {"rgb420.jpg", "one.jpg", "progressive_256.jpg"}) {
    corpus.push_back(read_file(fixture(name)));
  }
  const size_t originals = corpus.size();
  Rng rng(19);
  for (size_t f : {size_t{0}, size_t{1}, size_t{2}, size_t{5}, originals - 3}) {
    const std::vector<uint8_t> src = corpus[f];  // a copy: corpus grows below
    for (int k = 1; k <= 8; ++k) {               // truncations
      corpus.emplace_back(src.begin(),
                          src.begin() + static_cast<std::ptrdiff_t>(src.size() * k / 9));
    }
    for (int k = 0; k < 60; ++k) {  // one byte replaced, anywhere
      std::vector<uint8_t> bad = src;
      bad[rng.bounded(bad.size())] = static_cast<uint8_t>(rng.bounded(256));
      corpus.push_back(std::move(bad));
    }
    // A second copy of the file after its end-of-image marker's position: a marker other
    // than EOI follows the first scan (the GPU must not take it).
    std::vector<uint8_t> twice(src.begin(), src.end() - 2);
    twice.insert(twice.end(), src.begin() + 2, src.end());
    corpus.push_back(std::move(twice));
  }

  int gpu = 0, cpu_only = 0, bad = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const std::vector<uint8_t>& bytes = corpus[i];
    ImageHeader h;
    try {
      h = probe_image(bytes, "f.jpg", DecodeLimits{});
    } catch (const Error&) {
      continue;  // rejected by the probe, which both paths share
    }
    const Verdict check = gpu_check(bytes, h);
    const Rect whole{0, 0, h.width, h.height};
    const Rect crop{h.width / 4, h.height / 5, std::max(1, h.width / 2), std::max(1, h.height / 2)};
    for (const auto& [need, dct] : {std::pair{whole, false}, std::pair{crop, true}}) {
      const Verdict cpu = cpu_decode(bytes, h, need, dct);
      if (check.threw) {
        EXPECT_TRUE(cpu.threw) << "file " << i << ": the check rejected it (" << check.message
                               << "), the CPU decoder did not";
        EXPECT_EQ(cpu.message, check.message) << "file " << i;
      } else if (check.gpu) {
        EXPECT_FALSE(cpu.threw) << "file " << i << ": handed to the GPU, but the CPU decoder "
                                << "rejects it: " << cpu.message;
      }
    }
    check.threw ? ++bad : (check.gpu ? ++gpu : ++cpu_only);
  }
  // Every kind occurs: the corpus exercises all three answers.
  // (Seed 19: 275 to the GPU, 11 to the CPU, 19 bad, 53 rejected by the probe, of 358.)
  EXPECT_GE(gpu, 200);
  EXPECT_GE(cpu_only, 4);  // progressive, CMYK, endless scans, a second scan after the first
  EXPECT_GE(bad, 15);      // truncations past the headers, at least
}

TEST(JpegGpuCheck, WhichFilesTheGpuTakes) {
  const std::string dir = std::string(STOKER_SOURCE_DIR) + "/fuzz/corpus/image_decode_fuzz/";
  const auto take = [&](const std::string& name) {
    const auto bytes = corpus_jpeg(dir + name);
    return image::jpeg_gpu_decodable(bytes, probe_image(bytes, name, DecodeLimits{}), name,
                                     DecodeConfig{});
  };
  EXPECT_TRUE(take("baseline.jpg"));
  EXPECT_TRUE(take("s444.jpg"));
  EXPECT_TRUE(take("gray.jpg"));
  EXPECT_TRUE(take("restart.jpg"));  // restart markers are part of the one scan
  EXPECT_FALSE(take("progressive.jpg"));
  EXPECT_FALSE(take("cmyk.jpg"));
  EXPECT_FALSE(take("endless_scans.jpg"));
}

}  // namespace
}  // namespace stoker::test
