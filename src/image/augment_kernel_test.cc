// The GPU augmentation's per-pixel arithmetic (augment_kernel.h), run on the host over whole
// batches, against the CPU kernels: resize_antialiased + copy_hwc / normalize_to_chw, and
// transform_sample end to end. The CUDA kernels call exactly these functions, so this is the
// CI check of the GPU path's arithmetic (tests/gpu/run.sh checks the device itself).

#include "image/augment_kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "image/test_util.h"
#include "stoker/image.h"
#include "stoker/rng.h"
#include "stoker/transform.h"

namespace stoker {
namespace {

using augment::Geometry;
using augment::OutputSpec;

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// binary16 bits -> the float it denotes (exact).
double half_value(uint16_t h) {
  const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0) return sign * std::ldexp(m, -24);
  if (e == 31) return m ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + m, e - 25);
}

// The reference rounding: the nearest of the two representable neighbours, ties to the even
// one, computed in double (exact for these magnitudes) rather than by bit tricks.
uint16_t nearest_even(double v, uint16_t lo, uint16_t hi, double vlo, double vhi) {
  const double dlo = v - vlo, dhi = vhi - v;
  if (dlo < dhi) return lo;
  if (dhi < dlo) return hi;
  return (lo & 1) == 0 ? lo : hi;
}

uint16_t half_reference(float f) {
  if (std::isnan(f)) return 0x7E00;
  const double v = std::fabs(static_cast<double>(f));
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (v >= 65520.0) return sign | 0x7C00;  // half-way to 2^16 and beyond: infinity
  // Largest h with half_value(h) <= v, by binary search over the ordered positive encodings.
  uint16_t lo = 0, hi = 0x7BFF;
  while (lo < hi) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (half_value(mid) <= v) {
      lo = mid;
    } else {
      hi = static_cast<uint16_t>(mid - 1);
    }
  }
  if (half_value(lo) == v) return sign | lo;
  const uint16_t up = static_cast<uint16_t>(lo + 1);
  return sign | nearest_even(v, lo, up, half_value(lo), up == 0x7C00 ? 65536.0 : half_value(up));
}

uint16_t bfloat16_reference(float f) {
  if (std::isnan(f)) return 0x7FC0 | (std::signbit(f) ? 0x8000 : 0);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint16_t lo = static_cast<uint16_t>(b >> 16);
  if ((b & 0xFFFF) == 0) return lo;
  const uint16_t up = static_cast<uint16_t>(lo + 1);  // away from zero (sign-magnitude)
  const double v = std::fabs(static_cast<double>(f));
  const double vlo = std::fabs(static_cast<double>(bits_to_float(uint32_t{lo} << 16)));
  const double vup = (up & 0x7FFF) == 0x7F80
                         ? std::ldexp(1.0, 128)  // rounding up past the largest finite value
                         : std::fabs(static_cast<double>(bits_to_float(uint32_t{up} << 16)));
  return nearest_even(v, lo, up, vlo, vup);
}

// Values that exercise every branch: zeros, subnormal halves, ties, the overflow edge, NaN.
std::vector<float> conversion_cases() {
  std::vector<float> v = {0.0f,          -0.0f,        1.0f,           -1.0f,        65504.0f,
                          65519.99f,     65520.0f,     65536.0f,       1e-8f,        2.9802322e-8f,
                          5.9604645e-8f, 8.940697e-8f, 6.1035156e-5f,  6.097555e-5f, 1.0009766f,
                          1.0004883f,    1.0014648f,   -2.1171875f,    3.4e38f,      INFINITY,
                          -INFINITY,     NAN,          1.17549435e-38f};
  // Every float32 exponent, with mantissas at and around the half/bfloat16 tie points.
  for (uint32_t e = 0; e < 255; ++e) {
    for (uint32_t m : {0u, 1u, 0xFFFu, 0x1000u, 0x1001u, 0x3000u, 0x7FFFu, 0x8000u, 0x8001u,
                       0x18000u, 0x7FFFFFu, 0x400000u, 0x2000u, 0x6000u}) {
      for (uint32_t s : {0u, 1u}) v.push_back(bits_to_float((s << 31) | (e << 23) | m));
    }
  }
  // And a stride through every bit pattern.
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 40503) {
    v.push_back(bits_to_float(static_cast<uint32_t>(b)));
  }
  return v;
}

// The compiler's IEEE binary16 type, where it has one in C++: __fp16 on aarch64 (GCC 12 has
// no C++ _Float16 there), _Float16 elsewhere.
#if defined(__aarch64__)
#define STOKER_COMPILER_HALF __fp16
#elif defined(__FLT16_MAX__)
#define STOKER_COMPILER_HALF _Float16
#endif

TEST(AugmentKernel, Float16RoundsToNearestEven) {
  int checked = 0;
  for (float f : conversion_cases()) {
    const uint16_t got = augment::float_to_half_bits(f);
    const uint16_t want = half_reference(f);
    if (std::isnan(f)) {
      ASSERT_EQ(got & 0x7C00, 0x7C00);
      ASSERT_NE(got & 0x3FF, 0);
      continue;
    }
    ASSERT_EQ(got, want) << "f = " << f << " (bits " << std::hex << [&] {
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }() << ")";
#ifdef STOKER_COMPILER_HALF
    // The compiler's own conversion (also round-to-nearest-even) agrees.
    const STOKER_COMPILER_HALF h = static_cast<STOKER_COMPILER_HALF>(f);
    uint16_t hb;
    std::memcpy(&hb, &h, 2);
    ASSERT_EQ(got, hb) << "f = " << f;
#endif
    ++checked;
  }
  EXPECT_GT(checked, 100000);
  // Spot values: 1 + 2^-11 is a tie between 1 and 1 + 2^-10 and goes to the even 1.0.
  EXPECT_EQ(augment::float_to_half_bits(1.00048828125f), 0x3C00);
  EXPECT_EQ(augment::float_to_half_bits(1.00146484375f), 0x3C02);  // tie up to the even
  EXPECT_EQ(augment::float_to_half_bits(65520.0f), 0x7C00);
  EXPECT_EQ(augment::float_to_half_bits(65519.0f), 0x7BFF);
  EXPECT_EQ(augment::float_to_half_bits(5.9604645e-8f), 0x0001);   // 2^-24, smallest subnormal
  EXPECT_EQ(augment::float_to_half_bits(2.98023224e-8f), 0x0000);  // 2^-25: tie to even zero
  EXPECT_EQ(augment::float_to_half_bits(-2.0f), 0xC000);
}

TEST(AugmentKernel, BFloat16RoundsToNearestEven) {
  for (float f : conversion_cases()) {
    const uint16_t got = augment::float_to_bfloat16_bits(f);
    if (std::isnan(f)) {
      ASSERT_EQ(got & 0x7F80, 0x7F80);
      ASSERT_NE(got & 0x7F, 0);
      continue;
    }
    ASSERT_EQ(got, bfloat16_reference(f)) << "f = " << f;
  }
  EXPECT_EQ(augment::float_to_bfloat16_bits(1.0f), 0x3F80);
  EXPECT_EQ(augment::float_to_bfloat16_bits(bits_to_float(0x3F808000)), 0x3F80);  // tie: even
  EXPECT_EQ(augment::float_to_bfloat16_bits(bits_to_float(0x3F818000)), 0x3F82);  // tie: even
  EXPECT_EQ(augment::float_to_bfloat16_bits(bits_to_float(0x3F808001)), 0x3F81);
  EXPECT_EQ(augment::float_to_bfloat16_bits(bits_to_float(0x7F7FFFFF)), 0x7F80);  // overflow
}

// One sample of a test batch: a region and the resize that the CPU would do on it.
struct Case {
  int width, height;
  Box box, bounds;
  bool flip;
  bool blank = false;
};

struct Packed {
  std::vector<uint8_t> staging;
  std::vector<Geometry> geometry;
  std::vector<std::vector<uint8_t>> regions;
  int64_t table_ints = 0;
};

Packed pack(const std::vector<Case>& cases, int channels, int size) {
  Packed p;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    p.regions.push_back(test::synthetic(c.width, c.height, channels, static_cast<int>(i)));
    Geometry g;
    if (!c.blank) {
      EXPECT_TRUE(augment::make_geometry(g, c.box.x0, c.box.y0, c.box.x1, c.box.y1, c.bounds.x0,
                                         c.bounds.y0, c.bounds.x1, c.bounds.y1, c.width, c.height,
                                         size));
      g.pixels = p.staging.size() + 5;  // odd offsets: the kernel must not assume alignment
      g.flip = c.flip;
      g.coeffs = p.table_ints;
      p.table_ints += augment::table_ints(g, size);
      p.staging.resize(g.pixels);
      p.staging.insert(p.staging.end(), p.regions.back().begin(), p.regions.back().end());
    }
    p.geometry.push_back(g);
  }
  return p;
}

std::vector<Case> resize_cases() {
  std::vector<Case> cases;
  // Crop-then-resize (train: bounds == box, integer), down and up, flipped and not.
  cases.push_back({97, 61, {0, 0, 97, 61}, {0, 0, 97, 61}, false});
  cases.push_back({97, 61, {10, 5, 90, 60}, {10, 5, 90, 60}, true});
  cases.push_back({300, 200, {13, 7, 290, 199}, {13, 7, 290, 199}, false});  // ~4x down
  cases.push_back({20, 15, {2, 1, 19, 14}, {2, 1, 19, 14}, true});           // ~4x up
  cases.push_back({40, 400, {0, 30, 40, 390}, {0, 30, 40, 390}, false});     // mixed axes
  // Eval: a fractional box with taps clipped to the whole image (or a wider window).
  cases.push_back({120, 90, {11.25, 3.5, 101.75, 87.125}, {-4, -2, 130, 95}, false});
  cases.push_back({64, 64, {0.5, 0.25, 63.5, 63.75}, {0, 0, 64, 64}, true});
  cases.push_back({500, 37, {3.3, 0.1, 480.9, 36.9}, {0, 0, 500, 37}, false});  // 10x down
  cases.push_back({33, 33, {0, 0, 33, 33}, {0, 0, 33, 33}, false, true});       // blank slot
  cases.push_back({7, 5, {1, 1, 6, 4}, {1, 1, 6, 4}, true});
  return cases;
}

// The CPU loader's bytes for one case: resize_antialiased then the layout kernels.
std::vector<uint8_t> cpu_reference(const Case& c, const std::vector<uint8_t>& region,
                                   const OutputSpec& spec) {
  const size_t values = static_cast<size_t>(spec.size) * spec.size * spec.channels;
  std::vector<uint8_t> out(values * augment::dtype_bytes(spec.dtype), 0);
  if (c.blank) return out;
  std::vector<uint8_t> resized(values), scratch;
  resize_antialiased(resized.data(), spec.size, spec.size, region.data(), c.width, c.height,
                     spec.channels, c.box, c.bounds, scratch);
  if (spec.dtype == augment::kUint8) {
    copy_hwc(out.data(), resized.data(), spec.size, spec.size, spec.channels, c.flip);
    return out;
  }
  std::vector<float> f(values);
  normalize_to_chw(f.data(), resized.data(), spec.size, spec.size, spec.channels, c.flip, spec.mean,
                   spec.std);
  if (spec.dtype == augment::kFloat32) {
    std::memcpy(out.data(), f.data(), values * 4);
    return out;
  }
  auto* o = reinterpret_cast<uint16_t*>(out.data());
  for (size_t i = 0; i < values; ++i) {
    o[i] = spec.dtype == augment::kFloat16 ? half_reference(f[i]) : bfloat16_reference(f[i]);
  }
  return out;
}

// Largest difference in 0-255 units (uint8) or in normalised units (floats).
double max_error(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int dtype) {
  double worst = 0;
  const size_t n = a.size() / augment::dtype_bytes(dtype);
  for (size_t i = 0; i < n; ++i) {
    double x, y;
    if (dtype == augment::kUint8) {
      x = a[i], y = b[i];
    } else if (dtype == augment::kFloat32) {
      x = reinterpret_cast<const float*>(a.data())[i];
      y = reinterpret_cast<const float*>(b.data())[i];
    } else if (dtype == augment::kFloat16) {
      x = half_value(reinterpret_cast<const uint16_t*>(a.data())[i]);
      y = half_value(reinterpret_cast<const uint16_t*>(b.data())[i]);
    } else {
      x = bits_to_float(uint32_t{reinterpret_cast<const uint16_t*>(a.data())[i]} << 16);
      y = bits_to_float(uint32_t{reinterpret_cast<const uint16_t*>(b.data())[i]} << 16);
    }
    worst = std::max(worst, std::fabs(x - y));
  }
  return worst;
}

TEST(AugmentKernel, BatchMatchesCpuKernelsBitForBit) {
  const std::vector<Case> cases = resize_cases();
  for (int channels : {1, 3}) {
    for (int size : {1, 24, 61}) {
      for (int dtype :
           {augment::kFloat32, augment::kUint8, augment::kFloat16, augment::kBFloat16}) {
        OutputSpec spec;
        spec.size = size;
        spec.channels = channels;
        spec.dtype = dtype;
        const float mean[3] = {0.485f, 0.456f, 0.406f}, stdv[3] = {0.229f, 0.224f, 0.225f};
        for (int c = 0; c < 3; ++c) spec.mean[c] = mean[c], spec.std[c] = stdv[c];
        Packed p = pack(cases, channels, size);
        const size_t slot =
            static_cast<size_t>(size) * size * channels * augment::dtype_bytes(dtype);
        // Poisoned output and tables: every byte must be written.
        std::vector<uint8_t> out(slot * cases.size(), 0xA5);
        std::vector<int32_t> tables(static_cast<size_t>(p.table_ints), 0x5A5A5A5A);
        augment::augment_batch_host(out.data(), p.staging.data(), tables.data(), p.geometry.data(),
                                    static_cast<int>(cases.size()), spec);
        for (size_t i = 0; i < cases.size(); ++i) {
          const auto want = cpu_reference(cases[i], p.regions[i], spec);
          const std::vector<uint8_t> got(out.begin() + i * slot, out.begin() + (i + 1) * slot);
          const double err = max_error(got, want, dtype);
          ASSERT_EQ(got, want) << "case " << i << " channels " << channels << " size " << size
                               << " dtype " << dtype << ": max error " << err;
        }
      }
    }
  }
}

TEST(AugmentKernel, GeometryRejectsWhatResizeRejects) {
  Geometry g;
  EXPECT_FALSE(augment::make_geometry(g, 5, 0, 5, 10, 0, 0, 10, 10, 10, 10, 8));    // empty
  EXPECT_FALSE(augment::make_geometry(g, 0, 0, 4, 4, 20, 20, 30, 30, 10, 10, 8));   // no pixel
  EXPECT_FALSE(augment::make_geometry(g, 0, 0, 4, 4, 0, 0, 4, 4, 10, 10, 0));       // size 0
  ASSERT_TRUE(augment::make_geometry(g, 1.5, 2, 9, 8, -1, -1, 11, 11, 10, 10, 8));  // clipped
  EXPECT_EQ(g.win_x, 0);
  EXPECT_EQ(g.win_w, 10);
  EXPECT_EQ(g.taps_x, 3);  // 7.5 / 8 < 1: support 1, ceil(1) * 2 + 1
  EXPECT_DOUBLE_EQ(g.x0, 1.5);
}

// End to end: stage_sample (the worker's half in the GPU mode) + the shared kernels equal
// transform_sample (the CPU mode), for train and eval, region + DCT-scaled decode, every dtype.
TEST(AugmentKernel, StagedSamplesMatchTransformSample) {
  const auto pixels = test::synthetic(640, 480, 3, 7);
  const auto jpeg = encode_jpeg(pixels.data(), 640, 480, 3, 90);
  int compared = 0;
  for (TransformKind kind : {TransformKind::kTrain, TransformKind::kEval}) {
    for (int channels : {1, 3}) {
      for (OutputKind output : {OutputKind::kFloat32, OutputKind::kUint8, OutputKind::kFloat16,
                                OutputKind::kBFloat16}) {
        TransformConfig config;
        config.kind = kind;
        config.output = output;
        config.size = 56;
        config.channels = channels;
        TransformScratch scratch;
        for (uint64_t key = 0; key < 6; ++key) {
          std::vector<uint8_t> want(config.sample_bytes());
          Rng rng_cpu(stream_key(1, 2, key));
          transform_sample(want.data(), jpeg, "synthetic.jpg", config, rng_cpu, scratch);

          Rng rng(stream_key(1, 2, key));
          const StagedSample s = stage_sample(jpeg, "synthetic.jpg", config, rng, scratch);
          const DecodedRegion& r = scratch.region;
          Geometry g;
          ASSERT_TRUE(augment::make_geometry(g, s.box.x0, s.box.y0, s.box.x1, s.box.y1, s.bounds.x0,
                                             s.bounds.y0, s.bounds.x1, s.bounds.y1, r.width,
                                             r.height, config.size));
          g.flip = s.flip;
          OutputSpec spec;
          spec.size = config.size;
          spec.channels = channels;
          spec.dtype = static_cast<int32_t>(output);
          for (int c = 0; c < 3; ++c) spec.mean[c] = config.mean[c], spec.std[c] = config.std[c];
          std::vector<int32_t> tables(static_cast<size_t>(augment::table_ints(g, config.size)));
          std::vector<uint8_t> got(config.sample_bytes(), 0xA5);
          augment::augment_batch_host(got.data(), r.pixels.data(), tables.data(), &g, 1, spec);
          ASSERT_EQ(got, want) << "kind " << int(kind) << " channels " << channels << " output "
                               << to_string(output) << " key " << key;
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 2 * 2 * 4 * 6);
}

// CPU float16 / bfloat16 output is the float32 output rounded to nearest-even.
TEST(AugmentKernel, CpuHalfOutputsAreRoundedFloat32) {
  const auto pixels = test::synthetic(200, 150, 3, 3);
  const auto jpeg = encode_jpeg(pixels.data(), 200, 150, 3, 90);
  TransformConfig config;
  config.size = 40;
  TransformScratch scratch;
  std::vector<uint8_t> f32(config.sample_bytes());
  Rng a(stream_key(0, 0, 9));
  transform_sample(f32.data(), jpeg, "a.jpg", config, a, scratch);
  for (OutputKind output : {OutputKind::kFloat16, OutputKind::kBFloat16}) {
    config.output = output;
    ASSERT_EQ(config.sample_bytes(), 40u * 40u * 3u * 2u);
    std::vector<uint16_t> h(config.sample_bytes() / 2);
    Rng b(stream_key(0, 0, 9));
    transform_sample(h.data(), jpeg, "a.jpg", config, b, scratch);
    const auto* f = reinterpret_cast<const float*>(f32.data());
    for (size_t i = 0; i < h.size(); ++i) {
      ASSERT_EQ(h[i],
                output == OutputKind::kFloat16 ? half_reference(f[i]) : bfloat16_reference(f[i]));
    }
  }
  EXPECT_EQ(parse_output_kind("float16"), OutputKind::kFloat16);
  EXPECT_EQ(parse_output_kind("bfloat16"), OutputKind::kBFloat16);
  EXPECT_STREQ(to_string(OutputKind::kBFloat16), "bfloat16");
}

}  // namespace
}  // namespace stoker
