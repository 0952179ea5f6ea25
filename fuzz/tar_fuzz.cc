// libFuzzer harness for the tar scanner the WebDataset reader indexes shards with
// (src/io/tar.h): ustar, GNU and pax headers.
//
// Input: the bytes of a tar archive. The scanner must either throw stoker::Error or report
// members that lie inside the input: content offsets at a 512-byte block, offset + size within
// the bytes, and for the members whose content it read (the label extensions), exactly `size`
// bytes equal to the input's at that offset.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "io/tar.h"
#include "stoker/error.h"

namespace {

class Bytes final : public stoker::io::ByteStream {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  size_t read(std::span<uint8_t> out) override {
    const size_t n = std::min(out.size(), size_ - at_);
    std::memcpy(out.data(), data_ + at_, n);
    at_ += n;
    return n;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  try {
    stoker::io::scan_tar(
        in, "fuzz.tar",
        [](std::string_view name, uint64_t) {
          return name.ends_with(".cls") || name.ends_with(".json") || name.ends_with(".txt");
        },
        [&](stoker::io::TarMember&& m, std::string&& content) {
          if (m.offset % 512 != 0 || m.offset > size || m.size > size - m.offset) std::abort();
          if (!content.empty() &&
              (content.size() != m.size || std::memcmp(content.data(), data + m.offset, m.size)))
            std::abort();
        });
  } catch (const stoker::Error&) {
  }
  return 0;
}
