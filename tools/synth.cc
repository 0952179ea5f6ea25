#include "synth.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <vector>

#include "command.h"
#include "stoker/error.h"
#include "stoker/image.h"
#include "stoker/rng.h"
#include "util/check.h"
#include "validators.h"

namespace stoker::cli {
namespace {

// Smooth value noise on an integer lattice: hashed corner values, smoothstep interpolation.
double lattice(uint64_t key, int64_t x, int64_t y) {
  return static_cast<double>(mix64(key ^ mix64(static_cast<uint64_t>(x) * 0x9E3779B97F4A7C15ull +
                                               static_cast<uint64_t>(y))) >>
                             11) *
         0x1.0p-53;
}

double value_noise(uint64_t key, double x, double y) {
  const double fx = std::floor(x), fy = std::floor(y);
  const auto ix = static_cast<int64_t>(fx), iy = static_cast<int64_t>(fy);
  double tx = x - fx, ty = y - fy;
  tx = tx * tx * (3 - 2 * tx);
  ty = ty * ty * (3 - 2 * ty);
  const double a = lattice(key, ix, iy), b = lattice(key, ix + 1, iy);
  const double c = lattice(key, ix, iy + 1), d = lattice(key, ix + 1, iy + 1);
  return (a + (b - a) * tx) * (1 - ty) + (c + (d - c) * tx) * ty;
}

std::vector<uint8_t> render(uint64_t key, int width, int height) {
  Rng rng(key);
  double top[3], bottom[3];
  for (int c = 0; c < 3; ++c) {
    top[c] = rng.uniform(40, 230);
    bottom[c] = rng.uniform(20, 200);
  }
  struct Blob {
    double cx, cy, rx, ry, color[3], softness;
  };
  std::vector<Blob> blobs(5 + rng.bounded(8));
  for (auto& b : blobs) {
    b.cx = rng.uniform(0, width);
    b.cy = rng.uniform(0, height);
    b.rx = rng.uniform(0.05, 0.4) * width;
    b.ry = rng.uniform(0.05, 0.4) * height;
    for (double& c : b.color) c = rng.uniform(0, 255);
    b.softness = rng.uniform(0.05, 0.5);
  }
  const uint64_t noise_key = rng.next();
  const uint64_t grain_key = rng.next();
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    const double t = static_cast<double>(y) / height;
    for (int x = 0; x < width; ++x) {
      double rgb[3];
      for (int c = 0; c < 3; ++c) rgb[c] = top[c] + (bottom[c] - top[c]) * t;
      for (const auto& b : blobs) {
        const double dx = (x - b.cx) / b.rx, dy = (y - b.cy) / b.ry;
        const double r = std::sqrt(dx * dx + dy * dy);
        const double alpha = std::clamp((1.0 - r) / b.softness, 0.0, 1.0) * 0.85;
        for (int c = 0; c < 3; ++c) rgb[c] += (b.color[c] - rgb[c]) * alpha;
      }
      // Texture at three scales, like foliage, fabric or gravel in a photograph.
      const double texture = value_noise(noise_key, x / 48.0, y / 48.0) * 0.5 +
                             value_noise(noise_key + 1, x / 12.0, y / 12.0) * 0.3 +
                             value_noise(noise_key + 2, x / 3.0, y / 3.0) * 0.2;
      const double shade = 0.7 + 0.6 * texture;
      const uint64_t grain = mix64(grain_key ^ (static_cast<uint64_t>(y) << 32 | x));
      for (int c = 0; c < 3; ++c) {
        const double g = static_cast<double>((grain >> (c * 16)) & 0xff) / 255.0 - 0.5;
        const double v = rgb[c] * shade + g * 18.0;
        pixels[(static_cast<size_t>(y) * width + x) * 3 + c] =
            static_cast<uint8_t>(std::clamp(std::lround(v), 0l, 255l));
      }
    }
  }
  return pixels;
}

}  // namespace

void synthesize_image_folder(const std::filesystem::path& out, const SynthConfig& options) {
  STOKER_CHECK_ARG(options.images >= 1 && options.classes >= 1,
                   "synth: need images and classes >= 1");
  STOKER_CHECK_ARG(options.width >= 1 && options.height >= 1, "synth: bad image size");
  for (int i = 0; i < options.images; ++i) {
    const uint64_t key = stream_key(options.seed, 0x73796e7468ull, static_cast<uint64_t>(i));
    // Every fourth image is portrait, and sizes vary by up to 15 % as real photo sets do.
    Rng shape(key ^ 0x5151);
    const double jitter = shape.uniform(0.85, 1.15);
    int w = static_cast<int>(options.width * jitter), h = static_cast<int>(options.height * jitter);
    if (i % 4 == 3) std::swap(w, h);
    const auto pixels = render(key, w, h);
    const auto jpeg = encode_jpeg(pixels.data(), w, h, 3, options.quality);
    const auto dir = out / fmt::format("class_{:02d}", i % options.classes);
    std::filesystem::create_directories(dir);
    const auto path = dir / fmt::format("img_{:05d}.jpg", i);
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(jpeg.data()),
               static_cast<std::streamsize>(jpeg.size()));
    STOKER_CHECK(file.good(), "{}: cannot write", path.string());
  }
}

namespace {

class Synth : public Command {
 public:
  explicit Synth(CLI::App& app) {
    cmd_ = app.add_subcommand("synth", "write a deterministic photo-like JPEG image folder");
    cmd_->add_option("OUT", out_, "output folder")->required();
    cmd_->add_option("--images", options_.images, "images")->check(at_least(1));
    cmd_->add_option("--classes", options_.classes, "classes")->check(at_least(1));
    cmd_->add_option("--width", options_.width, "width")->check(at_least(1));
    cmd_->add_option("--height", options_.height, "height")->check(at_least(1));
    cmd_->add_option("--quality", options_.quality, "JPEG quality")->check(between(1, 100));
    cmd_->add_option("--seed", options_.seed, "seed");
  }

  std::optional<int> run() override {
    if (!cmd_->parsed()) return std::nullopt;
    synthesize_image_folder(out_, options_);
    fmt::print("synth: wrote {} images in {} classes to {}\n", options_.images, options_.classes,
               out_);
    return 0;
  }

 private:
  CLI::App* cmd_ = nullptr;
  std::string out_;
  SynthConfig options_;
};

}  // namespace

std::unique_ptr<Command> add_synth_command(CLI::App& app) { return std::make_unique<Synth>(app); }

}  // namespace stoker::cli
