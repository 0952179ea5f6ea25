// libFuzzer harness for the packed dataset's manifest parser (src/io/packed_manifest.h).
//
// Input: the text of a manifest.json. parse_manifest must either throw stoker::Error or return
// a manifest that survives a round trip: serialize_manifest of it parses again, and serializing
// that gives the same bytes. (Fuzzing builds skip only the fingerprint comparison, which the
// fuzzer cannot forge; every other check runs.)
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "io/packed_manifest.h"
#include "stoker/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  stoker::io::Manifest manifest;
  try {
    manifest = stoker::io::parse_manifest(text, "fuzz");
  } catch (const stoker::Error&) {
    return 0;
  }
  std::string once;
  try {
    once = stoker::io::serialize_manifest(manifest);
    const std::string twice =
        stoker::io::serialize_manifest(stoker::io::parse_manifest(once, "fuzz-roundtrip"));
    if (twice != once) std::abort();  // serialization must be a fixed point after one pass
  } catch (const stoker::Error&) {
    std::abort();  // what parses once must parse again after serialization
  }
  return 0;
}
