// MixUp / CutMix arithmetic and draws (torchvision/transforms/v2/_augment.py). torchvision's
// products and sums are rounded apart, as the project's -ffp-contract=off keeps them here.

#include "stoker/batch_mix.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "stoker/error.h"
#include "util/check.h"

namespace stoker {
namespace {

constexpr uint64_t kBatchMixDomain = 0x6d69786375746d78ull;  // "mixcutmx"

}  // namespace

void BatchMixConfig::validate() const {
  STOKER_CHECK_ARG(std::isfinite(mixup_alpha) && mixup_alpha >= 0 && std::isfinite(cutmix_alpha) &&
                       cutmix_alpha >= 0,
                   "MixUp/CutMix: alpha must be finite and >= 0 (got {}, {})", mixup_alpha,
                   cutmix_alpha);
  STOKER_CHECK_ARG(mixup_p >= 0 && mixup_p <= 1, "MixUp/CutMix: mixup_p {} not in [0, 1]", mixup_p);
  STOKER_CHECK_ARG(prob >= 0 && prob <= 1, "MixUp/CutMix: prob {} not in [0, 1]", prob);
  STOKER_CHECK_ARG(label_smoothing >= 0 && label_smoothing < 1,
                   "MixUp/CutMix: label_smoothing {} not in [0, 1)", label_smoothing);
  if (enabled()) {
    STOKER_CHECK_ARG(num_classes >= 1 && num_classes <= 1 << 24,
                     "MixUp/CutMix: num_classes {} not in [1, 2^24] (the soft labels' width)",
                     num_classes);
  }
}

uint64_t batch_mix_key(uint64_t seed, int64_t epoch, int64_t batch, int rank, int world_size) {
  return stream_key(seed, static_cast<uint64_t>(epoch),
                    static_cast<uint64_t>(batch) * static_cast<uint64_t>(world_size) +
                        static_cast<uint64_t>(rank),
                    kBatchMixDomain);
}

BatchMix draw_batch_mix(const BatchMixConfig& config, Rng& rng, int height, int width) {
  BatchMix mix;
  if (config.mixup_alpha <= 0 && config.cutmix_alpha <= 0) return mix;
  if (config.prob < 1 && !(rng.uniform01() < config.prob)) return mix;
  bool mixup = config.cutmix_alpha <= 0;
  if (config.mixup_alpha > 0 && config.cutmix_alpha > 0) mixup = rng.uniform01() < config.mixup_p;
  if (mixup) {
    mix.kind = BatchMix::Kind::kMixUp;
    mix.lam = mix.label_lam = sample_beta(rng, config.mixup_alpha);
    return mix;
  }
  mix.kind = BatchMix::Kind::kCutMix;
  mix.lam = sample_beta(rng, config.cutmix_alpha);
  const auto r_x = static_cast<int64_t>(rng.bounded(static_cast<uint64_t>(width)));
  const auto r_y = static_cast<int64_t>(rng.bounded(static_cast<uint64_t>(height)));
  const double r = 0.5 * std::sqrt(1.0 - mix.lam);
  const auto r_w_half = static_cast<int64_t>(r * width);  // int(): truncation
  const auto r_h_half = static_cast<int64_t>(r * height);
  mix.x1 = static_cast<int>(std::max<int64_t>(r_x - r_w_half, 0));
  mix.y1 = static_cast<int>(std::max<int64_t>(r_y - r_h_half, 0));
  mix.x2 = static_cast<int>(std::min<int64_t>(r_x + r_w_half, width));
  mix.y2 = static_cast<int>(std::min<int64_t>(r_y + r_h_half, height));
  mix.label_lam = 1.0 - static_cast<double>(mix.x2 - mix.x1) * (mix.y2 - mix.y1) /
                            (static_cast<double>(width) * height);
  return mix;
}

std::vector<BatchMix> draw_batch_mixes(const BatchMixConfig& config, Rng& rng, int batch_size,
                                       int height, int width) {
  int draws = 1;
  if (config.mode == BatchMixConfig::Mode::kPair) draws = (batch_size + 1) / 2;
  if (config.mode == BatchMixConfig::Mode::kElem) draws = batch_size;
  std::vector<BatchMix> out;
  out.reserve(static_cast<size_t>(std::max(draws, 1)));
  for (int i = 0; i < std::max(draws, 1); ++i) {
    out.push_back(draw_batch_mix(config, rng, height, width));
  }
  return out;
}

const BatchMix& slot_mix(const std::vector<BatchMix>& draws, BatchMixConfig::Mode mode, int slot) {
  switch (mode) {
    case BatchMixConfig::Mode::kBatch:
      return draws[0];
    case BatchMixConfig::Mode::kPair:
      return draws[static_cast<size_t>(slot / 2)];
    case BatchMixConfig::Mode::kElem:
      break;
  }
  return draws[static_cast<size_t>(slot)];
}

namespace {

// x becomes the mix of itself and `partner` by one draw (timm's per-element mix).
void mix_into(float* x, const float* partner, int channels, int height, int width,
              const BatchMix& mix) {
  const size_t plane = static_cast<size_t>(height) * width;
  if (mix.kind == BatchMix::Kind::kMixUp) {
    const auto keep = static_cast<float>(mix.lam), take = static_cast<float>(1.0 - mix.lam);
    for (size_t i = 0; i < plane * channels; ++i) x[i] = partner[i] * take + x[i] * keep;
  } else if (mix.kind == BatchMix::Kind::kCutMix) {
    for (int c = 0; c < channels; ++c) {
      for (int y = mix.y1; y < mix.y2; ++y) {
        const size_t row = c * plane + static_cast<size_t>(y) * width;
        std::copy(partner + row + mix.x1, partner + row + mix.x2, x + row + mix.x1);
      }
    }
  }
}

}  // namespace

void mix_elems(float* a, float* b, int channels, int height, int width, const BatchMix& for_a,
               const BatchMix& for_b, std::vector<float>& scratch) {
  const size_t n = static_cast<size_t>(height) * width * channels;
  scratch.assign(a, a + n);
  mix_into(a, b, channels, height, width, for_a);
  mix_into(b, scratch.data(), channels, height, width, for_b);
}

void mix_pair(float* a, float* b, int channels, int height, int width, const BatchMix& mix) {
  const size_t plane = static_cast<size_t>(height) * width;
  if (mix.kind == BatchMix::Kind::kMixUp) {
    // torchvision: x.roll(1, 0).mul_(1 - lam).add_(x.mul(lam)), in float32.
    const auto keep = static_cast<float>(mix.lam), take = static_cast<float>(1.0 - mix.lam);
    const size_t n = plane * channels;
    for (size_t i = 0; i < n; ++i) {
      const float x = a[i], y = b[i];
      a[i] = y * take + x * keep;
      b[i] = x * take + y * keep;
    }
  } else if (mix.kind == BatchMix::Kind::kCutMix) {
    for (int c = 0; c < channels; ++c) {
      for (int y = mix.y1; y < mix.y2; ++y) {
        const size_t row = c * plane + static_cast<size_t>(y) * width;
        std::swap_ranges(a + row + mix.x1, a + row + mix.x2, b + row + mix.x1);
      }
    }
  }
}

void mix_label_rows(std::span<float> out, std::span<const float> own,
                    std::span<const float> partner, double label_lam) {
  const auto keep = static_cast<float>(label_lam), take = static_cast<float>(1.0 - label_lam);
  for (size_t k = 0; k < out.size(); ++k) out[k] = partner[k] * take + own[k] * keep;
}

}  // namespace stoker
