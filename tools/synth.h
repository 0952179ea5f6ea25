// Deterministic photo-like JPEGs for the demo and tests: smooth colour gradients, soft blobs,
// fractal value noise and per-pixel grain, so that entropy decoding costs about what it costs
// on real photographs (flat synthetic images decode unrealistically fast).
#pragma once

#include <cstdint>
#include <filesystem>

namespace stoker::cli {

struct SynthConfig {
  int images = 512;
  int classes = 8;
  int width = 640;  // about 0.3 megapixels by default; portrait/landscape vary per image
  int height = 480;
  int quality = 90;
  uint64_t seed = 0;
};

// Writes OUT/class_XX/img_XXXXX.jpg (an ImageFolder). Same options, same bytes.
void synthesize_image_folder(const std::filesystem::path& out, const SynthConfig& options);

}  // namespace stoker::cli
