// PNG via libpng: whole-image decode, then the requested region at scale 1.
//
// Conversions follow what torchvision's loader sees, i.e. Pillow's open + convert("RGB"):
// 16-bit samples keep their high byte, except 16-bit gray without alpha, which Pillow opens as
// 32-bit mode "I" and clips to 0..255; palettes are expanded; gray is replicated; alpha and
// tRNS are dropped without compositing. libpng longjmps on errors, so (as in jpeg.cc) the
// setjmp frames hold only trivially destructible locals and an RAII owner frees libpng state.

#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include "image/decoders.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker::image {
namespace {

struct Source {
  const uint8_t* data;
  size_t size;
  size_t pos;
  char message[200];
};

[[noreturn]] void on_error(png_structp png, png_const_charp message) {
  auto* src = static_cast<Source*>(png_get_error_ptr(png));
  std::snprintf(src->message, sizeof(src->message), "%s", message);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // ancillary-chunk trouble is not fatal

void on_read(png_structp png, png_bytep out, png_size_t length) {
  auto* src = static_cast<Source*>(png_get_io_ptr(png));
  if (length > src->size - src->pos) png_error(png, "truncated PNG data");
  std::memcpy(out, src->data + src->pos, length);
  src->pos += length;
}

struct Reader {
  png_structp png = nullptr;
  png_infop info = nullptr;
  Reader() = default;
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  ~Reader() {
    if (png != nullptr) png_destroy_read_struct(&png, &info, nullptr);
  }
};

struct Layout {
  png_uint_32 width, height;
  int bit_depth, color_type;  // after transformations
  int source_color_type;
  int channels;
  size_t rowbytes;
};

bool read_header(Reader* r, Source* src, int64_t max_memory, Layout* layout) {
  r->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, src, on_error, on_warning);
  if (r->png == nullptr) return false;
  r->info = png_create_info_struct(r->png);
  if (r->info == nullptr) return false;
  if (setjmp(png_jmpbuf(r->png))) return false;
  png_set_read_fn(r->png, src, on_read);
  // Untrusted input: bound what ancillary chunks (text, ICC, ...) may allocate.
  png_set_chunk_malloc_max(
      r->png, static_cast<png_alloc_size_t>(std::min<int64_t>(max_memory, int64_t{1} << 30)));
  png_read_info(r->png, r->info);
  layout->source_color_type = png_get_color_type(r->png, r->info);
  if (layout->source_color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(r->png);
  if (layout->source_color_type == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(r->png, r->info) < 8) {
    png_set_expand_gray_1_2_4_to_8(r->png);
  }
  png_set_interlace_handling(r->png);
  png_read_update_info(r->png, r->info);
  layout->width = png_get_image_width(r->png, r->info);
  layout->height = png_get_image_height(r->png, r->info);
  layout->bit_depth = png_get_bit_depth(r->png, r->info);
  layout->color_type = png_get_color_type(r->png, r->info);
  layout->channels = png_get_channels(r->png, r->info);
  layout->rowbytes = png_get_rowbytes(r->png, r->info);
  return true;
}

bool read_pixels(Reader* r, png_bytepp rows) {
  if (setjmp(png_jmpbuf(r->png))) return false;
  png_read_image(r->png, rows);
  return true;
}

}  // namespace

ImageHeader probe_png(std::span<const uint8_t> bytes, const std::string& name) {
  // Signature (8) + IHDR length (4) + "IHDR" (4) + width (4) + height (4).
  STOKER_CHECK_DATA(bytes.size() >= 24 && std::memcmp(bytes.data() + 12, "IHDR", 4) == 0,
                    "{}: PNG header is truncated or does not start with IHDR", name);
  auto be32 = [&](size_t at) {
    return (uint32_t{bytes[at]} << 24) | (uint32_t{bytes[at + 1]} << 16) |
           (uint32_t{bytes[at + 2]} << 8) | uint32_t{bytes[at + 3]};
  };
  const uint32_t w = be32(16), h = be32(20);
  STOKER_CHECK_DATA(w > 0 && h > 0 && w <= 0x7FFFFFFFu && h <= 0x7FFFFFFFu,
                    "{}: PNG header has invalid size {}x{}", name, w, h);
  return ImageHeader{ImageFormat::kPng, static_cast<int>(w), static_cast<int>(h)};
}

void decode_png(DecodedRegion& out, std::span<const uint8_t> bytes, const ImageHeader& header,
                const Rect& need, int channels, const std::string& name,
                const DecodeConfig& options) {
  Source src{bytes.data(), bytes.size(), 0, {}};
  Reader reader;
  Layout layout{};
  if (!read_header(&reader, &src, options.limits.max_memory_bytes, &layout)) {
    STOKER_BAD_DATA("{}: {}", name, src.message[0] != '\0' ? src.message : "cannot read PNG");
  }
  STOKER_CHECK_DATA(static_cast<int64_t>(layout.width) == header.width &&
                        static_cast<int64_t>(layout.height) == header.height,
                    "{}: PNG is {}x{}, but its probed header said {}x{}", name, layout.width,
                    layout.height, header.width, header.height);
  const int64_t total = static_cast<int64_t>(layout.rowbytes) * layout.height;
  STOKER_CHECK_DATA(total <= options.limits.max_memory_bytes,
                    "{}: decoding needs {} bytes, above the cap of {} bytes (DecodeLimits)", name,
                    total, options.limits.max_memory_bytes);
  std::vector<uint8_t> pixels(static_cast<size_t>(total));
  std::vector<png_bytep> rows(layout.height);
  for (png_uint_32 y = 0; y < layout.height; ++y) rows[y] = pixels.data() + layout.rowbytes * y;
  if (!read_pixels(&reader, rows.data())) {
    STOKER_BAD_DATA("{}: {}", name, src.message[0] != '\0' ? src.message : "cannot read PNG");
  }

  out.set_full_scale(need, header.width, header.height, channels);

  const int n = layout.channels;
  const bool wide = layout.bit_depth == 16;
  const bool gray = n <= 2;
  // Pillow opens 16-bit gray (no alpha) as mode "I" and clips it to 0..255 on conversion.
  const bool clip16 = wide && n == 1;
  for (int y = 0; y < need.height; ++y) {
    const uint8_t* in = rows[need.y + y] + static_cast<size_t>(need.x) * n * (wide ? 2 : 1);
    uint8_t* o = out.pixels.data() + static_cast<size_t>(y) * need.width * channels;
    for (int x = 0; x < need.width; ++x) {
      uint8_t v[3];
      for (int c = 0; c < (gray ? 1 : 3); ++c) {
        if (!wide) {
          v[c] = in[c];
        } else if (clip16) {
          const int s = (in[2 * c] << 8) | in[2 * c + 1];
          v[c] = static_cast<uint8_t>(std::min(s, 255));
        } else {
          v[c] = in[2 * c];  // high byte
        }
      }
      if (gray) v[1] = v[2] = v[0];
      if (channels == 3) {
        o[0] = v[0];
        o[1] = v[1];
        o[2] = v[2];
        o += 3;
      } else {
        *o++ = gray ? v[0] : rgb_to_luma(v[0], v[1], v[2]);
      }
      in += n * (wide ? 2 : 1);
    }
  }
}

}  // namespace stoker::image
