// libFuzzer harness for the telemetry parsers and verdict (stoker/telemetry.h): kind
// detection, every parser, diagnose_telemetry, telemetry_series and the text/JSON renderings.
//
// Input: one log, or several separated by a line "--8<--" (so that combining files by time is
// fuzzed too). Everything may throw stoker::Error; nothing may crash, hang or read out of
// bounds. Seeds: fuzz/corpus/telemetry_fuzz/ (copies of tests/fixtures/telemetry/).
// Linked against stoker_diagnose (fuzz/CMakeLists.txt).
#include <cstdint>
#include <string>
#include <string_view>

#include "diagnose/json.h"
#include "stoker/error.h"
#include "stoker/telemetry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  stoker::Telemetry telemetry;
  size_t start = 0;
  int files = 0;
  while (start <= input.size() && files < 4) {
    size_t end = input.find("\n--8<--\n", start);
    if (end == std::string_view::npos) end = input.size();
    try {
      stoker::parse_telemetry(input.substr(start, end - start),
                              "fuzz" + std::to_string(files++) + ".log", telemetry);
    } catch (const stoker::Error&) {
      // Malformed or unknown: fine, as long as it is an Error.
    }
    start = end + 8;
  }
  const stoker::Diagnosis d = stoker::diagnose_telemetry(telemetry);
  (void)stoker::format_diagnosis(d);
  (void)stoker::to_json(d).dump();
  (void)stoker::telemetry_series(telemetry).dump();
  for (const auto& s : telemetry.gpus) (void)telemetry.cite(s.origin);
  return 0;
}
