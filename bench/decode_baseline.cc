// decode_baseline: how fast plain libjpeg-turbo decodes a set of JPEG files at full size.
//
// The reference rate for bench/compare_torchvision: every JPEG under DIR (recursively) is
// loaded into memory first, then decoded one after the other, cycling over the files, to
// RGB at full size with libjpeg-turbo's default settings (JDCT_ISLOW, fancy upsampling, no
// DCT scaling), in one thread, until the time or image budget is spent. Prints one JSON line:
//   {"decodes_per_second":..., "images":..., "seconds":..., "megapixels_per_second":..., ...}
// Run one process per core concurrently and sum the rates for the machine's rate.
//
// Usage: decode_baseline DIR [--seconds S] [--images N] [--offset K] [--coefficients]
//   --seconds S   stop after S seconds of decoding (default 10 unless --images is given)
//   --images N    stop after N decodes (with --seconds too: whichever comes first)
//   --offset K    start at file K (mod file count), so concurrent processes differ
//   --coefficients  entropy decoding only (jpeg_read_coefficients: no IDCT, upsampling or
//                 colour conversion): the part of a decode that a region decoder cannot skip
//                 in the rows it needs, unless the file has restart markers (docs/perf.md)
// jpeglib.h needs FILE and size_t declared first.
#include <cstddef>
#include <cstdio>
// (a separate block, so that include sorting keeps the order)
#include <jpeglib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void on_message(j_common_ptr, int) {}  // silence warnings (corrupt-data notes and the like)

struct Decoder {
  jpeg_decompress_struct cinfo{};
  ErrorManager err{};
  std::vector<unsigned char> pixels;

  Decoder() {
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = on_error;
    err.pub.emit_message = on_message;
    jpeg_create_decompress(&cinfo);
  }
  ~Decoder() { jpeg_destroy_decompress(&cinfo); }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  bool coefficients_only = false;

  // Decodes one file to RGB at full size (or to its DCT coefficients); returns the pixel
  // count, 0 on error.
  long decode(const std::vector<unsigned char>& data) {
    if (setjmp(err.jump)) {
      jpeg_abort_decompress(&cinfo);
      return 0;
    }
    jpeg_mem_src(&cinfo, data.data(), static_cast<unsigned long>(data.size()));
    jpeg_read_header(&cinfo, TRUE);
    if (coefficients_only) {
      jpeg_read_coefficients(&cinfo);  // the coefficient arrays live in cinfo's pool
      const long px = static_cast<long>(cinfo.image_width) * cinfo.image_height;
      jpeg_finish_decompress(&cinfo);
      return px;
    }
    cinfo.out_color_space = JCS_RGB;  // everything else stays at the library defaults
    jpeg_start_decompress(&cinfo);
    const size_t stride = static_cast<size_t>(cinfo.output_width) * cinfo.output_components;
    const size_t need = stride * cinfo.output_height;
    if (pixels.size() < need) pixels.resize(need);
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW rows[4];
      int n = 0;
      for (; n < 4 && cinfo.output_scanline + n < cinfo.output_height; ++n)
        rows[n] = pixels.data() + (cinfo.output_scanline + n) * stride;
      jpeg_read_scanlines(&cinfo, rows, static_cast<JDIMENSION>(n));
    }
    const long px = static_cast<long>(cinfo.output_width) * cinfo.output_height;
    jpeg_finish_decompress(&cinfo);
    return px;
  }
};

bool is_jpeg_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".jpe" || ext == ".jfif";
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "decode_baseline: %s\nusage: decode_baseline DIR [--seconds S] [--images N] "
               "[--offset K] [--coefficients]\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  double seconds = -1;
  long max_images = -1;
  long offset = 0;
  bool coefficients_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(("missing value for " + a).c_str());
      return argv[++i];
    };
    if (a == "--seconds") {
      seconds = std::atof(value());
      if (!(seconds > 0)) usage("--seconds must be > 0");
    } else if (a == "--images") {
      max_images = std::atol(value());
      if (max_images <= 0) usage("--images must be > 0");
    } else if (a == "--offset") {
      offset = std::atol(value());
      if (offset < 0) usage("--offset must be >= 0");
    } else if (a == "--coefficients") {
      coefficients_only = true;
    } else if (a == "-h" || a == "--help") {
      usage("help");
    } else if (!a.empty() && a[0] == '-') {
      usage(("unknown option " + a).c_str());
    } else if (dir.empty()) {
      dir = a;
    } else {
      usage("more than one DIR");
    }
  }
  if (dir.empty()) usage("missing DIR");
  if (seconds < 0 && max_images < 0) seconds = 10;

  // Load every JPEG into memory first (sorted, so the order is the same every run).
  std::vector<fs::path> paths;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(
           dir, fs::directory_options::follow_directory_symlink, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file() && is_jpeg_name(it->path())) paths.push_back(it->path());
  }
  if (ec) {
    std::fprintf(stderr, "decode_baseline: cannot list %s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::vector<unsigned char>> files;
  files.reserve(paths.size());
  size_t bytes = 0;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    std::vector<unsigned char> data((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) continue;
    bytes += data.size();
    files.push_back(std::move(data));
  }

  // Check every file once (untimed; also warms the caches and the allocator). Files that
  // fail to decode are dropped and counted as skipped.
  Decoder dec;
  dec.coefficients_only = coefficients_only;
  long skipped = 0;
  {
    std::vector<std::vector<unsigned char>> ok;
    ok.reserve(files.size());
    for (auto& f : files) {
      if (dec.decode(f) > 0) {
        ok.push_back(std::move(f));
      } else {
        ++skipped;
      }
    }
    files.swap(ok);
  }
  if (files.empty()) {
    std::fprintf(stderr, "decode_baseline: no decodable JPEG files under %s\n", dir.c_str());
    return 1;
  }

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  long images = 0;
  long long pixels = 0;
  size_t idx = static_cast<size_t>(offset) % files.size();
  double elapsed = 0;
  for (;;) {
    pixels += dec.decode(files[idx]);
    ++images;
    if (++idx == files.size()) idx = 0;
    if (max_images > 0 && images >= max_images) break;
    if (seconds > 0 && (images & 7) == 0) {
      elapsed = std::chrono::duration<double>(clock::now() - start).count();
      if (elapsed >= seconds) break;
    }
  }
  elapsed = std::chrono::duration<double>(clock::now() - start).count();

  std::printf(
      "{\"decodes_per_second\":%.2f,\"images\":%ld,\"seconds\":%.3f,\"megapixels_per_second\":%.2f,"
      "\"files\":%zu,\"skipped\":%ld,\"mean_megapixels\":%.4f,\"mean_file_bytes\":%.0f,"
      "\"mode\":\"%s\"}\n",
      images / elapsed, images, elapsed, pixels / elapsed / 1e6, files.size(), skipped,
      static_cast<double>(pixels) / images / 1e6,
      static_cast<double>(bytes) / static_cast<double>(paths.empty() ? 1 : paths.size()),
      coefficients_only ? "coefficients" : "full");
  return 0;
}
