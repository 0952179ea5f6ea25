// WebP via libwebp: whole-image decode to RGB (alpha dropped without compositing, as PIL's
// convert("RGB")), then the requested region at scale 1.

#include <webp/decode.h>

#include <cstring>

#include "image/decoders.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker::image {

ImageHeader probe_webp(std::span<const uint8_t> bytes, const std::string& name) {
  int width = 0, height = 0;
  STOKER_CHECK_DATA(WebPGetInfo(bytes.data(), bytes.size(), &width, &height) != 0,
                    "{}: invalid or unsupported WebP header", name);
  return ImageHeader{ImageFormat::kWebp, width, height};
}

void decode_webp(DecodedRegion& out, std::span<const uint8_t> bytes, const ImageHeader& header,
                 const Rect& need, int channels, const std::string& name,
                 const DecodeConfig& options) {
  WebPBitstreamFeatures features;
  STOKER_CHECK_DATA(WebPGetFeatures(bytes.data(), bytes.size(), &features) == VP8_STATUS_OK,
                    "{}: invalid WebP data", name);
  STOKER_CHECK_DATA(!features.has_animation, "{}: animated WebP is not supported", name);
  STOKER_CHECK_DATA(features.width == header.width && features.height == header.height,
                    "{}: WebP is {}x{}, but its probed header said {}x{}", name, features.width,
                    features.height, header.width, header.height);
  const int64_t stride = int64_t{header.width} * 3;
  const int64_t total = stride * header.height;
  STOKER_CHECK_DATA(total <= options.limits.max_memory_bytes,
                    "{}: decoding needs {} bytes, above the cap of {} bytes (DecodeLimits)", name,
                    total, options.limits.max_memory_bytes);
  // Decode the whole image into the output buffer, then move the region to its front: every
  // destination byte lies at or before its source, so a forward pass never overwrites input.
  out.pixels.resize(static_cast<size_t>(total));
  STOKER_CHECK_DATA(
      WebPDecodeRGBInto(bytes.data(), bytes.size(), out.pixels.data(), static_cast<size_t>(total),
                        static_cast<int>(stride)) != nullptr,
      "{}: corrupt or truncated WebP data", name);
  uint8_t* base = out.pixels.data();
  for (int y = 0; y < need.height; ++y) {
    const uint8_t* in = base + (need.y + y) * stride + int64_t{need.x} * 3;
    uint8_t* o = base + int64_t{y} * need.width * channels;
    if (channels == 3) {
      std::memmove(o, in, static_cast<size_t>(need.width) * 3);
    } else {
      rgb_to_luma_row(o, in, need.width);
    }
  }
  out.set_full_scale(need, header.width, header.height, channels);
}

}  // namespace stoker::image
