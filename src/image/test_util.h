// Helpers shared by the image layer's tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "stoker/image.h"

namespace stoker::test {

inline std::string fixture(const std::string& name) {
  return std::string(STOKER_FIXTURES) + "/image/" + name;
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// Decodes a whole image at scale 1.
inline DecodedRegion decode_all(const std::vector<uint8_t>& bytes, const std::string& name,
                                int channels = 3) {
  const ImageHeader h = probe_image(bytes, name);
  DecodedRegion r;
  DecodeConfig options;
  options.dct_scaling = false;
  decode_region(r, bytes, h, Rect{0, 0, h.width, h.height}, h.width, h.height, channels, name,
                options);
  return r;
}

// A deterministic test picture: gradients plus texture, so filters and crops are visible.
inline std::vector<uint8_t> synthetic(int width, int height, int channels, int seed = 0) {
  std::vector<uint8_t> p(static_cast<size_t>(width) * height * channels);
  uint32_t state = 12345u + seed;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) {
        state = state * 1664525u + 1013904223u;
        const int base = (x * (3 + c) + y * (5 - c) + seed * 17) % 256;
        const int noise = static_cast<int>(state >> 28) - 8;
        const int v = (base + (x / 16 + y / 16) % 2 * 40 + noise + 256) % 256;
        p[(static_cast<size_t>(y) * width + x) * channels + c] = static_cast<uint8_t>(v);
      }
    }
  }
  return p;
}

struct Diff {
  int max = 0;
  double mean = 0;
};

inline Diff diff(const uint8_t* a, const uint8_t* b, size_t n) {
  Diff d;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const int e = std::abs(int{a[i]} - int{b[i]});
    d.max = std::max(d.max, e);
    sum += e;
  }
  d.mean = n > 0 ? sum / n : 0;
  return d;
}

}  // namespace stoker::test
