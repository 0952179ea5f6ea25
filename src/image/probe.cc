// Format detection by magic bytes and header-only dimension reads.

#include <algorithm>
#include <cstring>

#include "image/decoders.h"
#include "stoker/error.h"
#include "stoker/raw_image.h"
#include "util/check.h"

namespace stoker {

const char* to_string(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg:
      return "jpeg";
    case ImageFormat::kPng:
      return "png";
    case ImageFormat::kWebp:
      return "webp";
    case ImageFormat::kRaw:
      return "raw";
    case ImageFormat::kUnknown:
      break;
  }
  return "unknown";
}

namespace image {

void check_dimensions(int64_t width, int64_t height, const std::string& name,
                      const DecodeLimits& limits) {
  STOKER_CHECK_DATA(width > 0 && height > 0, "{}: invalid image size {}x{}", name, width, height);
  // Both factors fit in 32 bits for every format we read, so the product cannot overflow.
  STOKER_CHECK_DATA(width * height <= limits.max_pixels,
                    "{}: image is {}x{} = {} pixels, above the cap of {} pixels (DecodeLimits)",
                    name, width, height, width * height, limits.max_pixels);
}

}  // namespace image

namespace {

ImageFormat sniff(std::span<const uint8_t> b) {
  static constexpr uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return ImageFormat::kJpeg;
  if (b.size() >= 8 && std::memcmp(b.data(), kPng, 8) == 0) return ImageFormat::kPng;
  if (b.size() >= 12 && std::memcmp(b.data(), "RIFF", 4) == 0 &&
      std::memcmp(b.data() + 8, "WEBP", 4) == 0) {
    return ImageFormat::kWebp;
  }
  if (is_raw_image(b)) return ImageFormat::kRaw;
  return ImageFormat::kUnknown;
}

}  // namespace

ImageHeader probe_image(std::span<const uint8_t> bytes, const std::string& name,
                        const DecodeLimits& limits) {
  STOKER_CHECK_DATA(!bytes.empty(), "{}: empty file", name);
  ImageHeader header;
  switch (sniff(bytes)) {
    case ImageFormat::kJpeg:
      header = image::probe_jpeg(bytes, name, limits);
      break;
    case ImageFormat::kPng:
      header = image::probe_png(bytes, name);
      break;
    case ImageFormat::kWebp:
      header = image::probe_webp(bytes, name);
      break;
    case ImageFormat::kRaw: {
      const RawImageInfo raw = probe_raw(bytes, name, limits);
      header = ImageHeader{ImageFormat::kRaw, raw.width, raw.height};
      break;
    }
    case ImageFormat::kUnknown:
      STOKER_BAD_DATA("{}: not a JPEG, PNG or WebP image", name);
  }
  image::check_dimensions(header.width, header.height, name, limits);
  return header;
}

void decode_region(DecodedRegion& out, std::span<const uint8_t> bytes, const ImageHeader& header,
                   const Rect& need, int min_width, int min_height, int channels,
                   const std::string& name, const DecodeConfig& options) {
  STOKER_CHECK_ARG(channels == 1 || channels == 3, "{}: channels must be 1 or 3, not {}", name,
                   channels);
  STOKER_CHECK_DATA(!bytes.empty(), "{}: empty file", name);
  image::check_dimensions(header.width, header.height, name, options.limits);
  // Clip the request to the image; an empty request still decodes one pixel so the result
  // is a valid region.
  Rect r;
  r.x = std::clamp(need.x, 0, header.width - 1);
  r.y = std::clamp(need.y, 0, header.height - 1);
  const int64_t x1 = std::clamp<int64_t>(int64_t{need.x} + need.width, r.x + 1, header.width);
  const int64_t y1 = std::clamp<int64_t>(int64_t{need.y} + need.height, r.y + 1, header.height);
  r.width = static_cast<int>(x1 - r.x);
  r.height = static_cast<int>(y1 - r.y);
  switch (header.format) {
    case ImageFormat::kJpeg:
      image::decode_jpeg(out, bytes, header, r, min_width, min_height, channels, name, options);
      return;
    case ImageFormat::kPng:
      image::decode_png(out, bytes, header, r, channels, name, options);
      return;
    case ImageFormat::kWebp:
      image::decode_webp(out, bytes, header, r, channels, name, options);
      return;
    case ImageFormat::kRaw:
      decode_raw_region(out, bytes, r, channels, name, options.limits);
      return;
    case ImageFormat::kUnknown:
      break;
  }
  STOKER_BAD_DATA("{}: not a JPEG, PNG or WebP image", name);
}

}  // namespace stoker
