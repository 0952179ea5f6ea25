// timm's auto-augment (timm/data/auto_augment.py) on PIL's arithmetic (Pillow's
// libImaging: Blend.c, Filter.c, Convert.c, Geometry.c; ImageOps, ImageEnhance). Built with
// -ffp-contract=off like all of stoker: Pillow's float and double expressions are evaluated
// one rounding at a time, as its x86-64 and aarch64 builds do.

#include "stoker/timm_augment.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <span>

#include "image/pixel_image_util.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker {
namespace {

constexpr std::array<const char*, 25> kTimmOpNames = {"AutoContrast",
                                                      "Equalize",
                                                      "Invert",
                                                      "Rotate",
                                                      "Posterize",
                                                      "PosterizeIncreasing",
                                                      "PosterizeOriginal",
                                                      "Solarize",
                                                      "SolarizeIncreasing",
                                                      "SolarizeAdd",
                                                      "Color",
                                                      "ColorIncreasing",
                                                      "Contrast",
                                                      "ContrastIncreasing",
                                                      "Brightness",
                                                      "BrightnessIncreasing",
                                                      "Sharpness",
                                                      "SharpnessIncreasing",
                                                      "ShearX",
                                                      "ShearY",
                                                      "TranslateX",
                                                      "TranslateY",
                                                      "TranslateXRel",
                                                      "TranslateYRel",
                                                      "Desaturate"};

constexpr double kLevelDenom = 10.0;  // timm's _LEVEL_DENOM

using pixel_util::value_count;

// Image.point with one 256-entry table for every band.
void apply_table(const PixelImage& im, const std::array<uint8_t, 256>& lut) {
  uint8_t* const px = im.pixels;
  const size_t n = value_count(im);
  for (size_t i = 0; i < n; ++i) px[i] = lut[px[i]];
}

// Image.blend(degenerate, image, factor) (Blend.c): in float32, truncated; clipped only when
// the factor extrapolates.
uint8_t pil_blend(uint8_t degenerate, uint8_t value, float alpha) {
  const float t = static_cast<float>(degenerate) +
                  alpha * static_cast<float>(static_cast<int>(value) - degenerate);
  if (alpha >= 0 && alpha <= 1.0f) return static_cast<uint8_t>(t);
  if (t <= 0.0f) return 0;
  if (t >= 255.0f) return 255;
  return static_cast<uint8_t>(t);
}

// convert("L") of an RGB pixel (Convert.c's L24: ITU-R 601-2 in 16-bit fixed point).
uint8_t pil_luma(const uint8_t* p) {
  return static_cast<uint8_t>((p[0] * 19595 + p[1] * 38470 + p[2] * 7471 + 0x8000) >> 16);
}

void enhance_brightness(const PixelImage& im, float factor) {
  std::array<uint8_t, 256> lut;
  for (int v = 0; v < 256; ++v) lut[v] = pil_blend(0, static_cast<uint8_t>(v), factor);
  apply_table(im, lut);
}

void enhance_color(const PixelImage& im, float factor) {
  if (im.channels == 1) return;  // the degenerate of an L image is the image
  uint8_t* const px = im.pixels;
  const size_t n = value_count(im);
  for (size_t i = 0; i < n; i += 3) {
    const uint8_t l = pil_luma(px + i);
    for (int c = 0; c < 3; ++c) px[i + c] = pil_blend(l, px[i + c], factor);
  }
}

void enhance_contrast(const PixelImage& im, float factor) {
  const uint8_t* const px = im.pixels;
  const size_t n = value_count(im);
  // ImageStat's mean of the L image: sum(i * hist[i]) / pixels in double, + 0.5, int().
  std::array<int64_t, 256> hist{};
  if (im.channels == 3) {
    for (size_t i = 0; i < n; i += 3) ++hist[pil_luma(px + i)];
  } else {
    for (size_t i = 0; i < n; ++i) ++hist[px[i]];
  }
  double sum = 0;
  for (int v = 0; v < 256; ++v) sum += static_cast<double>(v) * static_cast<double>(hist[v]);
  const double pixels = static_cast<double>(n / static_cast<size_t>(im.channels));
  const auto mean = static_cast<uint8_t>(static_cast<int>(sum / pixels + 0.5));
  std::array<uint8_t, 256> lut;
  for (int v = 0; v < 256; ++v) lut[v] = pil_blend(mean, static_cast<uint8_t>(v), factor);
  apply_table(im, lut);
}

// ImageEnhance.Sharpness: blend with ImageFilter.SMOOTH (3x3 [1 1 1; 1 5 1; 1 1 1] / 13,
// Filter.c: float32 taps row by row from the row below, + 0.5, truncated; the border kept).
void enhance_sharpness(const PixelImage& im, float factor, std::vector<uint8_t>& scratch) {
  const int w = im.width, h = im.height, ch = im.channels;
  if (w < 3 || h < 3) return;  // ImagingFilter copies an image smaller than its kernel
  scratch.assign(im.pixels, im.pixels + value_count(im));
  const float k1 = 1.0f / 13.0f, k5 = 5.0f / 13.0f;
  const ptrdiff_t row = static_cast<ptrdiff_t>(w) * ch;
  const uint8_t* const in = scratch.data();
  for (int y = 1; y < h - 1; ++y) {
    for (ptrdiff_t x = ch; x < row - ch; ++x) {
      const uint8_t* s = in + y * row + x;
      auto taps = [ch, k1](const uint8_t* p, float centre) {
        return static_cast<float>(p[-ch]) * k1 + static_cast<float>(p[0]) * centre +
               static_cast<float>(p[ch]) * k1;
      };
      float ss = 0.5f;
      ss += taps(s + row, k1);
      ss += taps(s, k5);
      ss += taps(s - row, k1);
      ss = std::min(std::max(ss, 0.0f), 255.0f);
      im.pixels[y * row + x] = pil_blend(static_cast<uint8_t>(ss), s[0], factor);
    }
  }
}

// ImageOps.autocontrast (cutoff 0): per band, [lo, hi] stretched by a table computed in double.
void autocontrast(const PixelImage& im) {
  const int ch = im.channels;
  const size_t n = value_count(im);
  const auto [lo, hi] = pixel_util::channel_range(im);
  std::array<std::array<uint8_t, 256>, 3> lut;
  for (int c = 0; c < ch; ++c) {
    const double scale = hi[c] > lo[c] ? 255.0 / (hi[c] - lo[c]) : 0.0;
    const double offset = -lo[c] * scale;
    for (int v = 0; v < 256; ++v) {
      if (hi[c] <= lo[c]) {
        lut[c][v] = static_cast<uint8_t>(v);
        continue;
      }
      const auto ix = static_cast<int64_t>(v * scale + offset);  // int(): toward zero
      lut[c][v] = static_cast<uint8_t>(std::clamp<int64_t>(ix, 0, 255));
    }
  }
  uint8_t* const out = im.pixels;
  for (size_t i = 0; i < n; i += static_cast<size_t>(ch)) {
    for (int c = 0; c < ch; ++c) out[i + c] = lut[c][out[i + c]];
  }
}

std::array<uint8_t, 256> solarize_table(int threshold, int add) {
  std::array<uint8_t, 256> lut;
  for (int v = 0; v < 256; ++v) {
    if (add > 0) {  // timm's solarize_add: below the threshold, v + add (at most 255)
      lut[v] = static_cast<uint8_t>(v < threshold ? std::min(255, v + add) : v);
    } else {  // ImageOps.solarize: from the threshold up, inverted
      lut[v] = static_cast<uint8_t>(v < threshold ? v : 255 - v);
    }
  }
  return lut;
}

// Python's round(x, 15), which PIL's rotate applies to cos and sin: correctly rounded to 15
// decimals (glibc's printf rounds the exact binary value, as CPython's dtoa does).
double round15(double x) {
  char text[64];
  std::snprintf(text, sizeof text, "%.15f", x);
  return std::strtod(text, nullptr);
}

int pil_floor(double v) { return v < 0.0 ? static_cast<int>(std::floor(v)) : static_cast<int>(v); }

// Image.transform(size, AFFINE, a, resample, fillcolor) (Geometry.c's generic transform): each
// output pixel's centre (x + 0.5, y + 0.5) mapped by `a` into the input; outside it, the fill
// colour; inside, bilinear or bicubic taps on clamped coordinates in double, truncated.
void pil_affine(const PixelImage& im, const std::array<double, 6>& a, std::array<uint8_t, 3> fill,
                TimmResample resample, std::vector<uint8_t>& scratch) {
  const int w = im.width, h = im.height, ch = im.channels;
  scratch.assign(im.pixels, im.pixels + value_count(im));
  const uint8_t* const in = scratch.data();
  auto at = [&](int x, int y, int c) -> int {  // XCLIP / YCLIP
    x = x < 0 ? 0 : (x < w ? x : w - 1);
    y = y < 0 ? 0 : (y < h ? y : h - 1);
    return in[(static_cast<size_t>(y) * w + x) * ch + c];
  };
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double xo = x + 0.5, yo = y + 0.5;
      double xin = a[0] * xo + a[1] * yo + a[2];
      double yin = a[3] * xo + a[4] * yo + a[5];
      uint8_t* out = im.pixels + (static_cast<size_t>(y) * w + x) * ch;
      if (xin < 0.0 || xin >= w || yin < 0.0 || yin >= h) {
        for (int c = 0; c < ch; ++c) out[c] = fill[c];
        continue;
      }
      xin -= 0.5;
      yin -= 0.5;
      const int x0 = pil_floor(xin), y0 = pil_floor(yin);
      const double dx = xin - x0, dy = yin - y0;
      for (int c = 0; c < ch; ++c) {
        if (resample == TimmResample::kBilinear) {
          auto lerp_row = [&](int yy) {
            const int a0 = at(x0, yy, c), a1 = at(x0 + 1, yy, c);
            return a0 + (a1 - a0) * dx;
          };
          const double v1 = lerp_row(y0);
          const double v2 = (y0 + 1 >= 0 && y0 + 1 < h) ? lerp_row(y0 + 1) : v1;
          out[c] = static_cast<uint8_t>(v1 + (v2 - v1) * dy);
        } else {
          auto cubic = [](double v1, double v2, double v3, double v4, double d) {
            const double p1 = v2, p2 = -v1 + v3, p3 = 2 * (v1 - v2) + v3 - v4,
                         p4 = -v1 + v2 - v3 + v4;
            return p1 + d * (p2 + d * (p3 + d * p4));
          };
          const int xs = x0 - 1, ys = y0 - 1;
          auto row = [&](int yy) {
            return cubic(at(xs, yy, c), at(xs + 1, yy, c), at(xs + 2, yy, c), at(xs + 3, yy, c),
                         dx);
          };
          const double v1 = row(ys);
          const double v2 = (ys + 1 >= 0 && ys + 1 < h) ? row(ys + 1) : v1;
          const double v3 = (ys + 2 >= 0 && ys + 2 < h) ? row(ys + 2) : v2;
          const double v4 = (ys + 3 >= 0 && ys + 3 < h) ? row(ys + 3) : v3;
          const double v = cubic(v1, v2, v3, v4, dy);
          out[c] = v <= 0.0 ? 0 : (v >= 255.0 ? 255 : static_cast<uint8_t>(v));
        }
      }
    }
  }
}

// Image.rotate(degrees, resample, fillcolor) without expand: the fast paths, else PIL's matrix.
void pil_rotate(const PixelImage& im, double degrees, std::array<uint8_t, 3> fill,
                TimmResample resample, std::vector<uint8_t>& scratch) {
  double angle = 0;
  if (pixel_util::rotate_exactly(im, degrees, &angle, scratch)) return;  // Image.transpose
  const double r = -(angle * (std::numbers::pi / 180.0));                // -math.radians(angle)
  std::array<double, 6> m = {round15(std::cos(r)),  round15(std::sin(r)), 0.0,
                             round15(-std::sin(r)), round15(std::cos(r)), 0.0};
  const double cx = im.width / 2.0, cy = im.height / 2.0;
  const double tx = m[0] * -cx + m[1] * -cy + m[2], ty = m[3] * -cx + m[4] * -cy + m[5];
  m[2] = tx + cx;
  m[5] = ty + cy;
  pil_affine(im, m, fill, resample, scratch);
}

bool is_enhance_increasing(TimmOp op) {
  return op == TimmOp::kColorIncreasing || op == TimmOp::kContrastIncreasing ||
         op == TimmOp::kBrightnessIncreasing || op == TimmOp::kSharpnessIncreasing;
}

// "v0", "original": timm's AutoAugment policies (auto_augment_policy_*), as data.
struct Step {
  TimmOp op;
  double prob;
  int magnitude;
};
using P = TimmOp;
constexpr Step kOriginal[25][2] = {
    {{P::kPosterizeOriginal, 0.4, 8}, {P::kRotate, 0.6, 9}},
    {{P::kSolarize, 0.6, 5}, {P::kAutoContrast, 0.6, 5}},
    {{P::kEqualize, 0.8, 8}, {P::kEqualize, 0.6, 3}},
    {{P::kPosterizeOriginal, 0.6, 7}, {P::kPosterizeOriginal, 0.6, 6}},
    {{P::kEqualize, 0.4, 7}, {P::kSolarize, 0.2, 4}},
    {{P::kEqualize, 0.4, 4}, {P::kRotate, 0.8, 8}},
    {{P::kSolarize, 0.6, 3}, {P::kEqualize, 0.6, 7}},
    {{P::kPosterizeOriginal, 0.8, 5}, {P::kEqualize, 1.0, 2}},
    {{P::kRotate, 0.2, 3}, {P::kSolarize, 0.6, 8}},
    {{P::kEqualize, 0.6, 8}, {P::kPosterizeOriginal, 0.4, 6}},
    {{P::kRotate, 0.8, 8}, {P::kColor, 0.4, 0}},
    {{P::kRotate, 0.4, 9}, {P::kEqualize, 0.6, 2}},
    {{P::kEqualize, 0.0, 7}, {P::kEqualize, 0.8, 8}},
    {{P::kInvert, 0.6, 4}, {P::kEqualize, 1.0, 8}},
    {{P::kColor, 0.6, 4}, {P::kContrast, 1.0, 8}},
    {{P::kRotate, 0.8, 8}, {P::kColor, 1.0, 2}},
    {{P::kColor, 0.8, 8}, {P::kSolarize, 0.8, 7}},
    {{P::kSharpness, 0.4, 7}, {P::kInvert, 0.6, 8}},
    {{P::kShearX, 0.6, 5}, {P::kEqualize, 1.0, 9}},
    {{P::kColor, 0.4, 0}, {P::kEqualize, 0.6, 3}},
    {{P::kEqualize, 0.4, 7}, {P::kSolarize, 0.2, 4}},
    {{P::kSolarize, 0.6, 5}, {P::kAutoContrast, 0.6, 5}},
    {{P::kInvert, 0.6, 4}, {P::kEqualize, 1.0, 8}},
    {{P::kColor, 0.6, 4}, {P::kContrast, 1.0, 8}},
    {{P::kEqualize, 0.8, 8}, {P::kEqualize, 0.6, 3}},
};
constexpr Step kV0[25][2] = {
    {{P::kEqualize, 0.8, 1}, {P::kShearY, 0.8, 4}},
    {{P::kColor, 0.4, 9}, {P::kEqualize, 0.6, 3}},
    {{P::kColor, 0.4, 1}, {P::kRotate, 0.6, 8}},
    {{P::kSolarize, 0.8, 3}, {P::kEqualize, 0.4, 7}},
    {{P::kSolarize, 0.4, 2}, {P::kSolarize, 0.6, 2}},
    {{P::kColor, 0.2, 0}, {P::kEqualize, 0.8, 8}},
    {{P::kEqualize, 0.4, 8}, {P::kSolarizeAdd, 0.8, 3}},
    {{P::kShearX, 0.2, 9}, {P::kRotate, 0.6, 8}},
    {{P::kColor, 0.6, 1}, {P::kEqualize, 1.0, 2}},
    {{P::kInvert, 0.4, 9}, {P::kRotate, 0.6, 0}},
    {{P::kEqualize, 1.0, 9}, {P::kShearY, 0.6, 3}},
    {{P::kColor, 0.4, 7}, {P::kEqualize, 0.6, 0}},
    {{P::kPosterize, 0.4, 6}, {P::kAutoContrast, 0.4, 7}},
    {{P::kSolarize, 0.6, 8}, {P::kColor, 0.6, 9}},
    {{P::kSolarize, 0.2, 4}, {P::kRotate, 0.8, 9}},
    {{P::kRotate, 1.0, 7}, {P::kTranslateYRel, 0.8, 9}},
    {{P::kShearX, 0.0, 0}, {P::kSolarize, 0.8, 4}},
    {{P::kShearY, 0.8, 0}, {P::kColor, 0.6, 4}},
    {{P::kColor, 1.0, 0}, {P::kRotate, 0.6, 2}},
    {{P::kEqualize, 0.8, 4}, {P::kEqualize, 0.0, 8}},
    {{P::kEqualize, 1.0, 4}, {P::kAutoContrast, 0.6, 2}},
    {{P::kShearY, 0.4, 7}, {P::kSolarizeAdd, 0.6, 7}},
    {{P::kPosterize, 0.8, 2}, {P::kSolarize, 0.6, 10}},
    {{P::kSolarize, 0.6, 8}, {P::kEqualize, 0.6, 1}},
    {{P::kColor, 0.8, 6}, {P::kRotate, 0.4, 5}},
};

// timm's op lists for RandAugment (_RAND_TRANSFORMS, _RAND_INCREASING_TRANSFORMS), its
// "weights" choice (_RAND_WEIGHTED_0) and AugMix (_AUGMIX_TRANSFORMS).
constexpr TimmOp kRandOps[] = {P::kAutoContrast, P::kEqualize,      P::kInvert,       P::kRotate,
                               P::kPosterize,    P::kSolarize,      P::kSolarizeAdd,  P::kColor,
                               P::kContrast,     P::kBrightness,    P::kSharpness,    P::kShearX,
                               P::kShearY,       P::kTranslateXRel, P::kTranslateYRel};
constexpr TimmOp kRandIncreasingOps[] = {P::kAutoContrast,
                                         P::kEqualize,
                                         P::kInvert,
                                         P::kRotate,
                                         P::kPosterizeIncreasing,
                                         P::kSolarizeIncreasing,
                                         P::kSolarizeAdd,
                                         P::kColorIncreasing,
                                         P::kContrastIncreasing,
                                         P::kBrightnessIncreasing,
                                         P::kSharpnessIncreasing,
                                         P::kShearX,
                                         P::kShearY,
                                         P::kTranslateXRel,
                                         P::kTranslateYRel};
constexpr std::pair<TimmOp, double> kRandWeighted[] = {
    {P::kRotate, 3},
    {P::kShearX, 2},
    {P::kShearY, 2},
    {P::kTranslateXRel, 1},
    {P::kTranslateYRel, 1},
    {P::kColorIncreasing, .25},
    {P::kSharpnessIncreasing, 0.25},
    {P::kAutoContrast, 0.25},
    {P::kSolarizeIncreasing, .05},
    {P::kSolarizeAdd, .05},
    {P::kContrastIncreasing, .05},
    {P::kBrightnessIncreasing, .05},
    {P::kEqualize, .05},
    {P::kPosterizeIncreasing, 0.05},
    {P::kInvert, 0.05},
};
constexpr TimmOp kAugMixOps[] = {P::kAutoContrast,
                                 P::kColorIncreasing,
                                 P::kContrastIncreasing,
                                 P::kBrightnessIncreasing,
                                 P::kSharpnessIncreasing,
                                 P::kEqualize,
                                 P::kRotate,
                                 P::kPosterizeIncreasing,
                                 P::kSolarizeIncreasing,
                                 P::kShearX,
                                 P::kShearY,
                                 P::kTranslateXRel,
                                 P::kTranslateYRel};

// timm's numeric config sections: re.split(r'(\d.*)', section) -> key, value.
struct Section {
  std::string key, value;
};
std::vector<Section> sections(const std::string& config, std::string* head) {
  std::vector<Section> out;
  size_t pos = config.find('-');
  *head = config.substr(0, pos);
  while (pos != std::string::npos) {
    const size_t next = config.find('-', pos + 1);
    const std::string part =
        config.substr(pos + 1, next == std::string::npos ? next : next - pos - 1);
    pos = next;
    const size_t digit = part.find_first_of("0123456789");
    if (digit == std::string::npos) {
      out.push_back({part, ""});  // timm skips a section without a digit (except t<name>)
      continue;
    }
    out.push_back({part.substr(0, digit), part.substr(digit)});
  }
  return out;
}

double parse_number(const std::string& config, const Section& s) {
  char* end = nullptr;
  const double v = std::strtod(s.value.c_str(), &end);
  STOKER_CHECK_ARG(end != s.value.c_str() && *end == '\0' && std::isfinite(v),
                   "timm augment '{}': section '{}{}' is not a number", config, s.key, s.value);
  return v;
}

// Python's int() of the value string (timm's int(val)): an integer literal.
int parse_int(const std::string& config, const Section& s) {
  char* end = nullptr;
  const long v = std::strtol(s.value.c_str(), &end, 10);
  STOKER_CHECK_ARG(end != s.value.c_str() && *end == '\0' && v >= -1000000 && v <= 1000000,
                   "timm augment '{}': section '{}{}' is not an integer", config, s.key, s.value);
  return static_cast<int>(v);
}

double call_magnitude(const TimmOpSpec& spec, const TimmHparams& h, Rng& rng) {
  double m = spec.magnitude;
  if (h.magnitude_std > 0) {
    m = std::isinf(h.magnitude_std) ? rng.uniform(0, m) : m + h.magnitude_std * sample_normal(rng);
  }
  const double upper = h.magnitude_max > 0 ? h.magnitude_max : kLevelDenom;
  return std::max(0.0, std::min(m, upper));
}

// timm's AugmentOp.__call__.
void call_op(const TimmOpSpec& spec, const TimmHparams& h, Rng& rng, const PixelImage& im,
             std::vector<uint8_t>& scratch, std::vector<TimmApplied>* trace) {
  if (spec.prob < 1.0 && rng.uniform01() > spec.prob) return;
  const double level = call_magnitude(spec, h, rng);
  const bool negate = timm_op_is_signed(spec.op) && rng.uniform01() > 0.5;
  const double arg = timm_level_to_arg(spec.op, level, h, negate);
  TimmResample resample = h.resample;
  if (timm_op_is_geometric(spec.op) && resample == TimmResample::kRandom) {
    resample = rng.bounded(2) == 0 ? TimmResample::kBilinear : TimmResample::kBicubic;
  }
  apply_timm_op(spec.op, arg, im, h.fill, resample, scratch);
  if (trace != nullptr) trace->push_back({spec.op, arg, resample});
}

// AugMix: the chains' weighted sum in float32, clipped and truncated, blended with the image
// by m (timm's _apply_basic), or blended chain by chain (_apply_blended).
void augmix(const TimmAugment& a, Rng& rng, const PixelImage& im, std::vector<uint8_t>& scratch,
            std::vector<TimmApplied>* trace) {
  std::vector<double> gammas(static_cast<size_t>(a.width));
  double total = 0;
  for (double& g : gammas) total += (g = sample_gamma(rng, a.alpha));
  std::vector<float> weights(gammas.size());
  for (size_t i = 0; i < gammas.size(); ++i) weights[i] = static_cast<float>(gammas[i] / total);
  const auto m = static_cast<float>(sample_beta(rng, a.alpha));
  const size_t n = value_count(im);
  const std::vector<uint8_t> original(im.pixels, im.pixels + n);
  std::vector<uint8_t> chain(n);
  std::vector<float> mixed(a.blended ? 0 : n, 0.0f);
  const PixelImage chain_image{chain.data(), im.width, im.height, im.channels};
  // The blended variant's per-chain weights: ws * m, then w / cump from the last chain back.
  std::vector<float> blend_weights(weights.size());
  if (a.blended) {
    float cump = 1.0f;
    for (size_t k = weights.size(); k-- > 0;) {
      const float w = weights[k] * m;
      blend_weights[k] = w / cump;
      cump *= 1.0f - blend_weights[k];
    }
  }
  for (size_t k = 0; k < weights.size(); ++k) {
    const int depth = a.depth > 0 ? a.depth : static_cast<int>(rng.bounded(3)) + 1;
    std::copy(original.begin(), original.end(), chain.begin());
    for (int d = 0; d < depth; ++d) {
      const TimmOpSpec& spec = a.ops[rng.bounded(a.ops.size())];
      call_op(spec, a.hparams, rng, chain_image, scratch, trace);
    }
    if (a.blended) {
      for (size_t i = 0; i < n; ++i)
        im.pixels[i] = pil_blend(im.pixels[i], chain[i], blend_weights[k]);
    } else {
      for (size_t i = 0; i < n; ++i) mixed[i] += weights[k] * static_cast<float>(chain[i]);
    }
  }
  if (a.blended) return;
  for (size_t i = 0; i < n; ++i) {
    const auto v = static_cast<uint8_t>(std::min(std::max(mixed[i], 0.0f), 255.0f));
    im.pixels[i] = pil_blend(original[i], v, m);
  }
}

}  // namespace

const char* to_string(TimmOp op) { return kTimmOpNames[static_cast<size_t>(op)]; }

TimmOp parse_timm_op(const std::string& name) {
  for (size_t i = 0; i < kTimmOpNames.size(); ++i) {
    if (name == kTimmOpNames[i]) return static_cast<TimmOp>(i);
  }
  STOKER_THROW_ARG("unknown timm op '{}' (expected one of: {})", name,
                   fmt::join(kTimmOpNames, ", "));
}

bool timm_op_is_signed(TimmOp op) {
  return op == TimmOp::kRotate || op == TimmOp::kShearX || op == TimmOp::kShearY ||
         op == TimmOp::kTranslateX || op == TimmOp::kTranslateY || op == TimmOp::kTranslateXRel ||
         op == TimmOp::kTranslateYRel || is_enhance_increasing(op);
}

bool timm_op_is_geometric(TimmOp op) {
  return op == TimmOp::kRotate || op == TimmOp::kShearX || op == TimmOp::kShearY ||
         op == TimmOp::kTranslateX || op == TimmOp::kTranslateY || op == TimmOp::kTranslateXRel ||
         op == TimmOp::kTranslateYRel;
}

double timm_level_to_arg(TimmOp op, double level, const TimmHparams& h, bool negate) {
  const double sign = negate ? -1.0 : 1.0;
  const double f = level / kLevelDenom;
  switch (op) {
    case TimmOp::kAutoContrast:
    case TimmOp::kEqualize:
    case TimmOp::kInvert:
      return 0;
    case TimmOp::kRotate:
      return sign * (f * 30.0);
    case TimmOp::kPosterize:
      return std::trunc(f * 4);
    case TimmOp::kPosterizeIncreasing:
      return 4 - std::trunc(f * 4);
    case TimmOp::kPosterizeOriginal:
      return std::trunc(f * 4) + 4;
    case TimmOp::kSolarize:
      return std::min(256.0, std::trunc(f * 256));
    case TimmOp::kSolarizeIncreasing:
      return 256 - std::min(256.0, std::trunc(f * 256));
    case TimmOp::kSolarizeAdd:
      return std::min(128.0, std::trunc(f * 110));
    case TimmOp::kColor:
    case TimmOp::kContrast:
    case TimmOp::kBrightness:
    case TimmOp::kSharpness:
      return f * 1.8 + 0.1;
    case TimmOp::kColorIncreasing:
    case TimmOp::kContrastIncreasing:
    case TimmOp::kBrightnessIncreasing:
    case TimmOp::kSharpnessIncreasing:
      return std::max(0.1, 1.0 + sign * (f * .9));
    case TimmOp::kShearX:
    case TimmOp::kShearY:
      return sign * (f * 0.3);
    case TimmOp::kTranslateX:
    case TimmOp::kTranslateY:
      return sign * (f * h.translate_const);
    case TimmOp::kTranslateXRel:
    case TimmOp::kTranslateYRel:
      return sign * (f * h.translate_pct);
    case TimmOp::kDesaturate:  // _minmax_level_to_arg(min 0.5, max 1.0), clamped
      return std::max(0.5, std::min(1.0, 0.5 + (1.0 - 0.5) * f));
  }
  return 0;
}

void apply_timm_op(TimmOp op, double arg, const PixelImage& im, std::array<uint8_t, 3> fill,
                   TimmResample resample, std::vector<uint8_t>& scratch) {
  STOKER_CHECK(!timm_op_is_geometric(op) || resample != TimmResample::kRandom,
               "apply_timm_op: a geometric op needs bilinear or bicubic resampling");
  const auto factor = static_cast<float>(arg);  // Image.blend's alpha is a C float
  switch (op) {
    case TimmOp::kAutoContrast:
      return autocontrast(im);
    case TimmOp::kEqualize:  // torchvision's equalize is ImageOps.equalize's table
      return apply_pixel_op(PixelOp::kEqualize, 0, im, scratch);
    case TimmOp::kInvert:
      return apply_pixel_op(PixelOp::kInvert, 0, im, scratch);
    case TimmOp::kPosterize:
    case TimmOp::kPosterizeIncreasing:
    case TimmOp::kPosterizeOriginal:  // ImageOps.posterize keeps the top `arg` bits (0: black)
      return apply_pixel_op(PixelOp::kPosterize, arg, im, scratch);
    case TimmOp::kSolarize:
    case TimmOp::kSolarizeIncreasing:
      return apply_table(im, solarize_table(static_cast<int>(arg), 0));
    case TimmOp::kSolarizeAdd:
      if (arg <= 0) return;
      return apply_table(im, solarize_table(128, static_cast<int>(arg)));
    case TimmOp::kColor:
    case TimmOp::kColorIncreasing:
      return enhance_color(im, factor);
    case TimmOp::kDesaturate:  // Color with factor 1 - arg, clamped to [0, 1]
      return enhance_color(im, static_cast<float>(std::min(1.0, std::max(0.0, 1.0 - arg))));
    case TimmOp::kContrast:
    case TimmOp::kContrastIncreasing:
      return enhance_contrast(im, factor);
    case TimmOp::kBrightness:
    case TimmOp::kBrightnessIncreasing:
      return enhance_brightness(im, factor);
    case TimmOp::kSharpness:
    case TimmOp::kSharpnessIncreasing:
      return enhance_sharpness(im, factor, scratch);
    case TimmOp::kRotate:
      return pil_rotate(im, arg, fill, resample, scratch);
    case TimmOp::kShearX:
      return pil_affine(im, {1, arg, 0, 0, 1, 0}, fill, resample, scratch);
    case TimmOp::kShearY:
      return pil_affine(im, {1, 0, 0, arg, 1, 0}, fill, resample, scratch);
    case TimmOp::kTranslateX:
      return pil_affine(im, {1, 0, arg, 0, 1, 0}, fill, resample, scratch);
    case TimmOp::kTranslateY:
      return pil_affine(im, {1, 0, 0, 0, 1, arg}, fill, resample, scratch);
    case TimmOp::kTranslateXRel:
      return pil_affine(im, {1, 0, arg * im.width, 0, 1, 0}, fill, resample, scratch);
    case TimmOp::kTranslateYRel:
      return pil_affine(im, {1, 0, 0, 0, 1, arg * im.height}, fill, resample, scratch);
  }
}

void TimmHparams::validate() const {
  STOKER_CHECK_ARG(std::isfinite(translate_const) && std::isfinite(translate_pct),
                   "timm augment: translate_const and translate_pct must be finite");
  STOKER_CHECK_ARG(magnitude_std >= 0 && !std::isnan(magnitude_std),
                   "timm augment: magnitude_std {} must be >= 0", magnitude_std);
  STOKER_CHECK_ARG(std::isfinite(magnitude_max) && magnitude_max >= 0,
                   "timm augment: magnitude_max {} must be >= 0", magnitude_max);
}

void TimmAugment::validate() const {
  hparams.validate();
  for (const TimmOpSpec& s : ops) {
    STOKER_CHECK_ARG(s.prob >= 0 && s.prob <= 1 && std::isfinite(s.magnitude),
                     "timm augment '{}': op {} has prob {} and magnitude {}", config,
                     to_string(s.op), s.prob, s.magnitude);
  }
  switch (kind) {
    case Kind::kRandAugment:
      STOKER_CHECK_ARG(!ops.empty() && num_layers >= 0 && num_layers <= 100,
                       "timm augment '{}': needs ops and 0 <= n <= 100 (got n{})", config,
                       num_layers);
      STOKER_CHECK_ARG(weights.empty() || (weights.size() == ops.size() &&
                                           num_layers <= static_cast<int>(ops.size())),
                       "timm augment '{}': one weight per op, and n at most the op count "
                       "(weighted choice is without replacement)",
                       config);
      return;
    case Kind::kAutoAugment:
      STOKER_CHECK_ARG(!policy.empty(), "timm augment '{}': an empty policy", config);
      return;
    case Kind::kAugMix:
      STOKER_CHECK_ARG(!ops.empty() && width >= 1 && width <= 100 && depth <= 100 &&
                           std::isfinite(alpha) && alpha > 0,
                       "timm augment '{}': AugMix needs ops, 1 <= w <= 100, d <= 100 and a > 0",
                       config);
      return;
  }
}

TimmAugment parse_timm_augment(const std::string& config, const TimmHparams& hparams) {
  TimmAugment a;
  a.config = config;
  a.hparams = hparams;
  std::string head;
  const std::vector<Section> parts = sections(config, &head);
  // hparams.setdefault: a magnitude_std given by the caller wins over the string's.
  bool std_set = hparams.magnitude_std > 0;
  const bool max_given = hparams.magnitude_max > 0;
  auto set_std = [&](double v) {
    if (!std_set) a.hparams.magnitude_std = v;
    std_set = true;
  };
  if (head == "rand") {
    double magnitude = kLevelDenom, prob = 0.5;
    bool increasing = false;
    std::string choice;
    for (const Section& s : parts) {
      if (!s.key.empty() && s.key[0] == 't') {
        choice = s.key.substr(1) + s.value;
      } else if (s.value.empty()) {
        continue;
      } else if (s.key == "mstd") {
        const double v = parse_number(config, s);
        set_std(v > 100 ? std::numeric_limits<double>::infinity() : v);
      } else if (s.key == "mmax") {
        if (!max_given) a.hparams.magnitude_max = parse_int(config, s);
      } else if (s.key == "inc") {
        increasing = parse_int(config, s) != 0;
      } else if (s.key == "m") {
        magnitude = parse_int(config, s);
      } else if (s.key == "n") {
        a.num_layers = parse_int(config, s);
      } else if (s.key == "p") {
        prob = parse_number(config, s);
      } else {
        STOKER_THROW_ARG(
            "timm augment '{}': unknown RandAugment section '{}{}' (timm's are m, "
            "n, p, mstd, mmax, inc, t)",
            config, s.key, s.value);
      }
    }
    a.kind = TimmAugment::Kind::kRandAugment;
    if (choice == "weights") {
      for (const auto& [op, w] : kRandWeighted) {
        a.ops.push_back({op, prob, magnitude});
        a.weights.push_back(w);
      }
      double total = 0;
      for (const double w : a.weights) total += w;
      for (double& w : a.weights) w /= total;
    } else {
      STOKER_CHECK_ARG(choice.empty(),
                       "timm augment '{}': transform set 't{}' is not offered (stoker has timm's "
                       "default sets and 'tweights'; '3a' needs PIL's GaussianBlur)",
                       config, choice);
      for (const TimmOp op : increasing ? std::span<const TimmOp>(kRandIncreasingOps)
                                        : std::span<const TimmOp>(kRandOps)) {
        a.ops.push_back({op, prob, magnitude});
      }
    }
  } else if (head == "augmix") {
    double magnitude = 3;
    for (const Section& s : parts) {
      if (s.value.empty()) continue;
      if (s.key == "mstd") {
        set_std(parse_number(config, s));
      } else if (s.key == "m") {
        magnitude = parse_int(config, s);
      } else if (s.key == "w") {
        a.width = parse_int(config, s);
      } else if (s.key == "d") {
        a.depth = parse_int(config, s);
      } else if (s.key == "a") {
        a.alpha = parse_number(config, s);
      } else if (s.key == "b") {
        a.blended = parse_int(config, s) != 0;
      } else {
        STOKER_THROW_ARG(
            "timm augment '{}': unknown AugMix section '{}{}' (timm's are m, w, "
            "d, a, b, mstd)",
            config, s.key, s.value);
      }
    }
    set_std(std::numeric_limits<double>::infinity());  // timm: uniform unless mstd is given
    a.kind = TimmAugment::Kind::kAugMix;
    for (const TimmOp op : kAugMixOps) a.ops.push_back({op, 1.0, magnitude});
  } else if (head == "original" || head == "originalr" || head == "v0" || head == "v0r") {
    for (const Section& s : parts) {
      if (s.value.empty()) continue;
      STOKER_CHECK_ARG(s.key == "mstd",
                       "timm augment '{}': unknown AutoAugment section '{}{}' (timm's is mstd)",
                       config, s.key, s.value);
      set_std(parse_number(config, s));
    }
    a.kind = TimmAugment::Kind::kAutoAugment;
    const bool original = head.starts_with("original");
    // The "r" variants swap in PosterizeIncreasing (Google research's posterize).
    const bool research = head.back() == 'r';
    for (const auto& sub : original ? kOriginal : kV0) {
      std::array<TimmOpSpec, 2> steps;
      for (int i = 0; i < 2; ++i) {
        TimmOp op = sub[i].op;
        if (research && (op == TimmOp::kPosterizeOriginal || op == TimmOp::kPosterize)) {
          op = TimmOp::kPosterizeIncreasing;
        }
        steps[i] = {op, sub[i].prob, static_cast<double>(sub[i].magnitude)};
      }
      a.policy.push_back(steps);
    }
  } else {
    STOKER_THROW_ARG(
        "timm augment '{}': expected 'rand-...', 'augmix-...', 'original', "
        "'originalr', 'v0' or 'v0r' (stoker does not offer timm's '3a')",
        config);
  }
  a.validate();
  return a;
}

void apply_timm_augment(const TimmAugment& a, Rng& rng, const PixelImage& im,
                        std::vector<uint8_t>& scratch, std::vector<TimmApplied>* trace) {
  switch (a.kind) {
    case TimmAugment::Kind::kRandAugment: {
      // np.random.choice: with replacement when uniform; weighted, without replacement.
      std::vector<size_t> chosen;
      if (a.weights.empty()) {
        for (int i = 0; i < a.num_layers; ++i) chosen.push_back(rng.bounded(a.ops.size()));
      } else {
        std::vector<double> left = a.weights;
        for (int i = 0; i < a.num_layers; ++i) {
          double total = 0;
          for (const double w : left) total += w;
          double u = rng.uniform01() * total;
          size_t k = 0;
          while (k + 1 < left.size() && (left[k] == 0 || u >= left[k])) u -= left[k++];
          while (left[k] == 0) --k;  // rounding left u past the last weight still free
          chosen.push_back(k);
          left[k] = 0;
        }
      }
      for (const size_t k : chosen) call_op(a.ops[k], a.hparams, rng, im, scratch, trace);
      return;
    }
    case TimmAugment::Kind::kAutoAugment: {
      const auto& sub = a.policy[rng.bounded(a.policy.size())];
      for (const TimmOpSpec& spec : sub) call_op(spec, a.hparams, rng, im, scratch, trace);
      return;
    }
    case TimmAugment::Kind::kAugMix:
      return augmix(a, rng, im, scratch, trace);
  }
}

}  // namespace stoker
