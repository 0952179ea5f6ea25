// The per-sample transform: encoded bytes -> one augmented output slot of H x W pixels
// (output_height() x output_width(): height x width when set, else size x size).
//
// train: torchvision's RandomResizedCrop((H, W), scale, ratio) + RandomHorizontalFlip(flip_p);
// eval:  Resize(shorter side = resize, or floor(max(H, W) / crop_fraction); or exactly
//        resize_height x resize_width) + CenterCrop((H, W)).
// Then the augmentations of `ops` in order on the uint8 pixels (stoker/augment_ops.h:
// TrivialAugmentWide, RandAugment, AutoAugment, ColorJitter), then uint8 HWC (output kUint8)
// or CHW normalised by mean/std as float32 (kFloat32), or that float32 rounded to nearest-even
// float16 / bfloat16 (kFloat16 / kBFloat16); then RandomErasing (`erasing`, on the normalised
// values, before the rounding to 16 bits).
//
// Randomness comes only from the Rng passed in, keyed by (seed, epoch, sample index) by the
// caller, so a sample's output never depends on the thread that computed it.
// Draw order (train): up to 10 attempts of [uniform(scale), uniform(log ratio)], then
// bounded(H - h + 1) for the top, bounded(W - w + 1) for the left; then one uniform01() for
// the flip (flip when < flip_p). Eval draws nothing. Then each op's draws (augment_ops.h), then
// erasing's (when erasing.p > 0). With no ops and no erasing the draws, and so the bytes, are
// those of the plain train/eval transform.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stoker/augment_ops.h"
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

// ImageNet's per-channel mean and standard deviation (torchvision's): the default
// normalisation (Python's stoker.IMAGENET_MEAN / IMAGENET_STD).
inline constexpr std::array<double, 3> kImageNetMean = {0.485, 0.456, 0.406};
inline constexpr std::array<double, 3> kImageNetStd = {0.229, 0.224, 0.225};

// torchvision's InterpolationMode for the resize of the crop: bilinear (the default) and
// bicubic, antialiased as torchvision resizes PIL images and uint8 tensors
// (resize_antialiased), or nearest, as torchvision resizes tensors (resize_nearest; PIL's
// nearest rounds other coordinates). Only bilinear runs on the GPU.
enum class Interpolation { kBilinear, kBicubic, kNearest };

// "bilinear" | "bicubic" | "nearest"
Interpolation parse_interpolation(const std::string& name);
const char* to_string(Interpolation interpolation);

// Every default here is also the Python TransformConfig's (python/stoker reads them from this
// struct).
struct TransformConfig {
  TransformKind kind = TransformKind::kTrain;
  OutputKind output = OutputKind::kFloat32;
  int size = 224;
  int height = 0, width = 0;  // output H x W when both are set; else size x size
  int channels = 3;           // 3 (RGB) or 1 (grayscale)
  std::array<double, 2> scale = {0.08, 1.0};
  std::array<double, 2> ratio = {3.0 / 4.0, 4.0 / 3.0};
  double flip_p = 0.5;
  double crop_fraction = 0.875;  // eval: shorter side resized to floor(max(H, W) / crop_fraction)
  int resize = 0;                // eval: the shorter side's size when > 0 (Resize(resize))
  int resize_height = 0, resize_width = 0;  // eval: Resize((h, w)) to exactly h x w when set
  Interpolation interpolation = Interpolation::kBilinear;
  // Float outputs as [H, W, C] (JAX's and TensorFlow's layout, torch's channels_last) instead
  // of [C, H, W]; the same values. uint8 is [H, W, C] either way. CPU path only.
  bool channels_last = false;
  std::array<float, 3> mean = {static_cast<float>(kImageNetMean[0]),
                               static_cast<float>(kImageNetMean[1]),
                               static_cast<float>(kImageNetMean[2])};
  std::array<float, 3> std = {static_cast<float>(kImageNetStd[0]),
                              static_cast<float>(kImageNetStd[1]),
                              static_cast<float>(kImageNetStd[2])};
  std::vector<AugmentOp> ops;  // on the uint8 pixels after crop, resize and flip
  ErasingConfig erasing;       // on the output; off while erasing.p == 0
  DecodeConfig decode;
  // An eval transform decodes at scale 1 (torchvision's pixels, which a model's published
  // accuracy is measured with) unless this is set; decode.dct_scaling then applies as in train.
  bool eval_dct_scaling = false;

  int output_height() const { return height > 0 ? height : size; }
  int output_width() const { return width > 0 ? width : size; }
  // The decode options for this transform's kind (eval_dct_scaling applied).
  DecodeConfig decode_for_kind() const;
  // Ops, erasing, a non-square output, another interpolation than bilinear or channels_last:
  // what only the CPU path implements.
  bool has_cpu_only_steps() const;
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
  std::vector<float> normalized;    // float16 / bfloat16 output: the float32 values first
  std::vector<uint8_t> op_scratch;  // augment ops
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
  Box bounds;  // source taps clipped to these pixels (resize_antialiased's `bounds`)
  bool flip = false;
};

// A staged sample in a batch's staging area: `width` x `height` decoded pixels (HWC) at byte
// `offset`; width 0 marks a blank slot (skipped: its output is all zeros). An encoded slot
// (encoded_bytes > 0) holds that many bytes of a width x height JPEG at `offset` instead, for
// the GPU to decode; the resize reads its `roi` (sample's box and bounds: full-image pixels).
struct StagedRegion {
  size_t offset = 0;
  int width = 0, height = 0;
  StagedSample sample;
  size_t encoded_bytes = 0;
  Rect roi;
};

// The first half of transform_sample: probe, crop and flip draws (the same draws, so the same
// randomness), region + DCT-scaled decode into scratch.region. Adds to
// timings->decode_seconds.
StagedSample stage_sample(std::span<const uint8_t> bytes, const std::string& name,
                          const TransformConfig& config, Rng& rng, TransformScratch& scratch,
                          TransformTimings* timings = nullptr);

// A JPEG left encoded for the GPU to decode (AugmentMode::kDeferred with encoded staging): the
// whole image is width x height, and the resize reads only `roi` of it (the crop for train, the
// whole image for eval), which a decoder may decode alone.
struct EncodedStage {
  bool encoded = false;
  int width = 0, height = 0;
  Rect roi;
};

// stage_sample for a GPU decoder: the same draws; a JPEG that image::jpeg_gpu_decodable accepts
// is not decoded (*encoded says so, the box and bounds are in its full-resolution pixels);
// anything else is decoded into scratch.region as stage_sample does (encoded->encoded false).
// A bad file throws stage_sample's error. encoded nullptr: stage_sample (always decoded).
StagedSample stage_sample_or_encoded(std::span<const uint8_t> bytes, const std::string& name,
                                     const TransformConfig& config, Rng& rng,
                                     TransformScratch& scratch, EncodedStage* encoded,
                                     TransformTimings* timings = nullptr);

// The second half: resize, flip, the ops (their draws from `rng`, after stage_sample's), layout,
// dtype and erasing of a staged region into `out`.
void augment_staged(void* out, const DecodedRegion& region, const StagedSample& staged,
                    const TransformConfig& config, Rng& rng, TransformScratch& scratch);

}  // namespace stoker
