// torchvision v2's uint8 augmentations, op by op (torchvision/transforms/v2/functional/_color.py
// and _geometry.py, and the auto-augment policies of v2/_auto_augment.py). Like all of stoker
// this is built with -ffp-contract=off: torch rounds each float32 product and sum apart, except
// where its kernels fuse (add_ with alpha), which fused() below does on purpose; any other
// fusing would move values across the truncation points.

#include "stoker/augment_ops.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "image/pixel_image_util.h"
#include "stoker/error.h"
#include "stoker/timm_augment.h"
#include "util/check.h"

namespace stoker {
namespace {

constexpr std::array<const char*, 18> kOpNames = {
    "Identity",     "ShearX",   "ShearY",   "TranslateX", "TranslateY",   "Rotate",
    "Brightness",   "Color",    "Contrast", "Sharpness",  "Posterize",    "Solarize",
    "AutoContrast", "Equalize", "Invert",   "Hue",        "VerticalFlip", "Grayscale"};

// torch's .to(torch.uint8) of a float already clamped to [0, 255]: truncation.
uint8_t to_u8(float v) { return static_cast<uint8_t>(v); }
float clamp255(float v) { return std::min(std::max(v, 0.0f), 255.0f); }

using pixel_util::value_count;

// torch's add_(other, alpha) on float32 is a fused multiply-add in its vectorised kernels
// (fmadd(other, alpha, self)). a * b + c in double, rounded once to float, is that fma: the
// product of two floats is exact in double, and for the operands here (pixel values, factors
// of ordinary size) so is the sum, so the one rounding is the fma's. std::fma would be a slow
// libm call on x86-64 without -mfma.
float fused(float a, float b, float c) {
  return static_cast<float>(static_cast<double>(a) * b + static_cast<double>(c));
}

// Round half to even (nearbyint in the default rounding mode) for |v| < 2^22, and floor for
// 0 <= v < 2^31, without the libm calls that x86-64's baseline (no SSE4.1 round) makes of
// std::nearbyint and std::floor: adding and subtracting 1.5 * 2^23 rounds to an integer in
// the current (nearest-even) mode, and truncation is floor for non-negative values.
float round_even(float v) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  return (v + kMagic) - kMagic;
}
float floor_nonnegative(float v) { return static_cast<float>(static_cast<int32_t>(v)); }

// An op that maps each value through a function of the value alone (and its channel): one
// 256-entry table per channel, computed with the op's own arithmetic, then a lookup per value.
template <typename F>
void apply_lut(const PixelImage& im, F&& f) {
  const int ch = im.channels;
  std::array<std::array<uint8_t, 256>, 3> lut;
  for (int c = 0; c < ch; ++c) {
    for (int v = 0; v < 256; ++v) lut[c][v] = f(static_cast<uint8_t>(v), c);
  }
  uint8_t* const px = im.pixels;
  const size_t n = value_count(im);
  if (ch == 1) {
    for (size_t i = 0; i < n; ++i) px[i] = lut[0][px[i]];
  } else {
    for (size_t i = 0; i < n; i += 3) {
      px[i] = lut[0][px[i]];
      px[i + 1] = lut[1][px[i + 1]];
      px[i + 2] = lut[2][px[i + 2]];
    }
  }
}

// torch.linspace(start, end, steps)[i] in float32: start + step * i in the first half,
// end - step * (steps - 1 - i) in the second (aten's linspace kernel), each a fused
// multiply-add (its vectorised kernel's; checked against torch for every table used here).
double linspace(double start, double end, int steps, int i) {
  const auto s = static_cast<float>(start), e = static_cast<float>(end);
  if (steps == 1) return s;
  const float step = (e - s) / static_cast<float>(steps - 1);
  return i < steps / 2 ? fused(step, static_cast<float>(i), s)
                       : fused(-step, static_cast<float>(steps - 1 - i), e);
}

// (8 - (arange(bins) / ((bins - 1) / span))).round().int()[i], in float32.
double posterize_bits(int bins, double span, int i) {
  const auto div = static_cast<float>((bins - 1) / span);
  return std::nearbyint(8.0f - static_cast<float>(i) / div);
}

// Grayscale in float32: r.mul(0.2989).add_(g, alpha=0.587).add_(b, alpha=0.114), floored.
float gray_floor(const uint8_t* p) {
  const float l = fused(static_cast<float>(p[2]), 0.114f,
                        fused(static_cast<float>(p[1]), 0.587f, p[0] * 0.2989f));
  return floor_nonnegative(l);
}

// _blend(image, other, ratio): image.mul(ratio).add_(other, alpha=1 - ratio), clamped,
// truncated.
uint8_t blend(uint8_t v, float other, float ratio, float one_minus) {
  return to_u8(clamp255(fused(other, one_minus, static_cast<float>(v) * ratio)));
}

void adjust_brightness(const PixelImage& im, double factor) {
  const auto f = static_cast<float>(factor);
  apply_lut(im, [f](uint8_t v, int) { return to_u8(clamp255(v * f)); });
}

void adjust_saturation(const PixelImage& im, double factor) {
  if (im.channels == 1) return;
  const auto r = static_cast<float>(factor), q = static_cast<float>(1.0 - factor);
  uint8_t* const px = im.pixels;
  const size_t n = value_count(im);
  for (size_t i = 0; i < n; i += 3) {
    const float g = gray_floor(px + i);
    px[i] = blend(px[i], g, r, q);
    px[i + 1] = blend(px[i + 1], g, r, q);
    px[i + 2] = blend(px[i + 2], g, r, q);
  }
}

void adjust_contrast(const PixelImage& im, double factor) {
  const uint8_t* const px = im.pixels;
  const size_t n = value_count(im);
  double sum = 0;
  if (im.channels == 3) {
    for (size_t i = 0; i < n; i += 3) sum += gray_floor(px + i);
  } else {
    for (size_t i = 0; i < n; ++i) sum += px[i];
  }
  const double pixels = static_cast<double>(n / static_cast<size_t>(im.channels));
  const auto mean = static_cast<float>(sum / pixels);
  const auto r = static_cast<float>(factor), q = static_cast<float>(1.0 - factor);
  apply_lut(im, [=](uint8_t v, int) { return blend(v, mean, r, q); });
}

void adjust_sharpness(const PixelImage& im, double factor, std::vector<uint8_t>& scratch) {
  const int w = im.width, h = im.height, ch = im.channels;
  if (w <= 2 || h <= 2) return;
  scratch.assign(im.pixels, im.pixels + value_count(im));  // the input the blur reads
  const float a = static_cast<float>(1.0 / 13.0), b = static_cast<float>(5.0 / 13.0);
  const auto alpha = static_cast<float>(1.0 - factor);
  const ptrdiff_t row = static_cast<ptrdiff_t>(w) * ch;
  const uint8_t* const in = scratch.data();
  uint8_t* const out = im.pixels;
  for (int y = 1; y < h - 1; ++y) {
    for (ptrdiff_t x = ch; x < row - ch; ++x) {
      const uint8_t* s = in + y * row + x;
      // conv2d's taps in row-major order, each product rounded (no fused adds).
      float blur = 0;
      blur += s[-row - ch] * a;
      blur += s[-row] * a;
      blur += s[-row + ch] * a;
      blur += s[-ch] * a;
      blur += s[0] * b;
      blur += s[ch] * a;
      blur += s[row - ch] * a;
      blur += s[row] * a;
      blur += s[row + ch] * a;
      blur = round_even(blur);
      const float v = s[0];
      out[y * row + x] = to_u8(clamp255(fused(blur - v, alpha, v)));
    }
  }
}

void posterize(const PixelImage& im, int bits) {
  if (bits >= 8) return;
  const auto mask = static_cast<uint8_t>(((1 << bits) - 1) << (8 - bits));
  apply_lut(im, [mask](uint8_t v, int) { return static_cast<uint8_t>(v & mask); });
}

void solarize(const PixelImage& im, double threshold) {
  const auto t = static_cast<float>(threshold);
  apply_lut(im, [t](uint8_t v, int) {
    return static_cast<float>(v) >= t ? static_cast<uint8_t>(255 - v) : v;
  });
}

void invert(const PixelImage& im) {
  apply_lut(im, [](uint8_t v, int) { return static_cast<uint8_t>(255 - v); });
}

void autocontrast(const PixelImage& im) {
  const int ch = im.channels;
  const auto [lo, hi] = pixel_util::channel_range(im);
  std::array<float, 3> minimum{}, inv_scale{};
  for (int c = 0; c < ch; ++c) {
    minimum[c] = lo[c];
    inv_scale[c] = (static_cast<float>(hi[c]) - lo[c]) * static_cast<float>(1.0 / 255);
    if (lo[c] == hi[c]) minimum[c] = 0, inv_scale[c] = 1;
  }
  apply_lut(im, [&](uint8_t v, int c) {
    return to_u8(clamp255((static_cast<float>(v) - minimum[c]) / inv_scale[c]));
  });
}

// PIL's equalisation, as torchvision's equalize_image computes it: a LUT from the cumulative
// histogram with step = (pixels not of the largest present value) // 255.
void equalize(const PixelImage& im) {
  const int ch = im.channels;
  const uint8_t* const px = im.pixels;
  const size_t n = value_count(im), pixels = n / static_cast<size_t>(ch);
  std::array<std::array<int64_t, 256>, 3> hist{};
  for (size_t i = 0; i < n; i += static_cast<size_t>(ch)) {
    for (int c = 0; c < ch; ++c) ++hist[c][px[i + c]];
  }
  std::array<std::array<uint8_t, 256>, 3> lut{};
  for (int c = 0; c < ch; ++c) {
    int last = 255;
    while (last > 0 && hist[c][last] == 0) --last;
    const int64_t step = (static_cast<int64_t>(pixels) - hist[c][last]) / 255;
    if (step == 0) {  // torchvision returns such a channel as it is
      for (int v = 0; v < 256; ++v) lut[c][v] = static_cast<uint8_t>(v);
      continue;
    }
    int64_t cum = 0;
    for (int k = 1; k < 256; ++k) {
      cum += hist[c][k - 1];
      lut[c][k] = static_cast<uint8_t>(std::min<int64_t>(255, (cum + step / 2) / step));
    }
  }
  apply_lut(im, [&](uint8_t v, int c) { return lut[c][v]; });
}

// torch's float remainder by 1: the result has the divisor's sign. For the values here
// (in [-0.5, 1.5)) a - floor(a) and fmod + 1 are the same exact operations.
float remainder1(float a) {
  if (a < 0) return a + 1.0f;
  return a >= 1.0f ? a - 1.0f : a;
}

void adjust_hue(const PixelImage& im, double hue_factor) {
  if (im.channels == 1) return;
  const auto hf = static_cast<float>(hue_factor);
  const auto inv255 = static_cast<float>(1.0 / 255);
  const auto sixth = static_cast<float>(1.0 / 6.0);
  const float to_int = 255.0f + 1.0f - 1e-3f;  // to_dtype(float -> uint8, scale=True)
  static constexpr int kSelect[3][6] = {{0, 2, 1, 1, 3, 0}, {3, 0, 0, 2, 1, 1}, {1, 1, 3, 0, 0, 2}};
  uint8_t* const pixels = im.pixels;
  const size_t n = value_count(im);
  for (size_t i = 0; i < n; i += 3) {
    uint8_t* px = pixels + i;
    const float r = px[0] * inv255, g = px[1] * inv255, b = px[2] * inv255;
    // _rgb_to_hsv
    const float maxc = std::max(std::max(r, g), b), minc = std::min(std::min(r, g), b);
    const bool eqc = maxc == minc;
    const float range = maxc - minc;
    const float s = range / (eqc ? 1.0f : maxc);
    const float divisor = eqc ? 1.0f : range;
    const float rc = (maxc - r) / divisor, gc = (maxc - g) / divisor, bc = (maxc - b) / divisor;
    const bool neq_r = maxc != r, eq_g = maxc == g;
    const float hg = (rc + 2.0f - bc) * static_cast<float>(eq_g && neq_r);
    const float hr = (bc - gc) * static_cast<float>(!neq_r);
    const float hb = (gc + 4.0f - rc) * static_cast<float>(neq_r && !eq_g);
    // fmod(h / 6 + 1, 1) of a value in [0, 2]: exact subtraction.
    float hue = (hr + hg + hb) * sixth + 1.0f;
    hue = hue >= 1.0f ? hue - 1.0f : hue;
    hue = remainder1(hue + hf);
    // _hsv_to_rgb
    const float h6 = hue * 6.0f;
    const float fi = floor_nonnegative(h6);  // h6 in [0, 6]
    const float f = h6 - fi;
    int sector = static_cast<int>(fi) % 6;
    if (sector < 0) sector += 6;
    const float sxf = s * f, one_minus_s = 1.0f - s, v = maxc;
    const float q = std::clamp((1.0f - sxf) * v, 0.0f, 1.0f);
    const float t = std::clamp((sxf + one_minus_s) * v, 0.0f, 1.0f);
    const float p = std::clamp(one_minus_s * v, 0.0f, 1.0f);
    const std::array<float, 4> vpqt = {v, p, q, t};
    for (int c = 0; c < 3; ++c) px[c] = to_u8(vpqt[kSelect[c][sector]] * to_int);
  }
}

void vertical_flip(const PixelImage& im) {
  const size_t row = static_cast<size_t>(im.width) * im.channels;
  for (int top = 0, bottom = im.height - 1; top < bottom; ++top, --bottom) {
    std::swap_ranges(im.pixels + top * row, im.pixels + (top + 1) * row, im.pixels + bottom * row);
  }
}

// rgb_to_grayscale(num_output_channels=3): the floored luma in every channel.
void grayscale(const PixelImage& im) {
  if (im.channels == 1) return;
  uint8_t* const px = im.pixels;
  const size_t n = value_count(im);
  for (size_t i = 0; i < n; i += 3) {
    const auto l = static_cast<uint8_t>(gray_floor(px + i));
    px[i] = px[i + 1] = px[i + 2] = l;
  }
}

// _get_gaussian_kernel1d: softmax(-(linspace(-lim, lim, k) / sigma)^2) in float32,
// lim = (k - 1) / (2 sqrt 2).
std::vector<float> gaussian_kernel(int size, double sigma) {
  const double lim = (size - 1) / (2.0 * std::sqrt(2.0));
  std::vector<float> k(static_cast<size_t>(size));
  const auto s = static_cast<float>(sigma);
  float top = -INFINITY;
  for (int i = 0; i < size; ++i) {
    const float x = static_cast<float>(linspace(-lim, lim, size, i)) / s;
    k[i] = -(x * x);
    top = std::max(top, k[i]);
  }
  float sum = 0;
  for (float& v : k) sum += (v = std::exp(v - top));
  for (float& v : k) v /= sum;
  return k;
}

// Python's reflect padding index (torch.nn.functional.pad mode="reflect"), folded again for a
// kernel wider than the image.
int reflect(int i, int n) {
  if (n == 1) return 0;
  const int period = 2 * (n - 1);
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

// gaussian_blur_image on uint8: reflect-padded convolution in float32, rounded half to even.
// Done as two 1-D passes (the 2-D kernel is their outer product); torch's conv2d sums the
// same products in another order, so a value can differ by one where it rounds at .5
// (docs/transforms.md).
void gaussian_blur(const PixelImage& im, const std::array<int, 2>& kernel_size, double sigma,
                   std::vector<uint8_t>& scratch) {
  const int w = im.width, h = im.height, ch = im.channels;
  const std::vector<float> kx = gaussian_kernel(kernel_size[0], sigma);
  const std::vector<float> ky = gaussian_kernel(kernel_size[1], sigma);
  const int rx = kernel_size[0] / 2, ry = kernel_size[1] / 2;
  const size_t n = value_count(im);
  scratch.resize(n * sizeof(float));
  auto* rows = reinterpret_cast<float*>(scratch.data());  // the horizontal pass
  for (int y = 0; y < h; ++y) {
    const uint8_t* in = im.pixels + static_cast<size_t>(y) * w * ch;
    float* out = rows + static_cast<size_t>(y) * w * ch;
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < ch; ++c) {
        float acc = 0;
        for (int t = -rx; t <= rx; ++t) acc += in[reflect(x + t, w) * ch + c] * kx[t + rx];
        out[x * ch + c] = acc;
      }
    }
  }
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < ch; ++c) {
        float acc = 0;
        for (int t = -ry; t <= ry; ++t) {
          acc += rows[(static_cast<size_t>(reflect(y + t, h)) * w + x) * ch + c] * ky[t + ry];
        }
        im.pixels[(static_cast<size_t>(y) * w + x) * ch + c] =
            static_cast<uint8_t>(clamp255(round_even(acc)));
      }
    }
  }
}

// _get_inverse_affine_matrix(center, angle, translate, scale=1, shear), in double as Python.
std::array<double, 6> inverse_affine(double cx, double cy, double angle, double tx, double ty,
                                     double shear_x, double shear_y) {
  const double deg = std::numbers::pi / 180.0;
  const double rot = angle * deg, sx = shear_x * deg, sy = shear_y * deg;
  const double cos_sy = std::cos(sy), tan_sx = std::tan(sx), rot_minus_sy = rot - sy;
  const double cx_plus_tx = cx + tx, cy_plus_ty = cy + ty;
  const double a = std::cos(rot_minus_sy) / cos_sy;
  const double b = -(a * tan_sx + std::sin(rot));
  const double c = std::sin(rot_minus_sy) / cos_sy;
  const double d = std::cos(rot) - c * tan_sx;
  std::array<double, 6> m = {d, -b, 0.0, -c, a, 0.0};
  m[2] += cx - m[0] * cx_plus_tx - m[1] * cy_plus_ty;
  m[5] += cy - m[3] * cx_plus_tx - m[4] * cy_plus_ty;
  return m;
}

// _affine_grid + grid_sample(mode='nearest', padding_mode='zeros', align_corners=False), all
// in float32 as torch computes it.
void warp_nearest(const PixelImage& im, const std::array<double, 6>& m,
                  std::vector<uint8_t>& scratch) {
  const int w = im.width, h = im.height, ch = im.channels;
  scratch.assign(im.pixels, im.pixels + value_count(im));
  uint8_t* const pixels = im.pixels;
  const float hw = 0.5f * static_cast<float>(w), hh = 0.5f * static_cast<float>(h);
  const float r00 = static_cast<float>(m[0]) / hw, r10 = static_cast<float>(m[1]) / hw;
  const float r20 = static_cast<float>(m[2]) / hw;
  const float r01 = static_cast<float>(m[3]) / hh, r11 = static_cast<float>(m[4]) / hh;
  const float r21 = static_cast<float>(m[5]) / hh;
  const float sx = static_cast<float>(w) / 2, sy = static_cast<float>(h) / 2;
  for (int y = 0; y < h; ++y) {
    const float by = static_cast<float>(y) + (1.0f - static_cast<float>(h)) * 0.5f;
    for (int x = 0; x < w; ++x) {
      const float bx = static_cast<float>(x) + (1.0f - static_cast<float>(w)) * 0.5f;
      const float gx = bx * r00 + by * r10 + r20;
      const float gy = bx * r01 + by * r11 + r21;
      // Far outside (|v| >= 2^22, a degenerate shear) stays outside without exact rounding.
      const float ix = round_even(std::clamp((gx + 1.0f) * sx - 0.5f, -2.0f, w + 1.0f));
      const float iy = round_even(std::clamp((gy + 1.0f) * sy - 0.5f, -2.0f, h + 1.0f));
      uint8_t* out = pixels + (static_cast<size_t>(y) * w + x) * ch;
      if (ix >= 0 && ix < static_cast<float>(w) && iy >= 0 && iy < static_cast<float>(h)) {
        const uint8_t* in =
            scratch.data() + (static_cast<size_t>(iy) * w + static_cast<size_t>(ix)) * ch;
        for (int c = 0; c < ch; ++c) out[c] = in[c];
      } else {
        std::memset(out, 0, static_cast<size_t>(ch));
      }
    }
  }
}

void rotate(const PixelImage& im, double degrees, std::vector<uint8_t>& scratch) {
  // rotate_image's exact cases (torch.rot90) come before any grid.
  double angle = 0;
  if (pixel_util::rotate_exactly(im, degrees, &angle, scratch)) return;
  warp_nearest(im, inverse_affine(0, 0, -angle, 0, 0, 0, 0), scratch);
}

void shear(const PixelImage& im, double m, bool x_axis, std::vector<uint8_t>& scratch) {
  const double deg = std::atan(m) * 180.0 / std::numbers::pi;  // math.degrees(math.atan(m))
  // center=[0, 0] in pixels: relative to the image centre, (-w / 2, -h / 2).
  const double cx = -static_cast<double>(im.width) * 0.5,
               cy = -static_cast<double>(im.height) * 0.5;
  warp_nearest(im, inverse_affine(cx, cy, 0, 0, 0, x_axis ? deg : 0.0, x_axis ? 0.0 : deg),
               scratch);
}

// The ops of TrivialAugmentWide's and RandAugment's spaces, in torchvision's order (the op
// draw indexes it); whether an op has magnitudes and a drawn sign is has_magnitudes / is_signed.
constexpr std::array<PixelOp, 14> kWideSpace = {
    PixelOp::kIdentity,     PixelOp::kShearX,    PixelOp::kShearY,     PixelOp::kTranslateX,
    PixelOp::kTranslateY,   PixelOp::kRotate,    PixelOp::kBrightness, PixelOp::kColor,
    PixelOp::kContrast,     PixelOp::kSharpness, PixelOp::kPosterize,  PixelOp::kSolarize,
    PixelOp::kAutoContrast, PixelOp::kEqualize};

bool has_magnitudes(PixelOp op) {
  return op != PixelOp::kIdentity && op != PixelOp::kAutoContrast && op != PixelOp::kEqualize &&
         op != PixelOp::kInvert;
}

bool is_signed(PixelOp op) {
  return op != PixelOp::kPosterize && op != PixelOp::kSolarize && has_magnitudes(op);
}

// magnitudes[bin] of TrivialAugmentWide's space ("wide") or RandAugment's / AutoAugment's.
double space_magnitude(PixelOp op, bool wide, int bins, int bin, const PixelImage& im) {
  switch (op) {
    case PixelOp::kShearX:
    case PixelOp::kShearY:
      return linspace(0.0, wide ? 0.99 : 0.3, bins, bin);
    case PixelOp::kTranslateX:
      return linspace(0.0, wide ? 32.0 : 150.0 / 331.0 * im.width, bins, bin);
    case PixelOp::kTranslateY:
      return linspace(0.0, wide ? 32.0 : 150.0 / 331.0 * im.height, bins, bin);
    case PixelOp::kRotate:
      return linspace(0.0, wide ? 135.0 : 30.0, bins, bin);
    case PixelOp::kBrightness:
    case PixelOp::kColor:
    case PixelOp::kContrast:
    case PixelOp::kSharpness:
      return linspace(0.0, wide ? 0.99 : 0.9, bins, bin);
    case PixelOp::kPosterize:
      return posterize_bits(bins, wide ? 6.0 : 4.0, bin);
    case PixelOp::kSolarize:
      return linspace(1.0, 0.0, bins, bin);
    default:
      return 0.0;
  }
}

// Draws the sign of a signed op (torch.rand(()) <= 0.5 negates) and applies it.
void apply_drawn(PixelOp op, double magnitude, Rng& rng, const PixelImage& im,
                 std::vector<uint8_t>& scratch, std::vector<AppliedOp>* trace) {
  if (is_signed(op) && rng.uniform01() <= 0.5) magnitude = -magnitude;
  apply_pixel_op(op, magnitude, im, scratch);
  if (trace != nullptr) trace->push_back({op, magnitude});
}

struct PolicyStep {
  PixelOp op;
  double p;
  int bin;  // -1: no magnitude
};

// torchvision's AutoAugmentPolicy.IMAGENET.
constexpr PolicyStep kImageNetPolicy[25][2] = {
    {{PixelOp::kPosterize, 0.4, 8}, {PixelOp::kRotate, 0.6, 9}},
    {{PixelOp::kSolarize, 0.6, 5}, {PixelOp::kAutoContrast, 0.6, -1}},
    {{PixelOp::kEqualize, 0.8, -1}, {PixelOp::kEqualize, 0.6, -1}},
    {{PixelOp::kPosterize, 0.6, 7}, {PixelOp::kPosterize, 0.6, 6}},
    {{PixelOp::kEqualize, 0.4, -1}, {PixelOp::kSolarize, 0.2, 4}},
    {{PixelOp::kEqualize, 0.4, -1}, {PixelOp::kRotate, 0.8, 8}},
    {{PixelOp::kSolarize, 0.6, 3}, {PixelOp::kEqualize, 0.6, -1}},
    {{PixelOp::kPosterize, 0.8, 5}, {PixelOp::kEqualize, 1.0, -1}},
    {{PixelOp::kRotate, 0.2, 3}, {PixelOp::kSolarize, 0.6, 8}},
    {{PixelOp::kEqualize, 0.6, -1}, {PixelOp::kPosterize, 0.4, 6}},
    {{PixelOp::kRotate, 0.8, 8}, {PixelOp::kColor, 0.4, 0}},
    {{PixelOp::kRotate, 0.4, 9}, {PixelOp::kEqualize, 0.6, -1}},
    {{PixelOp::kEqualize, 0.0, -1}, {PixelOp::kEqualize, 0.8, -1}},
    {{PixelOp::kInvert, 0.6, -1}, {PixelOp::kEqualize, 1.0, -1}},
    {{PixelOp::kColor, 0.6, 4}, {PixelOp::kContrast, 1.0, 8}},
    {{PixelOp::kRotate, 0.8, 8}, {PixelOp::kColor, 1.0, 2}},
    {{PixelOp::kColor, 0.8, 8}, {PixelOp::kSolarize, 0.8, 7}},
    {{PixelOp::kSharpness, 0.4, 7}, {PixelOp::kInvert, 0.6, -1}},
    {{PixelOp::kShearX, 0.6, 5}, {PixelOp::kEqualize, 1.0, -1}},
    {{PixelOp::kColor, 0.4, 0}, {PixelOp::kEqualize, 0.6, -1}},
    {{PixelOp::kEqualize, 0.4, -1}, {PixelOp::kSolarize, 0.2, 4}},
    {{PixelOp::kSolarize, 0.6, 5}, {PixelOp::kAutoContrast, 0.6, -1}},
    {{PixelOp::kInvert, 0.6, -1}, {PixelOp::kEqualize, 1.0, -1}},
    {{PixelOp::kColor, 0.6, 4}, {PixelOp::kContrast, 1.0, 8}},
    {{PixelOp::kEqualize, 0.8, -1}, {PixelOp::kEqualize, 0.6, -1}},
};

void check_range(const std::optional<std::array<double, 2>>& r, const char* name, double lo,
                 double hi) {
  if (!r) return;
  const auto [a, b] = *r;
  STOKER_CHECK_ARG(std::isfinite(a) && std::isfinite(b) && lo <= a && a <= b && b <= hi,
                   "ColorJitter: {} range ({}, {}) must satisfy {} <= min <= max <= {}", name, a, b,
                   lo, hi);
}

}  // namespace

const char* to_string(PixelOp op) { return kOpNames[static_cast<size_t>(op)]; }

PixelOp parse_pixel_op(const std::string& name) {
  for (size_t i = 0; i < kOpNames.size(); ++i) {
    if (name == kOpNames[i]) return static_cast<PixelOp>(i);
  }
  STOKER_THROW_ARG("unknown pixel op '{}' (expected one of: {})", name, fmt::join(kOpNames, ", "));
}

void apply_pixel_op(PixelOp op, double magnitude, const PixelImage& im,
                    std::vector<uint8_t>& scratch) {
  switch (op) {
    case PixelOp::kIdentity:
      return;
    case PixelOp::kShearX:
      return shear(im, magnitude, true, scratch);
    case PixelOp::kShearY:
      return shear(im, magnitude, false, scratch);
    case PixelOp::kTranslateX:
    case PixelOp::kTranslateY: {
      const double t = std::trunc(magnitude);  // int(magnitude)
      if (t == 0) return;
      const bool x = op == PixelOp::kTranslateX;
      return warp_nearest(im, inverse_affine(0, 0, 0, x ? t : 0, x ? 0 : t, 0, 0), scratch);
    }
    case PixelOp::kRotate:
      return rotate(im, magnitude, scratch);
    case PixelOp::kBrightness:
      return adjust_brightness(im, 1.0 + magnitude);
    case PixelOp::kColor:
      return adjust_saturation(im, 1.0 + magnitude);
    case PixelOp::kContrast:
      return adjust_contrast(im, 1.0 + magnitude);
    case PixelOp::kSharpness:
      return adjust_sharpness(im, 1.0 + magnitude, scratch);
    case PixelOp::kPosterize:
      return posterize(im, static_cast<int>(magnitude));
    case PixelOp::kSolarize:
      return solarize(im, 255.0 * magnitude);
    case PixelOp::kAutoContrast:
      return autocontrast(im);
    case PixelOp::kEqualize:
      return equalize(im);
    case PixelOp::kInvert:
      return invert(im);
    case PixelOp::kHue:
      return adjust_hue(im, magnitude);
    case PixelOp::kVerticalFlip:
      return vertical_flip(im);
    case PixelOp::kGrayscale:
      return grayscale(im);
  }
}

void AugmentOp::validate() const {
  switch (kind) {
    case Kind::kTrivialAugmentWide:
      STOKER_CHECK_ARG(num_magnitude_bins >= 2 && num_magnitude_bins <= 1000,
                       "TrivialAugmentWide: num_magnitude_bins {} not in [2, 1000]",
                       num_magnitude_bins);
      return;
    case Kind::kRandAugment:
      STOKER_CHECK_ARG(num_magnitude_bins >= 2 && num_magnitude_bins <= 1000,
                       "RandAugment: num_magnitude_bins {} not in [2, 1000]", num_magnitude_bins);
      STOKER_CHECK_ARG(num_ops >= 0 && num_ops <= 100, "RandAugment: num_ops {} not in [0, 100]",
                       num_ops);
      STOKER_CHECK_ARG(magnitude >= 0 && magnitude < num_magnitude_bins,
                       "RandAugment: magnitude {} not in [0, num_magnitude_bins = {})", magnitude,
                       num_magnitude_bins);
      return;
    case Kind::kAutoAugment:
      return;
    case Kind::kColorJitter:
      check_range(brightness, "brightness", 0, 1e9);
      check_range(contrast, "contrast", 0, 1e9);
      check_range(saturation, "saturation", 0, 1e9);
      check_range(hue, "hue", -0.5, 0.5);
      return;
    case Kind::kVerticalFlip:
    case Kind::kGrayscale:
    case Kind::kRandomApply:
      STOKER_CHECK_ARG(p >= 0 && p <= 1, "augmentation: p {} not in [0, 1]", p);
      for (const AugmentOp& child : children) child.validate();
      return;
    case Kind::kGaussianBlur:
      for (const int k : kernel_size) {
        STOKER_CHECK_ARG(k >= 1 && k % 2 == 1 && k <= 255,
                         "GaussianBlur: kernel_size {} must be odd, in [1, 255]", k);
      }
      STOKER_CHECK_ARG(std::isfinite(sigma[0]) && std::isfinite(sigma[1]) && sigma[0] > 0 &&
                           sigma[0] <= sigma[1],
                       "GaussianBlur: sigma ({}, {}) must satisfy 0 < min <= max", sigma[0],
                       sigma[1]);
      return;
    case Kind::kTimm:
      STOKER_CHECK_ARG(timm != nullptr, "timm augment: no policy set");
      timm->validate();
      return;
  }
}

void apply_augment_op(const AugmentOp& op, Rng& rng, const PixelImage& im,
                      std::vector<uint8_t>& scratch, std::vector<AppliedOp>* trace) {
  switch (op.kind) {
    case AugmentOp::Kind::kTrivialAugmentWide: {
      const PixelOp op_drawn = kWideSpace[rng.bounded(kWideSpace.size())];
      double magnitude = 0;
      if (has_magnitudes(op_drawn)) {
        const auto bin =
            static_cast<int>(rng.bounded(static_cast<uint64_t>(op.num_magnitude_bins)));
        magnitude = space_magnitude(op_drawn, true, op.num_magnitude_bins, bin, im);
      }
      return apply_drawn(op_drawn, magnitude, rng, im, scratch, trace);
    }
    case AugmentOp::Kind::kRandAugment:
      for (int i = 0; i < op.num_ops; ++i) {
        const PixelOp op_drawn = kWideSpace[rng.bounded(kWideSpace.size())];
        const double magnitude =
            has_magnitudes(op_drawn)
                ? space_magnitude(op_drawn, false, op.num_magnitude_bins, op.magnitude, im)
                : 0.0;
        apply_drawn(op_drawn, magnitude, rng, im, scratch, trace);
      }
      return;
    case AugmentOp::Kind::kAutoAugment: {
      const auto& policy = kImageNetPolicy[rng.bounded(25)];
      for (const PolicyStep& step : policy) {
        if (!(rng.uniform01() <= step.p)) continue;
        const double magnitude =
            step.bin >= 0 ? space_magnitude(step.op, false, 10, step.bin, im) : 0.0;
        apply_drawn(step.op, magnitude, rng, im, scratch, trace);
      }
      return;
    }
    case AugmentOp::Kind::kColorJitter: {
      std::array<int, 4> order = {0, 1, 2, 3};
      for (int i = 3; i > 0; --i) {
        std::swap(order[i], order[rng.bounded(static_cast<uint64_t>(i + 1))]);
      }
      const std::array<const std::optional<std::array<double, 2>>*, 4> ranges = {
          &op.brightness, &op.contrast, &op.saturation, &op.hue};
      std::array<double, 4> factor{};
      for (int i = 0; i < 4; ++i) {
        if (*ranges[i]) factor[i] = rng.uniform((**ranges[i])[0], (**ranges[i])[1]);
      }
      // The four adjustments with their factors (not apply_pixel_op's 1 + m), and the op each
      // is in a trace.
      struct Adjustment {
        void (*apply)(const PixelImage&, double);
        PixelOp op;
      };
      static constexpr Adjustment kAdjustments[4] = {{adjust_brightness, PixelOp::kBrightness},
                                                     {adjust_contrast, PixelOp::kContrast},
                                                     {adjust_saturation, PixelOp::kColor},
                                                     {adjust_hue, PixelOp::kHue}};
      for (const int i : order) {
        if (!*ranges[i]) continue;
        kAdjustments[i].apply(im, factor[i]);
        if (trace != nullptr) {
          trace->push_back({kAdjustments[i].op, i == 3 ? factor[3] : factor[i] - 1.0});
        }
      }
      return;
    }
    case AugmentOp::Kind::kVerticalFlip:
    case AugmentOp::Kind::kGrayscale: {
      if (!(rng.uniform01() < op.p)) return;
      const PixelOp pixel_op =
          op.kind == AugmentOp::Kind::kVerticalFlip ? PixelOp::kVerticalFlip : PixelOp::kGrayscale;
      apply_pixel_op(pixel_op, 0, im, scratch);
      if (trace != nullptr) trace->push_back({pixel_op, 0});
      return;
    }
    case AugmentOp::Kind::kGaussianBlur:
      return gaussian_blur(im, op.kernel_size, rng.uniform(op.sigma[0], op.sigma[1]), scratch);
    case AugmentOp::Kind::kRandomApply:
      if (!(rng.uniform01() < op.p)) return;
      for (const AugmentOp& child : op.children) apply_augment_op(child, rng, im, scratch, trace);
      return;
    case AugmentOp::Kind::kTimm:
      return apply_timm_augment(*op.timm, rng, im, scratch);
  }
}

void ErasingConfig::validate() const {
  STOKER_CHECK_ARG(p >= 0 && p <= 1, "RandomErasing: p {} not in [0, 1]", p);
  STOKER_CHECK_ARG(
      std::isfinite(scale[0]) && std::isfinite(scale[1]) && scale[0] >= 0 && scale[0] <= scale[1],
      "RandomErasing: scale ({}, {}) must satisfy 0 <= min <= max", scale[0], scale[1]);
  STOKER_CHECK_ARG(
      std::isfinite(ratio[0]) && std::isfinite(ratio[1]) && ratio[0] > 0 && ratio[0] <= ratio[1],
      "RandomErasing: ratio ({}, {}) must satisfy 0 < min <= max", ratio[0], ratio[1]);
  for (const float v : value) {
    STOKER_CHECK_ARG(std::isfinite(v), "RandomErasing: value {} must be finite", v);
  }
  STOKER_CHECK_ARG(min_count >= 1 && min_count <= max_count && max_count <= kMaxEraseBoxes,
                   "RandomErasing: counts ({}, {}) must satisfy 1 <= min_count <= max_count <= {}",
                   min_count, max_count, kMaxEraseBoxes);
  STOKER_CHECK_ARG(timm || max_count == 1, "RandomErasing: several boxes are timm's (timm=True)");
}

ErasePlan sample_erasing(Rng& rng, int width, int height, const ErasingConfig& config) {
  ErasePlan plan;
  if (config.timm ? rng.uniform01() > config.p : !(rng.uniform01() < config.p)) return plan;
  const int count = config.min_count == config.max_count
                        ? config.min_count
                        : config.min_count + static_cast<int>(rng.bounded(static_cast<uint64_t>(
                                                 config.max_count - config.min_count + 1)));
  const double area = static_cast<double>(width) * height;
  const double log_r0 = std::log(config.ratio[0]), log_r1 = std::log(config.ratio[1]);
  for (int b = 0; b < (config.timm ? count : 1); ++b) {
    for (int attempt = 0; attempt < 10; ++attempt) {
      const double erase_area = config.timm
                                    ? rng.uniform(config.scale[0], config.scale[1]) * area / count
                                    : area * rng.uniform(config.scale[0], config.scale[1]);
      const double aspect = std::exp(rng.uniform(log_r0, log_r1));
      // int(round(...)): Python's round is half to even.
      const auto h = static_cast<int64_t>(std::nearbyint(std::sqrt(erase_area * aspect)));
      const auto w = static_cast<int64_t>(std::nearbyint(std::sqrt(erase_area / aspect)));
      if (!(h < height && w < width)) continue;
      EraseBox& box = plan.boxes[plan.count++];
      box.height = static_cast<int>(h);
      box.width = static_cast<int>(w);
      box.top = static_cast<int>(rng.bounded(static_cast<uint64_t>(height - h + 1)));
      box.left = static_cast<int>(rng.bounded(static_cast<uint64_t>(width - w + 1)));
      break;
    }
  }
  return plan;
}

}  // namespace stoker
