// Internal interface between the image layer's files: one probe and one decoder per format.
// Not part of the public API (include/stoker/image.h is).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "image/simd.h"
#include "stoker/image.h"

namespace stoker::image {

// Width and height from the format's own header parser. Throw stoker::Error on failure.
ImageHeader probe_jpeg(std::span<const uint8_t> bytes, const std::string& name,
                       const DecodeLimits& limits);
ImageHeader probe_png(std::span<const uint8_t> bytes, const std::string& name);
ImageHeader probe_webp(std::span<const uint8_t> bytes, const std::string& name);

// Throws unless width x height is a sane, non-empty size within the pixel cap.
void check_dimensions(int64_t width, int64_t height, const std::string& name,
                      const DecodeLimits& limits);

// `need` is already clipped to the image and non-empty.
void decode_jpeg(DecodedRegion& out, std::span<const uint8_t> bytes, const ImageHeader& header,
                 const Rect& need, int min_width, int min_height, int channels,
                 const std::string& name, const DecodeConfig& options);
// The worker's half of the GPU decode (cuda layer, nvJPEG): decode_jpeg's first phase on the whole
// image at scale 1, so that a file it rejects throws decode_jpeg's own bad-data error, then
// whether the GPU may decode the file: one baseline or extended Huffman scan of 8-bit YCbCr (both
// chroma components sampled alike) or gray, and no marker but restarts before the end of image.
// For such a file libjpeg-turbo meets nothing after this phase that it could fail on (corrupt
// entropy data only warns), so the GPU path judges it exactly as decode_jpeg does; the other
// files (progressive, CMYK, RGB, 12-bit, ...) are decoded on the CPU. Throws stoker::Error.
bool jpeg_gpu_decodable(std::span<const uint8_t> bytes, const ImageHeader& header,
                        const std::string& name, const DecodeConfig& options);
// The pixels [x, x + width) x [y, y + height) whose restart segments decode_jpeg entropy-decodes
// for `need` at scale scale_num / 8, or nullopt when it decodes the file the ordinary way (no
// usable restart markers, or a cut would not save work). For tests and benchmarks.
std::optional<Rect> jpeg_restart_cut(std::span<const uint8_t> bytes, const ImageHeader& header,
                                     const Rect& need, int scale_num);
// Whole-image decoders (HWC RGB or gray) followed by a crop to `need` at scale 1.
void decode_png(DecodedRegion& out, std::span<const uint8_t> bytes, const ImageHeader& header,
                const Rect& need, int channels, const std::string& name,
                const DecodeConfig& options);
void decode_webp(DecodedRegion& out, std::span<const uint8_t> bytes, const ImageHeader& header,
                 const Rect& need, int channels, const std::string& name,
                 const DecodeConfig& options);

// PIL's convert("L") of one RGB pixel (ITU-R 601-2 in 16-bit fixed point, rounded).
inline uint8_t rgb_to_luma(uint8_t r, uint8_t g, uint8_t b) {
  return static_cast<uint8_t>((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}

// normalize_to_chw with a chosen SIMD level (at most best_simd_level()), so tests can hold every
// kernel to the scalar one: kAvx2 and kAvx512 run the AVX2 kernel, kAvx512Vbmi the AVX-512 one.
// All levels give the same floats.
void normalize_to_chw_at(SimdLevel level, float* out, const uint8_t* in, int width, int height,
                         int channels, bool flip, const float* mean, const float* std);

// In-place RGB -> L over `count` pixels (out may alias in: it writes behind the reads).
void rgb_to_luma_row(uint8_t* out, const uint8_t* in, int64_t count);

}  // namespace stoker::image
