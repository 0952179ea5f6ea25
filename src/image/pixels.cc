// Pixel layout kernels: HWC copy with optional mirror, float CHW normalisation, RGB -> L.

#include <array>
#include <cstring>

#include "image/decoders.h"
#include "image/simd.h"
#include "stoker/error.h"
#include "stoker/image.h"
#include "util/check.h"

namespace stoker {

void copy_hwc(uint8_t* out, const uint8_t* in, int width, int height, int channels, bool flip) {
  const size_t row = static_cast<size_t>(width) * channels;
  if (!flip) {
    std::memcpy(out, in, row * height);
    return;
  }
  for (int y = 0; y < height; ++y) {
    const uint8_t* src = in + row * y;
    uint8_t* dst = out + row * y;
    if (channels == 3) {
      for (int x = 0; x < width; ++x) {
        const uint8_t* p = src + 3 * (width - 1 - x);
        dst[3 * x] = p[0];
        dst[3 * x + 1] = p[1];
        dst[3 * x + 2] = p[2];
      }
    } else if (channels == 1) {
      for (int x = 0; x < width; ++x) dst[x] = src[width - 1 - x];
    } else {
      for (int x = 0; x < width; ++x) {
        std::memcpy(dst + x * channels, src + (width - 1 - x) * channels, channels);
      }
    }
  }
}

namespace {

using image::kSplitRgb;
using image::SimdLevel;
using ChannelTables = std::array<std::array<float, 256>, 4>;

// Outputs [o0, o1) of one RGB row into the three planes' rows, output o taken from source pixel
// o, or width - 1 - o when flipped: the scalar kernel, and the SIMD kernels' tail past their last
// whole block (use normalize_rgb_tail).
inline void normalize_rgb_outputs(float* row, size_t plane, const uint8_t* __restrict src, int o0,
                                  int o1, int width, bool flip, const ChannelTables& lut) {
  const float* __restrict t0 = lut[0].data();
  const float* __restrict t1 = lut[1].data();
  const float* __restrict t2 = lut[2].data();
  float* __restrict r = row;
  float* __restrict g = row + plane;
  float* __restrict b = row + 2 * plane;
  for (int o = o0; o < o1; ++o) {
    const uint8_t* p = src + 3 * (flip ? width - 1 - o : o);
    r[o] = t0[p[0]];
    g[o] = t1[p[1]];
    b[o] = t2[p[2]];
  }
}

// Source pixels [x0, width): the outputs they land on.
inline void normalize_rgb_tail(float* row, size_t plane, const uint8_t* src, int x0, int width,
                               bool flip, const ChannelTables& lut) {
  if (flip) {
    normalize_rgb_outputs(row, plane, src, 0, width - x0, width, true, lut);
  } else {
    normalize_rgb_outputs(row, plane, src, x0, width, width, false, lut);
  }
}

// RGB rows -> three planes, one pass over the source: three table lookups per pixel.
void normalize_rgb_rows(float* out, const uint8_t* in, int width, int height, bool flip,
                        const ChannelTables& lut) {
  const size_t plane = static_cast<size_t>(width) * height;
  for (int y = 0; y < height; ++y) {
    normalize_rgb_outputs(out + static_cast<size_t>(y) * width, plane,
                          in + static_cast<size_t>(y) * width * 3, 0, width, width, flip, lut);
  }
}

#if STOKER_X86
__attribute__((target("avx2"))) inline void store8(float* at, __m256 v, bool stream) {
  if (stream) {
    _mm256_stream_ps(at, v);
  } else {
    _mm256_storeu_ps(at, v);
  }
}

// The same with AVX2: 16 source pixels deinterleaved by byte shuffles, then one gather from
// each channel's table per 8 values. Still a table lookup, so the floats are the same bits.
__attribute__((target("avx2"))) void normalize_rgb_rows_avx2(float* out, const uint8_t* in,
                                                             int width, int height, bool flip,
                                                             const ChannelTables& lut) {
  // Byte k of pixel i in a 48-byte block is at 3i + k: chunk (3i + k) / 16, offset % 16.
  alignas(16) int8_t masks[3][3][16];
  for (int k = 0; k < 3; ++k) {
    for (int chunk = 0; chunk < 3; ++chunk) {
      for (int i = 0; i < 16; ++i) {
        const int at = 3 * i + k;
        masks[k][chunk][i] = static_cast<int8_t>(at / 16 == chunk ? at % 16 : -1);
      }
    }
  }
  const size_t plane = static_cast<size_t>(width) * height;
  const __m256i reverse = _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0);
  const int blocks = width / 16;
  // The batch is far larger than the caches and is not read again by this thread: streaming
  // stores skip reading each line before writing it. They need 32-byte alignment, which the
  // loader's batch layout gives for widths that are multiples of 8; others store normally.
  const bool stream = reinterpret_cast<uintptr_t>(out) % 32 == 0 && width % 8 == 0;
  for (int y = 0; y < height; ++y) {
    const uint8_t* src = in + static_cast<size_t>(y) * width * 3;
    float* row = out + static_cast<size_t>(y) * width;
    for (int blk = 0; blk < blocks; ++blk) {
      const uint8_t* p = src + static_cast<size_t>(blk) * 48;
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32));
      for (int k = 0; k < 3; ++k) {
        const __m128i bytes = _mm_or_si128(
            _mm_or_si128(
                _mm_shuffle_epi8(a, _mm_load_si128(reinterpret_cast<const __m128i*>(masks[k][0]))),
                _mm_shuffle_epi8(b, _mm_load_si128(reinterpret_cast<const __m128i*>(masks[k][1])))),
            _mm_shuffle_epi8(c, _mm_load_si128(reinterpret_cast<const __m128i*>(masks[k][2]))));
        const float* table = lut[k].data();
        __m256 lo = _mm256_i32gather_ps(table, _mm256_cvtepu8_epi32(bytes), 4);
        __m256 hi = _mm256_i32gather_ps(table, _mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8)), 4);
        float* dst = row + plane * k;
        float* lo_at = dst + blk * 16;
        float* hi_at = lo_at + 8;
        if (flip) {
          // Source pixels x..x+15 land at width-1-x .. width-16-x, reversed.
          const int x = blk * 16;
          lo = _mm256_permutevar8x32_ps(lo, reverse);
          hi = _mm256_permutevar8x32_ps(hi, reverse);
          lo_at = dst + width - 8 - x;
          hi_at = dst + width - 16 - x;
        }
        store8(lo_at, lo, stream);
        store8(hi_at, hi, stream);
      }
    }
    normalize_rgb_tail(row, plane, src, blocks * 16, width, flip, lut);
  }
  // Streaming stores are weakly ordered: make them visible before the slot is handed over.
  _mm_sfence();
}

// The same with AVX-512: one masked 48-byte load and one byte permutation (VBMI) split 16 pixels
// into their R, G and B bytes, then one 16-wide gather per channel and full-cache-line stores.
// Measured against the AVX2 kernel on a 224x224 image into a batch-sized ring: ~0.8x the time.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi"))) void normalize_rgb_rows_avx512(
    float* out, const uint8_t* in, int width, int height, bool flip, const ChannelTables& lut) {
  const __m512i to_planes = _mm512_load_si512(kSplitRgb.bytes);
  const __m512i reverse = _mm512_setr_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const size_t plane = static_cast<size_t>(width) * height;
  const int blocks = width / 16;
  // Streaming stores (see the AVX2 kernel) need 64-byte alignment here: every row and plane
  // start is aligned when the output is and the width is a multiple of 16.
  const bool stream = reinterpret_cast<uintptr_t>(out) % 64 == 0 && width % 16 == 0;
  for (int y = 0; y < height; ++y) {
    const uint8_t* src = in + static_cast<size_t>(y) * width * 3;
    float* row = out + static_cast<size_t>(y) * width;
    for (int blk = 0; blk < blocks; ++blk) {
      const __m512i bytes = _mm512_permutexvar_epi8(
          to_planes, _mm512_maskz_loadu_epi8((uint64_t{1} << 48) - 1, src + blk * 48));
      for (int k = 0; k < 3; ++k) {
        const __m128i channel = k == 0   ? _mm512_castsi512_si128(bytes)
                                : k == 1 ? _mm512_extracti32x4_epi32(bytes, 1)
                                         : _mm512_extracti32x4_epi32(bytes, 2);
        __m512 v = _mm512_i32gather_ps(_mm512_cvtepu8_epi32(channel), lut[k].data(), 4);
        float* dst = row + plane * k + blk * 16;
        if (flip) {
          v = _mm512_permutexvar_ps(reverse, v);
          dst = row + plane * k + width - 16 - blk * 16;
        }
        if (stream) {
          _mm512_stream_ps(dst, v);
        } else {
          _mm512_storeu_ps(dst, v);
        }
      }
    }
    normalize_rgb_tail(row, plane, src, blocks * 16, width, flip, lut);
  }
  _mm_sfence();
}

#endif  // STOKER_X86

using NormalizeRgbFn = void (*)(float*, const uint8_t*, int, int, bool, const ChannelTables&);

// The RGB kernel of each SIMD level.
#if STOKER_X86
constexpr NormalizeRgbFn kNormalizeRgb[image::kSimdLevels] = {
    normalize_rgb_rows, normalize_rgb_rows, normalize_rgb_rows_avx2, normalize_rgb_rows_avx2,
    normalize_rgb_rows_avx512};
#else
constexpr NormalizeRgbFn kNormalizeRgb[image::kSimdLevels] = {
    normalize_rgb_rows, normalize_rgb_rows, normalize_rgb_rows, normalize_rgb_rows,
    normalize_rgb_rows};
#endif

}  // namespace

namespace image {

void normalize_to_chw_at(SimdLevel level, float* out, const uint8_t* in, int width, int height,
                         int channels, bool flip, const float* mean, const float* std) {
  // One table per channel, computed with exactly torchvision's float32 operations:
  // ToTensor divides by 255 in float32, Normalize subtracts the mean then divides by the std
  // (separately rounded; -ffp-contract=off keeps the compiler from fusing them). Every output
  // value is then bit-identical to torchvision's. The tables are kept per thread for the last
  // (channels, mean, std): one call per image would otherwise spend 1,536 divisions on them.
  STOKER_CHECK(channels >= 1 && channels <= 4, "normalize_to_chw: {} channels", channels);
  STOKER_CHECK(level <= best_simd_level(), "normalize: SIMD level {} on a CPU that runs up to {}",
               to_string(level), to_string(best_simd_level()));
  struct Cached {
    int channels = 0;
    std::array<float, 4> mean{}, std{};
    ChannelTables lut;
  };
  thread_local Cached cached;
  // Compared as bits: a NaN key matches itself, -0 and +0 (which give -inf and +inf) differ.
  const size_t key_bytes = sizeof(float) * static_cast<size_t>(channels);
  if (cached.channels != channels || std::memcmp(mean, cached.mean.data(), key_bytes) != 0 ||
      std::memcmp(std, cached.std.data(), key_bytes) != 0) {
    for (int c = 0; c < channels; ++c) {
      for (int v = 0; v < 256; ++v) {
        const float x = static_cast<float>(v) / 255.0f;
        cached.lut[c][v] = (x - mean[c]) / std[c];
      }
      cached.mean[c] = mean[c];
      cached.std[c] = std[c];
    }
    cached.channels = channels;
  }
  const ChannelTables& lut = cached.lut;
  if (channels == 3) {
    kNormalizeRgb[static_cast<int>(level)](out, in, width, height, flip, lut);
    return;
  }
  const size_t plane = static_cast<size_t>(width) * height;
  for (int c = 0; c < channels; ++c) {
    float* o = out + plane * c;
    const float* table = lut[c].data();
    for (int y = 0; y < height; ++y) {
      const uint8_t* src = in + (static_cast<size_t>(y) * width) * channels + c;
      float* dst = o + static_cast<size_t>(y) * width;
      if (flip) {
        for (int x = 0; x < width; ++x) dst[x] = table[src[(width - 1 - x) * channels]];
      } else {
        for (int x = 0; x < width; ++x) dst[x] = table[src[x * channels]];
      }
    }
  }
}

void rgb_to_luma_row(uint8_t* out, const uint8_t* in, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = rgb_to_luma(in[3 * i], in[3 * i + 1], in[3 * i + 2]);
}

}  // namespace image

void normalize_to_chw(float* out, const uint8_t* in, int width, int height, int channels, bool flip,
                      const float* mean, const float* std) {
  image::normalize_to_chw_at(image::best_simd_level(), out, in, width, height, channels, flip, mean,
                             std);
}

}  // namespace stoker
