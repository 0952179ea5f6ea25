// Helpers for the pipeline tests: a folder of noisy gradient JPEGs of varied sizes.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "stoker/image.h"
#include "stoker/rng.h"

namespace stoker::pipeline_testing {

// $STOKER_TEST_TMP (or /tmp) / NAME_<pid>, emptied.
inline std::filesystem::path fresh_folder(const std::string& name) {
  const char* tmp = std::getenv("STOKER_TEST_TMP");
  const auto root =
      std::filesystem::path(tmp ? tmp : "/tmp") / fmt::format("{}_{}", name, ::getpid());
  std::filesystem::remove_all(root);
  return root;
}

inline void write_file(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// ROOT/c<i % classes>/img<i>.jpg, image i of size (min_side + [0, width_spread)) x
// (min_side + [0, height_spread)) drawn from Rng(stream_key(seed, i)); pixel value
// x * x_gradient + y * y_gradient + [0, noise) (wrapping in uint8), JPEG quality 85.
struct JpegFolder {
  int images = 0;
  int classes = 1;
  uint64_t seed = 0;
  int min_side = 40;
  int width_spread = 200;
  int height_spread = 200;
  int x_gradient = 3;
  int y_gradient = 0;
  int noise = 40;
};

inline void write_jpeg_folder(const std::filesystem::path& root, const JpegFolder& f) {
  for (int i = 0; i < f.images; ++i) {
    Rng rng(stream_key(f.seed, i));
    const int w = f.min_side + static_cast<int>(rng.bounded(f.width_spread));
    const int h = f.min_side + static_cast<int>(rng.bounded(f.height_spread));
    std::vector<uint8_t> pixels(static_cast<size_t>(w) * h * 3);
    for (size_t p = 0; p < pixels.size(); ++p) {
      const size_t x = (p / 3) % w, y = p / 3 / w;
      pixels[p] = static_cast<uint8_t>(x * f.x_gradient + y * f.y_gradient + rng.bounded(f.noise));
    }
    write_file(root / fmt::format("c{}/img{:03d}.jpg", i % f.classes, i),
               encode_jpeg(pixels.data(), w, h, 3, 85));
  }
}

}  // namespace stoker::pipeline_testing
