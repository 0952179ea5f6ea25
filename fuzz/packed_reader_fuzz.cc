// libFuzzer harness for the packed-dataset reader (open_packed, read, verify_packed, inspect).
//
// Seeds: version-1 packs of every mode and version-2 packs with fields (fields*, label-free).
// Input: u16 little-endian manifest length L, L bytes of manifest.json, then the bytes of
// shard-00000.stk. Both are written to a private temporary folder and opened as a packed
// dataset. Built with -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (STOKER_FUZZ=ON), checksum
// comparisons are skipped so that the fuzzer reaches the bounds checks behind them.
// Everything may throw stoker::Error; nothing may crash, hang or read out of bounds.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "stoker/error.h"
#include "stoker/packed.h"

namespace {

const std::filesystem::path& folder() {
  static const std::filesystem::path dir = [] {
    std::string pattern = "/tmp/stoker-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    return std::filesystem::path(pattern);
  }();
  return dir;
}

void write(const std::filesystem::path& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t manifest_size = std::min<size_t>(size - 2, data[0] | data[1] << 8);
  write(folder() / "manifest.json", data + 2, manifest_size);
  write(folder() / "shard-00000.stk", data + 2 + manifest_size, size - 2 - manifest_size);
  try {
    auto dataset = stoker::open_packed(folder());
    std::vector<uint8_t> out;
    std::string text;
    const int64_t n = std::min<int64_t>(dataset->size(), 64);
    for (int64_t i = 0; i < n; ++i) {
      try {
        (void)dataset->label(i);
        (void)dataset->name(i);
        dataset->read(i, out);
      } catch (const stoker::Error&) {
      }
      // Version 2: the field block of the record, by the names the seeds keep.
      for (const char* field : {"txt", "json", "json.similarity", "caption"}) {
        try {
          if (dataset->has_field(field)) dataset->read_field(i, field, text);
        } catch (const stoker::Error&) {
        }
      }
    }
  } catch (const stoker::Error&) {
  }
  try {
    (void)stoker::verify_packed(folder());
  } catch (const stoker::Error&) {
  }
  try {
    (void)stoker::inspect_packed(folder());
  } catch (const stoker::Error&) {
  }
  return 0;
}
