// Pixel layout kernels: HWC copy with optional mirror, float CHW normalisation, RGB -> L.

#include <immintrin.h>

#include <array>
#include <cstring>

#include "image/decoders.h"
#include "stoker/error.h"
#include "stoker/image.h"

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

using ChannelTables = std::array<std::array<float, 256>, 4>;

// RGB rows -> three planes, one pass over the source: three table lookups per pixel.
void normalize_rgb_rows(float* out, const uint8_t* in, int width, int height, bool flip,
                        const ChannelTables& lut) {
  const size_t plane = static_cast<size_t>(width) * height;
  const float* __restrict t0 = lut[0].data();
  const float* __restrict t1 = lut[1].data();
  const float* __restrict t2 = lut[2].data();
  for (int y = 0; y < height; ++y) {
    const uint8_t* __restrict src = in + static_cast<size_t>(y) * width * 3;
    float* __restrict r = out + static_cast<size_t>(y) * width;
    float* __restrict g = r + plane;
    float* __restrict b = g + plane;
    for (int x = 0; x < width; ++x) {
      const uint8_t* p = src + 3 * (flip ? width - 1 - x : x);
      r[x] = t0[p[0]];
      g[x] = t1[p[1]];
      b[x] = t2[p[2]];
    }
  }
}

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
    for (int x = blocks * 16; x < width; ++x) {
      const uint8_t* q = src + 3 * x;
      const int at = flip ? width - 1 - x : x;
      for (int k = 0; k < 3; ++k) row[plane * k + at] = lut[k][q[k]];
    }
  }
  // Streaming stores are weakly ordered: make them visible before the slot is handed over.
  _mm_sfence();
}

bool have_avx2() {
  static const bool have = __builtin_cpu_supports("avx2");
  return have;
}

}  // namespace

void normalize_to_chw(float* out, const uint8_t* in, int width, int height, int channels, bool flip,
                      const float* mean, const float* std) {
  // One table per channel, computed with exactly torchvision's float32 operations:
  // ToTensor divides by 255 in float32, Normalize subtracts the mean then divides by the std
  // (separately rounded; -ffp-contract=off keeps the compiler from fusing them). Every output
  // value is then bit-identical to torchvision's.
  STOKER_CHECK(channels >= 1 && channels <= 4, "normalize_to_chw: {} channels", channels);
  ChannelTables lut;
  for (int c = 0; c < channels; ++c) {
    for (int v = 0; v < 256; ++v) {
      const float x = static_cast<float>(v) / 255.0f;
      lut[c][v] = (x - mean[c]) / std[c];
    }
  }
  if (channels == 3) {
    if (have_avx2()) {
      normalize_rgb_rows_avx2(out, in, width, height, flip, lut);
    } else {
      normalize_rgb_rows(out, in, width, height, flip, lut);
    }
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

namespace image_internal {

void rgb_to_luma_row(uint8_t* out, const uint8_t* in, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = rgb_to_luma(in[3 * i], in[3 * i + 1], in[3 * i + 2]);
}

}  // namespace image_internal
}  // namespace stoker
