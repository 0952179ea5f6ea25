// Per-pixel arithmetic of the batched augmentation (crop, antialiased resize, flip, normalise,
// HWC -> CHW, output dtype), shared by the CUDA kernels (cuda/augment.cu) and host code.
//
// Everything here is plain C++ that nvcc also compiles for the device (STOKER_HD). The CPU
// test (augment_kernel_test.cc) runs exactly these functions over batches and holds them to
// the CPU kernels (resize_antialiased, normalize_to_chw, copy_hwc): they are the same arithmetic,
// so the bytes are equal, not merely close:
//   * the coefficients are Pillow's (as resize.cc computes them): the same double operations
//     in the same order, with no FMA contraction (-ffp-contract=off on the host,
//     --fmad=false for the device), so the same int32 fixed-point weights;
//   * a pixel is the two passes of resize.cc evaluated at one output position: each vertical
//     tap's row is resampled horizontally, rounded and clipped to uint8 (resize.cc's
//     intermediate), then the vertical sum is rounded and clipped;
//   * normalisation is (v / 255.0f - mean) / std in float32, as normalize_to_chw's table;
//   * float16 and bfloat16 round float32 to nearest, ties to even.
//
// Layout of one batch (as the CUDA kernels see it, and as augment_batch_host walks it):
//   staging:  each sample's decoded region, uint8 HWC, at Geometry::pixels bytes;
//   tables:   each sample's coefficient tables at Geometry::coeffs int32s, table_ints() long:
//             [x start: size][x coefficients: size * taps_x][y start: size][y: size * taps_y];
//   output:   float32/float16/bfloat16 NCHW or uint8 NHWC (as the CPU loader's batches).
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define STOKER_HD __host__ __device__
#else
#define STOKER_HD
#endif

namespace stoker::augment {

constexpr int kPrecisionBits = 22;  // Pillow's fixed point: 32 - 8 - 2
constexpr int32_t kHalf = int32_t{1} << (kPrecisionBits - 1);

// Output element types (values match OutputKind's order in transform.h).
enum DType : int32_t { kFloat32 = 0, kUint8 = 1, kFloat16 = 2, kBFloat16 = 3 };

STOKER_HD inline int dtype_bytes(int32_t dtype) {
  return dtype == kFloat32 ? 4 : (dtype == kUint8 ? 1 : 2);
}

// What every output slot of a batch is.
struct OutputSpec {
  int32_t size = 0;      // output side
  int32_t channels = 0;  // 1 or 3
  int32_t dtype = kFloat32;
  float mean[3] = {0, 0, 0};
  float std[3] = {1, 1, 1};
};

// Where one output slot comes from. Filled on the host by make_geometry (plus `pixels`,
// `width`, `height` and `coeffs` by the caller); read by both kernels.
struct Geometry {
  uint64_t pixels = 0;            // byte offset of the decoded region in the staging area
  int32_t width = 0, height = 0;  // region size in pixels; width 0: blank slot (zero output)
  int32_t win_x = 0, win_y = 0;   // integer window of the region that taps may read
  int32_t win_w = 0, win_h = 0;
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;  // the resize box relative to the window
  int32_t taps_x = 0, taps_y = 0;         // coefficients per output column / row
  int64_t coeffs = 0;                     // int32 offset of this slot's tables
  int32_t flip = 0;
  int32_t reserved = 0;
};

STOKER_HD inline uint8_t clip8(int32_t acc) {
  const int32_t v = acc >> kPrecisionBits;
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

STOKER_HD inline double triangle(double x) {
  if (x < 0.0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

// std::clamp(v, lo, hi) for doubles.
STOKER_HD inline double clamp_double(double v, double lo, double hi) {
  return v < lo ? lo : (hi < v ? hi : v);
}

// Pillow's ksize bound for one axis (resize.cc's max_taps).
STOKER_HD inline int max_taps(double in0, double in1, int out_size, int in_size) {
  const double scale = (in1 - in0) / out_size;
  const double support = scale < 1.0 ? 1.0 : scale;
  const double k = ceil(support) * 2 + 1;
  return static_cast<int>(k < in_size ? k : static_cast<double>(in_size));
}

STOKER_HD inline int64_t table_ints(const Geometry& g, int size) {
  return static_cast<int64_t>(size) * (2 + g.taps_x + g.taps_y);
}

// The resize of box (x0, y0)-(x1, y1) with taps clipped to bounds (b*), both in the
// width x height region's pixel coordinates, onto size x size, as resize_antialiased computes it
// (resize.cc: integer window of the bounds, box relative to it). Returns false where
// resize_antialiased throws (empty box, bounds holding no pixel).
inline bool make_geometry(Geometry& g, double x0, double y0, double x1, double y1, double bx0,
                          double by0, double bx1, double by1, int width, int height, int size) {
  if (!(x1 > x0 && y1 > y0) || width <= 0 || height <= 0 || size <= 0) return false;
  const int wx0 = static_cast<int>(clamp_double(floor(bx0), 0.0, double(width)));
  const int wy0 = static_cast<int>(clamp_double(floor(by0), 0.0, double(height)));
  const int wx1 = static_cast<int>(clamp_double(ceil(bx1), double(wx0), double(width)));
  const int wy1 = static_cast<int>(clamp_double(ceil(by1), double(wy0), double(height)));
  if (wx1 - wx0 <= 0 || wy1 - wy0 <= 0) return false;
  g.width = width;
  g.height = height;
  g.win_x = wx0;
  g.win_y = wy0;
  g.win_w = wx1 - wx0;
  g.win_h = wy1 - wy0;
  g.x0 = x0 - wx0;
  g.x1 = x1 - wx0;
  g.y0 = y0 - wy0;
  g.y1 = y1 - wy0;
  g.taps_x = max_taps(g.x0, g.x1, size, g.win_w);
  g.taps_y = max_taps(g.y0, g.y1, size, g.win_h);
  return true;
}

// Output i of one axis: its first source index (*start) and `taps` fixed-point weights k,
// exactly resize.cc's compute_axis (Pillow's triangle filter, support scaled by the downscale
// factor, normalised, rounded half away from zero), with the window shifted left to end
// inside the source and zero weights padding it to `taps`.
STOKER_HD inline void axis_entry(int32_t* start, int32_t* k, int taps, double in0, double in1,
                                 int out_size, int in_size, int i) {
  const double scale = (in1 - in0) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;
  const double support = filterscale;
  const double inv = 1.0 / filterscale;
  const double center = in0 + (i + 0.5) * scale;
  int lo = static_cast<int>(center - support + 0.5);
  if (lo < 0) lo = 0;
  int hi = static_cast<int>(center + support + 0.5);
  if (hi > in_size) hi = in_size;
  int n = hi - lo;
  if (n < 0) n = 0;
  if (n > taps) n = taps;
  double sum = 0.0;
  for (int j = 0; j < n; ++j) sum += triangle((j + lo - center + 0.5) * inv);
  const int first = lo < in_size - taps ? lo : in_size - taps;
  const int shift = lo - first;
  for (int t = 0; t < taps; ++t) k[t] = 0;
  for (int j = 0; j < n && shift + j < taps; ++j) {
    const double weight = triangle((j + lo - center + 0.5) * inv);
    const double w = sum != 0.0 ? weight / sum : weight;
    const double f = w * (1 << kPrecisionBits);
    k[shift + j] = static_cast<int32_t>(w < 0 ? f - 0.5 : f + 0.5);
  }
  *start = first;
}

// Entry e of a slot's tables, e in [0, 2 * size): columns first, then rows. The coefficient
// kernel runs one thread per entry.
STOKER_HD inline void table_entry(int32_t* tables, const Geometry& g, int size, int e) {
  int32_t* xs = tables;
  int32_t* xk = xs + size;
  int32_t* ys = xk + static_cast<int64_t>(size) * g.taps_x;
  int32_t* yk = ys + size;
  if (e < size) {
    axis_entry(xs + e, xk + static_cast<int64_t>(e) * g.taps_x, g.taps_x, g.x0, g.x1, size, g.win_w,
               e);
  } else {
    const int i = e - size;
    axis_entry(ys + i, yk + static_cast<int64_t>(i) * g.taps_y, g.taps_y, g.y0, g.y1, size, g.win_h,
               i);
  }
}

// Resampled pixel (x, y) of the slot (before any flip), all channels into v.
STOKER_HD inline void resample_pixel(uint8_t* v, const uint8_t* region, const int32_t* tables,
                                     const Geometry& g, int channels, int size, int x, int y) {
  const int32_t* xs = tables;
  const int32_t* xk = xs + size;
  const int32_t* ys = xk + static_cast<int64_t>(size) * g.taps_x;
  const int32_t* yk = ys + size;
  const int32_t* kx = xk + static_cast<int64_t>(x) * g.taps_x;
  const int32_t* ky = yk + static_cast<int64_t>(y) * g.taps_y;
  const size_t stride = static_cast<size_t>(g.width) * channels;
  const uint8_t* base = region + static_cast<size_t>(g.win_y + ys[y]) * stride +
                        static_cast<size_t>(g.win_x + xs[x]) * channels;
  int32_t acc[3] = {kHalf, kHalf, kHalf};
  for (int t = 0; t < g.taps_y; ++t) {
    const int32_t kt = ky[t];
    if (kt == 0) continue;
    const uint8_t* row = base + static_cast<size_t>(t) * stride;
    for (int c = 0; c < channels; ++c) {
      int32_t h = kHalf;
      for (int u = 0; u < g.taps_x; ++u) h += row[u * channels + c] * kx[u];
      acc[c] += clip8(h) * kt;
    }
  }
  for (int c = 0; c < channels; ++c) v[c] = clip8(acc[c]);
}

// float32 -> IEEE binary16 bits, round to nearest, ties to even (NaN stays NaN, quiet).
STOKER_HD inline uint16_t float_to_half_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return static_cast<uint16_t>(sign | (a > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (a < 0x38800000u) {  // below 2^-14: a half subnormal, in units of 2^-24
    const uint32_t e = a >> 23;
    if (e < 102) return static_cast<uint16_t>(sign);  // below 2^-25: rounds to zero
    const uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t h = (a >> 13) - (112u << 10);  // rebias the exponent from 127 to 15
  const uint32_t rem = a & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry moves the exponent up
  return static_cast<uint16_t>(sign | h);
}

// float32 -> bfloat16 bits, round to nearest, ties to even (NaN stays NaN, quiet).
STOKER_HD inline uint16_t float_to_bfloat16_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

// (v / 255 - mean) / std in float32, as normalize_to_chw (and torchvision) compute it.
STOKER_HD inline float normalize_value(uint8_t v, float mean, float std) {
  const float x = static_cast<float>(v) / 255.0f;
  return (x - mean) / std;
}

// Writes output pixel (x, y) of slot `sample` from its channel values v (nullptr: zeros).
STOKER_HD inline void store_pixel(void* out, const OutputSpec& spec, int64_t sample, int x, int y,
                                  const uint8_t* v) {
  const int64_t size = spec.size, channels = spec.channels;
  if (spec.dtype == kUint8) {
    uint8_t* o = static_cast<uint8_t*>(out) + ((sample * size + y) * size + x) * channels;
    for (int c = 0; c < channels; ++c) o[c] = v != nullptr ? v[c] : 0;
    return;
  }
  const int64_t plane = size * size;
  const int64_t at = sample * channels * plane + static_cast<int64_t>(y) * size + x;
  for (int c = 0; c < channels; ++c) {
    const float f = v != nullptr ? normalize_value(v[c], spec.mean[c], spec.std[c]) : 0.0f;
    if (spec.dtype == kFloat32) {
      static_cast<float*>(out)[at + c * plane] = f;
    } else if (spec.dtype == kFloat16) {
      static_cast<uint16_t*>(out)[at + c * plane] = float_to_half_bits(f);
    } else {
      static_cast<uint16_t*>(out)[at + c * plane] = float_to_bfloat16_bits(f);
    }
  }
}

// One output pixel of one slot: the whole per-thread work of the augmentation kernel.
STOKER_HD inline void augment_pixel(void* out, const uint8_t* staging, const int32_t* all_tables,
                                    const Geometry& g, const OutputSpec& spec, int64_t sample,
                                    int x, int y) {
  if (g.width == 0) {
    store_pixel(out, spec, sample, x, y, nullptr);
    return;
  }
  uint8_t v[3];
  const int src_x = g.flip ? spec.size - 1 - x : x;
  resample_pixel(v, staging + g.pixels, all_tables + g.coeffs, g, spec.channels, spec.size, src_x,
                 y);
  store_pixel(out, spec, sample, x, y, v);
}

// The host twin of the two kernels: fills every slot's tables (each Geometry's `coeffs` must
// leave room for table_ints) then every output pixel. For tests and the CPU reference.
inline void augment_batch_host(void* out, const uint8_t* staging, int32_t* tables,
                               const Geometry* geometry, int batch, const OutputSpec& spec) {
  for (int s = 0; s < batch; ++s) {
    if (geometry[s].width == 0) continue;
    for (int e = 0; e < 2 * spec.size; ++e) {
      table_entry(tables + geometry[s].coeffs, geometry[s], spec.size, e);
    }
  }
  for (int s = 0; s < batch; ++s) {
    for (int y = 0; y < spec.size; ++y) {
      for (int x = 0; x < spec.size; ++x) {
        augment_pixel(out, staging, tables, geometry[s], spec, s, x, y);
      }
    }
  }
}

}  // namespace stoker::augment
