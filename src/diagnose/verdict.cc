#include <fmt/format.h>

#include <array>
#include <utility>

#include "stoker/diagnose.h"
#include "stoker/error.h"

namespace stoker {
namespace {

constexpr std::array<std::pair<Verdict, const char*>, 6> kVerdictNames = {{
    {Verdict::kInputBoundCpu, "input-bound-cpu"},
    {Verdict::kIoBound, "io-bound"},
    {Verdict::kRankImbalance, "rank-imbalance"},
    {Verdict::kCommunicationBound, "communication-bound"},
    {Verdict::kHealthy, "healthy"},
    {Verdict::kUnknown, "unknown"},
}};

}  // namespace

const char* to_string(Verdict verdict) {
  for (const auto& [v, name] : kVerdictNames) {
    if (v == verdict) return name;
  }
  return "unknown";
}

Verdict parse_verdict(const std::string& name) {
  for (const auto& [v, n] : kVerdictNames) {
    if (name == n) return v;
  }
  STOKER_THROW("unknown verdict '{}'", name);
}

nlohmann::json to_json(const Fix& fix) {
  nlohmann::json j = {{"action", fix.action}, {"reason", fix.reason}};
  j["speedup"] = fix.speedup ? nlohmann::json(*fix.speedup) : nlohmann::json(nullptr);
  j["images_per_second"] =
      fix.images_per_second ? nlohmann::json(*fix.images_per_second) : nlohmann::json(nullptr);
  j["measured_on"] = fix.measured_on;
  return j;
}

nlohmann::json to_json(const Diagnosis& d) {
  nlohmann::json fixes = nlohmann::json::array();
  for (const Fix& fix : d.fixes) fixes.push_back(to_json(fix));
  return {{"verdict", to_string(d.verdict)},
          {"summary", d.summary},
          {"evidence", d.evidence},
          {"fixes", fixes},
          {"numbers", d.numbers}};
}

std::string format_diagnosis(const Diagnosis& d) {
  std::string out = fmt::format("verdict: {}\n  {}\n", to_string(d.verdict), d.summary);
  if (!d.evidence.empty()) {
    out += "evidence:\n";
    for (const auto& line : d.evidence) out += fmt::format("  - {}\n", line);
  }
  if (!d.fixes.empty()) {
    out += "fixes, best first:\n";
    int rank = 1;
    for (const Fix& fix : d.fixes) {
      out += fmt::format("  {}. {}\n", rank++, fix.action);
      if (fix.speedup && fix.images_per_second) {
        out += fmt::format("     measured: {:.0f} images/s, {:.1f}x ({})\n", *fix.images_per_second,
                           *fix.speedup, fix.measured_on);
      } else if (!fix.measured_on.empty()) {
        out += fmt::format("     {}\n", fix.measured_on);
      }
      if (!fix.reason.empty()) out += fmt::format("     why: {}\n", fix.reason);
    }
  }
  return out;
}

}  // namespace stoker
