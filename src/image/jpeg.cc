// JPEG via libjpeg-turbo: header probe, region decode at a DCT scale, and encoding.
//
// libjpeg reports fatal errors by calling error_exit, which must not return; we longjmp back
// to the frame that called setjmp and turn the message into a stoker::Error there. To keep
// longjmp well defined in C++, every function that calls setjmp holds only trivially
// destructible locals, and the libjpeg objects live in an RAII owner in the caller's frame,
// whose destructor calls jpeg_destroy_* on every path (success, libjpeg error, bad_alloc).

#include <algorithm>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

// jpeglib.h needs FILE and size_t declared first: keep it after <cstdio>.
#include <jpeglib.h>
// jerror.h needs jpeglib.h.
#include <jerror.h>

#include "image/decoders.h"
#include "stoker/error.h"
#include "util/check.h"

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

// A progressive JPEG may repeat scans without end (libjpeg-turbo only warns about a bogus
// progression): a 429 KB file with its AC scan 10,000 times held a worker for 108 s. More
// scans than any encoder writes is bad data, as libjpeg-turbo's own fuzzers limit it (500).
constexpr int kMaxScans = 500;

void on_progress(j_common_ptr cinfo) {
  if (!cinfo->is_decompressor) return;
  const auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number > kMaxScans) {
    auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
    std::snprintf(err->message, sizeof(err->message),
                  "more than %d scans (a progressive JPEG repeats scans without end)", kMaxScans);
    std::longjmp(err->jump, 1);
  }
}

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
  jpeg_progress_mgr progress{};
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
  // False where this stream's left / right edge is not the image's (a restart-segment stream
  // cut out of a larger image): its outermost column there is never delivered.
  bool left_is_edge, right_is_edge;
  // Outputs.
  int width, height;   // full-resolution
  size_t scan_offset;  // first byte after the first SOS header
  Convert convert;
  int out_components;
  int x0, y0, out_width, out_height;  // delivered window in scaled coordinates
  int window_width;                   // columns libjpeg decodes per row (>= out_width)
  int window_skip;                    // leading decoded columns not delivered
  int scaled_width, scaled_height;
  enum class Verdict { kOk, kSizeMismatch, kNoEndMarker, kBadColourSpace, kScanWork } verdict;
  uint64_t scan_work = 0;    // blocks the scans decode in all (a multi-scan file)
  uint64_t scan_budget = 0;  // kScanWork: the most allowed
};

// Calls stop(code) for each marker FF code after `from`, in order (entropy-coded data stuffs
// 0xFF as FF 00, which is no marker; fill bytes FF FF... before a marker are folded), until it
// returns true. Returns whether it did.
template <typename Stop>
bool find_marker(const uint8_t* data, size_t size, size_t from, Stop stop) {
  const uint8_t* p = data + from;
  const uint8_t* end = data + size;
  while (p + 1 < end) {
    const void* hit = std::memchr(p, 0xFF, static_cast<size_t>(end - p - 1));
    if (hit == nullptr) return false;
    p = static_cast<const uint8_t*>(hit);
    while (p + 1 < end && p[1] == 0xFF) ++p;
    if (p + 1 >= end) return false;
    if (p[1] != 0x00 && stop(p[1])) return true;
    p += 2;
  }
  return false;
}

bool is_restart(uint8_t code) { return code >= 0xD0 && code <= 0xD7; }

// Restart markers are FF D0..D7, so FF D9 after the first scan's header can only be the
// end-of-image marker.
bool has_end_marker(const uint8_t* data, size_t size, size_t from) {
  return find_marker(data, size, from, [](uint8_t code) { return code == 0xD9; });
}

// Whether the first marker after the first scan's data is the end of the image: a file with one
// scan and nothing but restart markers in it, so the entropy decoder meets no marker that
// libjpeg would parse (and could fail on) mid-decode.
bool first_marker_is_end(const uint8_t* data, size_t size, size_t from) {
  bool end = false;
  find_marker(data, size, from, [&](uint8_t code) {
    end = code == 0xD9;
    return !is_restart(code);
  });
  return end;
}

// A multi-scan JPEG decodes every block of a scan's components once per scan, so a file that
// repeats a scan makes work out of nothing (a 198 KB progressive file held a worker for 7.9 s
// before the scan cap refused it). The work its scans ask for is known before any decoding,
// from their SOS headers: found here by walking the markers after the first scan (entropy
// data skipped byte-wise, marker segments by their lengths). In blocks, the first scan's
// included.
uint64_t scan_blocks(const jpeg_decompress_struct& c, const uint8_t* data, size_t size,
                     size_t from) {
  const auto blocks = [](const jpeg_component_info& comp) {
    return static_cast<uint64_t>(comp.width_in_blocks) * comp.height_in_blocks;
  };
  uint64_t total = 0;
  for (int i = 0; i < c.comps_in_scan; ++i) total += blocks(*c.cur_comp_info[i]);
  size_t p = from;
  while (p + 1 < size) {
    const void* hit = std::memchr(data + p, 0xFF, size - p - 1);
    if (hit == nullptr) break;
    size_t q = static_cast<size_t>(static_cast<const uint8_t*>(hit) - data);
    while (q + 1 < size && data[q + 1] == 0xFF) ++q;  // fill bytes
    if (q + 1 >= size) break;
    const uint8_t code = data[q + 1];
    if (code == 0x00 || is_restart(code)) {  // a stuffed 0xFF or a restart, in entropy data
      p = q + 2;
      continue;
    }
    if (code == 0xD9 || q + 3 >= size) break;  // EOI
    const size_t length = static_cast<size_t>(data[q + 2]) << 8 | data[q + 3];
    if (code == 0xDA && q + 4 < size) {  // SOS: Ns, then (Cs, Td/Ta) per component
      const int ns = data[q + 4];
      for (int k = 0; k < ns && q + 5 + 2 * static_cast<size_t>(k) < size; ++k) {
        const int id = data[q + 5 + 2 * static_cast<size_t>(k)];
        for (int i = 0; i < c.num_components; ++i) {
          if (c.comp_info[i].component_id == id) total += blocks(c.comp_info[i]);
        }
      }
    }
    p = q + 2 + length;
  }
  return total;
}

// Scans may decode the image's blocks at most this many times over: libjpeg-turbo's standard
// progression reads each block about 6 times, optimised progressive scripts (mozjpeg) about 10.
constexpr uint64_t kMaxScanWork = 64;

// Phase 1: header, parameters, start, crop and skip. Returns false after a libjpeg error.
bool start(Decompressor* d, Plan* plan) {
  if (setjmp(d->err.jump)) return false;
  jpeg_create_decompress(&d->cinfo);
  d->created = true;
  d->progress.progress_monitor = on_progress;
  d->cinfo.progress = &d->progress;
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
  if (jpeg_has_multiple_scans(&d->cinfo)) {
    uint64_t image_blocks = 0;
    for (int i = 0; i < d->cinfo.num_components; ++i) {
      image_blocks += static_cast<uint64_t>(d->cinfo.comp_info[i].width_in_blocks) *
                      d->cinfo.comp_info[i].height_in_blocks;
    }
    plan->scan_work = scan_blocks(d->cinfo, plan->data, plan->size, plan->scan_offset);
    if (plan->scan_work > kMaxScanWork * image_blocks) {
      plan->verdict = Plan::Verdict::kScanWork;
      plan->scan_budget = kMaxScanWork * image_blocks;
      return true;
    }
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
  const int keep_x0 = win_x0 > 0 || !plan->left_is_edge ? win_x0 + 1 : 0;
  const int keep_x1 = win_x1 < plan->scaled_width || !plan->right_is_edge ? win_x1 - 1 : win_x1;
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

// ---- Restart segments: entropy-decode only the part of the image a region needs.
//
// A baseline JPEG with a restart interval of K MCUs is a sequence of segments that decode
// independently (each resets the DC predictors and starts byte-aligned after an RSTn marker).
// When K divides the MCUs per row, segment (r, s) holds MCUs [s K, (s + 1) K) of MCU row r,
// so the rows and columns a region touches can be cut out into a smaller, valid JPEG: the
// same header with the SOF's size changed, the chosen segments with their RST markers
// renumbered, EOI. Its coefficients are the original's, so every pixel that is not on a cut
// edge decodes to the same bytes (fancy upsampling treats a cut edge as an image edge, which
// changes the outermost row or column only; a margin keeps those out of the region).

struct RestartLayout {
  size_t sof_size_offset = 0;  // offset of the SOF's 16-bit height, followed by the width
  size_t scan_offset = 0;      // first entropy-coded byte
  int width = 0, height = 0;
  int mcu_width = 0, mcu_height = 0;
  int mcus_per_row = 0, mcu_rows = 0;
  int interval = 0;  // MCUs per segment; divides mcus_per_row
  // Segment i is bytes [starts[i], ends[i]); one per K MCUs in scan order.
  std::vector<uint32_t> starts, ends;
};

inline int read_u16(const uint8_t* p) { return (p[0] << 8) | p[1]; }

// Fills `layout`'s geometry from the header of a single-scan baseline (or extended) Huffman JPEG
// with a restart interval that divides its MCUs per row. Anything else (progressive, several
// scans, no DRI, an interval across rows) returns false and is left to the ordinary decoder,
// which judges it as it always does. The segments are found later (find_segments), only when a
// cut would save work.
bool parse_restart_header(std::span<const uint8_t> bytes, RestartLayout& layout) {
  const uint8_t* d = bytes.data();
  const size_t size = bytes.size();
  if (size < 4 || d[0] != 0xFF || d[1] != 0xD8) return false;
  size_t p = 2;
  int components = 0, h_max = 1, v_max = 1;
  bool have_sof = false;
  layout.interval = 0;
  for (;;) {
    if (p + 4 > size || d[p] != 0xFF) return false;
    while (p + 4 <= size && d[p + 1] == 0xFF) ++p;  // fill bytes
    if (p + 4 > size) return false;
    const int marker = d[p + 1];
    const size_t length = static_cast<size_t>(read_u16(d + p + 2));
    const uint8_t* seg = d + p + 4;
    if (length < 2 || p + 2 + length > size) return false;
    if (marker == 0xC0 || marker == 0xC1) {  // baseline / extended sequential, Huffman
      if (length < 8 || seg[0] != 8 || have_sof) return false;
      layout.sof_size_offset = p + 5;
      layout.height = read_u16(seg + 1);
      layout.width = read_u16(seg + 3);
      components = seg[5];
      if (layout.height == 0 || layout.width == 0 || components < 1 ||
          length != 8 + 3 * static_cast<size_t>(components)) {
        return false;
      }
      for (int i = 0; i < components; ++i) {
        const int h = seg[6 + 3 * i + 1] >> 4, v = seg[6 + 3 * i + 1] & 15;
        if (h < 1 || h > 4 || v < 1 || v > 4) return false;
        h_max = std::max(h_max, h);
        v_max = std::max(v_max, v);
      }
      have_sof = true;
    } else if ((marker >= 0xC2 && marker <= 0xCF && marker != 0xC4 && marker != 0xCC) ||
               marker == 0x01 || (marker >= 0xD0 && marker <= 0xD9)) {
      return false;  // another coding process, or a marker that has no business here
    } else if (marker == 0xDD) {
      if (length != 4) return false;
      layout.interval = read_u16(seg);
    } else if (marker == 0xDA) {
      if (!have_sof || seg[0] != components) return false;  // one scan with every component
      layout.scan_offset = p + 2 + length;
      break;
    }
    p += 2 + length;
  }
  if (layout.interval <= 0) return false;
  // A single-component scan is not interleaved: its MCU is one 8x8 block.
  layout.mcu_width = components == 1 ? 8 : 8 * h_max;
  layout.mcu_height = components == 1 ? 8 : 8 * v_max;
  layout.mcus_per_row = (layout.width + layout.mcu_width - 1) / layout.mcu_width;
  layout.mcu_rows = (layout.height + layout.mcu_height - 1) / layout.mcu_height;
  return layout.mcus_per_row % layout.interval == 0 && size <= UINT32_MAX;
}

// Fills layout.starts / ends: exactly one segment per K MCUs, RSTs numbered in sequence, up to
// an EOI marker. False otherwise (a missing or misnumbered RST, a second scan, no EOI).
bool find_segments(std::span<const uint8_t> bytes, RestartLayout& layout) {
  const uint8_t* d = bytes.data();
  const size_t size = bytes.size();
  const int64_t segments = int64_t{layout.mcus_per_row} / layout.interval * layout.mcu_rows;
  layout.starts.clear();
  layout.ends.clear();
  layout.starts.push_back(static_cast<uint32_t>(layout.scan_offset));
  const uint8_t* q = d + layout.scan_offset;
  const uint8_t* end = d + size;
  while (q + 1 < end) {
    const void* hit = std::memchr(q, 0xFF, static_cast<size_t>(end - q - 1));
    if (hit == nullptr) return false;  // no EOI
    q = static_cast<const uint8_t*>(hit);
    const int next = q[1];
    if (next == 0x00 || next == 0xFF) {  // a stuffed 0xFF, or a fill byte before a marker
      ++q;
      continue;
    }
    const uint32_t at = static_cast<uint32_t>(q - d);
    if (next == 0xD9) {
      layout.ends.push_back(at);
      return static_cast<int64_t>(layout.ends.size()) == segments;
    }
    if (next < 0xD0 || next > 0xD7) return false;  // DNL, a second scan, ...
    if ((next & 7) != static_cast<int>(layout.ends.size() % 8)) return false;
    if (static_cast<int64_t>(layout.ends.size()) + 1 >= segments) return false;
    layout.ends.push_back(at);
    layout.starts.push_back(at + 2);
    q += 2;
  }
  return false;
}

// Segments [s0, s1) of MCU rows [r0, r1), i.e. the pixels [x0, x1) x [y0, y1) below.
struct SegmentCut {
  int r0, r1, s0, s1;
  int x0, y0, x1, y1;
};

// The cut that covers `need` with `margin` pixels to spare wherever a cut edge is not an
// image edge. Returns false when it would decode no fewer MCUs than the ordinary path (every
// row down to the region's last, full width).
bool plan_segment_cut(const RestartLayout& l, const Rect& need, int margin, SegmentCut& cut) {
  const int segment_width = l.mcu_width * l.interval;
  const int xa = std::max(0, need.x - margin);
  const int xb = std::min(l.width, need.x + need.width + margin);
  const int ya = std::max(0, need.y - margin);
  const int yb = std::min(l.height, need.y + need.height + margin);
  cut.s0 = xa / segment_width;
  cut.s1 = (xb + segment_width - 1) / segment_width;
  cut.r0 = ya / l.mcu_height;
  cut.r1 = (yb + l.mcu_height - 1) / l.mcu_height;
  cut.x0 = cut.s0 * segment_width;
  cut.x1 = std::min(l.width, cut.s1 * segment_width);
  cut.y0 = cut.r0 * l.mcu_height;
  cut.y1 = std::min(l.height, cut.r1 * l.mcu_height);
  const int64_t ordinary =
      int64_t{(need.y + need.height + l.mcu_height - 1) / l.mcu_height} * l.mcus_per_row;
  const int64_t cut_mcus = int64_t{cut.r1 - cut.r0} * (cut.s1 - cut.s0) * l.interval;
  return cut_mcus < ordinary;
}

// The cut for `need` at scale_num / 8, when the file allows one and it saves work; the
// entropy-coded data is scanned for its segments only then.
bool plan_restart_cut(std::span<const uint8_t> bytes, const ImageHeader& header, const Rect& need,
                      int scale_num, RestartLayout& layout, SegmentCut& cut) {
  // Two scaled pixels between the region and a cut edge: fancy upsampling alters only the
  // outermost one, and the window logic in start() may reach one further.
  const int margin = 2 * 8 / scale_num;
  return parse_restart_header(bytes, layout) && layout.width == header.width &&
         layout.height == header.height && plan_segment_cut(layout, need, margin, cut) &&
         find_segments(bytes, layout);
}

// Writes the cut as a JPEG into `out`.
void build_segment_jpeg(std::span<const uint8_t> bytes, const RestartLayout& l,
                        const SegmentCut& cut, std::vector<uint8_t>& out) {
  const uint8_t* d = bytes.data();
  size_t total = l.scan_offset + 2;
  const int per_row = l.mcus_per_row / l.interval;
  for (int r = cut.r0; r < cut.r1; ++r) {
    for (int s = cut.s0; s < cut.s1; ++s) {
      const int i = r * per_row + s;
      total += l.ends[i] - l.starts[i] + 2;
    }
  }
  out.resize(total);
  uint8_t* w = out.data();
  std::memcpy(w, d, l.scan_offset);
  const int height = cut.y1 - cut.y0, width = cut.x1 - cut.x0;
  w[l.sof_size_offset] = static_cast<uint8_t>(height >> 8);
  w[l.sof_size_offset + 1] = static_cast<uint8_t>(height);
  w[l.sof_size_offset + 2] = static_cast<uint8_t>(width >> 8);
  w[l.sof_size_offset + 3] = static_cast<uint8_t>(width);
  w += l.scan_offset;
  int written = 0;
  for (int r = cut.r0; r < cut.r1; ++r) {
    for (int s = cut.s0; s < cut.s1; ++s) {
      if (written > 0) {
        *w++ = 0xFF;
        *w++ = static_cast<uint8_t>(0xD0 + (written - 1) % 8);
      }
      const int i = r * per_row + s;
      std::memcpy(w, d + l.starts[i], l.ends[i] - l.starts[i]);
      w += l.ends[i] - l.starts[i];
      ++written;
    }
  }
  *w++ = 0xFF;
  *w++ = 0xD9;
  out.resize(static_cast<size_t>(w - out.data()));
}

std::string libjpeg_message(const Decompressor& d) {
  return d.err.message[0] != '\0' ? std::string(d.err.message) : std::string("libjpeg error");
}

}  // namespace

std::optional<Rect> jpeg_restart_cut(std::span<const uint8_t> bytes, const ImageHeader& header,
                                     const Rect& need, int scale_num) {
  RestartLayout layout;
  SegmentCut cut;
  if (!plan_restart_cut(bytes, header, need, scale_num, layout, cut)) return std::nullopt;
  return Rect{cut.x0, cut.y0, cut.x1 - cut.x0, cut.y1 - cut.y0};
}

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

namespace {

// Phase 1 with its verdicts turned into decode_jpeg's bad-data errors (the one place that words
// them, for the decoder and for the GPU path's check alike).
void start_or_throw(Decompressor* d, Plan* plan, const std::string& name) {
  if (!start(d, plan)) STOKER_BAD_DATA("{}: {}", name, libjpeg_message(*d));
  switch (plan->verdict) {
    case Plan::Verdict::kOk:
      return;
    case Plan::Verdict::kSizeMismatch:
      STOKER_BAD_DATA("{}: JPEG is {}x{}, but its probed header said {}x{}", name, plan->width,
                      plan->height, plan->expect_width, plan->expect_height);
    case Plan::Verdict::kNoEndMarker:
      STOKER_BAD_DATA("{}: JPEG has no end-of-image marker (truncated file)", name);
    case Plan::Verdict::kBadColourSpace:
      STOKER_BAD_DATA("{}: unsupported JPEG colour space ({} components)", name,
                      d->cinfo.num_components);
    case Plan::Verdict::kScanWork:
      STOKER_BAD_DATA(
          "{}: its scans would decode {} blocks, more than {} times the image's {} (a "
          "progressive JPEG repeating scans)",
          name, plan->scan_work, kMaxScanWork, plan->scan_budget / kMaxScanWork);
  }
}

// The inputs of phases 1 and 2 for decoding `need` of a width x height stream at scale_num / 8.
Plan decode_plan(std::span<const uint8_t> bytes, int width, int height, const Rect& need,
                 int scale_num, bool left_is_edge, bool right_is_edge, int channels,
                 const DecodeConfig& options) {
  Plan plan{};
  plan.data = bytes.data();
  plan.size = bytes.size();
  plan.max_memory = static_cast<long>(options.limits.max_memory_bytes);
  plan.header_only = false;
  plan.channels = channels;
  plan.need = need;
  plan.scale_num = scale_num;
  plan.expect_width = width;
  plan.expect_height = height;
  plan.left_is_edge = left_is_edge;
  plan.right_is_edge = right_is_edge;
  return plan;
}

// Decodes `need` of one JPEG stream (the file, or a restart-segment cut of it) at
// scale_num / 8, in the stream's own coordinates.
void decode_stream(DecodedRegion& out, std::span<const uint8_t> bytes, int width, int height,
                   const Rect& need, int scale_num, bool left_is_edge, bool right_is_edge,
                   int channels, const std::string& name, const DecodeConfig& options) {
  Plan plan = decode_plan(bytes, width, height, need, scale_num, left_is_edge, right_is_edge,
                          channels, options);
  Decompressor d;
  start_or_throw(&d, &plan, name);

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

}  // namespace

void decode_jpeg(DecodedRegion& out, std::span<const uint8_t> bytes, const ImageHeader& header,
                 const Rect& need, int min_width, int min_height, int channels,
                 const std::string& name, const DecodeConfig& options) {
  int scale_num = 8;
  if (options.dct_scaling) {
    for (int num : {1, 2, 4}) {
      if (int64_t{need.width} * num >= int64_t{min_width} * 8 &&
          int64_t{need.height} * num >= int64_t{min_height} * 8) {
        scale_num = num;
        break;
      }
    }
  }

  // Per thread: the segment offsets and the cut stream, reused from image to image.
  thread_local RestartLayout layout;
  thread_local std::vector<uint8_t> cut_bytes;
  SegmentCut cut;
  if (options.restart_segments && plan_restart_cut(bytes, header, need, scale_num, layout, cut)) {
    build_segment_jpeg(bytes, layout, cut, cut_bytes);
    const Rect local{need.x - cut.x0, need.y - cut.y0, need.width, need.height};
    decode_stream(out, cut_bytes, cut.x1 - cut.x0, cut.y1 - cut.y0, local, scale_num, cut.x0 == 0,
                  cut.x1 == layout.width, channels, name, options);
    // Back to the image's coordinates: cut edges lie on MCU boundaries, multiples of 8, so
    // they are whole scaled pixels at every scale.
    out.x0 += cut.x0 * scale_num / 8;
    out.y0 += cut.y0 * scale_num / 8;
    out.scaled_width = (header.width * scale_num + 7) / 8;
    out.scaled_height = (header.height * scale_num + 7) / 8;
    return;
  }
  decode_stream(out, bytes, header.width, header.height, need, scale_num, true, true, channels,
                name, options);
}

bool jpeg_gpu_decodable(std::span<const uint8_t> bytes, const ImageHeader& header,
                        const std::string& name, const DecodeConfig& options) {
  Plan plan = decode_plan(bytes, header.width, header.height,
                          Rect{0, 0, header.width, header.height}, 8, true, true, 3, options);
  {
    // The header first: a progressive file's start would read every scan, and such a file is
    // the CPU decoder's to judge and decode anyway.
    Plan header_plan = plan;
    header_plan.header_only = true;
    Decompressor d;
    start_or_throw(&d, &header_plan, name);
    const jpeg_decompress_struct& c = d.cinfo;
    if (c.progressive_mode || c.arith_code || c.data_precision != 8) return false;
    const bool ycc = c.jpeg_color_space == JCS_YCbCr && c.num_components == 3;
    const bool gray = c.jpeg_color_space == JCS_GRAYSCALE && c.num_components == 1;
    if (!ycc && !gray) return false;
    // Both chroma components sampled alike (every encoder's 4:4:4, 4:2:2, 4:2:0, 4:4:0, 4:1:1).
    if (ycc && (c.comp_info[1].h_samp_factor != c.comp_info[2].h_samp_factor ||
                c.comp_info[1].v_samp_factor != c.comp_info[2].v_samp_factor ||
                c.comp_info[1].h_samp_factor != 1 || c.comp_info[1].v_samp_factor != 1)) {
      return false;
    }
  }
  Decompressor d;
  start_or_throw(&d, &plan, name);
  return first_marker_is_end(plan.data, plan.size, plan.scan_offset);
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
              int quality, int restart_interval) {
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
  c->cinfo.restart_interval = static_cast<unsigned>(restart_interval);
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
                                 int quality, int restart_interval) {
  STOKER_CHECK_ARG(channels == 1 || channels == 3, "encode_jpeg: channels must be 1 or 3, not {}",
                   channels);
  STOKER_CHECK_ARG(
      width > 0 && height > 0 && width <= JPEG_MAX_DIMENSION && height <= JPEG_MAX_DIMENSION,
      "encode_jpeg: invalid size {}x{}", width, height);
  STOKER_CHECK_ARG(quality >= 1 && quality <= 100, "encode_jpeg: quality {} not in [1, 100]",
                   quality);
  STOKER_CHECK_ARG(restart_interval >= 0 && restart_interval <= 65535,
                   "encode_jpeg: restart interval {} not in [0, 65535]", restart_interval);
  Compressor c;
  if (!compress(&c, pixels, width, height, channels, quality, restart_interval)) {
    STOKER_THROW("encode_jpeg: {}", c.err.message);
  }
  return std::vector<uint8_t>(c.buffer, c.buffer + c.size);
}

}  // namespace stoker
