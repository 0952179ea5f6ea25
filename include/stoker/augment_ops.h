// torchvision's image augmentations on uint8 HWC pixels: the primitive ops of its
// auto-augment space and the policies that draw them (TrivialAugmentWide, RandAugment,
// AutoAugment with the ImageNet policy, ColorJitter), plus RandomErasing's draw.
//
// Each primitive is the arithmetic of torchvision.transforms.v2.functional on a uint8 tensor
// (float32 intermediate values, truncation back to uint8 where torchvision's .to(uint8)
// truncates, round-half-even where it rounds), so that for the same parameters the outputs
// agree; docs/transforms.md gives the measured agreement per op. The draws use stoker's Rng,
// keyed by (seed, epoch, sample index) by the caller, in the order documented per policy, so
// they are torchvision's distributions but not torch's random stream.
//
// Geometry ops (shear, translate, rotate) sample with nearest interpolation and fill 0, the
// defaults of the auto-augment transforms.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stoker/rng.h"

namespace stoker {

struct TimmAugment;  // stoker/timm_augment.h

// The ops of torchvision's auto-augment spaces (and ColorJitter's hue). The magnitude of
// apply_pixel_op has the meaning torchvision's _apply_image_or_video_transform gives it:
//   ShearX/ShearY: shear factor m (affine shear of degrees(atan(m)), centre at the corner)
//   TranslateX/TranslateY: int(m) pixels        Rotate: m degrees (counter-clockwise)
//   Brightness/Color/Contrast/Sharpness: factor 1 + m (Color is saturation)
//   Posterize: int(m) bits                      Solarize: threshold 255 * m
//   Hue: hue factor m in [-0.5, 0.5]            Identity/AutoContrast/Equalize/Invert: none
//   VerticalFlip, Grayscale (rgb_to_grayscale, 3 channels kept): none
enum class PixelOp {
  kIdentity,
  kShearX,
  kShearY,
  kTranslateX,
  kTranslateY,
  kRotate,
  kBrightness,
  kColor,
  kContrast,
  kSharpness,
  kPosterize,
  kSolarize,
  kAutoContrast,
  kEqualize,
  kInvert,
  kHue,
  kVerticalFlip,
  kGrayscale,
};
const char* to_string(PixelOp op);  // torchvision's name: "ShearX", ..., "Hue"
PixelOp parse_pixel_op(const std::string& name);

// An image being augmented: `width` x `height` pixels of `channels` (1 or 3) bytes, HWC.
struct PixelImage {
  uint8_t* pixels = nullptr;
  int width = 0, height = 0, channels = 3;
};

// Applies one op in place. `scratch` is reused between calls (grown as needed).
void apply_pixel_op(PixelOp op, double magnitude, const PixelImage& image,
                    std::vector<uint8_t>& scratch);

// One augmentation step of a transform list, after the crop, the resize and the flip.
struct AugmentOp {
  enum class Kind {
    kTrivialAugmentWide,
    kRandAugment,
    kAutoAugment,
    kColorJitter,
    kVerticalFlip,  // RandomVerticalFlip(p)
    kGrayscale,     // RandomGrayscale(p): rgb_to_grayscale, kept 3 channels
    kGaussianBlur,  // GaussianBlur(kernel_size, sigma)
    kRandomApply,   // RandomApply(children, p)
    kTimm,          // timm's auto_augment string (stoker/timm_augment.h)
  };
  Kind kind = Kind::kTrivialAugmentWide;
  // TrivialAugmentWide, RandAugment: magnitude bins (torchvision default 31).
  int num_magnitude_bins = 31;
  // RandAugment: ops per image and the magnitude bin they use.
  int num_ops = 2;
  int magnitude = 9;
  // ColorJitter: factor ranges, each drawn uniformly when set (brightness, contrast,
  // saturation: 0 <= lo <= hi; hue: -0.5 <= lo <= hi <= 0.5).
  std::optional<std::array<double, 2>> brightness, contrast, saturation, hue;
  // RandomVerticalFlip, RandomGrayscale, RandomApply: the probability of applying.
  double p = 0.5;
  // GaussianBlur: odd kernel sizes (x, y) and the range sigma is drawn from (one sigma for
  // both axes, as torchvision draws it).
  std::array<int, 2> kernel_size = {3, 3};
  std::array<double, 2> sigma = {0.1, 2.0};
  // RandomApply: the steps applied together, or none of them.
  std::vector<AugmentOp> children;
  // kTimm: the parsed policy.
  std::shared_ptr<const TimmAugment> timm;

  // Throws stoker::Error naming the field.
  void validate() const;
};

// What an op drew and applied, for tests and traces: apply_pixel_op(op, magnitude) in order.
struct AppliedOp {
  PixelOp op;
  double magnitude;
};

// Draws and applies one AugmentOp. Draw order:
//   TrivialAugmentWide: bounded(14) for the op, then for an op with magnitudes
//     bounded(num_magnitude_bins) for the bin and, for a signed op, uniform01() <= 0.5 to
//     negate it.
//   RandAugment: num_ops times: bounded(14) for the op, then the sign draw for a signed op.
//   AutoAugment (ImageNet policy): bounded(25) for the sub-policy, then per step
//     uniform01() <= p to apply it, then the sign draw for a signed op.
//   ColorJitter: a Fisher-Yates permutation of the 4 adjustments (bounded(i + 1), i = 3..1),
//     then uniform(lo, hi) for brightness, contrast, saturation, hue (those set), then the
//     adjustments in the permuted order.
//   RandomVerticalFlip, RandomGrayscale: uniform01() < p applies it.
//   GaussianBlur: uniform(sigma[0], sigma[1]).
//   RandomApply: uniform01() < p, then the children's draws in order.
//   timm: stoker/timm_augment.h's order (its ops are traced there, not here).
// Appends what was applied to `trace` when non-null.
void apply_augment_op(const AugmentOp& op, Rng& rng, const PixelImage& image,
                      std::vector<uint8_t>& scratch, std::vector<AppliedOp>* trace = nullptr);

// torchvision's RandomErasing(p, scale, ratio, value) on the output (after Normalize), or
// timm's (timm.data.RandomErasing: probability, min/max_area = scale, min/max_aspect = ratio,
// mode, min_count, max_count) when `timm` is set.
struct ErasingConfig {
  // What an erased box holds: `value` (torchvision; timm's 'const' is value 0), one standard
  // normal draw per channel (timm's 'rand'), or one per value (timm's 'pixel').
  enum class Mode { kConst, kRand, kPixel };

  double p = 0;  // 0: off
  std::array<double, 2> scale = {0.02, 0.33};
  std::array<double, 2> ratio = {0.3, 3.3};
  std::array<float, 3> value = {0, 0, 0};  // per channel, in the output's units
  Mode mode = Mode::kConst;
  bool timm = false;                 // timm's draw of the boxes (below)
  int min_count = 1, max_count = 1;  // timm: boxes per image, drawn in [min_count, max_count]

  void validate() const;
};

// At most this many boxes per image (timm's max_count).
inline constexpr int kMaxEraseBoxes = 16;

// A rectangle to erase (height 0: none).
struct EraseBox {
  int top = 0, left = 0, height = 0, width = 0;
};
struct ErasePlan {
  int count = 0;
  std::array<EraseBox, kMaxEraseBoxes> boxes;
};

// The boxes to erase. torchvision's draws: uniform01() < p to erase, then up to 10 attempts of
// [uniform(scale), uniform(log ratio)], then bounded(H - h + 1) for the top and
// bounded(W - w + 1) for the left (its make_params); no box after 10 failed attempts.
// timm's: uniform01() > p skips; the count (bounded(max - min + 1) + min when they differ);
// per box up to 10 attempts of [uniform(scale) * area / count, uniform(log ratio)], the box
// taken when h < H and w < W, then the top and left as above. The fill values of kRand and
// kPixel are drawn after all the boxes, box by box, channel-major.
ErasePlan sample_erasing(Rng& rng, int width, int height, const ErasingConfig& config);

}  // namespace stoker
