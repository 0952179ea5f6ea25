// stoker's own JSON-lines logs: stats lines (the loader) and the monitor's format
// (stoker/telemetry.h, docs/doctor.md).
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "diagnose/telemetry_parse.h"

namespace stoker::telemetry {
namespace {

using nlohmann::json;

// The line's object; a discarded value for a last line cut off mid-write (a job killed or a
// disk full while the log was written), which the callers skip.
json parse_line(const Source& src, const Line& line) {
  json j = json::parse(line.text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() && !line.complete) return j;
  if (j.is_discarded()) src.fail(line, "not a JSON object");
  if (!j.is_object()) src.fail(line, "expected a JSON object");
  return j;
}

// obj[key] as a finite number; nullopt when absent (or null and `nullable`); throws otherwise.
std::optional<double> number(const Source& src, const Line& line, const json& obj, const char* key,
                             bool required, bool nullable = false) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) src.fail(line, "missing \"{}\"", key);
    return std::nullopt;
  }
  if (nullable && it->is_null()) return std::nullopt;  // present, not measured
  if (!it->is_number()) src.fail(line, "\"{}\": expected a number", key);
  const double v = it->get<double>();
  if (!std::isfinite(v)) src.fail(line, "\"{}\": expected a finite number", key);
  return v;
}

// obj[key] as an integer in [lo, hi].
std::optional<int64_t> integer(const Source& src, const Line& line, const json& obj,
                               const char* key, bool required, int64_t lo, int64_t hi) {
  const auto v = number(src, line, obj, key, required);
  if (!v) return std::nullopt;
  if (*v != std::floor(*v) || *v < static_cast<double>(lo) || *v > static_cast<double>(hi)) {
    src.fail(line, "\"{}\": expected an integer from {} to {}", key, lo, hi);
  }
  return static_cast<int64_t>(*v);
}

double fraction(const Source& src, const Line& line, const json& obj, const char* key) {
  const double v = *number(src, line, obj, key, true);
  if (v < 0 || v > 1.5) src.fail(line, "\"{}\": {} is not a fraction", key, v);
  return v;
}

double percent(const Source& src, const Line& line, const json& obj, const char* key) {
  const double v = *number(src, line, obj, key, true);
  if (v < 0 || v > 100) src.fail(line, "\"{}\": {} is not a percentage", key, v);
  return v;
}

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();

}  // namespace

void parse_stoker_stats(const std::vector<Line>& lines, const Source& src) {
  src.out.files[static_cast<size_t>(src.file)].time_base = TimeBase::kAbsolute;
  for (const Line& line : lines) {
    if (trim(line.text).empty()) continue;
    const json j = parse_line(src, line);
    if (j.is_discarded()) continue;
    if (!j.contains("stoker_stats"))
      src.fail(line, "not a stoker stats line (no \"stoker_stats\")");
    RankSample s;
    s.origin = src.origin(line);
    s.time = *number(src, line, j, "time", true);
    s.rank = static_cast<int>(*integer(src, line, j, "rank", true, 0, kMaxInt));
    s.world_size =
        static_cast<int>(integer(src, line, j, "world_size", false, 1, kMaxInt).value_or(1));
    s.window.threads =
        static_cast<int>(integer(src, line, j, "threads", false, 0, kMaxInt).value_or(0));
    s.window.cpus = static_cast<int>(integer(src, line, j, "cpus", false, 0, kMaxInt).value_or(0));
    const auto w = j.find("window");
    if (w == j.end()) src.fail(line, "missing \"window\"");
    if (!w->is_object()) src.fail(line, "\"window\": expected an object");
    s.window.seconds = *number(src, line, *w, "seconds", true);
    if (s.window.seconds < 0) src.fail(line, "\"seconds\": negative");
    s.window.images = *integer(src, line, *w, "images", true, 0, int64_t{1} << 50);
    s.window.wait_fraction = fraction(src, line, *w, "wait_fraction");
    s.window.busy_fraction = fraction(src, line, *w, "busy_fraction");
    s.window.read_fraction = fraction(src, line, *w, "read_fraction");
    s.window.cpu_utilisation = fraction(src, line, *w, "cpu_utilisation");
    src.out.ranks.push_back(std::move(s));
  }
}

void parse_stoker_monitor(const std::vector<Line>& lines, const Source& src) {
  TelemetryFile& file = src.out.files[static_cast<size_t>(src.file)];
  file.time_base = TimeBase::kAbsolute;
  bool header = false;
  for (const Line& line : lines) {
    if (trim(line.text).empty()) continue;
    const json j = parse_line(src, line);
    if (j.is_discarded()) continue;
    if (!header) {
      if (!j.contains("stoker_monitor")) src.fail(line, "expected the stoker_monitor header");
      const auto it = j.find("gpu_source");
      if (it == j.end() || !it->is_string()) src.fail(line, "missing \"gpu_source\"");
      file.gpu_source = it->get<std::string>();
      if (const auto stats = j.find("stats_file"); stats != j.end() && stats->is_string()) {
        file.stats_file = stats->get<std::string>();
      }
      header = true;
      continue;
    }
    if (j.contains("exit_status")) {
      file.exit_status =
          static_cast<int>(*integer(src, line, j, "exit_status", true, 0, 255 + 128));
      continue;
    }
    const double t = *number(src, line, j, "t", true);
    if (const auto cpu = j.find("cpu"); cpu != j.end()) {
      if (!cpu->is_object()) src.fail(line, "\"cpu\": expected an object");
      CpuSample s;
      s.origin = src.origin(line);
      s.time = t;
      s.busy = percent(src, line, *cpu, "busy");
      s.iowait = percent(src, line, *cpu, "iowait");
      s.idle = percent(src, line, *cpu, "idle");
      src.out.cpus.push_back(std::move(s));
    }
    if (const auto per_cpu = j.find("per_cpu"); per_cpu != j.end()) {
      if (!per_cpu->is_array()) src.fail(line, "\"per_cpu\": expected an array");
      int n = 0;
      for (const json& c : *per_cpu) {
        if (!c.is_object()) src.fail(line, "\"per_cpu\": expected objects");
        CpuSample s;
        s.origin = src.origin(line);
        s.time = t;
        s.cpu = static_cast<int>(integer(src, line, c, "cpu", false, 0, kMaxInt).value_or(n));
        ++n;
        s.busy = percent(src, line, c, "busy");
        s.iowait = percent(src, line, c, "iowait");
        s.idle = percent(src, line, c, "idle");
        src.out.cpus.push_back(std::move(s));
      }
    }
    if (const auto gpus = j.find("gpus"); gpus != j.end()) {
      if (!gpus->is_array()) src.fail(line, "\"gpus\": expected an array");
      for (const json& g : *gpus) {
        if (!g.is_object()) src.fail(line, "\"gpus\": expected objects");
        const int index = static_cast<int>(*integer(src, line, g, "index", true, 0, 4096));
        const auto util = number(src, line, g, "util", true, /*nullable=*/true);
        if (!util) continue;  // not reported this time
        if (*util < 0 || *util > 100) src.fail(line, "\"util\": {} is not a percentage", *util);
        GpuSample s;
        s.origin = src.origin(line);
        s.time = t;
        s.gpu = index;
        s.util = *util;
        s.memory_util = number(src, line, g, "memory_util", false, true);
        s.memory_used_mib = number(src, line, g, "memory_used_mib", false, true);
        s.pcie_rx_mbps = number(src, line, g, "pcie_rx_mbps", false, true);
        s.pcie_tx_mbps = number(src, line, g, "pcie_tx_mbps", false, true);
        src.out.gpus.push_back(std::move(s));
      }
    }
  }
  // Rounds: the k-th sample of each GPU of this file.
  std::vector<int64_t> counts;
  for (GpuSample& s : src.out.gpus) {
    if (s.origin.file != src.file) continue;
    if (static_cast<size_t>(s.gpu) >= counts.size()) {
      counts.resize(static_cast<size_t>(s.gpu) + 1, 0);
    }
    s.round = counts[static_cast<size_t>(s.gpu)]++;
  }
}

}  // namespace stoker::telemetry
