// Antialiased resize, reproducing Pillow's ImagingResample (BILINEAR or BICUBIC, with box).
//
// The algorithm, as Pillow defines it (src/libImaging/Resample.c), per axis:
//   scale = (in1 - in0) / out_size, filterscale = max(scale, 1), support = the filter's
//   support (1 bilinear, 2 bicubic) * filterscale; output i is centred at in0 + (i + 0.5) *
//   scale; its taps are the source pixels [int(center - support + 0.5), int(center + support
//   + 0.5)) clipped to the source, with weights filter((j - center + 0.5) / filterscale),
//   normalised to sum 1, then converted to fixed point with 22 fractional bits, rounding half
//   away from zero. Bicubic's weights can be negative; every kernel below is exact for them
//   (signed products, int32 sums, clipping at 0 and 255).
// The horizontal pass runs first, into a uint8 intermediate holding only the rows the vertical
// pass reads; each pass rounds by adding 1 << 21 and clips (acc >> 22) to 0..255.
//
// Here the "source image" of that description is the integer window `bounds` of the input:
// coordinates are taken relative to its top-left corner and taps clipped to it. With bounds
// the whole input this is Pillow's im.resize(size, BILINEAR, box); with bounds == box == an
// integer crop it is im.crop(box).resize(size, BILINEAR), bit for bit, as torchvision's
// RandomResizedCrop computes it.
//
// Speed: coefficients are computed once per call; every output gets the same number of taps
// (zero-padded, windows shifted inside the source) so the inner loops have no per-tap branch;
// the vertical pass accumulates whole rows, which the compiler vectorises.

#include "image/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "image/simd.h"
#include "stoker/error.h"
#include "stoker/image.h"
#include "util/check.h"

namespace stoker {
namespace {

using image::kJoinRgb;
using image::kSplitRgb;
using image::pick;
using image::SimdLevel;
using image::unrolled;

constexpr int kPrecisionBits = 32 - 8 - 2;
constexpr int32_t kHalf = int32_t{1} << (kPrecisionBits - 1);

inline uint8_t clip8(int32_t acc) {
  const int32_t v = acc >> kPrecisionBits;
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

inline double triangle(double x) {
  if (x < 0.0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

// What both resizes require of their arguments.
void check_resize(int out_width, int out_height, int in_width, int in_height, int channels,
                  const Box& box) {
  STOKER_CHECK(out_width > 0 && out_height > 0, "resize: invalid output size {}x{}", out_width,
               out_height);
  STOKER_CHECK(in_width > 0 && in_height > 0 && channels > 0, "resize: invalid input {}x{}x{}",
               in_width, in_height, channels);
  STOKER_CHECK(box.x1 > box.x0 && box.y1 > box.y0, "resize: empty box ({}, {}, {}, {})", box.x0,
               box.y0, box.x1, box.y1);
}

// Keys' cubic convolution with a = -0.5, Pillow's bicubic_filter.
inline double cubic(double x) {
  constexpr double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

double filter_weight(ResizeFilter filter, double x) {
  return filter == ResizeFilter::kBicubic ? cubic(x) : triangle(x);
}

// Taps of one axis: output i reads source [start[i], start[i] + taps) with coeffs[i * taps ..].
struct Axis {
  int taps = 0;
  int32_t* start = nullptr;
  int32_t* coeffs = nullptr;
  // For the AVX2 RGB kernel: per output pair (2q, 2q+1) and tap pair (2u, 2u+1), two 32-byte
  // vectors (low then high 11 bits of the coefficients) laid out for vpmaddwd. See
  // fill_pair_table.
  int16_t* pairs = nullptr;
  // For the AVX-512 planar RGB kernel: per group of 16 outputs and tap pair, the byte
  // permutation and the coefficient halves. See fill_planar_table.
  uint8_t* planar = nullptr;
};

// The most taps any output of this axis can have (Pillow's ksize).
int max_taps(double in0, double in1, int out_size, int in_size, ResizeFilter filter) {
  const double scale = (in1 - in0) / out_size;
  const double support = resize_filter_support(filter) * std::max(scale, 1.0);
  const double k = std::ceil(support) * 2 + 1;
  return static_cast<int>(std::min<double>(k, in_size));
}

// Fills `axis` (coefficient storage for out_size * axis.taps, axis.taps preset to the
// max_taps bound) for one dimension and lowers axis.taps to the widest window actually used.
// Windows that would run past the end of the source are shifted left, with leading zero
// weights, so that every output has exactly axis.taps taps. `weights`: axis.taps doubles.
void compute_axis(Axis& axis, double* weights, double in0, double in1, int out_size, int in_size,
                  ResizeFilter filter) {
  const double scale = (in1 - in0) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = resize_filter_support(filter) * filterscale;
  const double inv = 1.0 / filterscale;
  auto window = [&](int i, int& lo, int& hi) {
    const double center = in0 + (i + 0.5) * scale;
    lo = std::max(static_cast<int>(center - support + 0.5), 0);
    hi = std::min(static_cast<int>(center + support + 0.5), in_size);
    return center;
  };
  int used = 1;
  for (int i = 0; i < out_size; ++i) {
    int lo, hi;
    window(i, lo, hi);
    used = std::max(used, hi - lo);
  }
  used = std::min(used, axis.taps);
  for (int i = 0; i < out_size; ++i) {
    int lo, hi;
    const double center = window(i, lo, hi);
    const int n = std::clamp(hi - lo, 0, used);
    // Every loop runs `used` times, the same for every output, so that its exit is predicted;
    // taps past n weigh +0.0, which leaves the sum (added in the same order) unchanged.
    double sum = 0.0;
    for (int j = 0; j < used; ++j) {
      weights[j] = j < n ? filter_weight(filter, (j + lo - center + 0.5) * inv) : 0.0;
      sum += weights[j];
    }
    const int start = std::min(lo, in_size - used);
    const int shift = lo - start;
    int32_t* k = axis.coeffs + static_cast<size_t>(i) * used;
    for (int t = 0; t < used; ++t) {
      const int j = t - shift;  // tap j of the window lands at t; before it, leading zeros
      int32_t value = 0;
      if (j >= 0 && j < n) {
        const double w = sum != 0.0 ? weights[j] / sum : weights[j];
        const double f = w * (1 << kPrecisionBits);
        value = static_cast<int32_t>(w < 0 ? f - 0.5 : f + 0.5);
      }
      k[t] = value;
    }
    axis.start[i] = start;
  }
  axis.taps = used;
}

// The kernels take the tables as local restrict pointers: with `out` a uint8_t*, the compiler
// would otherwise reload them from the Axis after every store (char may alias anything).
template <int C, int K>
void horizontal_fixed(uint8_t* __restrict out, const uint8_t* __restrict row, const Axis& ax,
                      int out_width) {
  const int32_t* __restrict start = ax.start;
  const int32_t* __restrict coeffs = ax.coeffs;
  const int taps = K > 0 ? K : ax.taps;  // K = 0: the tap count known only at run time
  for (int x = 0; x < out_width; ++x) {
    const uint8_t* p = row + static_cast<size_t>(start[x]) * C;
    const int32_t* k = coeffs + static_cast<size_t>(x) * taps;
    int32_t acc[C];
    for (int c = 0; c < C; ++c) acc[c] = kHalf;
    for (int t = 0; t < taps; ++t) {
      for (int c = 0; c < C; ++c) acc[c] += p[t * C + c] * k[t];
    }
    for (int c = 0; c < C; ++c) out[x * C + c] = clip8(acc[c]);
  }
}

#if STOKER_X86
// RGB with SSE4.1: one output pixel's three channels in one vector of four int32 lanes.
// Each tap loads four bytes (the pixel and the next one's first byte, ignored), so a row may
// be read one byte past its last pixel: callers use it only where that byte exists. The
// arithmetic is the scalar kernel's, exactly: int32 products and sums, then a saturating pack
// that equals clip8. So the bytes do not depend on which kernel ran.
template <int K>
__attribute__((target("sse4.1"))) void horizontal_rgb_sse41(uint8_t* __restrict out,
                                                            const uint8_t* __restrict row,
                                                            const Axis& ax, int out_width) {
  const int32_t* __restrict start = ax.start;
  const int32_t* __restrict coeffs = ax.coeffs;
  const int taps = K > 0 ? K : ax.taps;
  const __m128i half = _mm_set1_epi32(kHalf);
  for (int x = 0; x < out_width; ++x) {
    const uint8_t* p = row + static_cast<size_t>(start[x]) * 3;
    const int32_t* k = coeffs + static_cast<size_t>(x) * taps;
    __m128i acc = half;
    for (int t = 0; t < taps; ++t) {
      int32_t four;
      std::memcpy(&four, p + t * 3, 4);
      const __m128i v = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(four));
      acc = _mm_add_epi32(acc, _mm_mullo_epi32(v, _mm_set1_epi32(k[t])));
    }
    acc = _mm_srai_epi32(acc, kPrecisionBits);
    const __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(acc, acc), acc);
    const int32_t rgbx = _mm_cvtsi128_si32(bytes);
    // Four bytes at a time (a constant size, so no memcpy call); the fourth is overwritten by
    // the next pixel, except at the end.
    if (x + 1 < out_width) {
      std::memcpy(out + static_cast<size_t>(x) * 3, &rgbx, 4);
    } else {
      std::memcpy(out + static_cast<size_t>(x) * 3, &rgbx, 3);
    }
  }
}

#endif  // STOKER_X86

using HorizontalFn = void (*)(uint8_t*, const uint8_t*, const Axis&, int);

// The scalar kernels for C channels, unrolled up to 8 taps.
template <int C>
constexpr auto kHorizontalFixed = unrolled<HorizontalFn, 8>([](auto k) {
  return &horizontal_fixed<C, decltype(k)::value>;
});

// The AVX2 RGB kernel splits each coefficient k (0 <= k <= 2^22) into k = hi * 2^11 + lo
// with both parts below 2^15, so that vpmaddwd (16-bit products summed in pairs into 32 bits)
// computes sum(lo * p) and sum(hi * p) exactly; sum(k * p) = that hi sum * 2^11 + lo sum, the
// scalar kernel's int32 exactly. Each 256-bit vector holds two output pixels (one per 128-bit
// lane) and two taps (adjacent 16-bit words); an odd tap count gets a zero tap.
constexpr int kSplitBits = 11;

size_t pair_table_bytes(int out_width, int taps) {
  return static_cast<size_t>((out_width + 1) / 2) * ((taps + 1) / 2) * 64;
}

void fill_pair_table(Axis& ax, int out_width) {
  const int tap_pairs = (ax.taps + 1) / 2;
  auto coeff = [&](int x, int t) { return t < ax.taps ? ax.coeffs[x * ax.taps + t] : 0; };
  int16_t* v = ax.pairs;
  for (int x = 0; x + 1 < out_width; x += 2) {
    for (int u = 0; u < tap_pairs; ++u) {
      for (int part = 0; part < 2; ++part) {  // 0: low bits, 1: high bits
        for (int lane = 0; lane < 2; ++lane) {
          for (int word = 0; word < 8; ++word) {
            const int32_t k = coeff(x + lane, 2 * u + word % 2);
            const int32_t split = part == 0 ? k & ((1 << kSplitBits) - 1) : k >> kSplitBits;
            *v++ = static_cast<int16_t>(split);
          }
        }
      }
    }
  }
}

#if STOKER_X86
// P: tap pairs known at compile time (unrolled), or 0 for a run-time count.
template <int P>
__attribute__((target("avx2"))) void horizontal_rgb_avx2(uint8_t* __restrict out,
                                                         const uint8_t* __restrict row,
                                                         const Axis& ax, int out_width) {
  const int32_t* __restrict start = ax.start;
  const int tap_pairs = P > 0 ? P : (ax.taps + 1) / 2;
  // Bytes R0 G0 B0 R1 G1 B1 of two taps -> words R0 R1 G0 G1 B0 B1 0 0, in each lane.
  const __m256i shuffle =
      _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1, 0, -1, 3, -1, 1,
                       -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
  const __m256i half = _mm256_set1_epi32(kHalf);
  const __m256i* k = reinterpret_cast<const __m256i*>(ax.pairs);
  int x = 0;
  for (; x + 1 < out_width; x += 2) {
    const uint8_t* p0 = row + static_cast<size_t>(start[x]) * 3;
    const uint8_t* p1 = row + static_cast<size_t>(start[x + 1]) * 3;
    __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
    for (int u = 0; u < tap_pairs; ++u) {
      const __m128i a = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p0 + 6 * u));
      const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p1 + 6 * u));
      const __m256i px =
          _mm256_shuffle_epi8(_mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1), shuffle);
      lo = _mm256_add_epi32(lo, _mm256_madd_epi16(px, _mm256_load_si256(k++)));
      hi = _mm256_add_epi32(hi, _mm256_madd_epi16(px, _mm256_load_si256(k++)));
    }
    __m256i acc = _mm256_add_epi32(_mm256_add_epi32(lo, _mm256_slli_epi32(hi, kSplitBits)), half);
    acc = _mm256_srai_epi32(acc, kPrecisionBits);
    const __m256i words = _mm256_packs_epi32(acc, acc);
    const __m256i bytes = _mm256_packus_epi16(words, words);
    const int32_t rgb0 = _mm256_cvtsi256_si32(bytes);
    const int32_t rgb1 = _mm_cvtsi128_si32(_mm256_extracti128_si256(bytes, 1));
    std::memcpy(out + static_cast<size_t>(x) * 3, &rgb0, 4);  // 4th byte: overwritten next
    if (x + 2 < out_width) {
      std::memcpy(out + static_cast<size_t>(x) * 3 + 3, &rgb1, 4);
    } else {
      std::memcpy(out + static_cast<size_t>(x) * 3 + 3, &rgb1, 3);
    }
  }
  if (x < out_width) {  // odd width: the last pixel alone
    const uint8_t* p = row + static_cast<size_t>(start[x]) * 3;
    const int32_t* kk = ax.coeffs + static_cast<size_t>(x) * ax.taps;
    for (int c = 0; c < 3; ++c) {
      int32_t sum = kHalf;
      for (int t = 0; t < ax.taps; ++t) sum += p[t * 3 + c] * kk[t];
      out[static_cast<size_t>(x) * 3 + c] = clip8(sum);
    }
  }
}

// Unrolled up to 4 tap pairs (8 taps); indexed by tap pairs.
constexpr auto kHorizontalRgbAvx2 =
    unrolled<HorizontalFn, 4>([](auto p) { return &horizontal_rgb_avx2<decltype(p)::value>; });

#endif  // STOKER_X86

// The AVX-512 RGB kernel works on planes: each input row is first split into its R, G and B
// bytes (one masked load and one vpermb per 16 pixels). Then, per group of 16 outputs, one
// 64-byte load per plane covers every tap of the group (the group's windows must span at most
// 64 pixels, true up to ~3.5x downscaling; wider ones keep the AVX2 kernel), and per tap pair
// one vpermb (VBMI) places the taps' bytes as words for vpmaddwd: 16 outputs of one channel
// per instruction, the tap pair's coefficients shared by the three planes. The arithmetic is
// the AVX2 kernel's (11-bit coefficient halves, exact int32 sums), so the bytes are the scalar
// kernel's. A table group: per tap pair [64 B byte indices][64 B low halves][64 B high halves].
constexpr int kPlanarGroup = 16;
constexpr size_t kPlanarPairBytes = 192;

size_t planar_table_bytes(int out_width, int taps) {
  return static_cast<size_t>((out_width + kPlanarGroup - 1) / kPlanarGroup) * ((taps + 1) / 2) *
         kPlanarPairBytes;
}

// One plane's bytes: the row's pixels rounded up to whole 16-pixel blocks (the split writes
// whole blocks), plus 64 so that a group's 64-byte load stays inside.
size_t planar_plane_stride(int src_w) { return (static_cast<size_t>(src_w) + 15) / 16 * 16 + 64; }

// False when some group's windows span more than 64 pixels (the table is then unused).
bool fill_planar_table(Axis& ax, int out_width) {
  const int tap_pairs = (ax.taps + 1) / 2;
  for (int x0 = 0, g = 0; x0 < out_width; x0 += kPlanarGroup, ++g) {
    const int last = std::min(x0 + kPlanarGroup, out_width) - 1;
    const int base = ax.start[x0];
    if (ax.start[last] + ax.taps - base > 64) return false;
    for (int u = 0; u < tap_pairs; ++u) {
      uint8_t* index = ax.planar + (static_cast<size_t>(g) * tap_pairs + u) * kPlanarPairBytes;
      auto* lo = reinterpret_cast<int16_t*>(index + 64);
      auto* hi = reinterpret_cast<int16_t*>(index + 128);
      for (int i = 0; i < kPlanarGroup; ++i) {
        const int x = x0 + i;
        for (int half = 0; half < 2; ++half) {
          const int t = 2 * u + half;
          const int word = 2 * i + half;
          const bool used = x < out_width && t < ax.taps;
          index[2 * word] = static_cast<uint8_t>(used ? ax.start[x] + t - base : 0);
          index[2 * word + 1] = 0;  // the high byte, zeroed by the permute's mask
          const int32_t k = used ? ax.coeffs[static_cast<size_t>(x) * ax.taps + t] : 0;
          lo[word] = static_cast<int16_t>(k & ((1 << kSplitBits) - 1));
          hi[word] = static_cast<int16_t>(k >> kSplitBits);
        }
      }
    }
  }
  return true;
}

using PlanarFn = void (*)(uint8_t*, const uint8_t*, int, const Axis&, int, uint8_t*);

#if STOKER_X86
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi"))) inline __mmask64 first_bytes(
    int n) {
  return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
}

// `planes`: three planes of planar_plane_stride(src_w) bytes.
template <int P>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi"))) void horizontal_rgb_planar_avx512(
    uint8_t* __restrict out, const uint8_t* __restrict row, int src_w, const Axis& ax,
    int out_width, uint8_t* __restrict planes) {
  const int tap_pairs = P > 0 ? P : (ax.taps + 1) / 2;
  const size_t stride = planar_plane_stride(src_w);
  const __m512i split = _mm512_load_si512(kSplitRgb.bytes);
  const __m512i join = _mm512_load_si512(kJoinRgb.bytes);
  for (int x = 0; x < src_w; x += 16) {
    const int n = std::min(16, src_w - x);
    const __m512i px =
        _mm512_permutexvar_epi8(split, _mm512_maskz_loadu_epi8(first_bytes(3 * n), row + 3 * x));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(planes + x), _mm512_castsi512_si128(px));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(planes + stride + x),
                     _mm512_extracti32x4_epi32(px, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(planes + 2 * stride + x),
                     _mm512_extracti32x4_epi32(px, 2));
  }

  const __m512i half = _mm512_set1_epi32(kHalf);
  const __m512i zero = _mm512_setzero_si512();
  const __mmask64 low_bytes = 0x5555555555555555ULL;
  const uint8_t* pair = ax.planar;
  for (int x0 = 0; x0 < out_width; x0 += kPlanarGroup) {
    const int base = ax.start[x0];
    __m512i src[3], lo[3], hi[3];
    for (int c = 0; c < 3; ++c) {
      src[c] = _mm512_loadu_si512(planes + c * stride + base);
      lo[c] = zero;
      hi[c] = zero;
    }
    for (int u = 0; u < tap_pairs; ++u, pair += kPlanarPairBytes) {
      const __m512i index = _mm512_load_si512(pair);
      const __m512i k_lo = _mm512_load_si512(pair + 64);
      const __m512i k_hi = _mm512_load_si512(pair + 128);
      for (int c = 0; c < 3; ++c) {
        const __m512i taps = _mm512_maskz_permutexvar_epi8(low_bytes, index, src[c]);
        lo[c] = _mm512_add_epi32(lo[c], _mm512_madd_epi16(taps, k_lo));
        hi[c] = _mm512_add_epi32(hi[c], _mm512_madd_epi16(taps, k_hi));
      }
    }
    __m128i bytes[3];
    for (int c = 0; c < 3; ++c) {
      const __m512i acc =
          _mm512_add_epi32(_mm512_add_epi32(lo[c], _mm512_slli_epi32(hi[c], kSplitBits)), half);
      bytes[c] =
          _mm512_cvtusepi32_epi8(_mm512_max_epi32(_mm512_srai_epi32(acc, kPrecisionBits), zero));
    }
    const __m512i planar3 = _mm512_inserti32x4(
        _mm512_inserti32x4(_mm512_castsi128_si512(bytes[0]), bytes[1], 1), bytes[2], 2);
    const int n = std::min(kPlanarGroup, out_width - x0);
    _mm512_mask_storeu_epi8(out + static_cast<size_t>(x0) * 3, first_bytes(3 * n),
                            _mm512_permutexvar_epi8(join, planar3));
  }
}

// Unrolled up to 3 tap pairs; indexed by tap pairs.
constexpr auto kHorizontalRgbPlanarAvx512 =
    unrolled<PlanarFn, 3>([](auto p) { return &horizontal_rgb_planar_avx512<decltype(p)::value>; });

// Unrolled up to 6 taps.
constexpr auto kHorizontalRgbSse41 =
    unrolled<HorizontalFn, 6>([](auto k) { return &horizontal_rgb_sse41<decltype(k)::value>; });

#endif  // STOKER_X86

// Generic channel count (2, 4, ...): not on the hot path.
void horizontal_generic(uint8_t* out, const uint8_t* row, const Axis& ax, int out_width,
                        int channels) {
  for (int x = 0; x < out_width; ++x) {
    const uint8_t* p = row + static_cast<size_t>(ax.start[x]) * channels;
    const int32_t* k = ax.coeffs + static_cast<size_t>(x) * ax.taps;
    for (int c = 0; c < channels; ++c) {
      int32_t acc = kHalf;
      for (int t = 0; t < ax.taps; ++t) acc += p[t * channels + c] * k[t];
      out[x * channels + c] = clip8(acc);
    }
  }
}

// One output row of the vertical pass: n bytes from each of `taps` intermediate rows that lie
// `stride` bytes apart.
void vertical_row(uint8_t* __restrict out, const uint8_t* __restrict rows, size_t stride, size_t n,
                  const int32_t* __restrict k, int taps, int32_t* __restrict acc) {
  for (size_t i = 0; i < n; ++i) acc[i] = kHalf;
  for (int t = 0; t < taps; ++t) {
    const int32_t kt = k[t];
    if (kt == 0) continue;
    const uint8_t* __restrict r = rows + static_cast<size_t>(t) * stride;
    for (size_t i = 0; i < n; ++i) acc[i] += r[i] * kt;
  }
  for (size_t i = 0; i < n; ++i) out[i] = clip8(acc[i]);
}

#if STOKER_X86
// The same with AVX2, 16 bytes at a time with every tap summed in registers (no accumulator
// row in memory). Integer arithmetic is exact and the saturating packs equal clip8, so the
// bytes are the scalar kernel's whatever the CPU.
__attribute__((target("avx2"))) void vertical_row_avx2(uint8_t* __restrict out,
                                                       const uint8_t* __restrict rows,
                                                       size_t stride, size_t n,
                                                       const int32_t* __restrict k, int taps,
                                                       int32_t* __restrict acc) {
  const __m256i half = _mm256_set1_epi32(kHalf);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i lo = half, hi = half;
    for (int t = 0; t < taps; ++t) {
      const __m256i kt = _mm256_set1_epi32(k[t]);
      const __m128i px = _mm_loadu_si128(
          reinterpret_cast<const __m128i*>(rows + static_cast<size_t>(t) * stride + i));
      lo = _mm256_add_epi32(lo, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(px), kt));
      hi =
          _mm256_add_epi32(hi, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(px, 8)), kt));
    }
    lo = _mm256_srai_epi32(lo, kPrecisionBits);
    hi = _mm256_srai_epi32(hi, kPrecisionBits);
    // packs works per 128-bit lane: [lo0-3 hi0-3 | lo4-7 hi4-7]; reorder the quarters to
    // [lo0-7 | hi0-7] before the final pack to bytes.
    const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(lo, hi), 0xD8);
    const __m128i bytes =
        _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), bytes);
  }
  if (i < n) vertical_row(out + i, rows + i, stride, n - i, k, taps, acc);
}

// The same with AVX-512, 64 bytes at a time: twice the lanes per multiply. After the shift the
// sums are clamped at 0 and narrowed with unsigned saturation, which equals clip8.
__attribute__((target("avx512f,avx512bw"))) void vertical_row_avx512(
    uint8_t* __restrict out, const uint8_t* __restrict rows, size_t stride, size_t n,
    const int32_t* __restrict k, int taps, int32_t* __restrict acc) {
  const __m512i half = _mm512_set1_epi32(kHalf);
  const __m512i zero = _mm512_setzero_si512();
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512i sum[4] = {half, half, half, half};
    for (int t = 0; t < taps; ++t) {
      const __m512i kt = _mm512_set1_epi32(k[t]);
      const uint8_t* r = rows + static_cast<size_t>(t) * stride + i;
      for (int q = 0; q < 4; ++q) {
        const __m128i px = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r + 16 * q));
        sum[q] = _mm512_add_epi32(sum[q], _mm512_mullo_epi32(_mm512_cvtepu8_epi32(px), kt));
      }
    }
    for (int q = 0; q < 4; ++q) {
      const __m512i v = _mm512_max_epi32(_mm512_srai_epi32(sum[q], kPrecisionBits), zero);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 16 * q), _mm512_cvtusepi32_epi8(v));
    }
  }
  if (i < n) vertical_row_avx2(out + i, rows + i, stride, n - i, k, taps, acc);
}

#endif  // STOKER_X86

// Bytes reserved for a block of `count` elements of T, rounded up to 64-byte multiples.
template <typename T>
size_t block(size_t count) {
  return (count * sizeof(T) + 63) / 64 * 64;
}

using VerticalFn = void (*)(uint8_t*, const uint8_t*, size_t, size_t, const int32_t*, int,
                            int32_t*);

// What each SIMD level runs. The interleaved RGB horizontal kernel is picked by tap count and
// may read 8 bytes past a row's last tap; planar_rgb (masked loads) is used where its table
// fits (see fill_planar_table) and reads nothing past the row.
struct ResizeKernels {
  HorizontalFn (*horizontal_rgb)(int taps);
  bool pair_table;                   // horizontal_rgb reads Axis::pairs (fill_pair_table)
  PlanarFn (*planar_rgb)(int taps);  // nullptr: none at this level
  VerticalFn vertical;
};

constexpr HorizontalFn scalar_rgb(int taps) { return pick(kHorizontalFixed<3>, taps); }
constexpr ResizeKernels kScalarResize{scalar_rgb, false, nullptr, vertical_row};

#if STOKER_X86
constexpr HorizontalFn sse41_rgb(int taps) { return pick(kHorizontalRgbSse41, taps); }
constexpr HorizontalFn avx2_rgb(int taps) { return pick(kHorizontalRgbAvx2, (taps + 1) / 2); }
constexpr PlanarFn avx512_planar_rgb(int taps) {
  return pick(kHorizontalRgbPlanarAvx512, (taps + 1) / 2);
}
constexpr ResizeKernels kResizeKernels[image::kSimdLevels] = {
    kScalarResize,
    {sse41_rgb, false, nullptr, vertical_row},
    {avx2_rgb, true, nullptr, vertical_row_avx2},
    {avx2_rgb, true, nullptr, vertical_row_avx512},
    {avx2_rgb, true, avx512_planar_rgb, vertical_row_avx512},
};
#else
constexpr ResizeKernels kResizeKernels[image::kSimdLevels] = {
    kScalarResize, kScalarResize, kScalarResize, kScalarResize, kScalarResize};
#endif

}  // namespace

namespace image {

void vertical_row_at(SimdLevel level, uint8_t* out, const uint8_t* rows, size_t stride, size_t n,
                     const int32_t* k, int taps, int32_t* acc) {
  STOKER_CHECK(level <= best_simd_level(), "resize: SIMD level {} on a CPU that runs up to {}",
               to_string(level), to_string(best_simd_level()));
  kResizeKernels[static_cast<int>(level)].vertical(out, rows, stride, n, k, taps, acc);
}

void resize_antialiased_at(SimdLevel level, uint8_t* out, int out_width, int out_height,
                           const uint8_t* in, int in_width, int in_height, int channels,
                           const Box& box, const Box& bounds, std::vector<uint8_t>& scratch,
                           ResizeFilter filter) {
  check_resize(out_width, out_height, in_width, in_height, channels, box);
  // The integer window taps may come from: every pixel the (fractional) bounds touch.
  const int bx0 = static_cast<int>(std::clamp(std::floor(bounds.x0), 0.0, double(in_width)));
  const int by0 = static_cast<int>(std::clamp(std::floor(bounds.y0), 0.0, double(in_height)));
  const int bx1 = static_cast<int>(std::clamp(std::ceil(bounds.x1), double(bx0), double(in_width)));
  const int by1 =
      static_cast<int>(std::clamp(std::ceil(bounds.y1), double(by0), double(in_height)));
  const int src_w = bx1 - bx0, src_h = by1 - by0;
  STOKER_CHECK(src_w > 0 && src_h > 0, "resize: bounds ({}, {}, {}, {}) hold no input pixel",
               bounds.x0, bounds.y0, bounds.x1, bounds.y1);
  const double ix0 = box.x0 - bx0, ix1 = box.x1 - bx0;
  const double iy0 = box.y0 - by0, iy1 = box.y1 - by0;

  Axis hx, vy;
  hx.taps = max_taps(ix0, ix1, out_width, src_w, filter);
  vy.taps = max_taps(iy0, iy1, out_height, src_h, filter);
  const size_t row_elems = static_cast<size_t>(out_width) * channels;
  const size_t hx_coeffs = block<int32_t>(static_cast<size_t>(out_width) * hx.taps);
  const size_t hx_start = block<int32_t>(out_width);
  const size_t vy_coeffs = block<int32_t>(static_cast<size_t>(out_height) * vy.taps);
  const size_t vy_start = block<int32_t>(out_height);
  const size_t weights = block<double>(std::max(hx.taps, vy.taps));
  const size_t accum = block<int32_t>(row_elems);
  STOKER_CHECK(level <= best_simd_level(), "resize: SIMD level {} on a CPU that runs up to {}",
               to_string(level), to_string(best_simd_level()));
  const ResizeKernels& kernels = kResizeKernels[static_cast<int>(level)];
  const bool rgb_pairs = kernels.pair_table && channels == 3;
  const size_t pairs = rgb_pairs ? block<uint8_t>(pair_table_bytes(out_width, hx.taps)) : 0;
  const bool rgb_planar = kernels.planar_rgb != nullptr && channels == 3;
  const size_t planar = rgb_planar ? block<uint8_t>(planar_table_bytes(out_width, hx.taps)) +
                                         block<uint8_t>(3 * planar_plane_stride(src_w))
                                   : 0;
  const size_t fixed =
      hx_coeffs + hx_start + vy_coeffs + vy_start + weights + accum + pairs + planar;
  // The intermediate needs at most src_h rows; its exact height is known only after the
  // vertical taps are computed, so reserve the bound (no reallocation mid-call).
  const size_t needed = fixed + block<uint8_t>(row_elems * src_h) + 64;
  if (scratch.size() < needed) scratch.resize(needed);
  // 64-byte align the carve-out so the int32/double blocks are aligned.
  uint8_t* base = scratch.data();
  base += (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;
  hx.coeffs = reinterpret_cast<int32_t*>(base);
  hx.start = reinterpret_cast<int32_t*>(base + hx_coeffs);
  vy.coeffs = reinterpret_cast<int32_t*>(base + hx_coeffs + hx_start);
  vy.start = reinterpret_cast<int32_t*>(base + hx_coeffs + hx_start + vy_coeffs);
  double* w = reinterpret_cast<double*>(base + hx_coeffs + hx_start + vy_coeffs + vy_start);
  int32_t* acc = reinterpret_cast<int32_t*>(base + fixed - accum - pairs - planar);
  hx.pairs = reinterpret_cast<int16_t*>(base + fixed - pairs - planar);
  hx.planar = base + fixed - planar;
  uint8_t* planes =
      rgb_planar ? hx.planar + block<uint8_t>(planar_table_bytes(out_width, hx.taps)) : nullptr;
  uint8_t* tmp = base + fixed;

  compute_axis(hx, w, ix0, ix1, out_width, src_w, filter);
  compute_axis(vy, w, iy0, iy1, out_height, src_h, filter);
  if (rgb_pairs) fill_pair_table(hx, out_width);
  const PlanarFn h_planar =
      rgb_planar && fill_planar_table(hx, out_width) ? kernels.planar_rgb(hx.taps) : nullptr;

  // Horizontal pass over only the rows the vertical taps reach (windows are monotonic).
  const int first = vy.start[0];
  const int last = vy.start[out_height - 1] + vy.taps;
  const size_t in_stride = static_cast<size_t>(in_width) * channels;
  const uint8_t* src =
      in + static_cast<size_t>(by0) * in_stride + static_cast<size_t>(bx0) * channels;
  HorizontalFn h = nullptr;
  if (channels == 3) h = pick(kHorizontalFixed<3>, hx.taps);
  if (channels == 1) h = pick(kHorizontalFixed<1>, hx.taps);
  // The vector kernels may read a few bytes past a row's last tap (at most 5: one 8-byte load
  // covering two RGB taps, the second possibly the zero padding tap). Those bytes are never
  // used; rows where they would lie past the end of the input keep the scalar kernel.
  constexpr size_t kOverRead = 8;
  const HorizontalFn h_wide = channels == 3 ? kernels.horizontal_rgb(hx.taps) : h;
  const size_t input_bytes = static_cast<size_t>(in_height) * in_stride;
  for (int y = first; y < last; ++y) {
    uint8_t* dst = tmp + static_cast<size_t>(y - first) * row_elems;
    const uint8_t* row = src + static_cast<size_t>(y) * in_stride;
    const size_t row_offset = static_cast<size_t>(row - in);
    const bool room = row_offset + static_cast<size_t>(src_w) * channels + kOverRead <= input_bytes;
    if (h_planar != nullptr) {  // masked loads: reads nothing past the row
      h_planar(dst, row, src_w, hx, out_width, planes);
    } else if (h_wide != nullptr && room) {
      h_wide(dst, row, hx, out_width);
    } else if (h != nullptr) {
      h(dst, row, hx, out_width);
    } else {
      horizontal_generic(dst, row, hx, out_width, channels);
    }
  }

  // Vertical pass: accumulate whole intermediate rows (integer sums, so the order of taps
  // does not change the result).
  for (int y = 0; y < out_height; ++y) {
    uint8_t* dst = out + static_cast<size_t>(y) * row_elems;
    const uint8_t* rows = tmp + static_cast<size_t>(vy.start[y] - first) * row_elems;
    const int32_t* k = vy.coeffs + static_cast<size_t>(y) * vy.taps;
    kernels.vertical(dst, rows, row_elems, row_elems, k, vy.taps, acc);
  }
}

}  // namespace image

double resize_filter_support(ResizeFilter filter) {
  return filter == ResizeFilter::kBicubic ? 2.0 : 1.0;
}

void resize_antialiased(uint8_t* out, int out_width, int out_height, const uint8_t* in,
                        int in_width, int in_height, int channels, const Box& box,
                        const Box& bounds, std::vector<uint8_t>& scratch, ResizeFilter filter) {
  image::resize_antialiased_at(image::best_simd_level(), out, out_width, out_height, in, in_width,
                               in_height, channels, box, bounds, scratch, filter);
}

namespace {

// resize_nearest's source index of each output along one axis: the tensor torch resizes is the
// integer window of [bound0, bound1); box0 / scale is the first kept output of its resize.
std::vector<int> nearest_axis(double box0, double box1, double bound0, double bound1, int out_size,
                              int in_size) {
  const double origin = std::floor(bound0);
  const int64_t extent = static_cast<int64_t>(std::ceil(bound1) - origin);
  // torch: compute_scales_value = (float)input_size / output_size, in float32.
  const auto scale = static_cast<float>((box1 - box0) / out_size);
  const int64_t offset = std::llround((box0 - origin) / static_cast<double>(scale));
  std::vector<int> index(static_cast<size_t>(out_size));
  for (int i = 0; i < out_size; ++i) {
    // torch's nearest_idx: min(floor(output_index * scale), input_size - 1), in float32.
    const auto src = static_cast<int64_t>(std::floor(static_cast<float>(i + offset) * scale));
    const int64_t at = static_cast<int64_t>(origin) + std::min(src, extent - 1);
    index[static_cast<size_t>(i)] = static_cast<int>(std::clamp<int64_t>(at, 0, in_size - 1));
  }
  return index;
}

}  // namespace

void resize_nearest(uint8_t* out, int out_width, int out_height, const uint8_t* in, int in_width,
                    int in_height, int channels, const Box& box, const Box& bounds) {
  check_resize(out_width, out_height, in_width, in_height, channels, box);
  STOKER_CHECK(bounds.x1 > bounds.x0 && bounds.y1 > bounds.y0,
               "resize: empty bounds ({}, {}, {}, {})", bounds.x0, bounds.y0, bounds.x1, bounds.y1);
  const std::vector<int> cols =
      nearest_axis(box.x0, box.x1, bounds.x0, bounds.x1, out_width, in_width);
  const std::vector<int> rows =
      nearest_axis(box.y0, box.y1, bounds.y0, bounds.y1, out_height, in_height);
  const auto c = static_cast<size_t>(channels);
  for (int y = 0; y < out_height; ++y) {
    const uint8_t* row = in + static_cast<size_t>(rows[static_cast<size_t>(y)]) * in_width * c;
    uint8_t* dst = out + static_cast<size_t>(y) * out_width * c;
    for (int x = 0; x < out_width; ++x) {
      std::memcpy(dst + static_cast<size_t>(x) * c,
                  row + static_cast<size_t>(cols[static_cast<size_t>(x)]) * c, c);
    }
  }
}

}  // namespace stoker
