// Image decoding and stateless augmentation kernels (the `image` layer).
//
// Kernels take outputs first, then inputs, then parameters; they keep no hidden state, and
// scratch memory is passed in by the caller (a worker thread reuses its buffers).
// All functions are thread-safe (no shared state). Failures throw stoker::Error whose message
// starts with the sample's name and says why ("a.jpg: premature end of JPEG data").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace stoker {

// kRaw: stoker's raw-pixel payload of packed datasets (raw_image.h).
enum class ImageFormat { kUnknown, kJpeg, kPng, kWebp, kRaw };
const char* to_string(ImageFormat format);

// Default caps against decompression bombs (README, "Limits against hostile data"):
// PIL's DecompressionBombError threshold in pixels, and 1 GiB of decoder working memory.
struct DecodeLimits {
  int64_t max_pixels = 178'956'970;
  int64_t max_memory_bytes = int64_t{1} << 30;
};

struct ImageHeader {
  ImageFormat format = ImageFormat::kUnknown;
  int width = 0;
  int height = 0;
};

// Reads only the header: format by magic bytes (not by file extension), dimensions.
// Throws for unknown formats, unreadable headers, or width*height above limits.max_pixels.
ImageHeader probe_image(std::span<const uint8_t> bytes, const std::string& name,
                        const DecodeLimits& limits = {});

// An integer rectangle in full-resolution pixel coordinates.
struct Rect {
  int x = 0, y = 0, width = 0, height = 0;
};

// Pixels decoded for a region, possibly at a reduced DCT scale.
// Pixel (u, v) of `pixels` is pixel (x0 + u, y0 + v) of the image scaled by `scale`,
// i.e. it covers full-resolution [(x0 + u) / scale, (x0 + u + 1) / scale) horizontally.
// The scaled image is scaled_width x scaled_height (libjpeg: ceil(width * scale)).
struct DecodedRegion {
  std::vector<uint8_t> pixels;  // HWC interleaved, `channels` per pixel; capacity reused
  int width = 0, height = 0, channels = 0;
  int x0 = 0, y0 = 0;
  int scaled_width = 0, scaled_height = 0;
  double scale = 1.0;  // 1/8, 1/4, 1/2 or 1

  // Describes `region` of an image_width x image_height image decoded at scale 1, and sizes
  // `pixels` for it (contents left to the decoder).
  void set_full_scale(const Rect& region, int image_width, int image_height, int channel_count) {
    width = region.width;
    height = region.height;
    channels = channel_count;
    x0 = region.x;
    y0 = region.y;
    scaled_width = image_width;
    scaled_height = image_height;
    scale = 1.0;
    pixels.resize(static_cast<size_t>(width) * height * channels);
  }
};

struct DecodeConfig {
  DecodeLimits limits;
  bool dct_scaling = true;  // false: always decode at scale 1 (exact/fidelity mode)
  // A JPEG with restart markers whose interval divides its MCU rows (stoker pack --mode jpeg
  // writes them) has only the restart segments around the region entropy-decoded; the
  // pixels are the same bytes either way. false: the whole scan down to the region's last row.
  bool restart_segments = true;
};

// Decodes at least the region `need` (clipped to the image) of an image whose header was
// probed, converting to `channels` (3 = RGB, 1 = luma by ITU-R 601-2 as PIL's convert("L")).
// JPEG: only the rows and iMCU columns that cover `need` are decoded, at the smallest DCT
// scale s in {1/8, 1/4, 1/2, 1} with need.width * s >= min_width and need.height * s >=
// min_height (s = 1 when dct_scaling is off or nothing smaller covers). Grayscale, CMYK and
// YCCK are converted to RGB; EXIF orientation is ignored, as torchvision does. A JPEG is bad
// (throws) when libjpeg-turbo fails, warns of a premature end of data, or the data has no
// end-of-image marker after the first scan, judged the same whatever the region.
// PNG (8/16-bit, palette, gray, alpha dropped as PIL's convert("RGB")) and WebP decode whole,
// then keep the region at scale 1.
void decode_region(DecodedRegion& out, std::span<const uint8_t> bytes, const ImageHeader& header,
                   const Rect& need, int min_width, int min_height, int channels,
                   const std::string& name, const DecodeConfig& options = {});

// A box in source pixel coordinates (fractional), as PIL's Image.resize(box=...).
struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// The filters of resize_antialiased: Pillow's BILINEAR (a triangle, support 1) and BICUBIC
// (Keys' cubic with a = -0.5, support 2), which torch's antialiased uint8 interpolate
// reproduces too (torchvision's Resize on PIL images and on tensors agree on them).
enum class ResizeFilter { kBilinear, kBicubic };

// The filter's support in source pixels at scale 1 (1 bilinear, 2 bicubic); a downscale by f
// widens it f times.
double resize_filter_support(ResizeFilter filter);

// Antialiased resize, the algorithm of PIL's Image.resize(size, BILINEAR or BICUBIC, box):
// the filter's support grows with the downscale factor, fixed-point coefficients, a
// horizontal pass to a uint8 intermediate (clipped) then a vertical pass, source taps clipped
// to the `bounds` box (PIL clips to the whole input image; a crop-then-resize clips to the
// crop). Filter positions are computed relative to the integer window floor/ceil of `bounds`,
// as if the input were cropped to it first, so bounds == box == an integer crop reproduces
// PIL's im.crop(box).resize(size, filter) bit for bit. Throws on an empty box or bounds.
// out: out_width x out_height x channels, HWC uint8. `scratch` is reused between calls.
void resize_antialiased(uint8_t* out, int out_width, int out_height, const uint8_t* in,
                        int in_width, int in_height, int channels, const Box& box,
                        const Box& bounds, std::vector<uint8_t>& scratch,
                        ResizeFilter filter = ResizeFilter::kBilinear);

// Nearest-neighbour resize as torch's interpolate(mode="nearest") on a tensor cropped to the
// integer window of `bounds` and resized to (bounds' size / box's scale): output pixel x reads
// source column bx0 + min(floor((x + ox) * sx), w - 1) with sx = box width / out_width in
// float32 and ox = (box.x0 - bx0) / sx rounded, likewise for rows. torchvision's
// Resize(NEAREST) / RandomResizedCrop(NEAREST) on uint8 tensors, crop offsets included.
void resize_nearest(uint8_t* out, int out_width, int out_height, const uint8_t* in, int in_width,
                    int in_height, int channels, const Box& box, const Box& bounds);

// uint8 HWC -> uint8 HWC, optionally mirrored left-right.
void copy_hwc(uint8_t* out, const uint8_t* in, int width, int height, int channels, bool flip);

// uint8 HWC -> float32 CHW, (v / 255 - mean[c]) / std[c], optionally mirrored left-right.
void normalize_to_chw(float* out, const uint8_t* in, int width, int height, int channels, bool flip,
                      const float* mean, const float* std);

// Encodes RGB or gray pixels as baseline JPEG (libjpeg-turbo, 4:2:0 for RGB), for tests, tools
// and packing. restart_interval > 0 writes a restart marker every that many MCUs (16x16
// pixels for RGB, 8x8 for gray), which decode_region uses to skip what a region does not need.
std::vector<uint8_t> encode_jpeg(const uint8_t* pixels, int width, int height, int channels,
                                 int quality, int restart_interval = 0);

}  // namespace stoker
