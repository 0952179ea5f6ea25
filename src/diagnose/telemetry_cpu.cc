// CPU utilisation logs: sysstat's mpstat and sar -u, procps' vmstat (stoker/telemetry.h).
#include <algorithm>
#include <unordered_map>

#include "diagnose/telemetry_parse.h"

namespace stoker::telemetry {
namespace {

double clamp_percent(double v) { return std::clamp(v, 0.0, 100.0); }

// The date of sysstat's banner "Linux 6.1.0-13-amd64 (host) \t01/15/2024 \t_x86_64_\t(8 CPU)":
// %x of the locale (MM/DD/YY in C, MM/DD/YYYY in en_US, DD/MM/YYYY in en_GB when the first
// field exceeds 12) or ISO (S_TIME_FORMAT=ISO). Nullopt when none fits.
std::optional<int64_t> banner_date(std::string_view banner) {
  for (std::string_view t : split_whitespace(banner)) {
    if (t.size() == 10 && t[4] == '-' && t[7] == '-') {
      const auto y = parse_index(t.substr(0, 4));
      const auto m = parse_index(t.substr(5, 2));
      const auto d = parse_index(t.substr(8, 2));
      if (y && m && d) return days_from_civil(*y, *m, *d);
    }
    if (const auto days = slashed_date_days(t)) return days;
  }
  return std::nullopt;
}

}  // namespace

void parse_sysstat(const std::vector<Line>& lines, const Source& src) {
  TelemetryFile& file = src.out.files[static_cast<size_t>(src.file)];
  std::optional<int64_t> day;
  std::vector<std::string> header;  // the columns after CPU; empty: not in a CPU section
  int col_idle = -1, col_iowait = -1;
  double day_offset = 0, last_clock = -1;
  for (const Line& line : lines) {
    const auto tokens = split_whitespace(line.text);
    if (tokens.empty()) continue;
    if (tokens[0] == "Linux") {
      day = banner_date(line.text);
      continue;
    }
    if (tokens[0] == "Average:" || tokens[0] == "Summary:") continue;   // the summary block
    if (line.text.find("RESTART") != std::string_view::npos) continue;  // sar: LINUX RESTART
    auto clock = parse_clock(tokens[0]);
    if (!clock) src.fail(line, "expected a time (HH:MM:SS) first, found {}", quote(tokens[0]));
    size_t pos = 1;
    if (tokens.size() > 1 && (tokens[1] == "AM" || tokens[1] == "PM")) {
      if (*clock >= 13 * 3600.0 || *clock < 3600.0) {
        src.fail(line, "{} is not a 12-hour time", quote(tokens[0]));
      }
      if (*clock >= 12 * 3600.0) *clock -= 12 * 3600.0;  // 12:xx AM is 00:xx, 12:xx PM is 12:xx
      if (tokens[1] == "PM") *clock += 12 * 3600.0;
      pos = 2;
    }
    if (tokens.size() <= pos) src.fail(line, "nothing after the time");
    const std::string_view first = tokens[pos];
    if (first == "CPU") {
      header.clear();
      col_idle = col_iowait = -1;
      for (size_t i = pos + 1; i < tokens.size(); ++i) {
        header.push_back(std::string(tokens[i]));
        if (tokens[i] == "%idle") col_idle = static_cast<int>(header.size() - 1);
        if (tokens[i] == "%iowait") col_iowait = static_cast<int>(header.size() - 1);
      }
      if (col_idle < 0) src.fail(line, "a CPU header without %idle");
      continue;
    }
    const auto cpu = parse_index(first);
    if (first != "all" && !cpu) {
      header.clear();  // the header of another report (sar -r, -n ...): skip its rows
      continue;
    }
    if (header.empty()) continue;
    if (tokens.size() - pos - 1 != header.size()) {
      src.fail(line, "expected {} values after the CPU column like the header, found {}",
               header.size(), tokens.size() - pos - 1);
    }
    std::vector<double> values;
    for (size_t i = pos + 1; i < tokens.size(); ++i) {
      const auto v = parse_number(tokens[i]);
      if (!v || *v < 0 || *v > 100) {
        src.fail(line, "{}: expected a percentage, found {}", header[i - pos - 1],
                 quote(tokens[i]));
      }
      values.push_back(*v);
    }
    if (last_clock >= 0 && *clock + 3600 < last_clock) day_offset += 86400;  // past midnight
    last_clock = *clock;
    CpuSample s;
    s.origin = src.origin(line);
    s.time = *clock + day_offset + (day ? static_cast<double>(*day) * 86400.0 : 0.0);
    s.cpu = cpu ? *cpu : -1;
    s.idle = values[static_cast<size_t>(col_idle)];
    s.iowait = col_iowait >= 0 ? values[static_cast<size_t>(col_iowait)] : 0.0;
    s.busy = clamp_percent(100.0 - s.idle - s.iowait);
    src.out.cpus.push_back(std::move(s));
  }
  file.time_base = day ? TimeBase::kAbsolute : TimeBase::kTimeOfDay;
}

void parse_vmstat(const std::vector<Line>& lines, const Source& src) {
  static const char* const kColumns[] = {"r",      "b",  "swpd", "free", "buff", "cache", "inact",
                                         "active", "si", "so",   "bi",   "bo",   "in",    "cs",
                                         "us",     "sy", "id",   "wa",   "st",   "gu"};
  TelemetryFile& file = src.out.files[static_cast<size_t>(src.file)];
  std::unordered_map<std::string, int> col;
  size_t columns = 0;
  bool timestamps = false;
  bool first_row = true;
  int64_t row = 0;
  for (const Line& line : lines) {
    const auto tokens = split_whitespace(line.text);
    if (tokens.empty()) continue;
    if (tokens[0] == "procs" || tokens[0] == "--procs--") continue;  // the group line (-w: --)
    if (tokens[0] == "r") {
      std::unordered_map<std::string, int> names;
      size_t n = 0;
      for (; n < tokens.size(); ++n) {
        const bool known = std::find_if(std::begin(kColumns), std::end(kColumns), [&](auto c) {
                             return tokens[n] == c;
                           }) != std::end(kColumns);
        if (!known) break;
        names[std::string(tokens[n])] = static_cast<int>(n);
      }
      // vmstat -t ends the names with the time zone (UTC, CET, ...).
      if (n + 1 < tokens.size()) src.fail(line, "unknown vmstat column {}", quote(tokens[n]));
      if (!names.count("id") || !names.count("wa")) src.fail(line, "no id and wa columns");
      col = std::move(names);
      columns = n;
      timestamps = n + 1 == tokens.size();
      continue;
    }
    if (columns == 0) src.fail(line, "a data row before the vmstat header");
    const size_t expected = columns + (timestamps ? 2 : 0);
    if (tokens.size() != expected) {
      src.fail(line, "expected {} columns like the header, found {}", expected, tokens.size());
    }
    std::vector<double> values;
    for (size_t i = 0; i < columns; ++i) {
      const auto v = parse_number(tokens[i]);
      if (!v || *v < 0) src.fail(line, "expected a number, found {}", quote(tokens[i]));
      values.push_back(*v);
    }
    double time = static_cast<double>(row);
    if (timestamps) {
      const std::string_view d = tokens[columns];
      std::optional<int64_t> days;
      if (d.size() == 10 && d[4] == '-' && d[7] == '-') {
        const auto y = parse_index(d.substr(0, 4));
        const auto m = parse_index(d.substr(5, 2));
        const auto dd = parse_index(d.substr(8, 2));
        if (y && m && dd) days = days_from_civil(*y, *m, *dd);
      }
      const auto clock = parse_clock(tokens[columns + 1]);
      if (!days || !clock) {
        src.fail(line, "expected a timestamp YYYY-MM-DD HH:MM:SS, found {} {}", quote(d),
                 quote(tokens[columns + 1]));
      }
      time = static_cast<double>(*days) * 86400.0 + *clock;
    }
    const double idle = values[static_cast<size_t>(col["id"])];
    const double wa = values[static_cast<size_t>(col["wa"])];
    if (idle > 100 || wa > 100) src.fail(line, "id and wa must be percentages");
    ++row;
    if (first_row) {  // averages since boot, not this run
      first_row = false;
      continue;
    }
    CpuSample s;
    s.origin = src.origin(line);
    s.time = time;
    s.cpu = -1;
    s.idle = idle;
    s.iowait = wa;
    s.busy = clamp_percent(100.0 - idle - wa);
    src.out.cpus.push_back(std::move(s));
  }
  file.time_base = timestamps ? TimeBase::kAbsolute : TimeBase::kSequence;
}

}  // namespace stoker::telemetry
