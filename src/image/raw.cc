// Raw-pixel images (stoker/raw_image.h): the packed format's "raw" payload.

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "image/decoders.h"
#include "io/packed_format.h"
#include "stoker/error.h"
#include "stoker/raw_image.h"
#include "util/check.h"

namespace stoker {
namespace {

using packed::load_u32;

struct DctxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};
struct CctxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

// Decompression context per thread: creating one costs more than decoding a small image.
ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DctxDeleter> dctx(ZSTD_createDCtx());
  return dctx.get();
}

// Writes `count` pixels of `from` channels as `to` channels (1 <-> 3 or same).
void convert_row(uint8_t* out, const uint8_t* in, int64_t count, int from, int to) {
  if (from == to) {
    std::memcpy(out, in, static_cast<size_t>(count) * from);
  } else if (from == 3) {  // to == 1
    for (int64_t i = 0; i < count; ++i) {
      out[i] = image::rgb_to_luma(in[3 * i], in[3 * i + 1], in[3 * i + 2]);
    }
  } else {  // 1 -> 3
    for (int64_t i = 0; i < count; ++i) out[3 * i] = out[3 * i + 1] = out[3 * i + 2] = in[i];
  }
}

}  // namespace

bool is_raw_image(std::span<const uint8_t> bytes) {
  return bytes.size() >= sizeof packed::kRawMagic &&
         std::memcmp(bytes.data(), packed::kRawMagic, sizeof packed::kRawMagic) == 0;
}

RawImageInfo probe_raw(std::span<const uint8_t> bytes, const std::string& name,
                       const DecodeLimits& limits) {
  STOKER_CHECK_DATA(is_raw_image(bytes), "{}: raw image: bad magic", name);
  STOKER_CHECK_DATA(bytes.size() >= packed::kRawHeaderSize,
                    "{}: raw image: truncated header ({} bytes)", name, bytes.size());
  const uint8_t* h = bytes.data();
  RawImageInfo info;
  const uint32_t width = load_u32(h + packed::raw::kWidth);
  const uint32_t height = load_u32(h + packed::raw::kHeight);
  info.channels = h[packed::raw::kChannels];
  info.compression = h[packed::raw::kCompression];
  const uint32_t data_length = load_u32(h + packed::raw::kDataLength);
  STOKER_CHECK_DATA(width > 0 && height > 0 && width <= (1u << 30) && height <= (1u << 30),
                    "{}: raw image: invalid size {}x{}", name, width, height);
  image::check_dimensions(width, height, name, limits);
  info.width = static_cast<int>(width);
  info.height = static_cast<int>(height);
  STOKER_CHECK_DATA(info.channels == 1 || info.channels == 3, "{}: raw image: {} channels (1 or 3)",
                    name, info.channels);
  STOKER_CHECK_DATA(info.compression <= static_cast<int>(packed::RawCompression::kZstd),
                    "{}: raw image: unknown compression {}", name, info.compression);
  STOKER_CHECK_DATA(packed::load_u16(h + packed::raw::kReserved) == 0,
                    "{}: raw image: reserved header bytes are not zero", name);
  STOKER_CHECK_DATA(data_length == bytes.size() - packed::kRawHeaderSize,
                    "{}: raw image: header says {} data bytes, {} follow", name, data_length,
                    bytes.size() - packed::kRawHeaderSize);
  const uint64_t pixel_bytes = uint64_t{width} * height * info.channels;
  STOKER_CHECK_DATA(pixel_bytes <= static_cast<uint64_t>(limits.max_memory_bytes),
                    "{}: raw image: {} bytes of pixels, above the memory cap of {}", name,
                    pixel_bytes, limits.max_memory_bytes);
  if (info.compression == 0) {
    STOKER_CHECK_DATA(data_length == pixel_bytes,
                      "{}: raw image: {} data bytes for {}x{}x{} pixels ({} expected)", name,
                      data_length, width, height, info.channels, pixel_bytes);
  }
  return info;
}

void decode_raw_region(DecodedRegion& out, std::span<const uint8_t> bytes, const Rect& need,
                       int channels, const std::string& name, const DecodeLimits& limits) {
  STOKER_CHECK_ARG(channels == 1 || channels == 3, "{}: channels must be 1 or 3, not {}", name,
                   channels);
  const RawImageInfo info = probe_raw(bytes, name, limits);
  // Clip as decode_region does, so this is safe to call directly too.
  Rect r;
  r.x = std::clamp(need.x, 0, info.width - 1);
  r.y = std::clamp(need.y, 0, info.height - 1);
  r.width = static_cast<int>(
      std::clamp<int64_t>(int64_t{need.x} + need.width, r.x + 1, info.width) - r.x);
  r.height = static_cast<int>(
      std::clamp<int64_t>(int64_t{need.y} + need.height, r.y + 1, info.height) - r.y);

  const uint8_t* data = bytes.data() + packed::kRawHeaderSize;
  const size_t data_length = bytes.size() - packed::kRawHeaderSize;
  const size_t row_bytes = static_cast<size_t>(info.width) * info.channels;
  const size_t pixel_bytes = row_bytes * info.height;
  thread_local std::vector<uint8_t> whole;  // zstd only
  constexpr size_t kKeptZstdBuffer = size_t{16} << 20;
  const uint8_t* pixels = data;
  if (info.compression == static_cast<int>(packed::RawCompression::kZstd)) {
    const unsigned long long content = ZSTD_getFrameContentSize(data, data_length);
    STOKER_CHECK_DATA(content == pixel_bytes,
                      "{}: raw image: zstd frame content size {} does not match {}x{}x{}", name,
                      content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR
                          ? std::string("unknown")
                          : std::to_string(content),
                      info.width, info.height, info.channels);
    // Per thread and reused: a fresh vector per image would be a new mapping (above malloc's
    // mmap threshold), page faults and zeroing for every record. An outsized image's buffer is
    // not kept (below), so a thread holds at most kKeptZstdBuffer bytes between images.
    if (whole.size() < pixel_bytes) whole.resize(pixel_bytes);
    ZSTD_DCtx* dctx = thread_dctx();
    STOKER_CHECK(dctx != nullptr, "{}: raw image: cannot create a zstd context", name);
    const size_t n = ZSTD_decompressDCtx(dctx, whole.data(), pixel_bytes, data, data_length);
    STOKER_CHECK_DATA(!ZSTD_isError(n), "{}: raw image: zstd: {}", name, ZSTD_getErrorName(n));
    STOKER_CHECK_DATA(n == pixel_bytes, "{}: raw image: zstd frame holds {} bytes, {} expected",
                      name, n, pixel_bytes);
    pixels = whole.data();
  }

  out.set_full_scale(r, info.width, info.height, channels);
  for (int y = 0; y < r.height; ++y) {
    const uint8_t* src = pixels + row_bytes * (r.y + y) + static_cast<size_t>(r.x) * info.channels;
    uint8_t* dst = out.pixels.data() + static_cast<size_t>(y) * r.width * channels;
    convert_row(dst, src, r.width, info.channels, channels);
  }
  if (whole.capacity() > kKeptZstdBuffer) std::vector<uint8_t>().swap(whole);
}

std::vector<uint8_t> encode_raw_image(const uint8_t* pixels, int width, int height, int channels,
                                      int zstd_level) {
  STOKER_CHECK_ARG(width > 0 && height > 0 && (channels == 1 || channels == 3),
                   "raw image: cannot encode {}x{}x{}", width, height, channels);
  STOKER_CHECK_ARG(zstd_level >= 0 && zstd_level <= ZSTD_maxCLevel(),
                   "raw image: zstd level {} out of range [0, {}]", zstd_level, ZSTD_maxCLevel());
  const size_t pixel_bytes = static_cast<size_t>(width) * height * channels;
  std::vector<uint8_t> out;
  if (zstd_level == 0) {
    // resize + memcpy rather than insert: GCC 12 warns falsely (-Warray-bounds) on the latter.
    out.resize(packed::kRawHeaderSize + pixel_bytes);
    std::memcpy(out.data() + packed::kRawHeaderSize, pixels, pixel_bytes);
  } else {
    out.resize(packed::kRawHeaderSize + ZSTD_compressBound(pixel_bytes));
    thread_local std::unique_ptr<ZSTD_CCtx, CctxDeleter> cctx(ZSTD_createCCtx());
    STOKER_CHECK(cctx != nullptr, "raw image: cannot create a zstd context");
    // ZSTD_compressCCtx writes the content size into the frame header (the decoder checks it).
    const size_t n =
        ZSTD_compressCCtx(cctx.get(), out.data() + packed::kRawHeaderSize,
                          out.size() - packed::kRawHeaderSize, pixels, pixel_bytes, zstd_level);
    STOKER_CHECK(!ZSTD_isError(n), "raw image: zstd: {}", ZSTD_getErrorName(n));
    out.resize(packed::kRawHeaderSize + n);
  }
  uint8_t* h = out.data();
  std::memcpy(h + packed::raw::kMagic, packed::kRawMagic, sizeof packed::kRawMagic);
  packed::store_u32(h + packed::raw::kWidth, static_cast<uint32_t>(width));
  packed::store_u32(h + packed::raw::kHeight, static_cast<uint32_t>(height));
  h[packed::raw::kChannels] = static_cast<uint8_t>(channels);
  h[packed::raw::kCompression] = static_cast<uint8_t>(
      zstd_level == 0 ? packed::RawCompression::kNone : packed::RawCompression::kZstd);
  STOKER_CHECK(out.size() - packed::kRawHeaderSize <= UINT32_MAX, "raw image: {}x{} too large",
               width, height);
  packed::store_u32(out.data() + packed::raw::kDataLength,
                    static_cast<uint32_t>(out.size() - packed::kRawHeaderSize));
  return out;
}

}  // namespace stoker
