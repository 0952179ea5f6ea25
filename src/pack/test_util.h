// Helpers of the packed-dataset tests (src/pack/packer_test.cc, src/io/packed_dataset_test.cc):
// folders of textured JPEGs, packing them, and reading files back.
#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/test_util.h"
#include "stoker/dataset.h"
#include "stoker/image.h"
#include "stoker/packed.h"

namespace stoker::test {

namespace fs = std::filesystem;

inline std::vector<uint8_t> slurp(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

inline void spit(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A textured picture (gradients, checks and noise), deterministic per seed.
inline std::vector<uint8_t> picture(int width, int height, int seed) {
  std::vector<uint8_t> p(static_cast<size_t>(width) * height * 3);
  uint32_t state = 977u * seed + 1;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < 3; ++c) {
        state = state * 1664525u + 1013904223u;
        const int v = (x * (2 + c) + y * (4 - c) + seed * 31 + (x / 8 + y / 8) % 2 * 50 +
                       static_cast<int>(state >> 29)) %
                      256;
        p[(static_cast<size_t>(y) * width + x) * 3 + c] = static_cast<uint8_t>(v);
      }
    }
  }
  return p;
}

struct Folder {
  TempDir dir;
  fs::path data;  // dir/data: class_0/img_00.jpg, ...
  fs::path out;   // dir/out: where packs go
};

// `count` JPEGs in 3 classes, sizes varying (landscape and portrait), index order = k.
inline std::unique_ptr<Folder> make_folder(int count, int base = 96) {
  auto f = std::make_unique<Folder>();
  f->data = f->dir.path() / "data";
  f->out = f->dir.path() / "out";
  for (int k = 0; k < count; ++k) {
    const int w = base + 8 * (k % 5), h = base - 16 + 8 * (k % 3);
    const auto pixels = k % 2 == 0 ? picture(w, h, k) : picture(h, w, k);
    const auto jpeg = k % 2 == 0 ? encode_jpeg(pixels.data(), w, h, 3, 90)
                                 : encode_jpeg(pixels.data(), h, w, 3, 90);
    const fs::path file =
        f->data / fmt::format("class_{}", k % 3) / fmt::format("img_{:02d}.jpg", k);
    fs::create_directories(file.parent_path());
    spit(file, jpeg);
  }
  return f;
}

inline std::shared_ptr<Dataset> open_source(const fs::path& data) {
  return open_image_folder(data, ImageFolderConfig{.cache = "off"});
}

inline PackResult pack(const fs::path& data, const fs::path& out, PackConfig options) {
  auto source = open_source(data);
  return pack_dataset(*source, data.string(), out, options);
}

// Every file of a folder, by name, but the writer's lock (.pack.lock: not part of the pack).
inline std::map<std::string, std::vector<uint8_t>> files_of(const fs::path& dir) {
  std::map<std::string, std::vector<uint8_t>> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() == ".pack.lock") continue;
    files[e.path().filename().string()] = slurp(e.path());
  }
  return files;
}

// Decodes an encoded payload whole at scale 1.
inline DecodedRegion decode_all(const std::vector<uint8_t>& bytes) {
  const ImageHeader h = probe_image(bytes, "x");
  DecodedRegion r;
  DecodeConfig options;
  options.dct_scaling = false;
  decode_region(r, bytes, h, Rect{0, 0, h.width, h.height}, h.width, h.height, 3, "x", options);
  return r;
}

}  // namespace stoker::test
