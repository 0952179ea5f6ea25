// JPEG via libjpeg-turbo: header probe, region decode at a DCT scale, and encoding.
//
// libjpeg reports fatal errors by calling error_exit, which must not return; we longjmp back
// to the frame that called setjmp and turn the message into a stoker::Error there. To keep
// longjmp well defined in C++, every function that calls setjmp holds only trivially
// destructible locals, and the libjpeg objects live in an RAII owner in the caller's frame,
// whose destructor calls jpeg_destroy_* on every path (success, libjpeg error, bad_alloc).

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

// jpeglib.h needs FILE and size_t declared first: keep it after <cstdio>.
#include <jpeglib.h>
// jerror.h needs jpeglib.h.
#include <jerror.h>

#include "image/decoders.h"
#include "stoker/error.h"

namespace stoker::image {
namespace {

struct ErrorManager {
  jpeg_error_mgr pub;  // first member: libjpeg hands us back a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Warnings (msg_level -1) arrive here. A premature end of data makes the file bad; other
// corrupt-data warnings are counted and ignored, as Pillow does. Trace messages are dropped.
void on_emit_message(j_common_ptr cinfo, int msg_level) {
  if (msg_level != -1) return;
  if (cinfo->err->msg_code == JWRN_JPEG_EOF) {
    auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
    std::snprintf(err->message, sizeof(err->message), "premature end of JPEG data");
    std::longjmp(err->jump, 1);
  }
  cinfo->err->num_warnings++;
}

void on_output_message(j_common_ptr) {}  // never print to stderr from a worker

void install(ErrorManager& err) {
  jpeg_std_error(&err.pub);
  err.pub.error_exit = on_error_exit;
  err.pub.emit_message = on_emit_message;
  err.pub.output_message = on_output_message;
  err.message[0] = '\0';
}

// Owns a decompressor; jpeg_create_decompress itself runs under setjmp (it can fail).
struct Decompressor {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  bool created = false;
  Decompressor() {
    std::memset(&cinfo, 0, sizeof(cinfo));
    install(err);
    cinfo.err = &err.pub;
  }
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  ~Decompressor() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

// How decoded rows are turned into the caller's channels.
enum class Convert { kCopy, kCmykToRgb, kCmykToLuma, kRgbToLuma };

// What phase 1 decided and found (plain data, filled under setjmp).
struct Plan {
  // Inputs.
  const uint8_t* data;
  size_t size;
  long max_memory;
  bool header_only;
  int channels;
  int scale_num;                    // over 8
  Rect need;                        // full-resolution, clipped to the image
  int expect_width, expect_height;  // from the probed header
  // Outputs.
  int width, height;   // full-resolution
  size_t scan_offset;  // first byte after the first SOS header
  Convert convert;
  int out_components;
  int x0, y0, out_width, out_height;  // delivered window in scaled coordinates
  int window_width;                   // columns libjpeg decodes per row (>= out_width)
  int window_skip;                    // leading decoded columns not delivered
  int scaled_width, scaled_height;
  enum class Verdict { kOk, kSizeMismatch, kNoEndMarker, kBadColourSpace } verdict;
};

bool has_end_marker(const uint8_t* data, size_t size, size_t from) {
  // Entropy-coded data stuffs 0xFF as FF 00 and restart markers are FF D0..D7, so FF D9
  // after the first scan's header can only be the end-of-image marker.
  const uint8_t* p = data + from;
  const uint8_t* end = data + size;
  while (p + 1 < end) {
    const void* hit = std::memchr(p, 0xFF, static_cast<size_t>(end - p - 1));
    if (hit == nullptr) return false;
    p = static_cast<const uint8_t*>(hit);
    if (p[1] == 0xD9) return true;
    ++p;
  }
  return false;
}

// Phase 1: header, parameters, start, crop and skip. Returns false after a libjpeg error.
bool start(Decompressor* d, Plan* plan) {
  if (setjmp(d->err.jump)) return false;
  jpeg_create_decompress(&d->cinfo);
  d->created = true;
  d->cinfo.mem->max_memory_to_use = plan->max_memory;
  jpeg_mem_src(&d->cinfo, plan->data, static_cast<unsigned long>(plan->size));
  jpeg_read_header(&d->cinfo, TRUE);
  plan->width = static_cast<int>(d->cinfo.image_width);
  plan->height = static_cast<int>(d->cinfo.image_height);
  plan->scan_offset = static_cast<size_t>(d->cinfo.src->next_input_byte - plan->data);
  plan->verdict = Plan::Verdict::kOk;
  if (plan->header_only) return true;
  // Verdicts that do not depend on the region come before any decoding.
  if (plan->width != plan->expect_width || plan->height != plan->expect_height) {
    plan->verdict = Plan::Verdict::kSizeMismatch;
    return true;
  }
  if (!has_end_marker(plan->data, plan->size, plan->scan_offset)) {
    plan->verdict = Plan::Verdict::kNoEndMarker;
    return true;
  }

  jpeg_decompress_struct& c = d->cinfo;
  switch (c.jpeg_color_space) {
    case JCS_GRAYSCALE:
      // libjpeg-turbo replicates gray into RGB itself (as PIL's L -> RGB does).
      c.out_color_space = plan->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
      plan->convert = Convert::kCopy;
      break;
    case JCS_YCbCr:
      // channels == 1 takes the decoded Y plane. PIL's convert("L") instead converts to RGB
      // (rounded) and back to luma, so the two differ by at most 1 (tested); Y is cheaper,
      // and skips the chroma upsampling and colour conversion.
      c.out_color_space = plan->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
      plan->convert = Convert::kCopy;
      break;
    case JCS_RGB:
      c.out_color_space = JCS_RGB;
      plan->convert = plan->channels == 1 ? Convert::kRgbToLuma : Convert::kCopy;
      break;
    case JCS_CMYK:
    case JCS_YCCK:
      c.out_color_space = JCS_CMYK;
      plan->convert = plan->channels == 1 ? Convert::kCmykToLuma : Convert::kCmykToRgb;
      break;
    default:
      plan->verdict = Plan::Verdict::kBadColourSpace;
      return true;
  }
  c.scale_num = static_cast<unsigned>(plan->scale_num);
  c.scale_denom = 8;
  // The accurate integer IDCT and fancy upsampling are libjpeg's (and Pillow's) defaults;
  // keeping them makes scale-1 output identical to PIL's.
  jpeg_start_decompress(&c);
  plan->out_components = c.output_components;
  plan->scaled_width = static_cast<int>(c.output_width);
  plan->scaled_height = static_cast<int>(c.output_height);

  // The needed window in scaled coordinates: every scaled pixel that overlaps `need`.
  const int64_t num = plan->scale_num;
  const Rect& n = plan->need;
  int64_t sx0 = int64_t{n.x} * num / 8;
  int64_t sx1 = ((int64_t{n.x} + n.width) * num + 7) / 8;
  int64_t sy0 = int64_t{n.y} * num / 8;
  int64_t sy1 = ((int64_t{n.y} + n.height) * num + 7) / 8;
  if (sx1 > plan->scaled_width) sx1 = plan->scaled_width;
  if (sy1 > plan->scaled_height) sy1 = plan->scaled_height;
  if (sx1 <= sx0) sx1 = sx0 + 1;
  if (sy1 <= sy0) sy1 = sy0 + 1;

  // jpeg_crop_scanline widens the window to an iMCU boundary on the left; use what it returns.
  // Fancy (triangle) chroma upsampling treats the window's first and last columns as image
  // edges, so they can differ from a full decode; ask for one more column on each side and
  // keep only the columns that had their neighbours (or are true image edges).
  const int64_t want_x0 = sx0 > 0 ? sx0 - 1 : 0;
  const int64_t want_x1 = sx1 < plan->scaled_width ? sx1 + 1 : sx1;
  JDIMENSION xoffset = static_cast<JDIMENSION>(want_x0);
  JDIMENSION width = static_cast<JDIMENSION>(want_x1 - want_x0);
  if (width < c.output_width) jpeg_crop_scanline(&c, &xoffset, &width);
  const int win_x0 = static_cast<int>(xoffset);
  const int win_x1 = static_cast<int>(xoffset + width);
  const int keep_x0 = win_x0 > 0 ? win_x0 + 1 : 0;
  const int keep_x1 = win_x1 < plan->scaled_width ? win_x1 - 1 : win_x1;
  plan->window_width = static_cast<int>(width);
  plan->window_skip = keep_x0 - win_x0;
  plan->x0 = keep_x0;
  plan->out_width = keep_x1 - keep_x0;
  plan->y0 = static_cast<int>(sy0);
  plan->out_height = static_cast<int>(sy1 - sy0);
  if (sy0 > 0) jpeg_skip_scanlines(&c, static_cast<JDIMENSION>(sy0));
  return true;
}

// Pillow's CMYK -> RGB: it reads JPEG CMYK as inverted ("CMYK;I", Adobe polarity, whether or
// not the file has an Adobe marker), then R = 255 - K' - (C' * (255 - K') / 255) rounded with
// its MULDIV255. With C' = 255 - C_file and K' = 255 - K_file that is the formula below.
inline uint8_t muldiv255(int a, int b) {
  const int t = a * b + 128;
  return static_cast<uint8_t>(((t >> 8) + t) >> 8);
}

inline void cmyk_pixel_to_rgb(uint8_t* rgb, const uint8_t* cmyk) {
  const int nk = cmyk[3];  // 255 - K' with K' = 255 - K_file
  for (int i = 0; i < 3; ++i) {
    const int v = nk - muldiv255(255 - cmyk[i], nk);
    rgb[i] = static_cast<uint8_t>(v < 0 ? 0 : v);
  }
}

// Phase 2: read the needed rows, convert, stop early. Returns false after a libjpeg error.
bool read_rows(Decompressor* d, const Plan* plan, uint8_t* dst, uint8_t* row_tmp) {
  if (setjmp(d->err.jump)) return false;
  jpeg_decompress_struct& c = d->cinfo;
  const size_t out_row = static_cast<size_t>(plan->out_width) * plan->channels;
  const int w = plan->out_width;
  const size_t n = plan->out_components;
  // Rows that need no conversion are decoded in place, except the first and the last: libjpeg
  // writes the whole window, so the `lead` bytes of its left column land on the end of the
  // previous row (saved and put back) and its right columns on the start of the next row
  // (written afterwards). The first and last rows have no neighbour there: they go through
  // row_tmp and a copy.
  const size_t lead = n * static_cast<size_t>(plan->window_skip);
  uint8_t saved[8];
  const int right = plan->window_width - plan->window_skip - plan->out_width;  // columns
  const bool direct =
      plan->convert == Convert::kCopy && lead <= sizeof saved && right <= plan->out_width;
  for (int y = 0; y < plan->out_height; ++y) {
    uint8_t* out = dst + out_row * y;
    const bool in_place = direct && y > 0 && y + 1 < plan->out_height;
    JSAMPROW row = in_place ? out - lead : row_tmp;
    if (in_place) std::memcpy(saved, out - lead, lead);
    while (jpeg_read_scanlines(&c, &row, 1) != 1) {
      // Only suspending sources return 0; a memory source never does. Guard regardless.
      std::snprintf(d->err.message, sizeof(d->err.message), "JPEG decoder stalled");
      return false;
    }
    if (in_place) {
      std::memcpy(out - lead, saved, lead);
      continue;
    }
    const uint8_t* in = row_tmp + n * plan->window_skip;
    switch (plan->convert) {
      case Convert::kCopy:
        std::memcpy(out, in, out_row);
        break;
      case Convert::kRgbToLuma:
        rgb_to_luma_row(out, in, w);
        break;
      case Convert::kCmykToRgb:
        for (int x = 0; x < w; ++x) cmyk_pixel_to_rgb(out + 3 * x, in + 4 * x);
        break;
      case Convert::kCmykToLuma:
        for (int x = 0; x < w; ++x) {
          uint8_t rgb[3];
          cmyk_pixel_to_rgb(rgb, in + 4 * x);
          out[x] = rgb_to_luma(rgb[0], rgb[1], rgb[2]);
        }
        break;
    }
  }
  // Stop here: the rows below the region are never decoded.
  jpeg_abort_decompress(&c);
  return true;
}

std::string libjpeg_message(const Decompressor& d) {
  return d.err.message[0] != '\0' ? std::string(d.err.message) : std::string("libjpeg error");
}

}  // namespace

ImageHeader probe_jpeg(std::span<const uint8_t> bytes, const std::string& name,
                       const DecodeLimits& limits) {
  Decompressor d;
  Plan plan{};
  plan.data = bytes.data();
  plan.size = bytes.size();
  plan.max_memory = static_cast<long>(limits.max_memory_bytes);
  plan.header_only = true;
  if (!start(&d, &plan)) STOKER_BAD_DATA("{}: {}", name, libjpeg_message(d));
  return ImageHeader{ImageFormat::kJpeg, plan.width, plan.height};
}

void decode_jpeg(DecodedRegion& out, std::span<const uint8_t> bytes, const ImageHeader& header,
                 const Rect& need, int min_width, int min_height, int channels,
                 const std::string& name, const DecodeConfig& options) {
  Plan plan{};
  plan.data = bytes.data();
  plan.size = bytes.size();
  plan.max_memory = static_cast<long>(options.limits.max_memory_bytes);
  plan.header_only = false;
  plan.channels = channels;
  plan.need = need;
  plan.scale_num = 8;
  if (options.dct_scaling) {
    for (int num : {1, 2, 4}) {
      if (int64_t{need.width} * num >= int64_t{min_width} * 8 &&
          int64_t{need.height} * num >= int64_t{min_height} * 8) {
        plan.scale_num = num;
        break;
      }
    }
  }

  plan.expect_width = header.width;
  plan.expect_height = header.height;

  Decompressor d;
  if (!start(&d, &plan)) STOKER_BAD_DATA("{}: {}", name, libjpeg_message(d));
  switch (plan.verdict) {
    case Plan::Verdict::kOk:
      break;
    case Plan::Verdict::kSizeMismatch:
      STOKER_BAD_DATA("{}: JPEG is {}x{}, but its probed header said {}x{}", name, plan.width,
                      plan.height, header.width, header.height);
    case Plan::Verdict::kNoEndMarker:
      STOKER_BAD_DATA("{}: JPEG has no end-of-image marker (truncated file)", name);
    case Plan::Verdict::kBadColourSpace:
      STOKER_BAD_DATA("{}: unsupported JPEG colour space ({} components)", name,
                      d.cinfo.num_components);
  }

  out.width = plan.out_width;
  out.height = plan.out_height;
  out.channels = channels;
  out.x0 = plan.x0;
  out.y0 = plan.y0;
  out.scaled_width = plan.scaled_width;
  out.scaled_height = plan.scaled_height;
  out.scale = plan.scale_num / 8.0;
  out.pixels.resize(static_cast<size_t>(out.width) * out.height * channels);
  // Rows land in a temporary first: libjpeg writes the whole decoded window, of which the
  // edge columns and (for CMYK / luma) the extra components are not delivered.
  const auto row_tmp =
      std::make_unique<uint8_t[]>(static_cast<size_t>(plan.window_width) * plan.out_components);
  if (!read_rows(&d, &plan, out.pixels.data(), row_tmp.get())) {
    STOKER_BAD_DATA("{}: {}", name, libjpeg_message(d));
  }
}

}  // namespace stoker::image

namespace stoker {
namespace {

struct Compressor {
  jpeg_compress_struct cinfo;
  image::ErrorManager err;
  bool created = false;
  unsigned char* buffer = nullptr;  // malloc'ed by jpeg_mem_dest
  unsigned long size = 0;
  Compressor() {
    std::memset(&cinfo, 0, sizeof(cinfo));
    image::install(err);
    cinfo.err = &err.pub;
  }
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;
  ~Compressor() {
    if (created) jpeg_destroy_compress(&cinfo);
    std::free(buffer);
  }
};

bool compress(Compressor* c, const uint8_t* pixels, int width, int height, int channels,
              int quality) {
  if (setjmp(c->err.jump)) return false;
  jpeg_create_compress(&c->cinfo);
  c->created = true;
  jpeg_mem_dest(&c->cinfo, &c->buffer, &c->size);
  c->cinfo.image_width = static_cast<JDIMENSION>(width);
  c->cinfo.image_height = static_cast<JDIMENSION>(height);
  c->cinfo.input_components = channels;
  c->cinfo.in_color_space = channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
  // Defaults: YCbCr with 2x2 luma sampling (4:2:0) for RGB, baseline Huffman tables.
  jpeg_set_defaults(&c->cinfo);
  jpeg_set_quality(&c->cinfo, quality, TRUE);
  c->cinfo.optimize_coding = FALSE;
  jpeg_start_compress(&c->cinfo, TRUE);
  const size_t stride = static_cast<size_t>(width) * channels;
  while (c->cinfo.next_scanline < c->cinfo.image_height) {
    // libjpeg's API takes non-const rows but does not write to them.
    JSAMPROW row = const_cast<uint8_t*>(pixels + stride * c->cinfo.next_scanline);
    jpeg_write_scanlines(&c->cinfo, &row, 1);
  }
  jpeg_finish_compress(&c->cinfo);
  return true;
}

}  // namespace

std::vector<uint8_t> encode_jpeg(const uint8_t* pixels, int width, int height, int channels,
                                 int quality) {
  STOKER_CHECK_ARG(channels == 1 || channels == 3, "encode_jpeg: channels must be 1 or 3, not {}",
                   channels);
  STOKER_CHECK_ARG(
      width > 0 && height > 0 && width <= JPEG_MAX_DIMENSION && height <= JPEG_MAX_DIMENSION,
      "encode_jpeg: invalid size {}x{}", width, height);
  STOKER_CHECK_ARG(quality >= 1 && quality <= 100, "encode_jpeg: quality {} not in [1, 100]",
                   quality);
  Compressor c;
  if (!compress(&c, pixels, width, height, channels, quality)) {
    STOKER_THROW("encode_jpeg: {}", c.err.message);
  }
  return std::vector<uint8_t>(c.buffer, c.buffer + c.size);
}

}  // namespace stoker
