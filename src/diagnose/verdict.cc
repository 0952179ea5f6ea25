#include <fmt/format.h>

#include <array>
#include <utility>

#include "diagnose/json.h"
#include "stoker/diagnose.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker {
namespace {

constexpr std::array<std::pair<Verdict, const char*>, 7> kVerdictNames = {{
    {Verdict::kInputBound, "input-bound"},
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

const char* mildly(double wait_fraction, const WaitThresholds& t) {
  return wait_fraction >= t.healthy_below && wait_fraction < t.dominant ? "mildly " : "";
}

const char* to_string(Confidence confidence) {
  switch (confidence) {
    case Confidence::kLow:
      return "low";
    case Confidence::kMedium:
      return "medium";
    case Confidence::kHigh:
      return "high";
  }
  return "low";
}

nlohmann::json to_json(const Fix& fix) {
  nlohmann::json j = {{"action", fix.action}, {"reason", fix.reason}};
  j["speedup"] = fix.speedup ? nlohmann::json(*fix.speedup) : nlohmann::json(nullptr);
  j["images_per_second"] =
      fix.images_per_second ? nlohmann::json(*fix.images_per_second) : nlohmann::json(nullptr);
  j["measured_on"] = fix.measured_on;
  return j;
}

namespace {

using nlohmann::json;

void put(json& j, const char* key, const std::optional<double>& v) {
  if (v) j[key] = *v;
}

json numbers_json(const PipelineNumbers& p) {
  json j = {{"seconds", p.seconds},
            {"images_per_second", p.images_per_second},
            {"wait_fraction", p.wait_fraction},
            {"busy_fraction", p.busy_fraction},
            {"read_fraction", p.read_fraction},
            {"cpu_utilisation", p.cpu_utilisation},
            {"threads", p.threads},
            {"cpus", p.cpus}};
  put(j, "step_images_per_second", p.step_images_per_second);
  return j;
}

json numbers_json(const CapacityNumbers& c) {
  return {{"demand_images_per_second", c.demand_images_per_second},
          {"delivered_images_per_second", c.delivered_images_per_second},
          {"pipeline_images_per_second", c.pipeline_images_per_second},
          {"gpu_idle_fraction", c.gpu_idle_fraction},
          {"gpus_fed", c.gpus_fed}};
}

json numbers_json(const UtilisationNumbers& u) {
  json gpus = json::array();
  for (const GpuUtilisation& g : u.gpus) {
    gpus.push_back(
        {{"file", g.file}, {"index", g.index}, {"mean_util", g.mean_util}, {"samples", g.samples}});
  }
  json j = {{"gpus", gpus},
            {"gpu_util_mean", u.gpu_util_mean},
            {"cpu_samples", u.cpu_samples},
            {"combined", u.combined}};
  put(j, "cpu_busy_mean", u.cpu_busy_mean);
  put(j, "cpu_iowait_mean", u.cpu_iowait_mean);
  put(j, "overlap_seconds", u.overlap_seconds);
  put(j, "others_util_mean", u.others_util_mean);
  put(j, "dip_fraction", u.dip_fraction);
  put(j, "dip_together", u.dip_together);
  put(j, "interconnect_mbps_in_dips", u.interconnect_mbps_in_dips);
  return j;
}

json numbers_json(const RankStatsNumbers& s) {
  json j = s.agreed ? numbers_json(*s.agreed) : json::object();
  json ranks = json::array();
  for (const RankNumbers& r : s.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"lines", r.lines},
                     {"verdict", to_string(r.verdict)},
                     {"images_per_second", r.images_per_second},
                     {"wait_fraction", r.wait_fraction},
                     {"busy_fraction", r.busy_fraction},
                     {"straggler", r.straggler}});
  }
  j["ranks"] = ranks;
  return j;
}

}  // namespace

nlohmann::json to_json(const DiagnosisNumbers& n) {
  json j = json::object();
  if (n.pipeline) j.update(numbers_json(*n.pipeline));
  if (n.capacity) j.update(numbers_json(*n.capacity));
  if (n.steps) {
    j["steps"] = {{"data_fraction", n.steps->data_fraction},
                  {"step_seconds", n.steps->step_seconds},
                  {"lines", n.steps->lines},
                  {"from_averages", n.steps->from_averages},
                  {"upper_bound", n.steps->upper_bound}};
  }
  if (n.scaling) {
    json runs = json::array();
    for (const ScalingRun& r : n.scaling->runs) {
      json run = {
          {"source", r.source}, {"line", r.line}, {"scale", r.scale}, {"per_second", r.per_second}};
      put(run, "data_fraction", r.data_fraction);
      runs.push_back(std::move(run));
    }
    j["scaling"] = {{"scale_unit", n.scaling->scale_unit},
                    {"unit", n.scaling->unit},
                    {"runs", runs},
                    {"efficiency", n.scaling->efficiency}};
  }
  if (n.stats_decided) {
    if (n.stats) j.update(numbers_json(*n.stats));
    if (n.utilisation) j["utilisation"] = numbers_json(*n.utilisation);
  } else {
    if (n.utilisation) j.update(numbers_json(*n.utilisation));
    if (n.stats) j["stats"] = numbers_json(*n.stats);
  }
  if (n.files) {
    json files = json::array();
    for (const TelemetryFileNumbers& f : *n.files) {
      files.push_back({{"path", f.path}, {"kind", f.kind}});
    }
    j["files"] = files;
  }
  return j;
}

nlohmann::json to_json(const Diagnosis& d) {
  nlohmann::json fixes = nlohmann::json::array();
  for (const Fix& fix : d.fixes) fixes.push_back(to_json(fix));
  return {{"verdict", to_string(d.verdict)},
          {"confidence", to_string(d.confidence)},
          {"next", d.next},
          {"summary", d.summary},
          {"evidence", d.evidence},
          {"fixes", fixes},
          {"numbers", to_json(d.numbers)}};
}

std::string to_json_text(const Diagnosis& d) { return json_text(to_json(d)); }

std::string format_diagnosis(const Diagnosis& d) {
  std::string out = fmt::format("verdict: {} ({} confidence)\n  {}\n", to_string(d.verdict),
                                to_string(d.confidence), d.summary);
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
  if (!d.next.empty()) {
    out += "to be surer, collect:\n";
    for (const auto& line : d.next) out += fmt::format("  - {}\n", line);
  }
  return out;
}

}  // namespace stoker
