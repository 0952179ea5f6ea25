// resize_antialiased against Pillow's Image.resize(BILINEAR or BICUBIC, box), resize_nearest
// against torch's nearest rule, and the pixel kernels.

#include "image/resize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "image/test_util.h"
#include "stoker/error.h"
#include "stoker/image.h"
#include "stoker/rng.h"

namespace stoker::test {
namespace {

// Every case of `cases` (make_fixtures.py) resized with `filter` equals PIL's bytes.
void expect_pil_cases(const std::string& cases_file, const std::string& prefix, ResizeFilter filter,
                      int min_cases) {
  const auto png = read_file(fixture("resize_src.png"));
  const DecodedRegion src = decode_all(png, "resize_src.png");
  ASSERT_EQ(src.width, 97);
  ASSERT_EQ(src.height, 61);
  const auto src_l = read_file(fixture("resize_src_l.bin"));
  ASSERT_EQ(src_l.size(), 97u * 61u);

  std::ifstream list(fixture(cases_file));
  ASSERT_TRUE(list.good());
  std::string line;
  int cases = 0;
  std::vector<uint8_t> scratch;
  while (std::getline(list, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string name;
    int channels, ow, oh;
    Box box, bounds;
    in >> name >> channels >> ow >> oh >> box.x0 >> box.y0 >> box.x1 >> box.y1 >> bounds.x0 >>
        bounds.y0 >> bounds.x1 >> bounds.y1;
    ASSERT_FALSE(in.fail()) << line;
    const auto ref = read_file(fixture(prefix + name + ".bin"));
    ASSERT_EQ(ref.size(), static_cast<size_t>(ow) * oh * channels) << name;
    std::vector<uint8_t> out(ref.size());
    const uint8_t* input = channels == 3 ? src.pixels.data() : src_l.data();
    resize_antialiased(out.data(), ow, oh, input, 97, 61, channels, box, bounds, scratch, filter);
    const auto d = diff(out.data(), ref.data(), ref.size());
    EXPECT_EQ(d.max, 0) << name << " mean " << d.mean;
    std::printf("  %s%-12s %dx%dx%d: max diff vs PIL %d\n", prefix.c_str(), name.c_str(), ow, oh,
                channels, d.max);
    ++cases;
  }
  EXPECT_GE(cases, min_cases);
}

TEST(Resize, MatchesPilExactly) {
  expect_pil_cases("resize_cases.txt", "resize_", ResizeFilter::kBilinear, 12);
}

// Bicubic (negative weights, twice the taps): PIL's BICUBIC bytes, up- and downscaling.
TEST(Resize, BicubicMatchesPilExactly) {
  expect_pil_cases("bicubic_cases.txt", "bicubic_", ResizeFilter::kBicubic, 9);
}

// torch's interpolate(mode="nearest") on the tensor in `bounds`' integer window: source index
// min(floor((i + offset) * scale), size - 1) in float32, scale = in / out; the box says which
// outputs of that resize are kept (an eval centre crop starts at output `left`).
TEST(Resize, NearestIsTorchsIndexRule) {
  const int w = 211, h = 97;
  std::vector<uint8_t> in(static_cast<size_t>(w) * h * 2);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      in[(static_cast<size_t>(y) * w + x) * 2] = static_cast<uint8_t>(x);
      in[(static_cast<size_t>(y) * w + x) * 2 + 1] = static_cast<uint8_t>(y);
    }
  }
  const auto torch_index = [](int64_t i, int64_t in_size, int64_t out_size) {
    const float scale = static_cast<float>(in_size) / static_cast<float>(out_size);
    return std::min(static_cast<int64_t>(std::floor(static_cast<float>(i) * scale)), in_size - 1);
  };
  struct Case {
    int out_w, out_h;    // kept outputs
    int new_w, new_h;    // the size the window is resized to
    int left, top;       // first kept output
    int wx, wy, ww, wh;  // the integer window (bounds)
  };
  for (const Case& c : {Case{64, 30, 64, 30, 0, 0, 0, 0, w, h},          // Resize((30, 64))
                        Case{150, 70, 300, 138, 75, 34, 0, 0, w, h},     // upscale + centre crop
                        Case{40, 40, 89, 41, 24, 0, 0, 0, w, h},         // Resize(41) + crop
                        Case{33, 17, 33, 17, 0, 0, 50, 20, 120, 61}}) {  // resized crop
    const double sx = static_cast<double>(c.ww) / c.new_w, sy = static_cast<double>(c.wh) / c.new_h;
    const Box bounds{double(c.wx), double(c.wy), double(c.wx + c.ww), double(c.wy + c.wh)};
    const Box box{c.wx + c.left * sx, c.wy + c.top * sy, c.wx + (c.left + c.out_w) * sx,
                  c.wy + (c.top + c.out_h) * sy};
    std::vector<uint8_t> out(static_cast<size_t>(c.out_w) * c.out_h * 2);
    resize_nearest(out.data(), c.out_w, c.out_h, in.data(), w, h, 2, box, bounds);
    for (int y = 0; y < c.out_h; ++y) {
      for (int x = 0; x < c.out_w; ++x) {
        const size_t at = (static_cast<size_t>(y) * c.out_w + x) * 2;
        ASSERT_EQ(out[at], c.wx + torch_index(x + c.left, c.ww, c.new_w)) << x << "," << y;
        ASSERT_EQ(out[at + 1], c.wy + torch_index(y + c.top, c.wh, c.new_h)) << x << "," << y;
      }
    }
  }
}

TEST(Resize, IdentityAndConstant) {
  const int w = 37, h = 23;
  const auto img = synthetic(w, h, 3);
  std::vector<uint8_t> out(img.size()), scratch;
  const Box whole{0, 0, double(w), double(h)};
  resize_antialiased(out.data(), w, h, img.data(), w, h, 3, whole, whole, scratch);
  EXPECT_EQ(out, img);
  // A constant image stays constant at any scale (weights sum to one after rounding).
  std::vector<uint8_t> flat(static_cast<size_t>(w) * h * 3, 201);
  for (auto [ow, oh] : {std::pair{5, 3}, std::pair{224, 224}, std::pair{36, 24}}) {
    std::vector<uint8_t> o(static_cast<size_t>(ow) * oh * 3);
    resize_antialiased(o.data(), ow, oh, flat.data(), w, h, 3, Box{1.5, 2.25, 30.0, 20.0}, whole,
                       scratch);
    for (uint8_t v : o) ASSERT_EQ(v, 201);
  }
}

TEST(Resize, TapsStayInsideBounds) {
  // Pixels outside `bounds` must not influence the result: poison them.
  const int w = 60, h = 40;
  auto img = synthetic(w, h, 1);
  const Box crop{10, 5, 50, 35};
  std::vector<uint8_t> a(20 * 20), b(20 * 20), scratch;
  resize_antialiased(a.data(), 20, 20, img.data(), w, h, 1, crop, crop, scratch);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      if (x < 10 || x >= 50 || y < 5 || y >= 35) img[y * w + x] = (x + y) % 2 ? 255 : 0;
    }
  }
  resize_antialiased(b.data(), 20, 20, img.data(), w, h, 1, crop, crop, scratch);
  EXPECT_EQ(a, b);
}

TEST(Resize, RejectsEmptyBoxes) {
  std::vector<uint8_t> in(16, 0), out(4), scratch;
  EXPECT_THROW(resize_antialiased(out.data(), 2, 2, in.data(), 4, 4, 1, Box{2, 2, 2, 3},
                                  Box{0, 0, 4, 4}, scratch),
               Error);
  EXPECT_THROW(resize_antialiased(out.data(), 2, 2, in.data(), 4, 4, 1, Box{0, 0, 4, 4},
                                  Box{5, 5, 9, 9}, scratch),
               Error);
}

// The hot path: a ~400x400 crop to 224x224 RGB. Reports the time; the bound is loose so that
// a loaded CI machine does not fail it (target: well under 1 ms).
// Every SIMD kernel the CPU has must give the scalar kernel's bytes: random sizes (odd and even
// widths, odd and even tap counts, up- and downscaling), fractional boxes, bounds at the
// image's edges (where the vector kernels must not read past the input) and inside it.
TEST(Resize, SimdKernelsEqualScalar) {
  const int best = static_cast<int>(image::best_simd_level());
  Rng rng(stream_key(2024, 11));
  std::vector<uint8_t> scratch;
  for (int round = 0; round < 300; ++round) {
    const int channels = round % 5 == 0 ? 1 : 3;
    const int in_w = 1 + static_cast<int>(rng.bounded(300));
    const int in_h = 1 + static_cast<int>(rng.bounded(300));
    const int out_w = 1 + static_cast<int>(rng.bounded(240));
    const int out_h = 1 + static_cast<int>(rng.bounded(240));
    std::vector<uint8_t> in(static_cast<size_t>(in_w) * in_h * channels);
    for (auto& v : in) v = static_cast<uint8_t>(rng.next());
    Box bounds{0, 0, double(in_w), double(in_h)};
    if (round % 2 == 1) {  // a crop inside the image, as RandomResizedCrop does
      const double x0 = std::floor(rng.uniform(0, in_w - 0.5));
      const double y0 = std::floor(rng.uniform(0, in_h - 0.5));
      bounds = Box{x0, y0, x0 + 1 + std::floor(rng.uniform(0, in_w - x0 - 1)),
                   y0 + 1 + std::floor(rng.uniform(0, in_h - y0 - 1))};
    }
    Box box = bounds;
    if (round % 3 == 2) {  // a fractional box inside the bounds, as the eval transform has
      box.x0 = rng.uniform(bounds.x0, bounds.x0 + (bounds.x1 - bounds.x0) * 0.4);
      box.y0 = rng.uniform(bounds.y0, bounds.y0 + (bounds.y1 - bounds.y0) * 0.4);
      box.x1 = rng.uniform(bounds.x1 - (bounds.x1 - bounds.x0) * 0.4, bounds.x1);
      box.y1 = rng.uniform(bounds.y1 - (bounds.y1 - bounds.y0) * 0.4, bounds.y1);
    }
    std::vector<uint8_t> want(static_cast<size_t>(out_w) * out_h * channels);
    // Every other round bicubic: negative weights, more taps.
    const ResizeFilter filter = round % 4 < 2 ? ResizeFilter::kBilinear : ResizeFilter::kBicubic;
    image::resize_antialiased_at(image::SimdLevel::kScalar, want.data(), out_w, out_h, in.data(),
                                 in_w, in_h, channels, box, bounds, scratch, filter);
    for (int l = 1; l <= best; ++l) {
      const auto level = static_cast<image::SimdLevel>(l);
      std::vector<uint8_t> got(want.size(), 0xAB);
      image::resize_antialiased_at(level, got.data(), out_w, out_h, in.data(), in_w, in_h, channels,
                                   box, bounds, scratch, filter);
      ASSERT_EQ(got, want) << "level " << to_string(level) << ", round " << round << ": " << in_w
                           << "x" << in_h << "x" << channels << " -> " << out_w << "x" << out_h;
    }
  }
}

}  // namespace
}  // namespace stoker::test
