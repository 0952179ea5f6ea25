// Telemetry files: which kind a log is (from its content) and reading it into samples
// (stoker/telemetry.h).
#include <algorithm>
#include <array>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <utility>

#include "diagnose/telemetry_parse.h"
#include "io/file_util.h"
#include "util/check.h"

namespace stoker {
namespace {

using telemetry::Line;

constexpr std::array<std::pair<TelemetryKind, const char*>, 24> kKindNames = {{
    {TelemetryKind::kNvidiaSmiCsv, "nvidia-smi-csv"},
    {TelemetryKind::kNvidiaSmiDmon, "nvidia-smi-dmon"},
    {TelemetryKind::kMpstat, "mpstat"},
    {TelemetryKind::kSar, "sar"},
    {TelemetryKind::kVmstat, "vmstat"},
    {TelemetryKind::kStokerStats, "stoker-stats"},
    {TelemetryKind::kStokerMonitor, "stoker-monitor"},
    {TelemetryKind::kNvidiaSmiTable, "nvidia-smi-table"},
    {TelemetryKind::kGpustat, "gpustat"},
    {TelemetryKind::kTrainLog, "train-log"},
    {TelemetryKind::kLightningProfiler, "lightning-profiler"},
    {TelemetryKind::kTorchProfiler, "torch-profiler"},
    {TelemetryKind::kNvidiaSmiTopo, "nvidia-smi-topo"},
    {TelemetryKind::kIostat, "iostat"},
    {TelemetryKind::kTop, "top"},
    {TelemetryKind::kThroughput, "throughput"},
    {TelemetryKind::kJobSummary, "job-summary"},
    {TelemetryKind::kGpuPanel, "gpu-panel"},
    {TelemetryKind::kDcgmDmon, "dcgm-dmon"},
    {TelemetryKind::kCollectiveBench, "collective-bench"},
    {TelemetryKind::kPythonProfiler, "python-profiler"},
    {TelemetryKind::kProcessTimes, "process-times"},
    {TelemetryKind::kInputProfile, "input-profile"},
    {TelemetryKind::kPaddleProfiler, "paddle-profiler"},
}};

// A --query-gpu header: comma-separated query names (lowercase, digits, '.', '_'), each with an
// optional " [unit]", one of which nvidia-smi always knows.
bool is_query_header(std::string_view text) {
  const auto fields = telemetry::split_char(text, ',');
  if (fields.size() < 2) return false;
  bool known = false;
  for (auto f : fields) {
    f = telemetry::trim(f);
    const size_t bracket = f.find('[');
    if (bracket != std::string_view::npos) {
      if (f.back() != ']') return false;
      f = telemetry::trim(f.substr(0, bracket));
    }
    if (f.empty()) return false;
    for (char c : f) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_')) {
        return false;
      }
    }
    known = known || f == "timestamp" || f == "index" || f == "utilization.gpu" || f == "uuid" ||
            f == "pci.bus_id" || f == "name" || f == "memory.used";
  }
  return known;
}

// The kind of a sysstat CPU header "[time [AM|PM]] CPU %usr ... %idle", or nullopt.
std::optional<TelemetryKind> sysstat_header(std::string_view text) {
  const auto tokens = telemetry::split_whitespace(text);
  int cpu = -1, usr = -1, irq = -1, steal = -1, idle = -1;
  bool user = false;
  for (size_t i = 0; i < tokens.size() && i < 64; ++i) {
    const int n = static_cast<int>(i);
    if (tokens[i] == "CPU") cpu = n;
    if (tokens[i] == "%usr") usr = n;
    if (tokens[i] == "%user" || tokens[i] == "%system") user = true;
    if (tokens[i] == "%irq") irq = n;
    if (tokens[i] == "%steal") steal = n;
    if (tokens[i] == "%idle") idle = n;
  }
  if (cpu < 0 || idle < 0 || cpu > 2) return std::nullopt;
  // mpstat: %usr ... %irq %soft %steal; sar -u: %user (or, for -u ALL, %steal before %irq).
  if (!user && usr >= 0 && irq >= 0 && (steal < 0 || irq < steal)) return TelemetryKind::kMpstat;
  return TelemetryKind::kSar;
}

}  // namespace

const char* to_string(TelemetryKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::string Telemetry::cite(const Origin& origin) const {
  std::string path = "?";
  std::string_view text;
  if (origin.file >= 0 && static_cast<size_t>(origin.file) < files.size()) {
    const TelemetryFile& f = files[static_cast<size_t>(origin.file)];
    path = f.path;
    if (origin.line >= 1 && static_cast<size_t>(origin.line) <= f.lines.size()) {
      text = f.lines[static_cast<size_t>(origin.line - 1)];
    }
  }
  // Quoted lines end up in JSON (doctor --json): valid UTF-8 only, long lines shortened.
  constexpr size_t kMax = 200;
  std::string quoted = telemetry::printable(text.substr(0, kMax));
  if (text.size() > kMax) quoted += " ...";
  return fmt::format("{}:{}: {}", telemetry::printable(path), origin.line, quoted);
}

namespace {

// The kind of a whole-file log from its first lines; nullopt when it is none of them (empty
// or not one log).
std::optional<TelemetryKind> detect_whole(std::string_view content) {
  const auto lines = telemetry::split_lines(content);
  int seen = 0;
  for (const Line& line : lines) {
    const std::string_view text = telemetry::trim(line.text);
    if (text.empty()) continue;
    if (seen++ == 0) {
      if (text.front() == '{') {
        const auto j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_object() && j.contains("stoker_monitor")) return TelemetryKind::kStokerMonitor;
        if (j.is_object() && j.contains("stoker_stats")) return TelemetryKind::kStokerStats;
        break;
      }
      if (text.front() == '#') {
        std::string_view rest = text;
        while (!rest.empty() && rest.front() == '#') rest.remove_prefix(1);
        const auto tokens = telemetry::split_whitespace(rest);
        if (!tokens.empty() && telemetry::lower(tokens[0]) == "entity") {
          return TelemetryKind::kDcgmDmon;
        }
        for (auto t : tokens) {
          if (t == "gpu") return TelemetryKind::kNvidiaSmiDmon;
        }
        break;
      }
      const auto tokens = telemetry::split_whitespace(text);
      // vmstat's group line: "procs -----memory---- ..." ("--procs-- ..." with -w).
      if (tokens[0] == "procs" || tokens[0] == "--procs--" ||
          (tokens[0] == "r" && tokens.size() > 1 && tokens[1] == "b")) {
        return TelemetryKind::kVmstat;
      }
      if (is_query_header(text)) {
        // The whole file, unless a part without commas follows a blank line: a pasted comment
        // that goes on with a table or a log below its CSV, read part by part (read_pasted).
        bool blank = false;
        for (const Line& after : lines) {
          if (after.number <= line.number) continue;
          const std::string_view t = telemetry::trim(after.text);
          if (t.empty()) {
            blank = true;
          } else if (blank && t.find(',') == std::string_view::npos) {
            return std::nullopt;
          }
        }
        return TelemetryKind::kNvidiaSmiCsv;
      }
      if (tokens[0] != "Linux") {
        if (const auto kind = sysstat_header(text)) return *kind;
        break;
      }
      continue;  // sysstat's banner: the CPU header follows
    }
    if (const auto kind = sysstat_header(text)) return *kind;
    if (seen > 8) break;
  }
  return std::nullopt;
}

}  // namespace

namespace telemetry {

std::optional<TelemetryKind> detect_whole_log(std::string_view content) {
  return detect_whole(content);
}

void parse_whole_log(TelemetryKind kind, const std::vector<Line>& lines, const Source& src) {
  switch (kind) {
    case TelemetryKind::kNvidiaSmiCsv:
      return parse_nvidia_smi_csv(lines, src);
    case TelemetryKind::kNvidiaSmiDmon:
      return parse_nvidia_smi_dmon(lines, src);
    case TelemetryKind::kDcgmDmon:
      return parse_dcgm_dmon(lines, src);
    case TelemetryKind::kMpstat:
    case TelemetryKind::kSar:
      return parse_sysstat(lines, src);
    case TelemetryKind::kVmstat:
      return parse_vmstat(lines, src);
    case TelemetryKind::kStokerStats:
      return parse_stoker_stats(lines, src);
    case TelemetryKind::kStokerMonitor:
      return parse_stoker_monitor(lines, src);
    default:
      STOKER_THROW("{}: {} is read by read_pasted", src.name, to_string(kind));
  }
}

}  // namespace telemetry

TelemetryKind detect_telemetry_kind(std::string_view content, const std::string& name) {
  if (const auto kind = detect_whole(strip_markdown(content))) return *kind;
  // Not one log: the kinds a pasted message may hold, or the error saying what is read.
  Telemetry probe;
  read_pasted(content, name, probe);
  return probe.files.front().kind;
}

void parse_telemetry(std::string_view content, const std::string& name, Telemetry& into) {
  const std::string text = strip_markdown(content);
  const std::optional<TelemetryKind> whole = detect_whole(text);
  if (!whole) return read_pasted(content, name, into);
  const TelemetryKind kind = *whole;
  const auto lines = telemetry::split_lines(text);
  TelemetryFile file;
  file.path = name;
  file.kind = kind;
  file.lines.reserve(lines.size());
  for (const Line& line : lines) file.lines.emplace_back(line.text);
  const size_t files = into.files.size(), gpus = into.gpus.size(), cpus = into.cpus.size(),
               ranks = into.ranks.size(), memory = into.memory.size();
  into.files.push_back(std::move(file));
  const telemetry::Source src{name, static_cast<int>(files), into};
  try {
    return telemetry::parse_whole_log(kind, lines, src);
  } catch (...) {  // leave `into` as it was
    into.files.resize(files);
    into.gpus.resize(gpus);
    into.cpus.resize(cpus);
    into.ranks.resize(ranks);
    into.memory.resize(memory);
    throw;
  }
}

// Telemetry is read whole: logs of weeks of nvidia-smi and mpstat lines stay far below this.
constexpr int64_t kMaxTelemetryBytes = int64_t{2} << 30;

Telemetry read_telemetry_files(const std::vector<std::string>& paths) {
  Telemetry telemetry;
  std::vector<std::string> todo = paths;
  for (size_t k = 0; k < todo.size(); ++k) {
    const std::string path = todo[k];
    if (path == "-") {  // standard input: a message pasted into a terminal, or a pipe
      std::string content;
      char chunk[1 << 16];
      while (std::cin.read(chunk, sizeof(chunk)) || std::cin.gcount() > 0) {
        content.append(chunk, static_cast<size_t>(std::cin.gcount()));
        if (static_cast<int64_t>(content.size()) > kMaxTelemetryBytes) {
          STOKER_BAD_DATA("<stdin>: more than {} bytes of telemetry: give a part of the log",
                          kMaxTelemetryBytes);
        }
      }
      parse_telemetry(content, "<stdin>", telemetry);
      continue;
    }
    // A regular file of at most kMaxTelemetryBytes: a device (/dev/zero), a FIFO or a directory
    // is refused with a message, never read until memory runs out.
    std::vector<uint8_t> bytes;
    io::read_file(path, bytes, kMaxTelemetryBytes);
    const size_t before = telemetry.files.size();
    parse_telemetry(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                    path, telemetry);
    // A monitor log: the stats lines its job's loaders wrote, when there are any (and they
    // were not given as well).
    for (size_t f = before; f < telemetry.files.size(); ++f) {
      const std::string& stats = telemetry.files[f].stats_file;
      if (stats.empty() || std::find(todo.begin(), todo.end(), stats) != todo.end()) continue;
      std::error_code ec;
      if (std::filesystem::file_size(stats, ec) > 0 && !ec) todo.push_back(stats);
    }
  }
  return telemetry;
}

}  // namespace stoker
