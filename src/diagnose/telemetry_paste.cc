// Pasted messages (stoker/telemetry.h, read_pasted): the tool output people paste into issue
// threads, found line by line inside prose and Markdown. Each scanner below recognises its
// tool's lines by their own shape, so several kinds may be mixed in one text, and a table cut
// off mid-row keeps the rows before the cut.
#include <algorithm>
#include <map>
#include <regex>

#include "diagnose/telemetry_parse.h"
#include "util/check.h"

namespace stoker {
namespace {

using telemetry::Line;
using telemetry::parse_number;
using telemetry::split_whitespace;
using telemetry::trim;

std::optional<double> number_at(const std::smatch& m, size_t i) {
  if (!m[i].matched) return std::nullopt;
  return parse_number(std::string_view(&*m[i].first, static_cast<size_t>(m[i].length())));
}

// The cells of a table row "| a | b | c |" (outer bars optional), trimmed.
std::vector<std::string_view> cells(std::string_view row) {
  row = trim(row);
  if (!row.empty() && row.front() == '|') row.remove_prefix(1);
  if (!row.empty() && row.back() == '|') row.remove_suffix(1);
  std::vector<std::string_view> out;
  for (auto c : telemetry::split_char(row, '|')) out.push_back(trim(c));
  return out;
}

// Registers a TelemetryFile of `kind` (all of the text's lines, for quoting) on first use.
class Files {
 public:
  Files(const std::vector<Line>& lines, const std::string& name, Telemetry& out)
      : lines_(lines), name_(name), out_(out) {}
  int of(TelemetryKind kind) {
    auto it = index_.find(kind);
    if (it != index_.end()) return it->second;
    TelemetryFile f;
    f.path = name_;
    f.kind = kind;
    f.time_base = TimeBase::kSequence;
    for (const Line& l : lines_) f.lines.emplace_back(l.text);
    out_.files.push_back(std::move(f));
    const int i = static_cast<int>(out_.files.size()) - 1;
    index_[kind] = i;
    return i;
  }
  bool empty() const { return index_.empty(); }

 private:
  const std::vector<Line>& lines_;
  const std::string& name_;
  Telemetry& out_;
  std::map<TelemetryKind, int> index_;
};

// ---- nvidia-smi table --------------------------------------------------------------------
// Every era puts a GPU in a box of rows: "| 0  Tesla K40m  Off | 0000:04:00.0 Off | 0 |" (index,
// name, persistence), then "| 23%  36C  P0  65W / 235W | 10946MiB / 11439MiB | 87% Default |"
// (fan, temperature, perf, power, memory, utilisation), and from the 4xx drivers on a third row
// with "MIG M.". The process table follows: "|  0  N/A N/A  1234  C  python  9584MiB |" (the
// 2016-2018 layout has no GI/CI columns).

const std::regex& gpu_name_row() {
  static const std::regex re(R"(^\|\s*(\d+)\s+\S.*\|.*\|)");
  return re;
}

const std::regex& gpu_usage_row() {
  // memory "used / total" with MiB, then a utilisation percentage in the next cell.
  static const std::regex re(
      R"((?:(\d+(?:\.\d+)?)W\s*/\s*(\d+(?:\.\d+)?)W)?\s*\|\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(\d+)%)");
  return re;
}

const std::regex& process_row() {
  // GPU, [GI CI,] PID, type, name, memory.
  static const std::regex re(
      R"(^\|\s*(\d+)\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(\d+)\s+(C|G|C\+G|M|M\+C)\s+(.*?)\s+(\d+)MiB\s*\|)");
  return re;
}

// A usage row filtered out of its table, with the GPU's name in front:
// "Tesla V100-SXM2...  13198MiB / 16384MiB |     69%" (one row per GPU, in order).
const std::regex& named_usage_row() {
  static const std::regex re(R"(^([A-Za-z][^|]*?)\s+(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(\d+)%)");
  return re;
}

bool scan_nvidia_smi_table(const std::vector<Line>& lines, Files& files, Telemetry& out) {
  int file = -1;
  int pending_gpu = -1;  // the index of the last GPU name row, waiting for its usage row
  int named_gpu = 0;     // rows of named_usage_row() so far in the current run of them
  bool in_processes = false;
  std::map<int, int64_t> rounds;
  const auto add = [&](const Line& line, int gpu, std::optional<double> util,
                       std::optional<double> used, std::optional<double> total,
                       std::optional<double> power, std::optional<double> cap) {
    if (!util || *util > 100) return false;  // not a utilisation nvidia-smi prints
    if (file < 0) file = files.of(TelemetryKind::kNvidiaSmiTable);
    GpuSample s;
    s.origin = {file, line.number};
    s.gpu = gpu;
    s.round = rounds[gpu]++;
    s.time = static_cast<double>(s.round);
    s.util = *util;
    s.memory_used_mib = used;
    s.memory_total_mib = total;
    s.power_w = power;
    s.power_cap_w = cap;
    out.gpus.push_back(s);
    return true;
  };
  for (const Line& line : lines) {
    const std::string text(line.text);
    const std::string_view t = trim(line.text);
    std::smatch nm;
    if (std::regex_search(text, nm, named_usage_row())) {
      add(line, named_gpu++, number_at(nm, 4), number_at(nm, 2), number_at(nm, 3), std::nullopt,
          std::nullopt);
      continue;
    }
    named_gpu = 0;
    if (t.find("NVIDIA-SMI") != std::string_view::npos) {
      in_processes = false;
      continue;
    }
    if (t.find("Processes:") != std::string_view::npos) {
      in_processes = true;
      continue;
    }
    std::smatch m;
    if (in_processes) {
      if (std::regex_search(text, m, process_row())) {
        if (file < 0) file = files.of(TelemetryKind::kNvidiaSmiTable);
        GpuProcess p;
        p.origin = {file, line.number};
        p.gpu = static_cast<int>(*number_at(m, 1));
        p.pid = static_cast<int64_t>(*number_at(m, 2));
        p.name = m[4].str();
        p.memory_mib = number_at(m, 5);
        out.processes.push_back(std::move(p));
      }
      continue;
    }
    if (std::regex_search(text, m, gpu_usage_row())) {
      // Without its name row (`nvidia-smi -l 1 | grep MiB`), a usage row is read as GPU 0 over
      // time: the GPU cannot be told from the row alone.
      const bool added = add(line, pending_gpu >= 0 ? pending_gpu : 0, number_at(m, 5),
                             number_at(m, 3), number_at(m, 4), number_at(m, 1), number_at(m, 2));
      if (added && pending_gpu < 0) out.files[static_cast<size_t>(file)].gpus_guessed = true;
      pending_gpu = -1;
      continue;
    }
    if (std::regex_search(text, m, gpu_name_row()) && t.find("MiB") == std::string_view::npos &&
        t.find("GPU  Name") == std::string_view::npos) {
      pending_gpu = static_cast<int>(*number_at(m, 1));
    }
  }
  return file >= 0;
}

// ---- gpustat -----------------------------------------------------------------------------
// "[0] GeForce GTX TITAN X | 40'C,   0 % |    10 / 12207 MB | user(1230M) root(10M)"
bool scan_gpustat(const std::vector<Line>& lines, Files& files, Telemetry& out) {
  static const std::regex row(
      R"(\[(\d+)\]\s+[^|]+\|\s*(\d+)\s*(?:'|\xC2\xB0)C,\s*(?:\d+\s*%\s*,\s*)?(\d+)\s*%[^|]*\|\s*(\d+)\s*/\s*(\d+)\s*MB\s*\|?(.*)$)");
  static const std::regex proc(R"(([A-Za-z0-9_.-]+)(?::[^(\s]*)?(?:/(\d+))?\((\d+)M\))");
  int file = -1;
  std::map<int, int64_t> rounds;
  for (const Line& line : lines) {
    const std::string text(line.text);
    std::smatch m;
    if (!std::regex_search(text, m, row)) continue;
    if (file < 0) file = files.of(TelemetryKind::kGpustat);
    GpuSample s;
    s.origin = {file, line.number};
    s.gpu = static_cast<int>(*number_at(m, 1));
    s.round = rounds[s.gpu]++;
    s.time = static_cast<double>(s.round);
    s.util = *number_at(m, 3);
    s.memory_used_mib = number_at(m, 4);
    s.memory_total_mib = number_at(m, 5);
    if (s.util > 100) continue;
    out.gpus.push_back(s);
    const std::string rest = m[6].str();
    for (auto it = std::sregex_iterator(rest.begin(), rest.end(), proc);
         it != std::sregex_iterator(); ++it) {
      GpuProcess p;
      p.origin = s.origin;
      p.gpu = s.gpu;
      p.name = (*it)[1].str();
      if ((*it)[2].matched) p.pid = std::stoll((*it)[2].str());
      p.memory_mib = parse_number((*it)[3].str());
      out.processes.push_back(std::move(p));
    }
  }
  return file >= 0;
}

// ---- training-loop logs --------------------------------------------------------------------
// The step's time against the time it waited for data, as each trainer prints them:
//   PyTorch's ImageNet example   "Time 0.512 ( 1.204)  Data 0.301 ( 0.989)"   (current (avg))
//   semseg / OpenPCDet style     "Data 0.002 (0.574) Batch 0.818 (3.887)",
//                                "Data time: 0.00(0.02) ... Batch time: 0.31(0.31)"
//   timm                         "Time: 0.403s, 635/s  (0.428s, 598/s) ... Data: 0.012 (0.035)"
//   mmcv / mmcls                 "time: 0.196, data_time: 0.008"
//   LeRobot                      "updt_s:0.302 data_s:13.330" (the step is updt_s + data_s)
struct StepPattern {
  std::regex re;
  int step, step_avg, data, data_avg;  // capture groups (0: none)
  bool step_excludes_data = false;     // LeRobot: step = update + data
};

const std::vector<StepPattern>& step_patterns() {
  static const std::vector<StepPattern> patterns = [] {
    const std::string num = R"(([0-9]+(?:\.[0-9]+)?))";
    const std::string avg = R"(\s*\(\s*)" + num + R"(\s*\))";
    std::vector<StepPattern> p;
    p.push_back({std::regex(R"(\bTime\s+)" + num + avg + R"(\s+Data\s+)" + num + avg), 1, 2, 3, 4});
    p.push_back(
        {std::regex(R"(\bData\s+)" + num + avg + R"(\s+Batch\s+)" + num + avg), 3, 4, 1, 2});
    p.push_back({std::regex(R"(Data time:\s*)" + num + avg + R"(.*Batch time:\s*)" + num + avg), 3,
                 4, 1, 2});
    p.push_back({std::regex(R"(\bTime:\s*)" + num + R"(s,[^(]*\(\s*)" + num + R"(s,.*\bData:\s*)" +
                            num + avg),
                 1, 2, 3, 4});
    p.push_back({std::regex(R"(\btime:\s*)" + num + R"(,\s*data_time:\s*)" + num), 1, 0, 2, 0});
    p.push_back({std::regex(R"(\bupdt_s:)" + num + R"(\s+data_s:)" + num), 1, 0, 2, 0, true});
    return p;
  }();
  return patterns;
}

bool scan_train_log(const std::vector<Line>& lines, Files& files, Telemetry& out) {
  int file = -1;
  int64_t n = 0;
  for (const Line& line : lines) {
    const std::string text(line.text);
    for (const StepPattern& p : step_patterns()) {
      std::smatch m;
      if (!std::regex_search(text, m, p.re)) continue;
      if (file < 0) file = files.of(TelemetryKind::kTrainLog);
      const auto at = [&](int g) {
        return g > 0 ? number_at(m, static_cast<size_t>(g)) : std::nullopt;
      };
      StepSample s;
      s.origin = {file, line.number};
      s.time = static_cast<double>(n++);
      s.step_seconds = *at(p.step);
      s.data_seconds = *at(p.data);
      if (p.step_excludes_data) s.step_seconds += s.data_seconds;
      out.steps.push_back(s);
      if (p.step_avg > 0 && p.data_avg > 0) {
        StepSample a = s;
        a.step_seconds = *at(p.step_avg);
        a.data_seconds = *at(p.data_avg);
        a.average = true;
        out.steps.push_back(a);
      }
      break;
    }
  }
  return file >= 0;
}

// ---- PyTorch Lightning profiler ------------------------------------------------------------
// "Action | Mean duration (s) | Num calls | Total time (s) | Percentage %" rows; the data wait is
// the train_dataloader_next (2.x) or get_train_batch (1.x) row's total against
// run_training_epoch's (or the Total row's).
bool scan_lightning_profiler(const std::vector<Line>& lines, Files& files, Telemetry& out) {
  bool in_table = false;
  std::optional<double> epoch, total, data, batches;
  Origin epoch_origin;
  Origin data_origin;
  int file = -1;
  for (const Line& line : lines) {
    const std::string_view t = trim(line.text);
    if (t.find("Mean duration") != std::string_view::npos &&
        t.find("Total time") != std::string_view::npos) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    const auto c = cells(t);
    if (c.size() < 4) continue;
    const std::string_view action = c[0];
    const auto seconds = parse_number(c[3]);
    if (!seconds) continue;
    if (action == "Total") total = seconds;
    if (action == "run_training_epoch") {
      epoch = seconds;
      if (file < 0) file = files.of(TelemetryKind::kLightningProfiler);
      epoch_origin = {file, line.number};
    }
    if (action == "run_training_batch") batches = seconds;
    if (action.find("train_dataloader_next") != std::string_view::npos ||
        action == "get_train_batch") {
      if (file < 0) file = files.of(TelemetryKind::kLightningProfiler);
      data = seconds;
      data_origin = {file, line.number};
    }
  }
  const auto whole = epoch ? epoch : total;
  if (!whole || *whole <= 0) return false;
  if (!data && epoch && batches && *batches <= *epoch) {
    // No data-fetch row (cut off, or a version without one): the epoch loop's time outside
    // its batches is the fetch plus the loop's hooks, an upper bound of the wait.
    data = *epoch - *batches;
    data_origin = epoch_origin;
  }
  if (!data) return false;
  StepSample s;
  s.origin = data_origin;
  s.step_seconds = *whole;
  s.data_seconds = *data;
  s.average = true;
  out.steps.push_back(s);
  return true;
}

// ---- nvidia-smi topo -m --------------------------------------------------------------------
// "        GPU0  GPU1  CPU Affinity ..." then one row per GPU: "GPU0  X  NV2  PHB ...".
bool scan_topology(const std::vector<Line>& lines, Files& files, Telemetry& out) {
  bool found = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto head = split_whitespace(lines[i].text);
    if (head.size() < 2 || head[0] != "GPU0") continue;
    // The header row starts with GPU0; GPU rows start with GPU<k> then a cell for each GPU.
    int gpus = 0;
    while (static_cast<size_t>(gpus) < head.size() &&
           head[static_cast<size_t>(gpus)] == "GPU" + std::to_string(gpus)) {
      ++gpus;
    }
    if (gpus < 2) continue;
    GpuTopology topo;
    topo.gpus = gpus;
    for (size_t r = i + 1; r < lines.size() && r <= i + static_cast<size_t>(gpus); ++r) {
      const auto row = split_whitespace(lines[r].text);
      if (row.size() < static_cast<size_t>(gpus) + 1 || row[0].substr(0, 3) != "GPU") break;
      const auto k = telemetry::parse_index(row[0].substr(3));
      if (!k) break;
      for (int j = *k + 1; j < gpus; ++j) {
        const std::string_view link = row[static_cast<size_t>(j) + 1];
        ++topo.pairs;
        if (link.substr(0, 2) == "NV") ++topo.nvlink_pairs;
      }
    }
    if (topo.pairs == 0) continue;
    topo.origin = {files.of(TelemetryKind::kNvidiaSmiTopo), lines[i].number};
    out.topologies.push_back(topo);
    found = true;
  }
  return found;
}

// ---- nvidia-smi --query-gpu=... --format=csv,noheader -------------------------------------
// "0, 87 %, 1234 MiB, 11178 MiB" without its header: the columns are read by their units (a
// leading bare integer is the GPU's index, the first percentage utilization.gpu, then MiB as
// memory used and total, W as power). With nounits too there is nothing to go by: not read.
bool scan_query_noheader(const std::vector<Line>& lines, Files& files, Telemetry& out) {
  int file = -1;
  std::map<int, int64_t> rounds;
  for (const Line& line : lines) {
    const auto fields = telemetry::split_char(line.text, ',');
    if (fields.size() < 2) continue;
    std::optional<int> index;
    std::optional<double> util, used, total, power;
    bool ok = true;
    for (size_t k = 0; k < fields.size() && ok; ++k) {
      const std::string_view f = trim(fields[k]);
      const size_t space = f.rfind(' ');
      const std::string_view unit = space == std::string_view::npos ? "" : f.substr(space + 1);
      const auto value = parse_number(space == std::string_view::npos ? f : f.substr(0, space));
      if (!value) {
        ok = f == "[N/A]" || f == "[Not Supported]" || k > 0;  // names, dates: other columns
        continue;
      }
      if (unit.empty() && k == 0 && *value >= 0 && *value < 64 &&
          *value == static_cast<int>(*value)) {
        index = static_cast<int>(*value);
      } else if (unit == "%" && !util) {
        util = value;
      } else if (unit == "MiB") {
        (used ? total : used) = value;
      } else if (unit == "W" && !power) {
        power = value;
      }
    }
    if (!ok || !util || *util > 100 || (!used && !index)) continue;
    if (file < 0) {
      file = files.of(TelemetryKind::kNvidiaSmiCsv);
      out.notes.push_back(TelemetryNote{
          {file, line.number},
          "an nvidia-smi CSV without its header: its columns were read by their units (the "
          "first percentage as utilization.gpu)"});
    }
    GpuSample s;
    s.origin = {file, line.number};
    s.gpu = index.value_or(0);
    s.round = rounds[s.gpu]++;
    s.time = static_cast<double>(s.round);
    s.util = *util;
    s.memory_used_mib = used;
    s.memory_total_mib = total;
    s.power_w = power;
    out.gpus.push_back(s);
  }
  return file >= 0;
}

// ---- iostat and top: the CPU split ----------------------------------------------------------
// iostat: "avg-cpu:  %user   %nice %system %iowait  %steal   %idle" then the numbers on the next
// line. top: "%Cpu(s): 12.3 us,  1.2 sy,  0.0 ni, 85.9 id,  0.5 wa,  0.0 hi, ...". Each is one
// all-CPU sample: busy = 100 - idle - iowait.
bool scan_cpu_summaries(const std::vector<Line>& lines, Files& files, Telemetry& out) {
  static const std::regex top(R"(%Cpu\(s\):\s*([0-9.]+)\s*us,.*?([0-9.]+)\s*id,\s*([0-9.]+)\s*wa)");
  bool found = false;
  int64_t iostat_n = 0, top_n = 0;
  const auto add = [&](TelemetryKind kind, const Line& line, double idle, double iowait,
                       int64_t& n) {
    if (idle < 0 || iowait < 0 || idle + iowait > 100.05) return;
    CpuSample s;
    s.origin = {files.of(kind), line.number};
    s.time = static_cast<double>(n++);
    s.cpu = -1;
    s.idle = idle;
    s.iowait = iowait;
    s.busy = std::max(0.0, 100.0 - idle - iowait);
    out.cpus.push_back(s);
    found = true;
  };
  static const std::regex htop_bar(R"((?:^|\s)(\d+)\s*\[[^\]]*?([0-9.]+)%\])");
  std::vector<double> bars;  // htop's per-CPU bars of the current snapshot
  int64_t htop_line = 0;
  int disk_util = -1, disk_await = -1;  // iostat -x columns, after a Device header
  // The snapshot's bars ended: one all-CPU sample, cited at its last bar line (htop shows no
  // iowait).
  const auto flush_bars = [&] {
    if (bars.empty()) return;
    double sum = 0;
    for (double v : bars) sum += v;
    Line at;
    at.number = htop_line;
    add(TelemetryKind::kTop, at, 100 - sum / static_cast<double>(bars.size()), 0, top_n);
    bars.clear();
  };
  std::optional<double> top_idle;  // the last %Cpu(s) line's idle
  int cpu_column = -1;             // %CPU in top's process table, after its header
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string text(lines[i].text);
    std::smatch m;
    if (std::regex_search(text, m, top)) {
      const auto idle = number_at(m, 2), wa = number_at(m, 3);
      if (idle && wa) add(TelemetryKind::kTop, lines[i], *idle, *wa, top_n);
      top_idle = idle;
      continue;
    }
    // htop: "  1  [|||||||||   45.2%]" per CPU (two per line in its two-column header).
    {
      bool any = false;
      for (auto it = std::sregex_iterator(text.begin(), text.end(), htop_bar);
           it != std::sregex_iterator(); ++it) {
        const auto v = parse_number((*it)[2].str());
        if (v && *v <= 100) bars.push_back(*v), any = true;
      }
      if (any) {
        htop_line = lines[i].number;
        continue;
      }
      flush_bars();
    }
    const auto tokens = split_whitespace(lines[i].text);
    if (!tokens.empty() && (tokens[0] == "Device" || tokens[0] == "Device:")) {
      disk_util = disk_await = -1;
      for (size_t k = 0; k < tokens.size(); ++k) {
        if (tokens[k] == "%util") disk_util = static_cast<int>(k);
        if (tokens[k] == "r_await") disk_await = static_cast<int>(k);
      }
      continue;
    }
    if (disk_util > 0) {
      if (tokens.size() <= static_cast<size_t>(disk_util)) {
        disk_util = -1;  // the device table ended
      } else if (const auto u = parse_number(tokens[static_cast<size_t>(disk_util)]);
                 u && *u >= 0 && *u <= 100) {
        DiskSample d;
        d.origin = {files.of(TelemetryKind::kIostat), lines[i].number};
        d.device = std::string(tokens[0]);
        d.util = *u;
        if (disk_await > 0 && tokens.size() > static_cast<size_t>(disk_await)) {
          d.read_await = parse_number(tokens[static_cast<size_t>(disk_await)]);
        }
        out.disks.push_back(std::move(d));
        found = true;
        continue;
      }
    }
    if (tokens.size() >= 9 && tokens[0] == "PID") {
      cpu_column = -1;
      for (size_t k = 0; k < tokens.size(); ++k) {
        if (tokens[k] == "%CPU") cpu_column = static_cast<int>(k);
      }
      continue;
    }
    // The trap: a process at ~100 % in top is one core, not a saturated machine.
    if (cpu_column >= 0 && tokens.size() > static_cast<size_t>(cpu_column) && top_idle &&
        *top_idle >= 40) {
      const auto pct = parse_number(tokens[static_cast<size_t>(cpu_column)]);
      if (pct && *pct >= 90 && *pct <= 110) {
        out.notes.push_back(TelemetryNote{
            {files.of(TelemetryKind::kTop), lines[i].number},
            fmt::format("a process at {:.0f} % CPU in top is one core busy, not the machine: "
                        "top's summary says the CPUs are {:.0f} % idle",
                        *pct, *top_idle)});
        cpu_column = -1;  // one note is enough
      }
    }
    const auto head = split_whitespace(lines[i].text);
    if (head.size() < 7 || head[0] != "avg-cpu:" || i + 1 >= lines.size()) continue;
    int iowait = -1, idle = -1;
    for (size_t k = 1; k < head.size(); ++k) {
      if (head[k] == "%iowait") iowait = static_cast<int>(k) - 1;
      if (head[k] == "%idle") idle = static_cast<int>(k) - 1;
    }
    const auto values = split_whitespace(lines[i + 1].text);
    if (iowait < 0 || idle < 0 || values.size() != head.size() - 1) continue;
    const auto w = parse_number(values[static_cast<size_t>(iowait)]);
    const auto d = parse_number(values[static_cast<size_t>(idle)]);
    if (w && d) add(TelemetryKind::kIostat, lines[i + 1], *d, *w, iostat_n);
  }
  flush_bars();  // a snapshot whose bars end the text
  return found;
}

}  // namespace

std::string strip_markdown(std::string_view content) {
  std::string out;
  out.reserve(content.size());
  size_t at = 0;
  while (at <= content.size()) {
    size_t end = content.find('\n', at);
    const bool last = end == std::string_view::npos;
    if (last) end = content.size();
    std::string_view line = content.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // Quote markers: "> ", ">", "> > ".
    std::string_view rest = line;
    while (true) {
      const std::string_view t = rest.substr(std::min(rest.find_first_not_of(' '), rest.size()));
      if (t.empty() || t.front() != '>') break;
      rest = t.substr(1);
      if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    }
    const std::string_view t = trim(rest);
    std::string cleaned;
    if (t.rfind("```", 0) == 0 || t.rfind("~~~", 0) == 0) {
      // The fence line itself carries nothing: its text after ``` is a language, or a command
      // someone typed on it (kept below).
      std::string_view after = t.substr(3);
      while (!after.empty() && (after.front() == '`' || after.front() == '~')) {
        after.remove_prefix(1);
      }
      const bool language =
          !after.empty() && after.find(' ') == std::string_view::npos && after.size() <= 12;
      if (!language) cleaned.assign(after);
    } else {
      cleaned.reserve(rest.size());
      for (size_t i = 0; i < rest.size(); ++i) {
        const char c = rest[i];
        if (c == '\\' && i + 1 < rest.size() &&
            std::string_view("#|_*`[]<>").find(rest[i + 1]) != std::string_view::npos) {
          cleaned += rest[++i];  // a Markdown escape: the character itself
        } else if (c == '*' && i + 1 < rest.size() && rest[i + 1] == '*') {
          ++i;  // **bold**
        } else {
          cleaned += c;
        }
      }
      // A line wrapped in single backticks (inline code): drop them.
      std::string_view ct = trim(cleaned);
      if (ct.size() >= 2 && ct.front() == '`' && ct.back() == '`') {
        cleaned = std::string(ct.substr(1, ct.size() - 2));
      } else if (!ct.empty() && std::count(ct.begin(), ct.end(), '`') == 1 &&
                 (ct.front() == '`' || ct.back() == '`')) {
        // The first or last line of a block wrapped in single backticks.
        std::string s(ct);
        if (s.front() == '`') s.erase(0, 1);
        if (!s.empty() && s.back() == '`') s.pop_back();
        cleaned = s;
      }
    }
    out += cleaned;
    if (last) break;
    out += '\n';
    at = end + 1;
  }
  return out;
}

namespace {

// Whole-file logs pasted as blocks between blank lines (an mpstat run, a --query-gpu CSV, a
// dmon run, stats lines): each block whose first lines make one of those kinds is read by that
// kind's parser, its samples kept with their line numbers in the message. A block that starts
// like a log but does not parse as one is passed over (pasted text is often cut or edited).
void scan_whole_log_blocks(const std::vector<Line>& lines, const std::string& name, Files& files,
                           Telemetry& into) {
  size_t i = 0;
  while (i < lines.size()) {
    while (i < lines.size() && trim(lines[i].text).empty()) ++i;
    size_t j = i;
    while (j < lines.size() && !trim(lines[j].text).empty()) ++j;
    if (j > i) {
      std::string block;
      for (size_t k = i; k < j; ++k) block.append(lines[k].text).push_back('\n');
      if (const auto kind = telemetry::detect_whole_log(block)) {
        const std::vector<Line> part(lines.begin() + static_cast<std::ptrdiff_t>(i),
                                     lines.begin() + static_cast<std::ptrdiff_t>(j));
        Telemetry one;
        one.files.emplace_back();
        one.files[0].path = name;
        one.files[0].kind = *kind;
        try {
          telemetry::parse_whole_log(*kind, part, telemetry::Source{name, 0, one});
          const int f = files.of(*kind);
          into.files[static_cast<size_t>(f)].time_base = one.files[0].time_base;
          for (GpuSample s : one.gpus) s.origin.file = f, into.gpus.push_back(s);
          for (CpuSample s : one.cpus) s.origin.file = f, into.cpus.push_back(s);
          for (RankSample s : one.ranks) s.origin.file = f, into.ranks.push_back(s);
        } catch (const Error&) {
        }
      }
    }
    i = j;
  }
}

}  // namespace

void read_pasted(std::string_view content, const std::string& name, Telemetry& into) {
  const std::string text = strip_markdown(content);
  const auto lines = telemetry::split_lines(text);
  Files files(lines, name, into);
  scan_whole_log_blocks(lines, name, files, into);
  scan_nvidia_smi_table(lines, files, into);
  scan_gpustat(lines, files, into);
  scan_train_log(lines, files, into);
  scan_lightning_profiler(lines, files, into);
  scan_topology(lines, files, into);
  scan_cpu_summaries(lines, files, into);
  if (into.gpus.empty()) scan_query_noheader(lines, files, into);
  if (files.empty()) {
    std::string_view first;
    for (const Line& l : lines) {
      if (!trim(l.text).empty()) {
        first = trim(l.text);
        break;
      }
    }
    if (first.empty()) STOKER_THROW_ARG("{}: empty, not a telemetry log", name);
    STOKER_THROW_ARG(
        "{}: not a telemetry log stoker reads (nvidia-smi tables, --format=csv or dmon, "
        "gpustat, mpstat, sar -u, vmstat, training-loop Time/Data lines, a Lightning profile, "
        "topo -m, stoker stats or monitor JSON lines); it starts with {}",
        name, telemetry::quote(first));
  }
}

}  // namespace stoker
