// The per-sample transform: encoded bytes -> one augmented output slot.
//
// train: torchvision's RandomResizedCrop(size, scale, ratio) + RandomHorizontalFlip(flip_p);
// eval:  Resize(shorter side = floor(size / crop_fraction)) + CenterCrop(size).
// Then uint8 HWC (output kUint8) or float32 CHW normalised by mean/std (kFloat32).
//
// Randomness comes only from the Rng passed in, keyed by (seed, epoch, sample index) by the
// caller, so a sample's output never depends on the thread that computed it.
// Draw order (train): up to 10 attempts of [uniform(scale), uniform(log ratio)], then
// bounded(H - h + 1) for the top, bounded(W - w + 1) for the left; then one uniform01() for
// the flip (flip when < flip_p). Eval draws nothing.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stoker/image.h"
#include "stoker/rng.h"

namespace stoker {

enum class TransformKind { kTrain, kEval };
enum class OutputKind { kFloat32, kUint8 };  // float32 NCHW normalised | uint8 NHWC

TransformKind parse_transform_kind(const std::string& name);  // "train" | "eval"
OutputKind parse_output_kind(const std::string& name);        // "float32" | "uint8"

struct TransformConfig {
  TransformKind kind = TransformKind::kTrain;
  OutputKind output = OutputKind::kFloat32;
  int size = 224;
  int channels = 3;  // 3 (RGB) or 1 (grayscale)
  std::array<double, 2> scale = {0.08, 1.0};
  std::array<double, 2> ratio = {3.0 / 4.0, 4.0 / 3.0};
  double flip_p = 0.5;
  double crop_fraction = 0.875;  // eval: shorter side resized to floor(size / crop_fraction)
  std::array<float, 3> mean = {0.485f, 0.456f, 0.406f};
  std::array<float, 3> std = {0.229f, 0.224f, 0.225f};
  DecodeOptions decode;

  // Bytes of one sample's output slot.
  size_t sample_bytes() const;
  // Throws stoker::Error naming the offending field.
  void validate() const;
};

// torchvision's RandomResizedCrop.get_params + the flip draw. Integer crop in full-res pixels.
struct CropParams {
  Rect crop;
  bool flip = false;
};
CropParams sample_train_crop(Rng& rng, int width, int height, const TransformConfig& config);

// Per-thread scratch, reused across samples.
struct TransformScratch {
  DecodedRegion region;
  std::vector<uint8_t> resized;
  std::vector<uint8_t> resize_tmp;
};

// CPU seconds of the two stages, accumulated by transform_sample when non-null.
struct TransformTimings {
  double decode_seconds = 0;
  double augment_seconds = 0;
};

// Decodes and augments one sample into `out` (config.sample_bytes() bytes).
void transform_sample(void* out, std::span<const uint8_t> bytes, const std::string& name,
                      const TransformConfig& config, Rng& rng, TransformScratch& scratch,
                      TransformTimings* timings = nullptr);

}  // namespace stoker
