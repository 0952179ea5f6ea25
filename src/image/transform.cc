// The per-sample transform: crop choice from the header, region decode, resize, layout.

#include "stoker/transform.h"

#include <algorithm>
#include <cmath>

#include "image/augment_kernel.h"
#include "image/decoders.h"
#include "stoker/clock.h"
#include "stoker/error.h"
#include "util/check.h"

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

// Eval's shorter side after Resize.
int64_t eval_resize(const TransformConfig& config) {
  if (config.resize > 0) return config.resize;
  const int longest = std::max(config.output_height(), config.output_width());
  return static_cast<int64_t>(std::floor(longest / config.crop_fraction));
}

// Flips HWC pixels left-right in place.
void flip_in_place(uint8_t* pixels, int width, int height, int channels) {
  for (int y = 0; y < height; ++y) {
    uint8_t* row = pixels + static_cast<size_t>(y) * width * channels;
    for (int l = 0, r = width - 1; l < r; ++l, --r) {
      for (int c = 0; c < channels; ++c) std::swap(row[l * channels + c], row[r * channels + c]);
    }
  }
}

// Erases the plan's boxes: CHW planes (float) or HWC (uint8), each value `value[c]`, or (the
// modes of timm, float outputs only) a normal draw per box and channel, or per value.
template <typename T>
void erase_boxes(T* out, const ErasePlan& plan, int width, int height, int channels, bool chw,
                 const ErasingConfig& config, Rng& rng) {
  for (int b = 0; b < plan.count; ++b) {
    const EraseBox& box = plan.boxes[b];
    for (int c = 0; c < channels; ++c) {
      T v = static_cast<T>(config.value[c]);
      if (config.mode == ErasingConfig::Mode::kRand) v = static_cast<T>(sample_normal(rng));
      for (int y = box.top; y < box.top + box.height; ++y) {
        for (int x = box.left; x < box.left + box.width; ++x) {
          const size_t i = chw ? (static_cast<size_t>(c) * height + y) * width + x
                               : (static_cast<size_t>(y) * width + x) * channels + c;
          if (config.mode == ErasingConfig::Mode::kPixel) {
            v = static_cast<T>(static_cast<float>(sample_normal(rng)));
          }
          out[i] = v;
        }
      }
    }
  }
}

// The antialiased filter of an interpolation (nearest reads within the box: bilinear's reach
// covers it).
ResizeFilter resize_filter(Interpolation interpolation) {
  return interpolation == Interpolation::kBicubic ? ResizeFilter::kBicubic
                                                  : ResizeFilter::kBilinear;
}

Plan plan_eval(int width, int height, const TransformConfig& config) {
  // torchvision Resize(s) with s = resize or floor(max(H, W) / crop_fraction) on the shorter
  // side; the longer side is int(s * long / short) (Python: integer product, true division,
  // truncation).
  const int out_h = config.output_height(), out_w = config.output_width();
  const int64_t s = eval_resize(config);
  const int64_t short_side = std::min(width, height), long_side = std::max(width, height);
  const int64_t new_long =
      static_cast<int64_t>(static_cast<double>(s * long_side) / static_cast<double>(short_side));
  int64_t new_w = width <= height ? s : new_long;
  int64_t new_h = width <= height ? new_long : s;
  if (config.resize_height > 0) {  // Resize((h, w)): exactly that size
    new_w = config.resize_width;
    new_h = config.resize_height;
  }
  // CenterCrop((H, W)): top = int(round((h - H) / 2.0)), half to even.
  const int64_t top = py_round(static_cast<double>(new_h - out_h) / 2.0);
  const int64_t left = py_round(static_cast<double>(new_w - out_w) / 2.0);
  // Resize-then-crop is a resize of the whole image whose outputs [left, left + W) are
  // kept: a box in the original's coordinates, with taps clipped to the whole image.
  const double fx = static_cast<double>(width) / static_cast<double>(new_w);
  const double fy = static_cast<double>(height) / static_cast<double>(new_h);
  Plan p;
  p.box = Box{left * fx, top * fy, (left + out_w) * fx, (top + out_h) * fy};
  p.clip_to_box = false;
  // Decode the box plus the filter's reach (support = max(f, 1) source pixels, twice that for
  // bicubic), plus a margin for window rounding and for one scaled pixel at the coarsest DCT
  // scale.
  const double reach = resize_filter_support(resize_filter(config.interpolation));
  const double mx = reach * std::max(fx, 1.0) + 9.0, my = reach * std::max(fy, 1.0) + 9.0;
  const int x0 = static_cast<int>(std::max(0.0, std::floor(p.box.x0 - mx)));
  const int y0 = static_cast<int>(std::max(0.0, std::floor(p.box.y0 - my)));
  const int x1 = static_cast<int>(std::min<double>(width, std::ceil(p.box.x1 + mx)));
  const int y1 = static_cast<int>(std::min<double>(height, std::ceil(p.box.y1 + my)));
  p.need = Rect{x0, y0, x1 - x0, y1 - y0};
  // The DCT scale s must keep the box at least W wide and H high: box_w * s >= W, expressed on
  // the (larger) decoded rectangle as decode_region takes it.
  p.min_width = static_cast<int>(std::ceil(out_w * (x1 - x0) / (p.box.x1 - p.box.x0)));
  p.min_height = static_cast<int>(std::ceil(out_h * (y1 - y0) / (p.box.y1 - p.box.y0)));
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

Interpolation parse_interpolation(const std::string& name) {
  if (name == "bilinear") return Interpolation::kBilinear;
  if (name == "bicubic") return Interpolation::kBicubic;
  if (name == "nearest") return Interpolation::kNearest;
  STOKER_THROW_ARG("unknown interpolation '{}' (expected one of: bilinear, bicubic, nearest)",
                   name);
}

const char* to_string(Interpolation interpolation) {
  switch (interpolation) {
    case Interpolation::kBilinear:
      return "bilinear";
    case Interpolation::kBicubic:
      return "bicubic";
    case Interpolation::kNearest:
      return "nearest";
  }
  return "?";
}

bool TransformConfig::has_cpu_only_steps() const {
  return !ops.empty() || erasing.p > 0 || output_height() != output_width() ||
         interpolation != Interpolation::kBilinear || channels_last;
}

DecodeConfig TransformConfig::decode_for_kind() const {
  DecodeConfig options = decode;
  if (kind == TransformKind::kEval && !eval_dct_scaling) options.dct_scaling = false;
  return options;
}

size_t TransformConfig::sample_bytes() const {
  const size_t pixels = static_cast<size_t>(output_height()) * output_width() * channels;
  return pixels * augment::dtype_bytes(static_cast<int32_t>(output));
}

void TransformConfig::validate() const {
  STOKER_CHECK_ARG(size >= 1 && size <= 16384, "transform: size {} not in [1, 16384]", size);
  STOKER_CHECK_ARG((height == 0) == (width == 0),
                   "transform: give both height and width, or neither (got {} x {})", height,
                   width);
  STOKER_CHECK_ARG(height >= 0 && height <= 16384 && width >= 0 && width <= 16384,
                   "transform: height x width {} x {} not in [1, 16384]", height, width);
  STOKER_CHECK_ARG(resize >= 0 && resize <= 65536, "transform: resize {} not in [0, 65536]",
                   resize);
  STOKER_CHECK_ARG((resize_height == 0) == (resize_width == 0) && resize_height >= 0 &&
                       resize_height <= 65536 && resize_width >= 0 && resize_width <= 65536,
                   "transform: resize_height x resize_width {} x {}: give both (each in "
                   "[1, 65536]) or neither",
                   resize_height, resize_width);
  if (kind == TransformKind::kEval && resize_height > 0) {
    STOKER_CHECK_ARG(resize_height >= output_height() && resize_width >= output_width(),
                     "transform: Resize(({}, {})) is smaller than CenterCrop(({}, {})): the crop "
                     "must fit inside the resized image",
                     resize_height, resize_width, output_height(), output_width());
  } else if (kind == TransformKind::kEval) {
    STOKER_CHECK_ARG(eval_resize(*this) >= std::max(output_height(), output_width()),
                     "transform: Resize({}) is smaller than CenterCrop(({}, {})): the crop must "
                     "fit inside the resized image",
                     eval_resize(*this), output_height(), output_width());
  }
  for (const AugmentOp& op : ops) op.validate();
  erasing.validate();
  STOKER_CHECK_ARG(erasing.mode == ErasingConfig::Mode::kConst || output != OutputKind::kUint8,
                   "transform: RandomErasing's 'rand' and 'pixel' modes draw normalised values: "
                   "they need a float output (ToDtype + Normalize)");
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

namespace {

// stage_sample's draws: the probe, then the crop and flip (train) or the eval plan.
Plan plan_sample(const ImageHeader& header, const TransformConfig& config, Rng& rng) {
  if (config.kind != TransformKind::kTrain) return plan_eval(header.width, header.height, config);
  const CropParams crop = sample_train_crop(rng, header.width, header.height, config);
  const Rect& r = crop.crop;
  Plan plan;
  plan.box = Box{double(r.x), double(r.y), double(r.x + r.width), double(r.y + r.height)};
  plan.clip_to_box = true;
  plan.need = r;
  plan.min_width = config.output_width();
  plan.min_height = config.output_height();
  plan.flip = crop.flip;
  return plan;
}

// The plan's box and bounds in the coordinates of pixels decoded at `scale` from (x0, y0) of a
// scaled_width x scaled_height image.
StagedSample staged_in(const Plan& plan, double scale, int x0, int y0, int scaled_width,
                       int scaled_height) {
  StagedSample staged;
  staged.box = Box{plan.box.x0 * scale - x0, plan.box.y0 * scale - y0, plan.box.x1 * scale - x0,
                   plan.box.y1 * scale - y0};
  staged.bounds = plan.clip_to_box ? staged.box
                                   : Box{-double(x0), -double(y0), double(scaled_width - x0),
                                         double(scaled_height - y0)};
  staged.flip = plan.flip;
  return staged;
}

StagedSample decode_planned(const Plan& plan, std::span<const uint8_t> bytes,
                            const ImageHeader& header, const std::string& name,
                            const TransformConfig& config, TransformScratch& scratch) {
  DecodedRegion& region = scratch.region;
  decode_region(region, bytes, header, plan.need, plan.min_width, plan.min_height, config.channels,
                name, config.decode_for_kind());
  return staged_in(plan, region.scale, region.x0, region.y0, region.scaled_width,
                   region.scaled_height);
}

}  // namespace

StagedSample stage_sample(std::span<const uint8_t> bytes, const std::string& name,
                          const TransformConfig& config, Rng& rng, TransformScratch& scratch,
                          TransformTimings* timings) {
  return stage_sample_or_encoded(bytes, name, config, rng, scratch, nullptr, timings);
}

StagedSample stage_sample_or_encoded(std::span<const uint8_t> bytes, const std::string& name,
                                     const TransformConfig& config, Rng& rng,
                                     TransformScratch& scratch, EncodedStage* encoded,
                                     TransformTimings* timings) {
  const double t0 = timings != nullptr ? thread_cpu_seconds() : 0.0;
  const ImageHeader header = probe_image(bytes, name, config.decode.limits);
  const Plan plan = plan_sample(header, config, rng);
  StagedSample staged;
  if (encoded != nullptr && header.format == ImageFormat::kJpeg &&
      image::jpeg_gpu_decodable(bytes, header, name, config.decode)) {
    // Train reads only the crop (taps clipped to it); eval's taps may reach the whole image.
    const Rect roi = plan.clip_to_box ? plan.need : Rect{0, 0, header.width, header.height};
    *encoded = EncodedStage{true, header.width, header.height, roi};
    staged = staged_in(plan, 1.0, 0, 0, header.width, header.height);
  } else {
    if (encoded != nullptr) *encoded = EncodedStage{};
    staged = decode_planned(plan, bytes, header, name, config, scratch);
  }
  if (timings != nullptr) timings->decode_seconds += thread_cpu_seconds() - t0;
  return staged;
}

void augment_staged(void* out, const DecodedRegion& region, const StagedSample& staged,
                    const TransformConfig& config, Rng& rng, TransformScratch& scratch) {
  const int out_h = config.output_height(), out_w = config.output_width();
  const int channels = config.channels;
  const size_t values = static_cast<size_t>(out_h) * out_w * channels;
  if (scratch.resized.size() < values) scratch.resized.resize(values);
  uint8_t* pixels = scratch.resized.data();
  if (config.interpolation == Interpolation::kNearest) {
    resize_nearest(pixels, out_w, out_h, region.pixels.data(), region.width, region.height,
                   channels, staged.box, staged.bounds);
  } else {
    resize_antialiased(pixels, out_w, out_h, region.pixels.data(), region.width, region.height,
                       channels, staged.box, staged.bounds, scratch.resize_tmp,
                       resize_filter(config.interpolation));
  }
  bool flip = staged.flip;
  if (!config.ops.empty()) {
    // The ops see the flipped image, as torchvision's list applies them after the flip.
    if (flip) flip_in_place(pixels, out_w, out_h, channels);
    flip = false;
    const PixelImage image{pixels, out_w, out_h, channels};
    for (const AugmentOp& op : config.ops) apply_augment_op(op, rng, image, scratch.op_scratch);
  }
  const ErasePlan erase =
      config.erasing.p > 0 ? sample_erasing(rng, out_w, out_h, config.erasing) : ErasePlan{};
  if (config.output == OutputKind::kUint8) {
    auto* o = static_cast<uint8_t*>(out);
    copy_hwc(o, pixels, out_w, out_h, channels, flip);
    erase_boxes(o, erase, out_w, out_h, channels, false, config.erasing, rng);
    return;
  }
  // The float32 [C, H, W] values go straight to a float32 output; else to the scratch, where
  // channels_last transposes them (into a float32 output, or into the scratch's second half)
  // and the half types are rounded from (below).
  const bool half = config.output != OutputKind::kFloat32;
  const size_t scratch_values = (half ? values : 0) + (config.channels_last ? values : 0);
  if (scratch.normalized.size() < scratch_values) scratch.normalized.resize(scratch_values);
  float* normalized = scratch_values > 0 ? scratch.normalized.data() : static_cast<float*>(out);
  normalize_to_chw(normalized, pixels, out_w, out_h, channels, flip, config.mean.data(),
                   config.std.data());
  erase_boxes(normalized, erase, out_w, out_h, channels, true, config.erasing, rng);
  if (config.channels_last) {  // [C, H, W] -> [H, W, C]: the same values, transposed
    const size_t plane = static_cast<size_t>(out_h) * out_w;
    float* hwc = half ? normalized + values : static_cast<float*>(out);
    for (size_t p = 0; p < plane; ++p) {
      for (int c = 0; c < channels; ++c) hwc[p * channels + c] = normalized[c * plane + p];
    }
    normalized = hwc;
  }
  if (config.output == OutputKind::kFloat32) return;
  // float16 / bfloat16: the float32 values, each rounded to nearest-even.
  auto* o = static_cast<uint16_t*>(out);
  if (config.output == OutputKind::kFloat16) {
    for (size_t i = 0; i < values; ++i) o[i] = augment::float_to_half_bits(normalized[i]);
  } else {
    for (size_t i = 0; i < values; ++i) o[i] = augment::float_to_bfloat16_bits(normalized[i]);
  }
}

void transform_sample(void* out, std::span<const uint8_t> bytes, const std::string& name,
                      const TransformConfig& config, Rng& rng, TransformScratch& scratch,
                      TransformTimings* timings) {
  const StagedSample staged = stage_sample(bytes, name, config, rng, scratch, timings);
  const double t1 = timings != nullptr ? thread_cpu_seconds() : 0.0;
  augment_staged(out, scratch.region, staged, config, rng, scratch);
  if (timings != nullptr) timings->augment_seconds += thread_cpu_seconds() - t1;
}

}  // namespace stoker
