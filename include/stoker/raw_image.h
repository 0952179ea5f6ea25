// Raw-pixel images: the payload of a packed dataset's "raw" mode, a small self-describing
// header (magic "STKRAW01", docs/format.md) followed by HWC uint8 pixels,
// uncompressed or as one zstd frame. The image layer recognises it by its magic, as it does
// JPEG and PNG, so a raw payload flows through probe_image/decode_region unchanged.
//
// All functions are thread-safe (no shared state). Failures throw stoker::Error starting with
// the sample's name: "NAME: raw image: <reason>". Input is untrusted: every length is checked
// before use and the pixel count is capped by DecodeLimits.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stoker/image.h"

namespace stoker {

// True when `bytes` start with the raw-image magic (the rest is not checked).
bool is_raw_image(std::span<const uint8_t> bytes);

struct RawImageInfo {
  int width = 0;
  int height = 0;
  int channels = 0;     // 1 or 3
  int compression = 0;  // packed::RawCompression: 0 none, 1 zstd
};

// Reads and checks the header: magic, sizes within limits (pixels and memory), channels,
// compression, and (uncompressed) that the data length is exactly width * height * channels.
RawImageInfo probe_raw(std::span<const uint8_t> bytes, const std::string& name,
                       const DecodeLimits& limits = {});

// Decodes the region `need` (clipped to the image; an empty one still yields one pixel) at
// scale 1, converting to `channels` (3 -> 1 by PIL's convert("L"), 1 -> 3 by replication).
// Uncompressed data is copied row by row for the region only; a zstd frame is decompressed
// whole (its content size must equal width * height * channels).
void decode_raw_region(DecodedRegion& out, std::span<const uint8_t> bytes, const Rect& need,
                       int channels, const std::string& name, const DecodeLimits& limits = {});

// Encodes HWC uint8 pixels (channels 1 or 3); zstd_level 0 = uncompressed, 1..22 = zstd.
// Deterministic: the same pixels and level give the same bytes (single-threaded zstd).
std::vector<uint8_t> encode_raw_image(const uint8_t* pixels, int width, int height, int channels,
                                      int zstd_level);

}  // namespace stoker
