// The per-sample transform: crop choice from the header, region decode, resize, layout.

#include "stoker/transform.h"

#include <algorithm>
#include <cmath>

#include "image/augment_kernel.h"
#include "stoker/clock.h"
#include "stoker/error.h"

namespace stoker {
namespace {

// Python's round() on floats: half to even, which is nearbyint in the default rounding mode.
int64_t py_round(double v) { return static_cast<int64_t>(std::nearbyint(v)); }

// Where the output comes from, in full-resolution pixel coordinates.
struct Plan {
  Box box;                    // resized onto size x size
  bool clip_to_box;           // taps clipped to the box (crop-then-resize) or to the whole image
  Rect need;                  // pixels to decode
  int min_width, min_height;  // decoded size the box must keep (DCT scale choice)
  bool flip;
};

Plan plan_eval(int width, int height, const TransformConfig& config) {
  // torchvision Resize(s) with s = floor(size / crop_fraction) on the shorter side; the longer
  // side is int(s * long / short) (Python: integer product, true division, truncation).
  const int size = config.size;
  const int64_t s = static_cast<int64_t>(std::floor(size / config.crop_fraction));
  const int64_t short_side = std::min(width, height), long_side = std::max(width, height);
  const int64_t new_long =
      static_cast<int64_t>(static_cast<double>(s * long_side) / static_cast<double>(short_side));
  const int64_t new_w = width <= height ? s : new_long;
  const int64_t new_h = width <= height ? new_long : s;
  // CenterCrop(size): top = int(round((h - size) / 2.0)), half to even.
  const int64_t top = py_round(static_cast<double>(new_h - size) / 2.0);
  const int64_t left = py_round(static_cast<double>(new_w - size) / 2.0);
  // Resize-then-crop is a resize of the whole image whose outputs [left, left + size) are
  // kept: a box in the original's coordinates, with taps clipped to the whole image.
  const double fx = static_cast<double>(width) / static_cast<double>(new_w);
  const double fy = static_cast<double>(height) / static_cast<double>(new_h);
  Plan p;
  p.box = Box{left * fx, top * fy, (left + size) * fx, (top + size) * fy};
  p.clip_to_box = false;
  // Decode the box plus the filter's reach (support = max(f, 1) source pixels), plus a margin
  // for window rounding and for one scaled pixel at the coarsest DCT scale.
  const double mx = std::max(fx, 1.0) + 9.0, my = std::max(fy, 1.0) + 9.0;
  const int x0 = static_cast<int>(std::max(0.0, std::floor(p.box.x0 - mx)));
  const int y0 = static_cast<int>(std::max(0.0, std::floor(p.box.y0 - my)));
  const int x1 = static_cast<int>(std::min<double>(width, std::ceil(p.box.x1 + mx)));
  const int y1 = static_cast<int>(std::min<double>(height, std::ceil(p.box.y1 + my)));
  p.need = Rect{x0, y0, x1 - x0, y1 - y0};
  // The DCT scale s must keep the box at least `size` wide: box_w * s >= size, expressed on
  // the (larger) decoded rectangle as decode_region takes it.
  p.min_width = static_cast<int>(std::ceil(size * (x1 - x0) / (p.box.x1 - p.box.x0)));
  p.min_height = static_cast<int>(std::ceil(size * (y1 - y0) / (p.box.y1 - p.box.y0)));
  p.flip = false;
  return p;
}

}  // namespace

TransformKind parse_transform_kind(const std::string& name) {
  if (name == "train") return TransformKind::kTrain;
  if (name == "eval") return TransformKind::kEval;
  STOKER_THROW_ARG("unknown transform '{}' (expected one of: train, eval)", name);
}

OutputKind parse_output_kind(const std::string& name) {
  if (name == "float32") return OutputKind::kFloat32;
  if (name == "uint8") return OutputKind::kUint8;
  if (name == "float16") return OutputKind::kFloat16;
  if (name == "bfloat16") return OutputKind::kBFloat16;
  STOKER_THROW_ARG("unknown output kind '{}' (expected one of: float32, uint8, float16, bfloat16)",
                   name);
}

const char* to_string(OutputKind output) {
  switch (output) {
    case OutputKind::kFloat32:
      return "float32";
    case OutputKind::kUint8:
      return "uint8";
    case OutputKind::kFloat16:
      return "float16";
    case OutputKind::kBFloat16:
      return "bfloat16";
  }
  return "?";
}

size_t TransformConfig::sample_bytes() const {
  const size_t pixels = static_cast<size_t>(size) * size * channels;
  return pixels * augment::dtype_bytes(static_cast<int32_t>(output));
}

void TransformConfig::validate() const {
  STOKER_CHECK_ARG(size >= 1 && size <= 16384, "transform: size {} not in [1, 16384]", size);
  STOKER_CHECK_ARG(channels == 1 || channels == 3, "transform: channels must be 1 or 3, not {}",
                   channels);
  STOKER_CHECK_ARG(
      std::isfinite(scale[0]) && std::isfinite(scale[1]) && scale[0] > 0 && scale[0] <= scale[1],
      "transform: scale ({}, {}) must satisfy 0 < min <= max", scale[0], scale[1]);
  STOKER_CHECK_ARG(
      std::isfinite(ratio[0]) && std::isfinite(ratio[1]) && ratio[0] > 0 && ratio[0] <= ratio[1],
      "transform: ratio ({}, {}) must satisfy 0 < min <= max", ratio[0], ratio[1]);
  STOKER_CHECK_ARG(flip_p >= 0 && flip_p <= 1, "transform: flip_p {} not in [0, 1]", flip_p);
  STOKER_CHECK_ARG(crop_fraction > 0 && crop_fraction <= 1,
                   "transform: crop_fraction {} not in (0, 1]", crop_fraction);
  for (int c = 0; c < channels; ++c) {
    STOKER_CHECK_ARG(std::isfinite(mean[c]) && std::isfinite(std[c]) && std[c] > 0,
                     "transform: mean[{}] = {} / std[{}] = {} must be finite with std > 0", c,
                     mean[c], c, std[c]);
  }
  STOKER_CHECK_ARG(decode.limits.max_pixels > 0 && decode.limits.max_memory_bytes > 0,
                   "transform: decode limits must be positive");
}

CropParams sample_train_crop(Rng& rng, int width, int height, const TransformConfig& config) {
  CropParams out;
  const double area = static_cast<double>(width) * height;
  const double log_r0 = std::log(config.ratio[0]), log_r1 = std::log(config.ratio[1]);
  bool found = false;
  for (int attempt = 0; attempt < 10 && !found; ++attempt) {
    const double target_area = area * rng.uniform(config.scale[0], config.scale[1]);
    const double aspect = std::exp(rng.uniform(log_r0, log_r1));
    const int64_t w = py_round(std::sqrt(target_area * aspect));
    const int64_t h = py_round(std::sqrt(target_area / aspect));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const auto top = static_cast<int>(rng.bounded(static_cast<uint64_t>(height - h + 1)));
      const auto left = static_cast<int>(rng.bounded(static_cast<uint64_t>(width - w + 1)));
      out.crop = Rect{left, top, static_cast<int>(w), static_cast<int>(h)};
      found = true;
    }
  }
  if (!found) {
    // torchvision's fallback: the largest centred crop with the ratio clamped to the range.
    const double in_ratio = static_cast<double>(width) / static_cast<double>(height);
    int64_t w = width, h = height;
    if (in_ratio < config.ratio[0]) {
      h = py_round(w / config.ratio[0]);
    } else if (in_ratio > config.ratio[1]) {
      w = py_round(h * config.ratio[1]);
    }
    // Python floor division; both operands are >= 0 here.
    out.crop = Rect{static_cast<int>((width - w) / 2), static_cast<int>((height - h) / 2),
                    static_cast<int>(w), static_cast<int>(h)};
  }
  out.flip = rng.uniform01() < config.flip_p;
  return out;
}

StagedSample stage_sample(std::span<const uint8_t> bytes, const std::string& name,
                          const TransformConfig& config, Rng& rng, TransformScratch& scratch,
                          TransformTimings* timings) {
  const double t0 = timings != nullptr ? thread_cpu_seconds() : 0.0;
  const ImageHeader header = probe_image(bytes, name, config.decode.limits);
  const int size = config.size;
  Plan plan;
  if (config.kind == TransformKind::kTrain) {
    const CropParams crop = sample_train_crop(rng, header.width, header.height, config);
    const Rect& r = crop.crop;
    plan.box = Box{double(r.x), double(r.y), double(r.x + r.width), double(r.y + r.height)};
    plan.clip_to_box = true;
    plan.need = r;
    plan.min_width = plan.min_height = size;
    plan.flip = crop.flip;
  } else {
    plan = plan_eval(header.width, header.height, config);
  }
  DecodedRegion& region = scratch.region;
  decode_region(region, bytes, header, plan.need, plan.min_width, plan.min_height, config.channels,
                name, config.decode);

  // Full-resolution coordinates -> coordinates in the decoded pixels.
  const double s = region.scale;
  StagedSample staged;
  staged.box = Box{plan.box.x0 * s - region.x0, plan.box.y0 * s - region.y0,
                   plan.box.x1 * s - region.x0, plan.box.y1 * s - region.y0};
  staged.bounds = plan.clip_to_box ? staged.box
                                   : Box{-double(region.x0), -double(region.y0),
                                         double(region.scaled_width - region.x0),
                                         double(region.scaled_height - region.y0)};
  staged.flip = plan.flip;
  if (timings != nullptr) timings->decode_seconds += thread_cpu_seconds() - t0;
  return staged;
}

void augment_staged(void* out, const DecodedRegion& region, const StagedSample& staged,
                    const TransformConfig& config, TransformScratch& scratch) {
  const int size = config.size;
  const size_t resized_bytes = static_cast<size_t>(size) * size * config.channels;
  if (scratch.resized.size() < resized_bytes) scratch.resized.resize(resized_bytes);
  resize_bilinear(scratch.resized.data(), size, size, region.pixels.data(), region.width,
                  region.height, config.channels, staged.box, staged.bounds, scratch.resize_tmp);
  if (config.output == OutputKind::kUint8) {
    copy_hwc(static_cast<uint8_t*>(out), scratch.resized.data(), size, size, config.channels,
             staged.flip);
    return;
  }
  if (config.output == OutputKind::kFloat32) {
    normalize_to_chw(static_cast<float*>(out), scratch.resized.data(), size, size, config.channels,
                     staged.flip, config.mean.data(), config.std.data());
    return;
  }
  // float16 / bfloat16: the float32 values, each rounded to nearest-even.
  if (scratch.normalized.size() < resized_bytes) scratch.normalized.resize(resized_bytes);
  normalize_to_chw(scratch.normalized.data(), scratch.resized.data(), size, size, config.channels,
                   staged.flip, config.mean.data(), config.std.data());
  auto* o = static_cast<uint16_t*>(out);
  if (config.output == OutputKind::kFloat16) {
    for (size_t i = 0; i < resized_bytes; ++i) {
      o[i] = augment::float_to_half_bits(scratch.normalized[i]);
    }
  } else {
    for (size_t i = 0; i < resized_bytes; ++i) {
      o[i] = augment::float_to_bfloat16_bits(scratch.normalized[i]);
    }
  }
}

void transform_sample(void* out, std::span<const uint8_t> bytes, const std::string& name,
                      const TransformConfig& config, Rng& rng, TransformScratch& scratch,
                      TransformTimings* timings) {
  const StagedSample staged = stage_sample(bytes, name, config, rng, scratch, timings);
  const double t1 = timings != nullptr ? thread_cpu_seconds() : 0.0;
  augment_staged(out, scratch.region, staged, config, scratch);
  if (timings != nullptr) timings->augment_seconds += thread_cpu_seconds() - t1;
}

}  // namespace stoker
