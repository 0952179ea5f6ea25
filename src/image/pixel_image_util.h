// Small helpers over a PixelImage shared by the torchvision ops (augment_ops.cc) and timm's
// (timm_augment.cc).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

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

// k counter-clockwise quarter turns in place (torch.rot90, PIL's Image.transpose): k = 2 of any
// image, k = 1 or 3 of a square one.
inline void rot90(const PixelImage& im, int k, std::vector<uint8_t>& scratch) {
  const int w = im.width, h = im.height, ch = im.channels;
  scratch.assign(im.pixels, im.pixels + value_count(im));
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      int sy = h - 1 - y, sx = w - 1 - x;  // k == 2
      if (k == 1) sy = x, sx = w - 1 - y;
      if (k == 3) sy = h - 1 - x, sx = y;
      std::memcpy(im.pixels + (static_cast<size_t>(y) * w + x) * ch,
                  scratch.data() + (static_cast<size_t>(sy) * w + sx) * ch,
                  static_cast<size_t>(ch));
    }
  }
}

// The exact cases torchvision's rotate and PIL's Image.rotate both take before sampling:
// `degrees` % 360 (Python's, into *angle) of 0 (nothing), 180, or 90 / 270 of a square image
// (rot90). True when done; false leaves the rotation by *angle to the caller's sampler.
inline bool rotate_exactly(const PixelImage& im, double degrees, double* angle,
                           std::vector<uint8_t>& scratch) {
  double a = std::fmod(degrees, 360.0);
  if (a < 0) a += 360.0;
  *angle = a;
  if (a == 0) return true;
  if (a == 180) {
    rot90(im, 2, scratch);
    return true;
  }
  if (im.width == im.height && (a == 90 || a == 270)) {
    rot90(im, a == 90 ? 1 : 3, scratch);
    return true;
  }
  return false;
}

}  // namespace stoker::pixel_util
