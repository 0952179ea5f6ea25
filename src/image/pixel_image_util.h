// Small helpers over a PixelImage shared by the torchvision ops (augment_ops.cc) and timm's
// (timm_augment.cc).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "stoker/augment_ops.h"

namespace stoker::pixel_util {

inline size_t value_count(const PixelImage& im) {
  return static_cast<size_t>(im.width) * im.height * im.channels;
}

// The smallest and largest value of each channel (autocontrast's range).
struct ChannelRange {
  std::array<uint8_t, 3> lo{255, 255, 255}, hi{0, 0, 0};
};
inline ChannelRange channel_range(const PixelImage& im) {
  ChannelRange r;
  const int ch = im.channels;
  const size_t n = value_count(im);
  for (size_t i = 0; i < n; i += static_cast<size_t>(ch)) {
    for (int c = 0; c < ch; ++c) {
      r.lo[c] = std::min(r.lo[c], im.pixels[i + c]);
      r.hi[c] = std::max(r.hi[c], im.pixels[i + c]);
    }
  }
  return r;
}

}  // namespace stoker::pixel_util
