// Pixel layout kernels: HWC copy with optional mirror, float CHW normalisation, RGB -> L.

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

void normalize_to_chw(float* out, const uint8_t* in, int width, int height, int channels, bool flip,
                      const float* mean, const float* std) {
  // One table per channel, computed with exactly torchvision's float32 operations:
  // ToTensor divides by 255 in float32, Normalize subtracts the mean then divides by the std
  // (separately rounded; -ffp-contract=off keeps the compiler from fusing them). Every output
  // value is then bit-identical to torchvision's.
  STOKER_CHECK(channels >= 1 && channels <= 4, "normalize_to_chw: {} channels", channels);
  std::array<std::array<float, 256>, 4> lut;
  for (int c = 0; c < channels; ++c) {
    for (int v = 0; v < 256; ++v) {
      const float x = static_cast<float>(v) / 255.0f;
      lut[c][v] = (x - mean[c]) / std[c];
    }
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
