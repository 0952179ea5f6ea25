// MixUp and CutMix on a batch (torchvision.transforms.v2.MixUp / CutMix), done by the loader's
// workers: the batch's slots are mixed in pairs (2k, 2k + 1), each pair by the worker that
// finishes its second sample, so no thread waits for the whole batch and no copy of it is
// made. torchvision mixes each sample with its neighbour in a rolled batch (x[i] with
// x[i - 1]); here each sample of a pair takes the other as its partner. Either way every image
// appears in two outputs, with weights lam and 1 - lam; the arithmetic for a given partner,
// lam and box is torchvision's (float32: partner * (1 - lam) + x * lam). An odd batch's last
// slot has no partner and stays as it is, as does a pair with a sample the bad-sample policy
// skipped (zero-filled); their labels stay one-hot.
//
// Labels become soft: float32 [B, num_classes], label_lam * hot(own) + (1 - label_lam) *
// hot(partner), hot() one-hot (or multi-hot for a multi-label dataset), label_lam = lam (MixUp)
// or 1 - box area / image area (CutMix, torchvision's lam_adjusted).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stoker/rng.h"

namespace stoker {

struct BatchMixConfig {
  double mixup_alpha = 0;   // > 0: MixUp with lam ~ Beta(alpha, alpha)
  double cutmix_alpha = 0;  // > 0: CutMix with lam ~ Beta(alpha, alpha)
  double mixup_p = 0.5;     // both on: the share of batches that get MixUp (RandomChoice's p)
  int num_classes = 0;      // width of the soft labels (labels must be in [0, num_classes))
  // timm's Mixup: `prob` is the share of batches mixed at all (< 1: one uniform01() draw
  // first, a batch above it stays unmixed); `label_smoothing` s makes every label row
  // timm's one_hot(off = s / num_classes, on = 1 - s + off) before the mix, as timm mixes
  // smoothed rows. The defaults leave the draws and rows as they were.
  double prob = 1.0;
  double label_smoothing = 0.0;
  // timm's mode: one draw for the whole batch ('batch'), one per pair of slots ('pair'), or
  // one per slot ('elem': each slot of a pair takes the other by its own kind, lam and box;
  // the prob gate is drawn per slot too).
  enum class Mode { kBatch, kPair, kElem };
  Mode mode = Mode::kBatch;

  // Soft labels are made (and, with an alpha > 0, images mixed).
  bool enabled() const { return mixup_alpha > 0 || cutmix_alpha > 0 || label_smoothing > 0; }
  // Throws stoker::Error naming the field.
  void validate() const;
};

// One batch's draw: which mix, lam, CutMix's box [x1, x2) x [y1, y2) and the labels' weight.
struct BatchMix {
  enum class Kind { kNone, kMixUp, kCutMix };
  Kind kind = Kind::kNone;
  double lam = 1;
  int x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  double label_lam = 1;
};

// The stream of a batch's mix draw: (seed, epoch, the batch's global step j * W + rank).
uint64_t batch_mix_key(uint64_t seed, int64_t epoch, int64_t batch, int rank, int world_size);

// Draws: uniform01() < mixup_p picks MixUp when both are on; lam ~ Beta(alpha, alpha) (two
// Marsaglia-Tsang gamma draws); CutMix then bounded(width) for the box centre's x and
// bounded(height) for its y, and the box of torchvision's make_params.
BatchMix draw_batch_mix(const BatchMixConfig& config, Rng& rng, int height, int width);

// A batch's draws per config.mode: one (batch), one per pair (2k, 2k + 1) in pair order
// (pair), one per slot in slot order (elem): each a draw_batch_mix from `rng` in turn.
std::vector<BatchMix> draw_batch_mixes(const BatchMixConfig& config, Rng& rng, int batch_size,
                                       int height, int width);
// The draw that mixes `slot` (what its image and label row take).
const BatchMix& slot_mix(const std::vector<BatchMix>& draws, BatchMixConfig::Mode mode, int slot);

// Mixes two float32 CHW images (channels x height x width) in place: each becomes the mix of
// itself and the other.
void mix_pair(float* a, float* b, int channels, int height, int width, const BatchMix& mix);

// Mixes a pair slot by slot (mode 'elem'): a becomes the mix of a and b by `for_a`, b the
// mix of b and a by `for_b`, both from the unmixed images (a copy of a in `scratch`).
void mix_elems(float* a, float* b, int channels, int height, int width, const BatchMix& for_a,
               const BatchMix& for_b, std::vector<float>& scratch);

// A mixed slot's label row from its own row and its partner's (one-hot or multi-hot):
// partner * (1 - label_lam) + own * label_lam in float32, torchvision's
// labels.roll(1, 0).mul_(1 - lam).add_(labels.mul(lam)).
void mix_label_rows(std::span<float> out, std::span<const float> own,
                    std::span<const float> partner, double label_lam);

}  // namespace stoker
