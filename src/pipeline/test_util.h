// Helpers for the pipeline tests: a folder of noisy gradient JPEGs of varied sizes, datasets in
// memory (temporary folders: util/test_util.h).
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "stoker/dataset.h"
#include "stoker/error.h"
#include "stoker/image.h"
#include "stoker/loader.h"
#include "stoker/rng.h"
#include "util/check.h"
#include "util/test_util.h"

namespace stoker::test {

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

// A loader config for one rank of a world of one.
inline LoaderConfig one_rank_config(int threads, int batch, int size, uint64_t seed = 0) {
  LoaderConfig c;
  c.batch_size = batch;
  c.threads = threads;
  c.rank = 0;
  c.world_size = 1;
  c.seed = seed;
  c.transform.size = size;
  return c;
}

// JPEGs of random noise held in memory: image i is (side + [0, spread]) x (side + [0, spread])
// drawn from Rng(stream_key(seed, i)) (square `side` when spread is 0), label i % 2.
struct MemoryImages {
  int images = 0;
  int side = 16;
  int spread = 0;
  uint64_t seed = 0;
  int quality = 90;
  std::chrono::microseconds read_delay{0};  // each read sleeps this long (a slow store)
  int bad_index = -1;                       // this sample's bytes are not an image
  bool all_bad = false;                     // no sample's bytes are an image
  int io_error_index = -1;                  // reading this sample fails with EIO ...
  int io_failures = 0;                      // ... this many times (then it reads fine)
};

class MemoryDataset : public Dataset {
 public:
  explicit MemoryDataset(const MemoryImages& spec)
      : read_delay_(spec.read_delay),
        io_error_index_(spec.io_error_index),
        io_failures_left_(spec.io_failures) {
    for (int i = 0; i < spec.images; ++i) {
      Rng rng(stream_key(spec.seed, i));
      int w = spec.side, h = spec.side;
      if (spec.spread > 0) {
        w += static_cast<int>(rng.bounded(spec.spread + 1));
        h += static_cast<int>(rng.bounded(spec.spread + 1));
      }
      std::vector<uint8_t> pixels(static_cast<size_t>(w) * h * 3);
      for (auto& p : pixels) p = static_cast<uint8_t>(rng.bounded(256));
      images_.push_back(encode_jpeg(pixels.data(), w, h, 3, spec.quality));
    }
    if (spec.bad_index >= 0) images_[static_cast<size_t>(spec.bad_index)] = {'n', 'o', 't'};
    if (spec.all_bad) {
      for (auto& image : images_) image = {'n', 'o', 't'};
    }
  }
  int64_t size() const override { return static_cast<int64_t>(images_.size()); }
  int64_t label(int64_t index) const override { return index % 2; }
  std::string name(int64_t index) const override { return fmt::format("mem{}.jpg", index); }
  void read(int64_t index, std::vector<uint8_t>& out) const override {
    reads_.fetch_add(1);
    if (read_delay_.count() > 0) std::this_thread::sleep_for(read_delay_);
    if (index == io_error_index_) {
      io_error_reads_.fetch_add(1);
      if (io_failures_left_.fetch_sub(1) > 0) {
        STOKER_THROW_IO(EIO, name(index), "{}: {}", name(index), std::strerror(EIO));
      }
    }
    out = images_[static_cast<size_t>(index)];
  }
  const std::vector<std::string>& classes() const override { return classes_; }
  std::string fingerprint() const override { return "00000000000000aa"; }
  std::string describe() const override { return "memory"; }

  int64_t reads() const { return reads_.load(); }
  int64_t io_error_reads() const { return io_error_reads_.load(); }  // reads of io_error_index

 private:
  std::vector<std::vector<uint8_t>> images_;
  std::chrono::microseconds read_delay_;
  int io_error_index_;
  mutable std::atomic<int> io_failures_left_;
  mutable std::atomic<int64_t> io_error_reads_{0};
  std::vector<std::string> classes_ = {"a", "b"};
  mutable std::atomic<int64_t> reads_{0};
};

// One rank of one, one worker thread, batches of `batch_size`: what the stage tests build on.
inline LoaderConfig one_rank_config(int batch_size) {
  LoaderConfig c;
  c.batch_size = batch_size;
  c.threads = 1;
  c.rank = 0;
  c.world_size = 1;
  return c;
}

}  // namespace stoker::test
