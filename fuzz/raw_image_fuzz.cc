// libFuzzer harness for raw-pixel payloads (stoker/raw_image.h): probe, then decode a region
// chosen by the first input bytes. Anything may throw stoker::Error; nothing may crash.
#include <cstdint>
#include <span>
#include <vector>

#include "stoker/error.h"
#include "stoker/raw_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const stoker::Rect need{data[0] % 64, data[1] % 64, data[2] % 64 + 1, data[3] % 64 + 1};
  const std::span<const uint8_t> bytes(data + 4, size - 4);
  stoker::DecodeLimits limits;
  limits.max_pixels = 1 << 22;  // keep each run fast; the caps themselves are what is tested
  limits.max_memory_bytes = 1 << 24;
  try {
    if (!stoker::is_raw_image(bytes)) return 0;
    const stoker::RawImageInfo info = stoker::probe_raw(bytes, "fuzz", limits);
    stoker::DecodedRegion out;
    stoker::decode_raw_region(out, bytes, need, (info.width & 1) != 0 ? 1 : 3, "fuzz", limits);
  } catch (const stoker::Error&) {
  }
  return 0;
}
