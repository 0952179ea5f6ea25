// Decoding by format (probe.cc's probe and decode_region dispatch, png.cc, webp.cc): fixtures
// against PIL, regions, and the verdicts on bad input.

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "image/test_util.h"
#include "stoker/error.h"
#include "stoker/image.h"

namespace stoker::test {
namespace {

// Decodes `bytes` at the given region; returns the Error message or "" on success.
std::string decode_error(const std::vector<uint8_t>& bytes, const std::string& name,
                         Rect need = {0, 0, 1 << 30, 1 << 30}, DecodeConfig options = {}) {
  try {
    const ImageHeader h = probe_image(bytes, name, options.limits);
    DecodedRegion r;
    decode_region(r, bytes, h, need, 1, 1, 3, name, options);
    return "";
  } catch (const Error& e) {
    return e.message();
  }
}

TEST(Probe, FormatsByMagicBytesNotName) {
  struct Case {
    const char* file;
    ImageFormat format;
  } cases[] = {{"rgb420.jpg", ImageFormat::kJpeg},
               {"rgb16.png", ImageFormat::kPng},
               {"png_named.jpg", ImageFormat::kPng},
               {"lossy.webp", ImageFormat::kWebp},
               {"lossless.webp", ImageFormat::kWebp}};
  for (const Case& c : cases) {
    const auto bytes = read_file(fixture(c.file));
    EXPECT_EQ(probe_image(bytes, c.file).format, c.format) << c.file;
  }
  EXPECT_STREQ(to_string(ImageFormat::kJpeg), "jpeg");
}

// Every decode fixture equals Pillow's Image.open(f).convert("RGB" | "L").
TEST(Decode, FixturesMatchPil) {
  std::ifstream list(fixture("decode_cases.txt"));
  ASSERT_TRUE(list.good());
  std::string line;
  int checked = 0;
  while (std::getline(list, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string name;
    int width, height, channels;
    in >> name >> width >> height >> channels;
    const auto bytes = read_file(fixture(name));
    const auto ref = read_file(fixture(name + ".ref" + std::to_string(channels) + ".bin"));
    const ImageHeader h = probe_image(bytes, name);
    EXPECT_EQ(h.width, width) << name;
    EXPECT_EQ(h.height, height) << name;
    const DecodedRegion r = decode_all(bytes, name, channels);
    ASSERT_EQ(r.width, width) << name;
    ASSERT_EQ(r.height, height) << name;
    ASSERT_EQ(r.channels, channels) << name;
    ASSERT_EQ(r.pixels.size(), ref.size()) << name;
    const auto d = diff(r.pixels.data(), ref.data(), ref.size());
    // YCbCr JPEG to one channel takes the decoded Y plane; PIL converts to RGB and back, which
    // rounds twice: at most 1 apart (documented in jpeg.cc).
    const int allowed = (name == "rgb420.jpg" && channels == 1) ? 1 : 0;
    EXPECT_LE(d.max, allowed) << name << " channels " << channels << " mean " << d.mean;
    std::printf("  %-16s channels %d: max diff vs PIL %d, mean %.4f\n", name.c_str(), channels,
                d.max, d.mean);
    ++checked;
  }
  EXPECT_GE(checked, 15);
}

TEST(Decode, OnePixelJpeg) {
  const auto bytes = read_file(fixture("one.jpg"));
  const ImageHeader h = probe_image(bytes, "one.jpg");
  EXPECT_EQ(h.width, 1);
  EXPECT_EQ(h.height, 1);
  DecodedRegion r;
  decode_region(r, bytes, h, Rect{0, 0, 224, 224}, 224, 224, 3, "one.jpg");
  EXPECT_EQ(r.width, 1);
  EXPECT_EQ(r.height, 1);
  EXPECT_EQ(r.scale, 1.0);
  EXPECT_EQ(r.pixels.size(), 3u);
}

TEST(Decode, NeedIsClippedToTheImage) {
  const auto bytes = read_file(fixture("rgb16.png"));
  const ImageHeader h = probe_image(bytes, "a.png");
  DecodedRegion r;
  decode_region(r, bytes, h, Rect{-5, 10, 100, 100}, 1, 1, 3, "a.png");
  EXPECT_EQ(r.x0, 0);
  EXPECT_EQ(r.y0, 10);
  EXPECT_EQ(r.width, 23);
  EXPECT_EQ(r.height, 7);
}

TEST(Decode, PngAndWebpRegionsAreCropsOfTheFullImage) {
  for (const char* name : {"palette.png", "lossy.webp", "rgba.png"}) {
    const auto bytes = read_file(fixture(name));
    const DecodedRegion full = decode_all(bytes, name);
    const ImageHeader h = probe_image(bytes, name);
    DecodedRegion r;
    decode_region(r, bytes, h, Rect{3, 4, 11, 6}, 1, 1, 3, name);
    ASSERT_EQ(r.x0, 3);
    ASSERT_EQ(r.y0, 4);
    ASSERT_EQ(r.width, 11);
    ASSERT_EQ(r.height, 6);
    for (int y = 0; y < r.height; ++y) {
      ASSERT_EQ(0, std::memcmp(&r.pixels[static_cast<size_t>(y) * 11 * 3],
                               &full.pixels[(static_cast<size_t>(y + 4) * full.width + 3) * 3], 33))
          << name;
    }
  }
}

TEST(BadInput, EmptyFile) {
  const std::vector<uint8_t> empty;
  const std::string msg = decode_error(empty, "e.jpg");
  EXPECT_EQ(msg, "e.jpg: empty file");
}

TEST(BadInput, UnknownFormatAndRandomBytes) {
  const std::string gif = "GIF89a\x01\x00\x01\x00";
  const std::vector<uint8_t> gif_bytes(gif.begin(), gif.end());
  EXPECT_EQ(decode_error(gif_bytes, "x.gif"), "x.gif: not a JPEG, PNG or WebP image");
  std::vector<uint8_t> noise = synthetic(100, 50, 1, 7);
  noise[0] = 0x12;
  EXPECT_EQ(decode_error(noise, "noise.jpg"), "noise.jpg: not a JPEG, PNG or WebP image");
  // Random bytes behind each magic number.
  for (std::vector<uint8_t> magic :
       {std::vector<uint8_t>{0xFF, 0xD8, 0xFF},
        std::vector<uint8_t>{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'},
        std::vector<uint8_t>{'R', 'I', 'F', 'F', 1, 2, 3, 4, 'W', 'E', 'B', 'P'}}) {
    std::vector<uint8_t> bytes = magic;
    bytes.insert(bytes.end(), noise.begin(), noise.end());
    const std::string msg = decode_error(bytes, "rnd.img");
    EXPECT_NE(msg, "") << "random bytes after magic " << int{magic[0]} << " decoded";
    EXPECT_EQ(msg.rfind("rnd.img: ", 0), 0u) << msg;
  }
}

// The same verdict whatever the region: a bad file is bad for every crop.
void expect_bad_everywhere(const std::vector<uint8_t>& bytes, const std::string& name,
                           const std::string& why) {
  const Rect regions[] = {{0, 0, 1 << 30, 1 << 30}, {0, 0, 16, 16}, {0, 0, 1, 1}};
  for (const Rect& need : regions) {
    for (bool dct : {true, false}) {
      DecodeConfig options;
      options.dct_scaling = dct;
      const std::string msg = decode_error(bytes, name, need, options);
      EXPECT_NE(msg, "") << why << ": decoded region " << need.width << " dct " << dct;
      EXPECT_EQ(msg.rfind(name + ": ", 0), 0u) << why << ": " << msg;
    }
  }
}

TEST(BadInput, TruncatedJpeg) {
  const int w = 320, h = 240;
  const auto rgb = synthetic(w, h, 3);
  for (bool progressive_fixture : {false, true}) {
    const auto bytes = progressive_fixture ? read_file(fixture("progressive.jpg"))
                                           : encode_jpeg(rgb.data(), w, h, 3, 90);
    ASSERT_TRUE(decode_error(bytes, "ok.jpg").empty());
    for (size_t keep : {size_t{10}, bytes.size() / 2, bytes.size() - 2, bytes.size() - 1}) {
      std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + keep);
      expect_bad_everywhere(cut, "cut.jpg", "truncated at " + std::to_string(keep));
    }
  }
}

TEST(BadInput, JpegWithoutEndMarker) {
  const auto rgb = synthetic(96, 64, 3);
  auto bytes = encode_jpeg(rgb.data(), 96, 64, 3, 90);
  ASSERT_EQ(bytes[bytes.size() - 2], 0xFF);
  ASSERT_EQ(bytes[bytes.size() - 1], 0xD9);
  bytes[bytes.size() - 1] = 0x00;  // EOI overwritten; the length is unchanged
  expect_bad_everywhere(bytes, "noeoi.jpg", "EOI removed");
  EXPECT_NE(decode_error(bytes, "noeoi.jpg").find("end-of-image"), std::string::npos);
}

TEST(BadInput, CorruptEntropyDataIsAWarningOnly) {
  // Pillow accepts JPEGs whose entropy data is damaged (libjpeg warns and fills); so do we.
  const auto rgb = synthetic(256, 256, 3);
  auto bytes = encode_jpeg(rgb.data(), 256, 256, 3, 90);
  for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 64; ++i) bytes[i] = 0x5A;
  EXPECT_EQ(decode_error(bytes, "damaged.jpg"), "");
}

TEST(BadInput, HugeDimensionsHitThePixelCap) {
  const auto rgb = synthetic(16, 16, 3);
  auto bytes = encode_jpeg(rgb.data(), 16, 16, 3, 90);
  // Patch the baseline SOF0 frame header: FF C0, length(2), precision(1), height(2), width(2).
  size_t sof = 0;
  for (size_t i = 2; i + 9 < bytes.size(); ++i) {
    if (bytes[i] == 0xFF && bytes[i + 1] == 0xC0) {
      sof = i;
      break;
    }
  }
  ASSERT_NE(sof, 0u);
  bytes[sof + 5] = 65500 >> 8;
  bytes[sof + 6] = 65500 & 0xFF;
  bytes[sof + 7] = 65500 >> 8;
  bytes[sof + 8] = 65500 & 0xFF;
  try {
    probe_image(bytes, "bomb.jpg");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.message();
    EXPECT_EQ(msg.rfind("bomb.jpg: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("65500x65500"), std::string::npos) << msg;
    EXPECT_NE(msg.find("178956970"), std::string::npos) << msg;
  }
  // A lower cap also rejects a real image.
  DecodeConfig options;
  options.limits.max_pixels = 255;
  const std::string msg =
      decode_error(encode_jpeg(rgb.data(), 16, 16, 3, 90), "cap.jpg", Rect{0, 0, 16, 16}, options);
  EXPECT_NE(msg.find("above the cap"), std::string::npos) << msg;
}

TEST(BadInput, TruncatedPngAndWebp) {
  for (const char* name : {"palette.png", "rgb16.png", "lossy.webp", "lossless.webp"}) {
    const auto bytes = read_file(fixture(name));
    for (size_t keep : {size_t{10}, size_t{30}, bytes.size() / 2}) {
      std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + keep);
      const std::string msg = decode_error(cut, name);
      EXPECT_NE(msg, "") << name << " truncated at " << keep;
      EXPECT_EQ(msg.rfind(std::string(name) + ": ", 0), 0u) << msg;
    }
  }
}

// A progressive JPEG whose last scan is repeated without end (libjpeg-turbo only warns about
// the bogus progression): scans asking to decode the image's blocks more than 64 times over
// are bad data, named, found from the scan headers before any decoding (issue 30: the scan
// cap alone let a 198 KB file hold a worker for 7.9 s); a few repeats still decode.
TEST(BadInput, EndlesslyRepeatedProgressiveScansAreRefused) {
  const auto progressive = read_file(fixture("progressive_256.jpg"));
  size_t last_sos = 0;
  for (size_t i = 0; i + 1 < progressive.size(); ++i) {
    if (progressive[i] == 0xFF && progressive[i + 1] == 0xDA) last_sos = i;
  }
  ASSERT_GT(last_sos, 0u);
  ASSERT_EQ(progressive[progressive.size() - 2], 0xFF);
  ASSERT_EQ(progressive[progressive.size() - 1], 0xD9);
  const auto repeated = [&](int times) {
    std::vector<uint8_t> out(progressive.begin(), progressive.end() - 2);
    for (int k = 0; k < times; ++k) {
      out.insert(out.end(), progressive.begin() + static_cast<std::ptrdiff_t>(last_sos),
                 progressive.end() - 2);
    }
    out.push_back(0xFF);
    out.push_back(0xD9);
    return out;
  };
  EXPECT_EQ(decode_error(repeated(5), "few.jpg"), "");
  for (const int times : {100, 2000}) {
    const std::string msg = decode_error(repeated(times), "endless.jpg");
    EXPECT_EQ(msg.rfind("endless.jpg: its scans would decode ", 0), 0u) << msg;
    EXPECT_NE(msg.find("more than 64 times the image's 1536"), std::string::npos) << msg;
  }
}

TEST(BadInput, MemoryCap) {
  DecodeConfig tiny;
  tiny.limits.max_memory_bytes = 1000;
  // Progressive JPEGs buffer every coefficient; libjpeg-turbo checks max_memory_to_use there.
  const auto progressive = read_file(fixture("progressive_256.jpg"));
  EXPECT_EQ(decode_error(progressive, "p.jpg"), "");
  DecodeConfig small;
  small.limits.max_memory_bytes = 64 << 10;
  std::string msg = decode_error(progressive, "p.jpg", Rect{0, 0, 16, 16}, small);
  EXPECT_EQ(msg.rfind("p.jpg: ", 0), 0u) << msg;
  // PNG and WebP check their whole-image buffer against the cap.
  msg = decode_error(read_file(fixture("resize_src.png")), "big.png", Rect{0, 0, 1 << 30, 1 << 30},
                     tiny);
  EXPECT_NE(msg.find("above the cap"), std::string::npos) << msg;
}

}  // namespace
}  // namespace stoker::test
