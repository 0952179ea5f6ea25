// Helpers of the telemetry tests: fixtures (tests/fixtures/telemetry, STOKER_FIXTURES), parsing
// and error texts.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "stoker/diagnose.h"
#include "stoker/error.h"
#include "stoker/telemetry.h"

namespace stoker::test {

inline std::string fixture(const std::string& name) {
  return std::string(STOKER_FIXTURES) + "/" + name;
}

inline Telemetry read(const std::vector<std::string>& names) {
  std::vector<std::string> paths;
  for (const auto& n : names) paths.push_back(fixture(n));
  return read_telemetry_files(paths);
}

// A file of tests/fixtures/pasted (STOKER_PASTED_FIXTURES).
inline std::string pasted(const std::string& name) {
  return std::string(STOKER_PASTED_FIXTURES) + "/" + name;
}

inline Telemetry parse(const std::string& content, const std::string& name) {
  Telemetry t;
  parse_telemetry(content, name, t);
  return t;
}

// The message of the stoker::Error that parsing `content` throws ("" when it does not throw).
inline std::string parse_error(const std::string& content, const std::string& name) {
  try {
    parse(content, name);
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

inline bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

inline std::vector<std::string> actions(const std::vector<Fix>& fixes) {
  std::vector<std::string> out;
  for (const Fix& f : fixes) out.push_back(f.action);
  return out;
}

inline size_t count_cpu(const Telemetry& t, int cpu) {
  return static_cast<size_t>(std::count_if(t.cpus.begin(), t.cpus.end(),
                                           [&](const CpuSample& s) { return s.cpu == cpu; }));
}

}  // namespace stoker::test
