// libFuzzer harness for image decoding through the public API (stoker/image.h): probe_image,
// then decode_region of a region, scale floor and channel count chosen by the first bytes.
//
// Input: 4 control bytes, then the encoded image (JPEG, PNG, WebP, or a raw payload: whatever
// the magic bytes say). Control: byte 0 -> region x/y, byte 1 -> region size, byte 2 -> the
// minimum decoded size (picks the DCT scale), byte 3 bit 0 -> 1 or 3 channels, bit 1 -> DCT
// scaling off. The pixel cap keeps every run fast; the caps themselves are part of what is
// tested. Anything may throw stoker::Error; nothing may crash, hang, leak or read out of bounds,
// and a decoded region must have the shape the header promised. For a JPEG, the GPU decode's
// check (image::jpeg_gpu_decodable) must judge it as the decoder does: a file it rejects is
// rejected by decode_region with the same message, and a file it hands to the GPU decodes.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>

#include "image/decoders.h"
#include "stoker/error.h"
#include "stoker/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const std::span<const uint8_t> bytes(data + 4, size - 4);
  stoker::DecodeConfig options;
  options.limits.max_pixels = 1 << 22;
  options.limits.max_memory_bytes = 1 << 26;
  options.dct_scaling = (data[3] & 2) == 0;
  const int channels = (data[3] & 1) != 0 ? 1 : 3;
  try {
    const stoker::ImageHeader header = stoker::probe_image(bytes, "fuzz", options.limits);
    if (header.width <= 0 || header.height <= 0 ||
        int64_t{header.width} * header.height > options.limits.max_pixels) {
      std::abort();  // probe must refuse these
    }
    // A region inside the image: offsets as fractions (byte 0), sizes as fractions (byte 1).
    stoker::Rect need;
    need.x = static_cast<int>(int64_t{header.width - 1} * (data[0] & 15) / 15);
    need.y = static_cast<int>(int64_t{header.height - 1} * (data[0] >> 4) / 15);
    need.width =
        std::max(1, static_cast<int>(int64_t{header.width - need.x} * ((data[1] & 15) + 1) / 16));
    need.height =
        std::max(1, static_cast<int>(int64_t{header.height - need.y} * ((data[1] >> 4) + 1) / 16));
    const int min_side = 1 + data[2];
    bool gpu_takes = false;
    std::optional<std::string> gpu_error;
    if (header.format == stoker::ImageFormat::kJpeg) {
      try {
        gpu_takes = stoker::image::jpeg_gpu_decodable(bytes, header, "fuzz", options);
      } catch (const stoker::Error& e) {
        gpu_error = e.what();
      }
    }
    stoker::DecodedRegion out;
    try {
      stoker::decode_region(out, bytes, header, need, min_side, min_side, channels, "fuzz",
                            options);
    } catch (const stoker::Error& e) {
      if (gpu_takes) std::abort();  // handed to the GPU, yet bad for the CPU decoder
      if (gpu_error && *gpu_error != e.what()) std::abort();  // bad, but for another reason
      throw;
    }
    if (gpu_error) std::abort();  // rejected by the check, decoded by the CPU
    // The contract: the region decoded covers `need` at its scale, with the asked channels.
    if (out.channels != channels || out.width <= 0 || out.height <= 0 ||
        out.pixels.size() != static_cast<size_t>(out.width) * out.height * out.channels ||
        out.x0 < 0 || out.y0 < 0 || out.x0 + out.width > out.scaled_width ||
        out.y0 + out.height > out.scaled_height) {
      std::abort();
    }
  } catch (const stoker::Error&) {
  }
  return 0;
}
