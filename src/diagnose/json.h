// The JSON forms of the doctor's values (docs/doctor.md): the contract of `stoker doctor
// --json`, the stats lines and Python's diagnose(). Private: the installed headers carry no
// JSON library (they offer to_json_text, stoker/diagnose.h and stoker/audit.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "stoker/audit.h"
#include "stoker/capacity.h"
#include "stoker/diagnose.h"
#include "stoker/loader.h"
#include "stoker/telemetry.h"

namespace stoker {

// `j` as text, compact (indent -1) or indented, with invalid UTF-8 (file names come from the
// data) replaced rather than thrown on: the doctor's one way of printing its JSON.
inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json to_json(const Fix& fix);
nlohmann::json to_json(const DiagnosisNumbers& numbers);
nlohmann::json to_json(const Diagnosis& diagnosis);
// {"verdict", "summary", "findings": [{"pattern", "message", "ranks"}], "checks": {"disjoint",
// "complete", "balanced"}} (null for an unknown check).
nlohmann::json to_json(const AuditReport& report);
nlohmann::json to_json(const CapacityReport& report);
// {"read", "decode", "augment", "collate"}: CPU seconds per stage.
nlohmann::json to_json(const StageSeconds& cpu);

// One stats JSON line: `now`'s counters, `window`, and `unix_time` as "time".
nlohmann::json stats_json(const LoaderStats& now, const PipelineWindow& window, double unix_time);

// Time series for charts: {"gpus": [{"file": F, "index": 0, "t": [...], "util": [...]}],
//  "cpu": {"t": [...], "busy": [...], "iowait": [...]}} (the "all CPUs" samples), t in seconds
// from the first sample with a date (files without one count from their own first sample).
nlohmann::json telemetry_series(const Telemetry& telemetry);

}  // namespace stoker
