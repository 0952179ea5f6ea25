// timm's auto-augment policies (timm.data.auto_augment), run on uint8 HWC pixels in stoker's
// workers: RandAugment ("rand-m9-mstd0.5-inc1"), AutoAugment ("original", "originalr", "v0",
// "v0r", each with an optional "-mstd<x>") and AugMix ("augmix-m5-w4-d2").
//
// parse_timm_augment turns timm's config string into the ops, probabilities, magnitudes and
// hparams timm's own rand_augment_transform / auto_augment_transform /
// augment_and_mix_transform build from it (tests/python/test_timm.py compares the two parses).
// Each op call follows timm's AugmentOp.__call__: skip with probability 1 - prob, the magnitude
// drawn around its value (magnitude_std) and clipped to [0, magnitude_max], timm's
// level-to-argument rule (LEVEL_TO_ARG, level / 10 scaled per op, a random sign for the signed
// ops), then the op with PIL's arithmetic, as timm applies it to PIL images: ImageEnhance's
// blends in float32 truncated, ImageOps' lookup tables, Image.transform's bilinear / bicubic
// affine sampling with the fill colour img_mean. docs/transforms.md gives the measured
// agreement with timm's functions per op.
//
// The draws are stoker's Rng, keyed by (seed, epoch, sample index) by the caller, from timm's
// distributions, in this order:
//   an op call: uniform01() > prob skips it (when prob < 1); magnitude_std > 0: magnitude +
//     magnitude_std * normal, or uniform(0, magnitude) when magnitude_std is infinite; a
//     signed op: uniform01() > 0.5 negates; a geometric op with random resampling: bounded(2)
//     (0 bilinear, 1 bicubic).
//   RandAugment: num_layers ops, each bounded(ops) (with replacement), or with weights one
//     uniform01() per layer over the weights not yet taken (without replacement); then the
//     op calls in order.
//   AutoAugment: bounded(sub-policies), then its op calls.
//   AugMix: width Gamma(alpha) draws (the Dirichlet mixing weights), Beta(alpha, alpha) for
//     m, then per chain: bounded(3) + 1 for the depth when depth <= 0, bounded(ops) per
//     step, the op calls (prob 1).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "stoker/augment_ops.h"
#include "stoker/rng.h"

namespace stoker {

// The ops of timm's NAME_TO_OP that stoker runs (not GaussianBlur / GaussianBlurRand, whose
// PIL box-blur approximation it does not implement).
enum class TimmOp {
  kAutoContrast,
  kEqualize,
  kInvert,
  kRotate,
  kPosterize,
  kPosterizeIncreasing,
  kPosterizeOriginal,
  kSolarize,
  kSolarizeIncreasing,
  kSolarizeAdd,
  kColor,
  kColorIncreasing,
  kContrast,
  kContrastIncreasing,
  kBrightness,
  kBrightnessIncreasing,
  kSharpness,
  kSharpnessIncreasing,
  kShearX,
  kShearY,
  kTranslateX,
  kTranslateY,
  kTranslateXRel,
  kTranslateYRel,
  kDesaturate,
};
const char* to_string(TimmOp op);  // timm's name: "AutoContrast", ..., "Desaturate"
TimmOp parse_timm_op(const std::string& name);

// How the geometric ops resample: timm's default draws bilinear or bicubic per op call; the
// training script's interpolation fixes one.
enum class TimmResample { kRandom, kBilinear, kBicubic };

// timm's hparams (create_transform's aa_params).
struct TimmHparams {
  double translate_const = 250;  // TranslateX/Y: pixels at level 10 (timm: int(0.45 * size))
  double translate_pct = 0.45;   // TranslateX/YRel: share of the side at level 10 (AugMix 0.3)
  std::array<uint8_t, 3> fill = {128, 128, 128};  // img_mean: what the geometry leaves empty
  TimmResample resample = TimmResample::kRandom;
  double magnitude_std = 0;  // > 0: magnitude ~ N(m, std) per call; infinity: U(0, m)
  double magnitude_max = 0;  // magnitudes are clipped to [0, magnitude_max], 0 meaning 10

  void validate() const;
};

struct TimmOpSpec {
  TimmOp op = TimmOp::kAutoContrast;
  double prob = 0.5;
  double magnitude = 10;
};

struct TimmAugment {
  enum class Kind { kRandAugment, kAutoAugment, kAugMix };
  Kind kind = Kind::kRandAugment;
  std::string config;           // the string it was parsed from
  std::vector<TimmOpSpec> ops;  // RandAugment, AugMix: the ops drawn from
  std::vector<double> weights;  // RandAugment: choice weights (empty: uniform, with replacement)
  int num_layers = 2;           // RandAugment: ops per image
  std::vector<std::array<TimmOpSpec, 2>> policy;  // AutoAugment: the sub-policies
  int width = 3;                                  // AugMix: chains
  int depth = -1;                                 // AugMix: ops per chain (<= 0: 1 to 3, drawn)
  double alpha = 1;                               // AugMix: Dirichlet and Beta parameter
  bool blended = false;                           // AugMix: timm's blended variant
  TimmHparams hparams;

  void validate() const;
};

// timm's config string with the hparams the training script gives (timm's create_transform
// sets translate_const, fill and resample from the image size, mean and interpolation, and
// translate_pct = 0.3 for AugMix: stoker.timm.create_transform does the same). Throws
// stoker::Error naming the string and the section it cannot read.
TimmAugment parse_timm_augment(const std::string& config, const TimmHparams& hparams = {});

// timm's LEVEL_TO_ARG for a level already clipped: the op's argument, negated for a signed op
// when `negate` (the outcome of timm's _randomly_negate).
double timm_level_to_arg(TimmOp op, double level, const TimmHparams& hparams, bool negate);
bool timm_op_is_signed(TimmOp op);
bool timm_op_is_geometric(TimmOp op);

// timm's op function with its argument (NAME_TO_OP[name](img, arg, fillcolor, resample)),
// in place; resample kRandom is not allowed here (the draw happens in the op call).
void apply_timm_op(TimmOp op, double arg, const PixelImage& image, std::array<uint8_t, 3> fill,
                   TimmResample resample, std::vector<uint8_t>& scratch);

// What an op call applied, for tests and traces.
struct TimmApplied {
  TimmOp op;
  double arg;
  TimmResample resample;
};

// Draws and applies one TimmAugment (the draw order above).
void apply_timm_augment(const TimmAugment& augment, Rng& rng, const PixelImage& image,
                        std::vector<uint8_t>& scratch, std::vector<TimmApplied>* trace = nullptr);

}  // namespace stoker
