// The per-sample transform: encoded bytes -> one augmented output slot.
//
// train: torchvision's RandomResizedCrop(size, scale, ratio) + RandomHorizontalFlip(flip_p);
// eval:  Resize(shorter side = floor(size / crop_fraction)) + CenterCrop(size).
// Then uint8 HWC (output kUint8) or CHW normalised by mean/std as float32 (kFloat32), or that
// float32 rounded to nearest-even float16 / bfloat16 (kFloat16 / kBFloat16).
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
// float32 / float16 / bfloat16 NCHW normalised | uint8 NHWC. The values are part of the
// contract with the GPU kernels (they select the output type there): append, never reorder.
enum class OutputKind { kFloat32, kUint8, kFloat16, kBFloat16 };

TransformKind parse_transform_kind(const std::string& name);  // "train" | "eval"
// "float32" | "uint8" | "float16" | "bfloat16"
OutputKind parse_output_kind(const std::string& name);
const char* to_string(OutputKind output);

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
  DecodeConfig decode;

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
  std::vector<float> normalized;  // float16 / bfloat16 output: the float32 values first
};

// CPU seconds of the two stages, accumulated by transform_sample when non-null.
struct TransformTimings {
  double decode_seconds = 0;
  double augment_seconds = 0;
};

// Decodes and augments one sample into `out` (config.sample_bytes() bytes). The same as
// stage_sample followed by augment_staged.
void transform_sample(void* out, std::span<const uint8_t> bytes, const std::string& name,
                      const TransformConfig& config, Rng& rng, TransformScratch& scratch,
                      TransformTimings* timings = nullptr);

// A sample decoded for a deferred augmentation (a batched GPU kernel): the crop window and
// flip, in the coordinates of the pixels decoded into TransformScratch::region.
struct StagedSample {
  Box box;     // resized onto size x size
  Box bounds;  // source taps clipped to these pixels (resize_bilinear's `bounds`)
  bool flip = false;
};

// A staged sample in a batch's staging area: `width` x `height` decoded pixels (HWC) at byte
// `offset`; width 0 marks a blank slot (skipped: its output is all zeros).
struct StagedRegion {
  size_t offset = 0;
  int width = 0, height = 0;
  StagedSample sample;
};

// The first half of transform_sample: probe, crop and flip draws (the same draws, so the same
// randomness), region + DCT-scaled decode into scratch.region. Adds to
// timings->decode_seconds.
StagedSample stage_sample(std::span<const uint8_t> bytes, const std::string& name,
                          const TransformConfig& config, Rng& rng, TransformScratch& scratch,
                          TransformTimings* timings = nullptr);

// The second half: resize, flip, layout and dtype of a staged region into `out`.
void augment_staged(void* out, const DecodedRegion& region, const StagedSample& staged,
                    const TransformConfig& config, TransformScratch& scratch);

}  // namespace stoker
