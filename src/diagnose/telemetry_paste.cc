// Pasted messages (stoker/telemetry.h, read_pasted): the tool output people paste into issue
// threads, found line by line inside prose and Markdown. Each scanner below recognises its
// tool's lines by their own shape, so several kinds may be mixed in one text, and a table cut
// off mid-row keeps the rows before the cut.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>

#include "diagnose/telemetry_parse.h"
#include "diagnose/telemetry_vocab.h"
#include "util/check.h"

namespace stoker {
namespace {

using telemetry::bytes_of;
using telemetry::kMaxPastedLineBytes;
using telemetry::Line;
using telemetry::lower;
using telemetry::parse_index;
using telemetry::parse_number;
using telemetry::PasteFiles;
using telemetry::split_char;
using telemetry::split_whitespace;
using telemetry::trim;

// The cells of a table row "| a | b | c |" (outer bars optional), trimmed.
std::vector<std::string_view> cells(std::string_view row) {
  row = trim(row);
  if (!row.empty() && row.front() == '|') row.remove_prefix(1);
  if (!row.empty() && row.back() == '|') row.remove_suffix(1);
  std::vector<std::string_view> out;
  for (auto c : telemetry::split_char(row, '|')) out.push_back(trim(c));
  return out;
}

// ---- nvidia-smi table --------------------------------------------------------------------
// Every era puts a GPU in a box of rows: "| 0  Tesla K40m  Off | 0000:04:00.0 Off | 0 |" (index,
// name, persistence), then "| 23%  36C  P0  65W / 235W | 10946MiB / 11439MiB | 87% Default |"
// (fan, temperature, perf, power, memory, utilisation), and from the 4xx drivers on a third row
// with "MIG M.". The process table follows: "|  0  N/A N/A  1234  C  python  9584MiB |" (the
// 2016-2018 layout has no GI/CI columns). Rows are read cell by cell, never by a regular
// expression: linear in the line.

// "<a><unit> / <b><unit>" at the end of `text` ("10946MiB / 11439MiB", "65W / 235W"), with
// where it starts; nullopt when the text does not end so.
struct UnitPair {
  double a = 0, b = 0;
  size_t start = 0;
};
std::optional<UnitPair> trailing_pair(std::string_view text, std::string_view unit) {
  text = trim(text);
  const auto number_before = [&](size_t end) -> std::optional<std::pair<double, size_t>> {
    size_t k = end;
    while (k > 0 && ((text[k - 1] >= '0' && text[k - 1] <= '9') || text[k - 1] == '.')) --k;
    if (k == end) return std::nullopt;
    const auto v = parse_number(text.substr(k, end - k));
    if (!v) return std::nullopt;
    return std::make_pair(*v, k);
  };
  if (text.size() < unit.size() || text.substr(text.size() - unit.size()) != unit) {
    return std::nullopt;
  }
  const auto b = number_before(text.size() - unit.size());
  if (!b) return std::nullopt;
  size_t k = b->second;
  while (k > 0 && text[k - 1] == ' ') --k;
  if (k == 0 || text[k - 1] != '/') return std::nullopt;
  --k;
  while (k > 0 && text[k - 1] == ' ') --k;
  if (k < unit.size() || text.substr(k - unit.size(), unit.size()) != unit) return std::nullopt;
  const auto a = number_before(k - unit.size());
  if (!a) return std::nullopt;
  return UnitPair{a->first, b->first, a->second};
}

// "87%" or "87%  Default" at the start of a cell: the percentage.
std::optional<double> leading_percent(std::string_view cell) {
  cell = trim(cell);
  const size_t pct = cell.find('%');
  if (pct == std::string_view::npos || pct == 0 || pct > 4) return std::nullopt;
  return parse_number(cell.substr(0, pct));
}

bool is_process_type(std::string_view t) {
  return t == "C" || t == "G" || t == "C+G" || t == "M" || t == "M+C";
}

// A process row's tokens with MIG's GI and CI columns after the GPU: "0  N/A N/A  1234  C ...".
bool gi_ci_columns(const std::vector<std::string_view>& t) {
  const auto na_or_index = [](std::string_view v) { return v == "N/A" || parse_index(v); };
  return t.size() >= 7 && na_or_index(t[1]) && na_or_index(t[2]) && parse_index(t[3]) &&
         is_process_type(t[4]);
}

// "|  0  N/A N/A  1234  C  python  9584MiB |": GPU, [GI CI,] PID, type, name, memory.
std::optional<GpuProcess> process_row(std::string_view text) {
  const auto c = cells(text);
  if (c.size() != 1) return std::nullopt;
  const auto t = split_whitespace(c[0]);
  if (t.size() < 5) return std::nullopt;
  const auto gpu = parse_index(t[0]);
  if (!gpu) return std::nullopt;
  const size_t pid_at = gi_ci_columns(t) ? 3 : 1;
  const size_t type_at = pid_at + 1;
  // GPU [GI CI] PID type, a name of one token or more, then the memory.
  if (type_at + 2 >= t.size()) return std::nullopt;
  const auto pid = parse_index(t[pid_at]);
  if (!pid || !is_process_type(t[type_at])) return std::nullopt;
  const std::string_view memory = t.back();
  if (memory.size() < 4 || memory.substr(memory.size() - 3) != "MiB") return std::nullopt;
  const auto mib = parse_number(memory.substr(0, memory.size() - 3));
  if (!mib) return std::nullopt;
  GpuProcess p;
  p.gpu = *gpu;
  p.pid = *pid;
  const size_t name_from = static_cast<size_t>(t[type_at + 1].data() - c[0].data());
  const size_t name_to = static_cast<size_t>(memory.data() - c[0].data());
  p.name = std::string(trim(c[0].substr(name_from, name_to - name_from)));
  p.memory_mib = mib;
  return p;
}

bool scan_nvidia_smi_table(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  int file = -1;
  int pending_gpu = -1;  // the index of the last GPU name row, waiting for its usage row
  int named_gpu = 0;     // filtered usage rows (with their GPU's name in front) so far in a run
  bool in_processes = false;
  std::map<int, int64_t> rounds;
  const auto add = [&](const Line& line, int gpu, std::optional<double> util,
                       std::optional<UnitPair> memory, std::optional<UnitPair> power) {
    if (!util || *util > 100) return false;  // not a utilisation nvidia-smi prints
    if (file < 0) file = files.of(TelemetryKind::kNvidiaSmiTable);
    GpuSample s;
    s.origin = {file, line.number};
    s.gpu = gpu;
    s.round = rounds[gpu]++;
    s.time = static_cast<double>(s.round);
    s.util = *util;
    if (memory) s.memory_used_mib = memory->a, s.memory_total_mib = memory->b;
    if (power) s.power_w = power->a, s.power_cap_w = power->b;
    out.gpus.push_back(s);
    return true;
  };
  for (const Line& line : lines) {
    const std::string_view t = trim(line.text);
    if (t.size() > kMaxPastedLineBytes) continue;
    const bool boxed = !t.empty() && t.front() == '|';
    const auto c = cells(t);
    // A usage row: a cell ending in "used MiB / total MiB" followed by a percentage cell.
    std::optional<size_t> memory_cell;
    for (size_t k = 0; k + 1 < c.size(); ++k) {
      if (trailing_pair(c[k], "MiB") && leading_percent(c[k + 1])) {
        memory_cell = k;
        break;
      }
    }
    if (memory_cell) {
      const auto memory = trailing_pair(c[*memory_cell], "MiB");
      const auto util = leading_percent(c[*memory_cell + 1]);
      const std::string_view before = trim(c[*memory_cell].substr(0, memory->start));
      if (!boxed && *memory_cell == 0 && !before.empty() &&
          ((before.front() >= 'A' && before.front() <= 'Z') ||
           (before.front() >= 'a' && before.front() <= 'z'))) {
        // "Tesla V100-SXM2...  13198MiB / 16384MiB |     69%": rows filtered out of their
        // table with the GPU's name in front, one per GPU in order.
        add(line, named_gpu++, util, memory, std::nullopt);
        in_processes = false;
        continue;
      }
      named_gpu = 0;
      if (!in_processes) {
        const auto power =
            *memory_cell > 0 ? trailing_pair(c[*memory_cell - 1], "W") : std::optional<UnitPair>();
        // Without its name row (`nvidia-smi -l 1 | grep MiB`), a usage row is read as GPU 0
        // over time: the GPU cannot be told from the row alone.
        const bool added = add(line, pending_gpu >= 0 ? pending_gpu : 0, util, memory, power);
        if (added && pending_gpu < 0) out.files[static_cast<size_t>(file)].gpus_guessed = true;
        pending_gpu = -1;
        continue;
      }
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
    // A process row, under its table's header or cut from it with its borders ("0   N/A  N/A
    // 12238      C   ...python     2333MiB": GPU, GI, CI, PID, type, name, memory, a shape no
    // other line has).
    const auto headerless_process = [&] {
      if (t.empty() || t[0] < '0' || t[0] > '9') return false;  // most lines: no GPU index
      const auto w = split_whitespace(t);
      return parse_index(w[0]) && gi_ci_columns(w);
    };
    if (in_processes || headerless_process()) {
      if (auto p = process_row(t)) {
        if (file < 0) file = files.of(TelemetryKind::kNvidiaSmiTable);
        p->origin = {file, line.number};
        out.processes.push_back(std::move(*p));
      }
      if (in_processes) continue;
    }
    // A name row: "|   0  Tesla V100-PCIE...  Off  | 00000000:2D:00.0 Off |  0 |".
    // Or the first of a paste cut just inside its left border (" 0  NVIDIA GeForce ...  Off  |
    // 00000000:01:00.0 Off |  N/A |"): an index, a name, and the bus id's cell.
    const auto cut_name_row = [&] {
      if (boxed || c.size() < 3) return false;
      const auto first = split_whitespace(c[0]);
      return first.size() >= 2 && parse_index(first[0]) && !first[1].empty() &&
             telemetry::is_alpha(first[1][0]) && trim(c[1]).find(':') != std::string_view::npos;
    };
    if ((boxed || cut_name_row()) && c.size() >= 2 && t.find("MiB") == std::string_view::npos &&
        t.find("GPU  Name") == std::string_view::npos) {
      const auto first = split_whitespace(c[0]);
      if (first.size() >= 2) {
        if (const auto index = parse_index(first[0])) pending_gpu = *index;
      }
    }
  }
  return file >= 0;
}

// ---- gpustat -----------------------------------------------------------------------------
// "[0] GeForce GTX TITAN X | 40'C,   0 % |    10 / 12207 MB | user(1230M) root(10M)"; with
// the fan shown, "| 40'C,  23 %,   0 % |" (the utilisation is the last percentage).
bool scan_gpustat(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  int file = -1;
  std::map<int, int64_t> rounds;
  for (const Line& line : lines) {
    std::string_view t = trim(line.text);
    if (t.size() > kMaxPastedLineBytes) continue;
    const size_t open = t.find('[');
    if (open == std::string_view::npos) continue;
    const size_t close = t.find(']', open);
    if (close == std::string_view::npos) continue;
    const auto gpu = parse_index(t.substr(open + 1, close - open - 1));
    if (!gpu) continue;
    const auto c = split_char(t.substr(close + 1), '|');
    if (c.size() < 3) continue;
    // The temperature cell: "40'C,   0 %" or "40°C, 23 %, 0 %".
    const std::string_view temp = trim(c[1]);
    if (temp.find("'C") == std::string_view::npos && temp.find("\xC2\xB0"
                                                               "C") == std::string_view::npos) {
      continue;
    }
    const auto parts = split_char(temp, ',');
    std::optional<double> util;
    for (size_t k = 1; k < parts.size(); ++k) {
      std::string_view p = trim(parts[k]);
      if (p.empty() || p.back() != '%') continue;
      p.remove_suffix(1);
      if (const auto v = parse_number(trim(p))) util = v;
    }
    // The memory cell: "10 / 12207 MB".
    std::string_view mem = trim(c[2]);
    if (mem.size() < 3 || mem.substr(mem.size() - 2) != "MB") continue;
    mem = trim(mem.substr(0, mem.size() - 2));
    const auto halves = split_char(mem, '/');
    if (halves.size() != 2 || !util || *util > 100) continue;
    const auto used = parse_number(trim(halves[0]));
    const auto total = parse_number(trim(halves[1]));
    if (!used || !total) continue;
    if (file < 0) file = files.of(TelemetryKind::kGpustat);
    GpuSample s;
    s.origin = {file, line.number};
    s.gpu = *gpu;
    s.round = rounds[s.gpu]++;
    s.time = static_cast<double>(s.round);
    s.util = *util;
    s.memory_used_mib = used;
    s.memory_total_mib = total;
    out.gpus.push_back(s);
    // Processes: "user(1230M)", "user:python/1234(1230M)".
    if (c.size() < 4) continue;
    for (const std::string_view token : split_whitespace(c[3])) {
      const size_t paren = token.find('(');
      if (paren == std::string_view::npos || token.size() < paren + 3 || token.back() != ')' ||
          token[token.size() - 2] != 'M') {
        continue;
      }
      const auto mib = parse_number(token.substr(paren + 1, token.size() - paren - 3));
      if (!mib) continue;
      std::string_view who = token.substr(0, paren);
      GpuProcess p;
      p.origin = s.origin;
      p.gpu = s.gpu;
      if (const size_t slash = who.rfind('/'); slash != std::string_view::npos) {
        if (const auto pid = parse_index(who.substr(slash + 1))) p.pid = *pid;
        who = who.substr(0, slash);
      }
      p.name = std::string(who.substr(0, who.find(':')));
      p.memory_mib = mib;
      if (!p.name.empty()) out.processes.push_back(std::move(p));
    }
  }
  return file >= 0;
}

// ---- GPU tables made by hand or by a monitoring script ------------------------------------
// A pipe table (Markdown or not) with a column of GPU indices and one of their utilisation,
// "| GPU ID | Model | Temp | Power | Memory Used | Memory Total | GPU Util |", in Chinese too
// ("| GPU ID | 型号 | ... | 显存使用 | 显存总量 | GPU利用率 |"): a snapshot of each GPU, its
// memory where columns give it. Not a table of runs: a column naming a rate or a time makes
// the first column a count of GPUs, and so do indices that neither start at 0 nor follow on.

namespace {

struct GpuTableColumns {
  size_t index = 0, util = 0;
  std::optional<size_t> used, total;
};

std::optional<GpuTableColumns> gpu_table_header(const std::vector<std::string_view>& cells) {
  std::optional<size_t> index, util, used, total;
  bool index_names_gpu = false;  // "GPU ID", not a bare "#" or "Index" that numbers any rows
  constexpr std::string_view kMemory = "\xe6\x98\xbe\xe5\xad\x98";  // 显存, GPU memory
  for (size_t k = 0; k < cells.size(); ++k) {
    const std::string raw(trim(cells[k]));
    const std::string c = telemetry::lower(trim(telemetry::in_english(raw)));
    const auto has = [&](std::string_view w) { return c.find(w) != std::string::npos; };
    const bool memory = has("mem") || raw.find(kMemory) != std::string::npos;
    if (c == "gpu" || c == "gpu id" || c == "gpu index" || c == "gpu #" || c == "gpu no." ||
        c == "gpu no") {
      if (!index || !index_names_gpu) index = k;
      index_names_gpu = true;
    } else if (c == "index" || c == "#" || c == "id" || c == "device") {
      if (!index) index = k;
    } else if (has("util") && !memory && !has("cpu")) {
      if (util) return std::nullopt;  // two: which is the GPU's is not said
      util = k;
    } else if (memory && (has("used") || has("usage") ||
                          raw.find("\xe4\xbd\xbf\xe7\x94\xa8") != std::string::npos)) {  // 使用
      used = k;
    } else if (memory && (has("total") ||
                          raw.find("\xe6\x80\xbb\xe9\x87\x8f") != std::string::npos)) {  // 总量
      total = k;
    } else if (const telemetry::Quantity q =
                   telemetry::meaning_of(telemetry::NamedValue{c, "", 1, std::nullopt, 0}).quantity;
               q == telemetry::Quantity::kRate || q == telemetry::Quantity::kStep ||
               telemetry::duration_scale(c)) {
      return std::nullopt;  // a table of runs: its first column counts GPUs
    }
  }
  // A bare index column is the GPUs' beside their memory ("| # | Memory Used | GPU Util |").
  if (!index || !util || (!index_names_gpu && !used && !total)) return std::nullopt;
  return GpuTableColumns{*index, *util, used, total};
}

// "31108 MB", "32768 MB (95%)", "12.3 GiB", "31108MiB": MiB. A bare number says no unit.
std::optional<double> table_mib(std::string_view cell) {
  const auto f = split_whitespace(cell.substr(0, cell.find('(')));
  if (f.empty() || f.size() > 2) return std::nullopt;
  std::string_view number = f[0], unit = f.size() == 2 ? f[1] : std::string_view();
  if (unit.empty()) {
    const size_t at = number.find_first_not_of("0123456789.");
    if (at != std::string_view::npos) unit = number.substr(at), number = number.substr(0, at);
  }
  const auto bytes = unit.empty() ? std::nullopt : bytes_of(number, unit);
  if (!bytes || *bytes < 0) return std::nullopt;
  return *bytes / (1024 * 1024);
}

}  // namespace

bool scan_gpu_table(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  struct Row {
    int64_t line;
    int gpu;
    double util;
    std::optional<double> used, total;
  };
  bool found = false;
  std::optional<GpuTableColumns> columns;
  std::vector<Row> rows;
  const auto flush = [&] {
    std::set<int> gpus;
    for (const Row& r : rows) gpus.insert(r.gpu);
    const bool follow_on =
        !gpus.empty() && *gpus.rbegin() - *gpus.begin() + 1 == static_cast<int>(gpus.size());
    if (gpus.size() == rows.size() && (gpus.contains(0) || follow_on)) {
      const int file = files.of(TelemetryKind::kGpuPanel);
      for (const Row& r : rows) {
        GpuSample s;
        s.origin = {file, r.line};
        s.gpu = r.gpu;
        s.util = r.util;
        s.memory_used_mib = r.used;
        s.memory_total_mib = r.total;
        out.gpus.push_back(s);
      }
      found = true;
    }
    rows.clear();
    columns.reset();
  };
  for (const Line& line : lines) {
    std::string_view t = trim(line.text);
    if (t.size() > kMaxPastedLineBytes || t.find('|') == std::string_view::npos) {
      flush();
      continue;
    }
    if (t.front() == '|') t.remove_prefix(1);
    if (!t.empty() && t.back() == '|') t.remove_suffix(1);
    const auto cells = split_char(t, '|');
    if (!columns) {
      columns = gpu_table_header(cells);
      continue;
    }
    if (t.find_first_not_of("-:| ") == std::string_view::npos) continue;  // "|---|---|"
    const auto cell = [&](std::optional<size_t> k) {
      return k && *k < cells.size() ? trim(cells[*k]) : std::string_view();
    };
    const auto gpu = parse_index(cell(columns->index));
    std::string_view util = cell(columns->util);
    if (!util.empty() && util.back() == '%') util = trim(util.substr(0, util.size() - 1));
    const auto value = parse_number(util);
    // A GPU whose utilisation the tool could not read ("N/A", "-"): that row alone is passed over.
    if (gpu && *gpu <= 1024 && !value && (util.empty() || util == "-" || util == "N/A")) continue;
    if (!gpu || *gpu > 1024 || !value || *value < 0 || *value > 100) {
      flush();
      continue;
    }
    rows.push_back(Row{line.number, static_cast<int>(*gpu), *value, table_mib(cell(columns->used)),
                       table_mib(cell(columns->total))});
  }
  flush();
  return found;
}

// ---- PyTorch Lightning profiler ------------------------------------------------------------
// "Action | Mean duration (s) | Num calls | Total time (s) | Percentage %" rows; the data wait is
// the train_dataloader_next (2.x) or get_train_batch (1.x) row's total against
// run_training_epoch's (or the Total row's).
bool scan_lightning_profiler(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  bool in_table = false;
  size_t total_column = 0;  // "Total time (s)": the 4th cell in 1.x-2.x, the 3rd in early 1.x
  std::optional<double> epoch, total, data, batches;
  double rows_sum = 0;  // every row's total: the loop's time when no row covers the epoch
  Origin epoch_origin;
  Origin data_origin;
  int file = -1;
  for (const Line& line : lines) {
    const std::string_view t = trim(line.text);
    if (t.find("Mean duration") != std::string_view::npos &&
        t.find("Total time") != std::string_view::npos) {
      in_table = true;
      const auto head = cells(t);
      for (size_t k = 0; k < head.size(); ++k) {
        if (head[k].find("Total time") != std::string_view::npos) total_column = k;
      }
      continue;
    }
    if (!in_table || total_column == 0) continue;
    const auto c = cells(t);
    if (c.size() <= total_column) continue;
    const std::string_view action = c[0];
    const auto seconds = parse_number(c[total_column]);
    if (!seconds) continue;
    if (action == "Total") total = seconds;
    if (action != "Total") rows_sum += *seconds;
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
  // Without an epoch or Total row (early 1.x lists each hook flat), the hooks' totals together
  // are the loop's time.
  if (!epoch && !total && data && rows_sum > 0) total = rows_sum;
  const auto whole = epoch ? epoch : total;
  if (!whole || *whole <= 0) return false;
  bool upper_bound = false;
  if (!data && epoch && batches && *batches <= *epoch) {
    upper_bound = true;
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
  s.data_upper_bound = upper_bound;
  out.steps.push_back(s);
  return true;
}

// ---- torch.profiler key_averages() table -------------------------------------------------
// "Name  Self CPU %  Self CPU  CPU total %  CPU total  CPU time avg ... # of Calls", columns
// parted by runs of two spaces. The DataLoader's iteration is the profiler's own
// "enumerate(DataLoader)#..." row (Lightning's PyTorchProfiler: its
// "[pl][profile][_TrainingEpochLoop].train_dataloader_next" row); the loop it is part of is the
// ProfilerStep rows together, or else the whole profile (its "CPU total %" is the share of
// "Self CPU time total"). Without a data row, Lightning's "run_training_batch" row bounds the
// wait from above: the steps' time outside their batches.

// "78.632s", "68.203ms", "407.511us" in seconds.
std::optional<double> profiler_seconds(std::string_view cell) {
  const size_t unit = cell.find_first_not_of("0123456789.");
  if (unit == 0 || unit == std::string_view::npos) return std::nullopt;
  const auto v = parse_number(cell.substr(0, unit));
  const auto scale = telemetry::duration_scale(cell.substr(unit));
  return v && scale ? std::optional<double>(*v * *scale) : std::nullopt;
}

bool scan_torch_profiler(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  size_t columns = 0, total_column = 0, share_column = 0;
  size_t cuda_column = 0, cuda_share_column = 0;  // "Self CUDA", "Self CUDA %"
  double steps = 0, data = 0, batches = 0;
  double data_share = 0;  // the data row's "CPU total %", 0 when not shown
  int64_t data_line = 0, batches_line = 0;
  // NCCL's kernels ("ncclKernel_AllGather_RING_LL_Sum_int8_t(...", "ncclDevKernel_..."), table by
  // table: their self CUDA time against the table's whole CUDA time ("Self CUDA time total:"
  // under it, else what their seconds and shares together give). The table whose GPUs spend
  // the most in them is kept (a multi-node profile pasted above a single-node one).
  struct NcclShare {
    double seconds = 0, percent = 0, whole = 0;
    double largest = 0;  // the largest row's seconds, cited
    int64_t line = 0;
  };
  NcclShare table, kept;
  const auto keep = [&] {
    if (table.whole <= 0 && table.percent > 0) table.whole = table.seconds / (table.percent / 100);
    if (table.seconds > 0 && table.whole >= table.seconds &&
        (kept.whole <= 0 || table.seconds / table.whole > kept.seconds / kept.whole)) {
      kept = table;
    }
    table = NcclShare{};
  };
  // A share cell, "54.65%", in percent.
  const auto percent = [](std::string_view cell) -> std::optional<double> {
    if (!cell.ends_with('%')) return std::nullopt;
    return parse_number(cell.substr(0, cell.size() - 1));
  };
  for (const Line& line : lines) {
    if (const std::string_view t = trim(line.text); t.starts_with("Self CUDA time total:")) {
      if (const auto whole = profiler_seconds(trim(t.substr(21)))) table.whole = *whole;
      continue;
    }
    const auto c = telemetry::table_cells(line.text);
    if (!c.empty() && c[0] == "Name") {
      keep();
      columns = total_column = share_column = cuda_column = cuda_share_column = 0;
      for (size_t k = 1; k < c.size(); ++k) {
        if (c[k] == "CPU total") total_column = k;
        if (c[k] == "CPU total %") share_column = k;
        if (c[k] == "Self CUDA") cuda_column = k;
        if (c[k] == "Self CUDA %") cuda_share_column = k;
      }
      if (total_column > 0) columns = c.size();
      continue;
    }
    if (columns == 0 || c.size() != columns) continue;
    const std::string_view name = c[0];
    if ((name.starts_with("ncclKernel_") || name.starts_with("ncclDevKernel_")) &&
        cuda_column > 0 && cuda_share_column > 0) {
      const auto self = profiler_seconds(c[cuda_column]);
      const auto pct = percent(c[cuda_share_column]);
      if (self && pct && *pct > 0 && *pct <= 100) {
        table.seconds += *self;
        table.percent += *pct;
        if (*self > table.largest) table.largest = *self, table.line = line.number;
      }
    }
    const auto seconds = profiler_seconds(c[total_column]);
    if (!seconds) continue;
    if (name.substr(0, 12) == "ProfilerStep") steps += *seconds;
    if (name.find("run_training_batch") != std::string_view::npos && *seconds > batches) {
      batches = *seconds;
      batches_line = line.number;
    }
    const bool data_row = name.substr(0, 21) == "enumerate(DataLoader)" ||
                          name.find("train_dataloader_n") != std::string_view::npos;
    if (data_row && *seconds > data) {
      data = *seconds;
      data_line = line.number;
      data_share = 0;
      if (const auto pct = share_column > 0 ? percent(c[share_column]) : std::nullopt;
          pct && *pct > 0) {
        data_share = *pct / 100;
      }
    }
  }
  bool upper_bound = false;
  if (data <= 0 && batches > 0 && steps > batches) {
    data = steps - batches;
    data_line = batches_line;
    upper_bound = true;
  }
  // The GPUs' time in NCCL against the rest of their time: the step's exchange and compute.
  keep();
  const bool exchange = kept.seconds > 0;
  if (exchange) {
    PhaseSample p;
    p.origin = {files.of(TelemetryKind::kTorchProfiler), kept.line};
    p.communication_seconds = kept.seconds;
    p.compute_seconds = kept.whole - kept.seconds;
    p.gpu_profile = true;
    out.phases.push_back(p);
  }
  double whole = steps;
  if (whole < data) whole = data_share > 0 ? data / data_share : 0;
  if (data <= 0 || whole <= 0) return exchange;
  StepSample s;
  s.origin = {files.of(TelemetryKind::kTorchProfiler), data_line};
  s.step_seconds = whole;
  s.data_seconds = data;
  s.average = true;
  s.data_upper_bound = upper_bound;
  out.steps.push_back(s);
  return true;
}

// PaddlePaddle's profiler report ("------> Profiling Report <------", "Time unit: ms", then
// "Event  Calls  Total  Min.  Max.  Ave." or "Event  Calls  Total  CPU Time (Ratio)  GPU Time
// (Ratio)" over a row per operator, "thread0::send  391  400535  354.304 ..."), sorted by total
// time. Fluid's operators run one after another, none inside another (the parts 'OpDetail'
// prints under each, "conv2d/compute", are left out), so their totals add up:
// the reader's (read, a py_reader's or buffered reader's) are the wait for data, the exchange's
// (send, recv, the barriers, allreduce, broadcast, NCCL's and the c_ collectives) communication,
// the rest compute. A table cut off keeps the rows shown (the largest). One sample, a profile's
// totals: a step with its wait where a reader's row shows, the step's phases where an
// exchange's does; with compute rows only, a measurement no rule places. Returns false without
// such a table.
bool scan_paddle_profiler(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  bool found = false;
  double unit = 1e-3;  // "Time unit: ms", Fluid's default
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view t = trim(lines[i].text);
    if (t.starts_with("Time unit:")) {
      if (const auto scale = telemetry::duration_scale(trim(t.substr(10)))) unit = *scale;
      continue;
    }
    const auto head = split_whitespace(t);
    if (head.size() < 3 || head[0] != "Event" || head[1] != "Calls" || head[2] != "Total") {
      continue;
    }
    double data = 0, exchange = 0, compute = 0;
    int64_t last = lines[i].number;
    for (size_t j = i + 1; j < lines.size(); ++j) {
      const auto row = split_whitespace(lines[j].text);
      if (row.size() < 3 || !parse_index(row[1])) break;
      const auto total = parse_number(row[2]);
      if (!total || *total < 0) break;
      std::string name = lower(row[0]);
      if (const size_t scope = name.rfind("::"); scope != std::string::npos) {
        name.erase(0, scope + 2);
      }
      // An operator's parts under it (tracer_option 'OpDetail': "conv2d/compute",
      // "conv2d/infer_shape", indented): its total holds them already.
      const std::string_view text = lines[j].text;
      if (name.find('/') != std::string::npos ||
          (!text.empty() && (text[0] == ' ' || text[0] == '\t') && !lines[i].text.empty() &&
           lines[i].text[0] != ' ' && lines[i].text[0] != '\t')) {
        last = lines[j].number;
        continue;
      }
      const auto has = [&](std::string_view w) { return name.find(w) != std::string::npos; };
      if (name == "read" || has("reader") || name == "feed") {
        data += *total;
      } else if (name == "send" || name == "recv" || has("barrier") || has("allreduce") ||
                 has("all_reduce") || name == "broadcast" || has("nccl") ||
                 name.starts_with("c_") || has("listen_and_serv") || has("allgather")) {
        exchange += *total;
      } else {
        compute += *total;
      }
      last = lines[j].number;
    }
    const double whole = data + exchange + compute;
    if (whole <= 0) continue;
    const int file = files.of(TelemetryKind::kPaddleProfiler);
    // Compute alone: measurements no rule places (the wait for data happens outside the ops
    // shown, in a reader's own thread, or in rows cut off).
    if (data <= 0 && exchange <= 0) {
      out.unplaced.emplace_back(Origin{file, last}, "operator profile");
      found = true;
      continue;
    }
    if (data > 0) {
      StepSample s;
      s.origin = {file, last};
      s.step_seconds = whole * unit;
      s.data_seconds = data * unit;
      s.average = true;
      out.steps.push_back(s);
    }
    if (exchange > 0) {
      PhaseSample p;
      p.origin = {file, last};
      p.communication_seconds = exchange * unit;
      p.compute_seconds = compute * unit;
      out.phases.push_back(p);
    }
    found = true;
  }
  return found;
}

// A function of a cProfile row that fetches the next batch or an item of it: the DataLoader's
// __next__ (and _next_data), its fetchers, a dataset's __getitem__, MXNet's io.py next, a
// loop's own next_batch / get_batch / load_batch, a queue's get (a prefetch queue waited on).
bool is_data_function(std::string_view row) {
  const std::string f = lower(row);
  const auto has = [&](std::string_view w) { return f.find(w) != std::string::npos; };
  if (has("dataloader.py") && (has("(__next__)") || has("(_next_data)"))) return true;
  if (has("/fetch.py") || has("(__getitem__)") || has("(next_batch)") || has("(get_batch)") ||
      has("(load_batch)") || has("(train_dataloader_next)")) {
    return true;
  }
  if ((has("io.py") || has("data")) && has("(next)")) return true;
  return has("queue.py") && has("(get)");
}

// cProfile's table (pstats' print_stats): "N function calls ... in T seconds", then "ncalls
// tottime percall cumtime percall filename:lineno(function)" and a row per function. The rows
// that fetch data (is_data_function; the largest cumulative time, as they nest) against the
// profile's total: one sample, a profile's totals. A profile that shows no data row, or no
// total, is read and judges nothing.
bool scan_cprofile(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  bool found = false;
  double total = -1;  // -1: none (sentinels: GCC 12 misjudges optionals in this loop)
  int64_t total_line = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view text = lines[i].text;
    if (text.size() > kMaxPastedLineBytes) continue;
    auto tokens = split_whitespace(text);
    // Lines numbered by `cat -n` or an editor (" 457    ncalls  tottime ..."): the number is
    // no column.
    const size_t numbered = tokens.size() > 2 && parse_index(tokens[0]) &&
                                    (tokens[1] == "ncalls" || tokens[2] == "function")
                                ? 1
                                : 0;
    tokens.erase(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(numbered));
    // "6246763 function calls (5929933 primitive calls) in 376.118 seconds"
    if (tokens.size() >= 6 && tokens.back() == "seconds" && tokens[1] == "function" &&
        tokens[2] == "calls") {
      total = parse_number(tokens[tokens.size() - 2]).value_or(-1);
      total_line = lines[i].number;
      continue;
    }
    if (!(tokens.size() == 6 && tokens[0] == "ncalls" && tokens[1] == "tottime" &&
          tokens[3] == "cumtime")) {
      continue;
    }
    const int file = files.of(TelemetryKind::kPythonProfiler);
    found = true;
    double data = -1, root = -1;
    Origin data_at;
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      auto row = split_whitespace(lines[j].text);
      if (numbered && !row.empty()) row.erase(row.begin());
      // "330000    1.585    0.000    3.447    0.000 memmap.py:330(__getitem__)"; "20/10" counts
      // recursive calls.
      if (row.size() < 6 || !parse_number(row[1]) || !parse_number(row[3])) break;
      const double cum = *parse_number(row[3]);
      // The script's top level ("train.py:2(<module>)", "{built-in method builtins.exec}"): the
      // whole run, where the paste leaves out the "function calls in T seconds" line.
      if (lines[j].text.find("(<module>)") != std::string_view::npos ||
          lines[j].text.find("builtins.exec}") != std::string_view::npos) {
        root = std::max(root, cum);
      }
      if (!is_data_function(lines[j].text)) continue;
      if (cum > data) data = cum, data_at = {file, lines[j].number};
    }
    // The table's own total, when its header says one within the few lines above; else its
    // top level's.
    const bool own_total = total > 0 && lines[i].number - total_line <= 6;
    const double whole = own_total ? total : root;
    if (data >= 0 && whole > 0 && data <= whole) {
      StepSample s;
      s.origin = data_at;
      s.step_seconds = whole;
      s.data_seconds = data;
      s.average = true;
      out.steps.push_back(s);
    }
    total = -1;
    i = j - 1;
  }
  return found;
}

// line_profiler's table (kernprof -l): "Line #  Hits  Time  Per Hit  % Time  Line Contents",
// then a row per line of the profiled function ("170  102  525418.3  5151.2  0.3  for i, batch
// in enumerate(train_dataloader):"). The time of a line that draws a batch from a loader (`for
// ... in ...loader...:`, `next(...)` of a loader or data iterator) is the wait for it: against
// the function's total, one sample, a profile's totals. A table without such a line is read and
// judges nothing.
bool draws_a_batch(std::string_view code) {
  const std::string c = lower(trim(code));
  const bool loader = c.find("loader") != std::string::npos ||
                      c.find("data_iter") != std::string::npos ||
                      c.find("dataiter") != std::string::npos;
  if (!loader) return false;
  return (c.starts_with("for ") && c.find(" in ") != std::string::npos) ||
         c.find("next(") != std::string::npos;
}

bool scan_line_profiler(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  bool found = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view text = lines[i].text;
    if (text.size() > kMaxPastedLineBytes) continue;
    const auto head = split_whitespace(text);
    if (!(head.size() >= 8 && head[0] == "Line" && head[1] == "#" && head[2] == "Hits" &&
          head[3] == "Time" && text.find("% Time") != std::string_view::npos)) {
      continue;
    }
    const int file = files.of(TelemetryKind::kPythonProfiler);
    found = true;
    // Above the table: "Timer unit: 1e-06 s" (the Time column's unit, line_profiler's default)
    // and "Total time: 12.3 s" (the function's, which % Time is of).
    double unit = 1e-6, stated_total = -1;
    for (size_t k = i >= 8 ? i - 8 : 0; k < i; ++k) {
      const auto w = split_whitespace(lines[k].text);
      if (w.size() >= 3 && w[0] == "Timer" && w[1] == "unit:") {
        unit = parse_number(w[2]).value_or(unit);
      }
      if (w.size() >= 3 && w[0] == "Total" && w[1] == "time:") {
        stated_total = parse_number(w[2]).value_or(-1);
      }
    }
    double shown = 0, percent = 0;  // the rows' Time, and the loader lines' % Time
    Origin data_at;
    bool draws = false;
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      const std::string_view row_text = lines[j].text;
      const auto row = split_whitespace(row_text);
      if (row.empty() || row[0].starts_with("===")) continue;
      if (!parse_index(row[0])) break;  // the table ended
      // A line that ran: its number, hits, time, per hit and % time before its code.
      if (row.size() < 6 || !parse_number(row[1]) || !parse_number(row[2]) ||
          !parse_number(row[3]) || !parse_number(row[4])) {
        continue;
      }
      shown += *parse_number(row[2]) * unit;
      const size_t code = row_text.find(row[5]);
      if (code != std::string_view::npos && draws_a_batch(row_text.substr(code))) {
        if (!draws) data_at = {file, lines[j].number};
        draws = true;
        percent += *parse_number(row[4]);
      }
    }
    // % Time is of the whole function, also where the paste shows only part of it.
    const double total = stated_total > 0 ? stated_total : shown;
    if (draws && total > 0 && percent <= 100) {
      StepSample s;
      s.origin = data_at;
      s.step_seconds = total;
      s.data_seconds = total * percent / 100;
      s.average = true;
      out.steps.push_back(s);
    }
    i = j - 1;
  }
  return found;
}

// ---- nvidia-smi topo -m --------------------------------------------------------------------
// "        GPU0  GPU1  CPU Affinity ..." then one row per GPU: "GPU0  X  NV2  PHB ...".
bool scan_topology(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
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
        if (link == "SYS") ++topo.sys_pairs;
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
// A PCI bus id as --query-gpu prints it: "00000000:31:00.0".
bool is_bus_id(std::string_view f) {
  return f.size() == 16 && f[8] == ':' && f[11] == ':' && f[14] == '.';
}

// A query row's first field as a timestamp ("2023/09/15 22:33:05.672", "2025-10-07 ...").
bool leading_timestamp(std::string_view f) {
  return f.size() >= 10 && std::isdigit(static_cast<unsigned char>(f[0])) &&
         (f[4] == '/' || f[4] == '-');
}

// "0, 87 %, 1234 MiB, 11178 MiB" without its header (or the header cut off): the columns are
// read by their units. The GPU is a leading bare integer, else its bus id (in order of first
// sight: the documentation's example query starts with timestamp, name and pci.bus_id); the
// first percentage is utilization.gpu; MiB are memory used then total, except three MiB columns
// with the largest first: that example's memory.total, memory.free, memory.used; W is power.
// With nounits too there is nothing to go by: not read.
bool scan_query_noheader(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  // A bare integer right after a row's timestamp is its GPU's index (--query-gpu=timestamp,
  // index,...) only where those integers count the GPUs in turn, 0 to n-1 and again, as
  // nvidia-smi prints them; else it is another column (a temperature) and the row names no GPU.
  std::vector<int> after_timestamps;
  for (const Line& line : lines) {
    const auto fields = telemetry::split_char(line.text, ',');
    if (fields.size() < 3) continue;
    const std::string_view first = trim(fields[0]);
    const std::string_view second = trim(fields[1]);
    if (const auto k = parse_index(second); leading_timestamp(first) && k) {
      after_timestamps.push_back(*k);
    }
  }
  const int gpus_in_turn =
      after_timestamps.empty()
          ? 0
          : *std::max_element(after_timestamps.begin(), after_timestamps.end()) + 1;
  bool index_after_timestamp = gpus_in_turn >= 2;
  for (size_t r = 0; r < after_timestamps.size() && index_after_timestamp; ++r) {
    index_after_timestamp = after_timestamps[r] == static_cast<int>(r) % gpus_in_turn;
  }
  int file = -1;
  std::map<int, int64_t> rounds;
  std::map<std::string, int, std::less<>> bus_ids;
  for (const Line& line : lines) {
    const auto fields = telemetry::split_char(line.text, ',');
    if (fields.size() < 2) continue;
    std::optional<int> index;
    std::optional<double> util, power;
    std::vector<double> mib;
    std::string_view bus_id;
    bool ok = true;
    bool after_timestamp = false;  // field k-1 was the row's leading timestamp
    for (size_t k = 0; k < fields.size() && ok; ++k) {
      const std::string_view f = trim(fields[k]);
      const size_t space = f.rfind(' ');
      const std::string_view unit = space == std::string_view::npos ? "" : f.substr(space + 1);
      const auto value = parse_number(space == std::string_view::npos ? f : f.substr(0, space));
      if (!value) {
        if (is_bus_id(f) && bus_id.empty()) bus_id = f;
        // Names and bus ids: other columns; a first column may only be a timestamp
        // ("2023/09/15 22:33:05.672") or the GPU's name ("NVIDIA GeForce RTX 4090 D, 100 %").
        const std::string low = k == 0 ? lower(f) : std::string();
        const bool timestamp = k == 0 && leading_timestamp(f);
        ok = f == "[N/A]" || f == "[Not Supported]" || k > 0 || timestamp ||
             low.starts_with("nvidia") || low.starts_with("tesla") || low.starts_with("geforce") ||
             low.starts_with("quadro");
        after_timestamp = timestamp;
        continue;
      }
      // The GPU's index first, or right after the timestamp (--query-gpu=timestamp,index,...,
      // as a log that prefixes its own time writes it: "2025-10-07 16:01:38 2025/10/07
      // 16:01:38.811, 0, 70 %, ...").
      const bool index_place = k == 0 || (k == 1 && after_timestamp && index_after_timestamp);
      after_timestamp = false;
      if (unit.empty() && index_place && *value >= 0 && *value < 64 &&
          *value == static_cast<int>(*value)) {
        index = static_cast<int>(*value);
      } else if (unit == "%" && !util) {
        util = value;
      } else if (unit == "MiB") {
        mib.push_back(*value);
      } else if (unit == "W" && !power) {
        power = value;
      }
    }
    if (!ok || !util || *util > 100 || (mib.empty() && !index)) continue;
    if (!index && !bus_id.empty()) {
      index =
          bus_ids.try_emplace(std::string(bus_id), static_cast<int>(bus_ids.size())).first->second;
    }
    std::optional<double> used, total;
    if (mib.size() == 3 && mib[0] >= mib[1] && mib[0] >= mib[2]) {
      total = mib[0];  // total, free, used
      used = mib[2];
    } else if (!mib.empty()) {
      used = mib[0];  // used, total (the order people query them in)
      if (mib.size() > 1) total = mib[1];
    }
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

// ---- collective benchmarks ---------------------------------------------------------------
// nccl-tests (all_reduce_perf and its kin): a "#  size  count  type  redop  root  time  algbw
// busbw  #wrong ..." header (older releases without root), then rows of numbers; the bus
// bandwidth of each row, its size in bytes. A benchmark's lines that name a collective and its
// bandwidth ("AllReduce: [[0, 1, 2, 3]]  Bytes: 2.00000 GB  Time: 0.01403 s  Bandwidth: 213.81
// GB/s"): one measurement each, grouped by what they name.

// An iperf row's bandwidth in GB/s: "[ ID]"'s id in brackets (or "[SUM]"), an interval "a-b" and
// "sec", the transfer in bytes, the bandwidth in bits/sec (iperf3's retries and "sender" may
// follow); nullopt for any other line.
std::optional<double> iperf_row_gbps(std::string_view text) {
  if (!text.starts_with('[')) return std::nullopt;
  const size_t close = text.find(']');
  if (close == std::string_view::npos || close > 8) return std::nullopt;
  const std::string_view id = trim(text.substr(1, close - 1));
  if (id != "SUM" && !parse_index(id)) return std::nullopt;
  const auto f = split_whitespace(text.substr(close + 1));
  if (f.size() < 6 || f[0].find('-') == std::string_view::npos || f[1] != "sec") {
    return std::nullopt;
  }
  // The transfer: a number in "GBytes", "MBytes", "KBytes" or "Bytes".
  if (!parse_number(f[2]) || !f[3].ends_with("Bytes")) return std::nullopt;
  // A UDP test's row: jitter in ms and lost/total datagrams after the bandwidth (iperf3 -u):
  // the rate it was told to send (1 Mbit/s unless -b), not what the link carries.
  if (f.size() >= 8 && f[7] == "ms" && parse_number(f[6])) return std::nullopt;
  const auto value = parse_number(f[4]);
  const std::string unit = telemetry::lower(f[5]);
  double scale = 0;
  if (unit == "gbits/sec") scale = 1e9;
  if (unit == "mbits/sec") scale = 1e6;
  if (unit == "kbits/sec") scale = 1e3;
  if (unit == "bits/sec") scale = 1;
  if (!value || *value < 0 || scale == 0) return std::nullopt;
  return *value * scale / 8 / 1e9;
}

// The types NCCL's tests name, with the bytes of one element: what a row's count is in bytes,
// and what marks a row pasted without its header.
struct NcclType {
  std::string_view name;
  double bytes;
};
constexpr NcclType kNcclTypes[] = {{"int8", 1},    {"uint8", 1},    {"char", 1},    {"half", 2},
                                   {"float16", 2}, {"bfloat16", 2}, {"int", 4},     {"int32", 4},
                                   {"uint32", 4},  {"float", 4},    {"float32", 4}, {"double", 8},
                                   {"float64", 8}, {"int64", 8},    {"uint64", 8}};

const NcclType* nccl_type(std::string_view name) {
  for (const NcclType& t : kNcclTypes) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// The bytes of one element of an NCCL test's type ("char", "half", "float", "double", ...): 1
// for a type it does not know (a lower bound).
double element_bytes(std::string_view type) {
  const NcclType* t = nccl_type(type);
  return t ? t->bytes : 1;
}

// The column of a bus bandwidth in an nccl-tests row pasted without its header ("8  2  float  sum
// -1  27.66  0.00  0.00  0 ..."): its size and count, a type and a reduction NCCL names, the root
// (releases since 2.x) and the time, algbw and busbw; npos for any other line.
size_t headerless_nccl_busbw(const std::vector<std::string_view>& fields) {
  constexpr std::string_view kOps[] = {"sum", "prod", "max", "min", "avg", "none", "mulsum"};
  if (fields.size() < 7 || !parse_index(fields[0]) || !parse_index(fields[1]) ||
      nccl_type(fields[2]) == nullptr ||
      std::find(std::begin(kOps), std::end(kOps), fields[3]) == std::end(kOps)) {
    return std::string_view::npos;
  }
  const bool root = fields[4] == "-1" || parse_index(fields[4]).has_value();
  const size_t busbw = root ? 7 : 6;
  return fields.size() > busbw ? busbw : std::string_view::npos;
}

// A line without the label a launcher puts before each process's output: Slurm's `srun
// --label` ("0: ", "12: ") and Open MPI's --tag-output ("[1,0]<stdout>:").
std::string_view without_launcher_label(std::string_view text) {
  text = trim(text);
  size_t digits = 0;
  while (digits < text.size() && digits < 5 && telemetry::is_digit(text[digits])) ++digits;
  if (digits > 0 && text.substr(digits).starts_with(": ")) return trim(text.substr(digits + 1));
  if (text.starts_with('[')) {
    if (const size_t tag = text.find("]<stdout>:"); tag != std::string_view::npos && tag < 16) {
      return trim(text.substr(tag + 10));
    }
  }
  return text;
}

bool scan_collective_bench(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  bool found = false;
  int file = -1;
  const auto add = [&](const Line& l, double bytes, double gbps, std::string group,
                       bool sweep_average = false) {
    if (file < 0) file = files.of(TelemetryKind::kCollectiveBench);
    out.bandwidths.push_back(
        BandwidthSample{{file, l.number}, bytes, gbps, std::move(group), sweep_average});
    found = true;
  };
  bool averaging = false;  // a command that averages the sweep's averages prints the next number
  // In a row's fields, from the table's header; npos outside a table (a sentinel, not an
  // optional: GCC 12 warns an optional's value may be used uninitialized here).
  size_t busbw_column = std::string_view::npos;
  int tables = 0;
  double kvstore_bytes = 0;      // MXNet's measure.py: the gradients' total size
  bool counts_elements = false;  // the table's first column counts elements (NCCL 1), not bytes
  std::string row_label;         // the header's column before the size, where there is one
  std::string p2p_matrix;        // the p2pBandwidthLatencyTest matrix being read, by its title
  int p2p_matrix_rows = 0;       // its rows still to read; 0 outside one
  int p2p_matrices = 0;
  std::string bench_collective;    // all_reduce_bench.py's collective, from its heading line
  double bench_payload_bytes = 0;  // ... and its payload
  for (const Line& l : lines) {
    const std::string_view text = without_launcher_label(l.text);
    // nccl-tests' last line, "# Avg bus bandwidth    : 92.3405" (an mpirun's "[1,0]<stdout>:"
    // before it); and a shell's mean of many runs' ("grep "Avg bus" log | awk '{sum+=$6} END
    // {print sum/NR}'"), the number on the line below the command.
    if (const size_t avg = text.find("Avg bus"); avg != std::string_view::npos) {
      const size_t colon = text.find(':', avg);
      const auto value = colon == std::string_view::npos
                             ? std::nullopt
                             : parse_number(trim(text.substr(colon + 1)));
      if (value && *value >= 0) {
        add(l, 0, *value, "nccl-tests' Avg bus bandwidth", true);
      } else {
        averaging = text.find("awk") != std::string_view::npos;
      }
      continue;
    }
    if (averaging && !text.empty()) {
      averaging = false;
      if (const auto value = parse_number(text); value && *value >= 0) {
        add(l, 0, *value, "the mean of nccl-tests' Avg bus bandwidth lines", true);
        continue;
      }
    }
    // The header, with its '#' or without (pasted through a tool that took it for a comment).
    const auto header = split_whitespace(text.starts_with("#") ? text.substr(1) : text);
    // NCCL 1's tests ("./build/test/single/all_reduce_test 10000000 2 0 1") count elements
    // under "N", of the type beside them.
    // A column before the size labels each row with what it compares (nccl#527's "p4dn  size
    // count ...": the node count of each row).
    if (const auto at = std::find(header.begin(), header.end(), "busbw");
        at != header.end() &&
        (header[0] == "size" || header[0] == "N" || (header.size() > 2 && header[1] == "size"))) {
      busbw_column = static_cast<size_t>(at - header.begin());
      counts_elements = header[0] == "N" && header.size() > 1 && header[1] == "type";
      row_label =
          header[0] == "size" || header[0] == "N" ? std::string() : telemetry::printable(header[0]);
      ++tables;
      continue;
    }
    if (text.starts_with("#")) continue;
    // The units' line under a header pasted without its '#': "(B)  (elements)  (us)  (GB/s)".
    if (const auto f = split_whitespace(text);
        busbw_column != std::string_view::npos && !f.empty() &&
        std::all_of(f.begin(), f.end(), [](std::string_view w) { return w.starts_with('('); })) {
      continue;
    }
    if (busbw_column == std::string_view::npos) {
      busbw_column = headerless_nccl_busbw(split_whitespace(text));
      if (busbw_column != std::string_view::npos) {
        counts_elements = false;
        row_label.clear();
        ++tables;
      }
    }
    if (busbw_column != std::string_view::npos) {
      const auto fields = split_whitespace(text);
      if (fields.size() > busbw_column) {
        const size_t at_size = row_label.empty() ? 0 : 1;
        auto size = parse_number(fields[at_size]);
        const auto bus = parse_number(fields[busbw_column]);
        if (size && counts_elements) *size *= element_bytes(fields[1]);
        if (size && bus && *size >= 0 && *bus >= 0) {
          add(l, *size, *bus,
              row_label.empty() ? fmt::format("nccl-tests table {}", tables)
                                : fmt::format("nccl-tests table {} at {} {}", tables, row_label,
                                              telemetry::printable(fields[0])));
          continue;
        }
      }
      if (!text.empty()) busbw_column = std::string_view::npos;  // the table ended
    }
    // CUDA's p2pBandwidthLatencyTest (BusGrind): "P2P Bandwidth Matrix (GB/s) - Unidirectional,
    // P2P=Enabled" (or "Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)"), a "D\D 0 1" row,
    // then a row per GPU: its copies to each other GPU. The diagonal is a GPU's own memory, no
    // link.
    if (p2p_matrix_rows > 0) {
      const auto fields = split_whitespace(text);
      const auto from = fields.empty() ? std::nullopt : parse_index(fields[0]);
      if (fields.size() >= 3 && from) {
        for (size_t k = 1; k < fields.size(); ++k) {
          const auto gbps = parse_number(fields[k]);
          if (!gbps || !std::isfinite(*gbps) || *gbps <= 0 || static_cast<int>(k - 1) == *from) {
            continue;
          }
          add(l, 0, *gbps, fmt::format("{} GPU{} -> GPU{}", p2p_matrix, *from, k - 1));
        }
        --p2p_matrix_rows;
        continue;
      }
      if (text.find("D\\D") != std::string_view::npos) continue;
      p2p_matrix_rows = 0;
    }
    if (text.find("Bandwidth Matrix") != std::string_view::npos &&
        text.find("GB/s") != std::string_view::npos) {
      const std::string low = telemetry::lower(text);
      p2p_matrix = fmt::format(
          "p2pBandwidthLatencyTest {} P2P=",
          low.find("bidirectional") != std::string::npos ? "bidirectional" : "unidirectional");
      p2p_matrix += low.find("p2p=disabled") != std::string::npos ? "Disabled" : "Enabled";
      p2p_matrix += fmt::format(" (matrix {})", ++p2p_matrices);
      p2p_matrix_rows = 64;  // at most a machine's GPUs, counted down as rows are read
      continue;
    }
    // iperf's and iperf3's interval rows between two hosts: "[  3]  0.0-10.0 sec  5.60 GBytes
    // 4.80 Gbits/sec" (byteps#163), "[  5]   0.00-10.00  sec  1.10 GBytes   943 Mbits/sec
    // receiver": the network a multi-node job exchanges over.
    if (const auto gbps = iperf_row_gbps(text)) {
      add(l, 0, *gbps, "iperf between two hosts");
      continue;
    }
    // MXNet's tools/bandwidth/measure.py: "num of arrays = 205, total size = 257.991328 MB",
    // then "iter 1, 0.113931 sec, 2.264454 GB/sec per gpu, error 0.000000" (after logging's
    // "INFO:root:") per round of the
    // KVStore's push and pull of those gradients.
    if (const size_t total = text.find("total size = "); total != std::string_view::npos) {
      const auto parts = split_whitespace(text.substr(total + 13));
      if (parts.size() >= 2) kvstore_bytes = bytes_of(parts[0], parts[1]).value_or(0);
    }
    if (const size_t per_gpu = text.find(" GB/sec per gpu");
        per_gpu != std::string_view::npos && text.find("iter ") < per_gpu) {
      size_t begin = per_gpu;
      while (begin > 0 && (telemetry::is_digit(text[begin - 1]) || text[begin - 1] == '.')) --begin;
      if (const auto gbps = parse_number(text.substr(begin, per_gpu - begin))) {
        add(l, kvstore_bytes, *gbps, "KVStore push/pull (MXNet measure.py)");
        continue;
      }
    }
    // ml-engineering's all_reduce_bench.py: "The average bandwidth of all_reduce with a 4.0GB
    // payload (50 trials, 16 ranks):", then " algbw: 180.776 GBps (1446.2 Gbps)" and " busbw:
    // 338.955 GBps (2711.6 Gbps)": the bus bandwidth, like nccl-tests', at that payload.
    if (const size_t with = text.find(" with a ");
        text.starts_with("The average bandwidth of ") && with != std::string_view::npos) {
      const std::string_view payload = text.substr(with + 8, text.find(" payload") - with - 8);
      size_t digits = 0;
      while (digits < payload.size() &&
             (telemetry::is_digit(payload[digits]) || payload[digits] == '.')) {
        ++digits;
      }
      bench_payload_bytes = bytes_of(payload.substr(0, digits), payload.substr(digits)).value_or(0);
      bench_collective = std::string(text.substr(25, with - 25));
      continue;
    }
    if (text.starts_with("busbw:") && !bench_collective.empty()) {
      const auto f = split_whitespace(text.substr(6));
      const auto value = f.size() >= 2 ? parse_number(f[0]) : std::nullopt;
      if (value && *value >= 0 && (f[1] == "GBps" || f[1] == "Gbps")) {
        add(l, bench_payload_bytes, f[1] == "GBps" ? *value : *value / 8,
            fmt::format("all_reduce_bench's {} busbw", telemetry::printable(bench_collective)));
        continue;
      }
    }
    // "AllReduce: [[0, 1]]  Bytes: 2.00000 GB  Time: 0.68834 s  Bandwidth: 5.08 GB/s".
    const std::string collective = telemetry::collective_with_bandwidth(text);
    if (collective.empty()) continue;
    const std::string low = telemetry::lower(text);
    const size_t bw = low.find("bandwidth");
    const auto after = split_whitespace(std::string_view(low).substr(bw + 9));
    if (after.size() < 2) continue;
    // "Bandwidth: 5.08 GB/s", "Bandwidth : 5.08 GB/s", "Bandwidth:5.08 GB/s": the number's
    // index, then the unit's after it.
    const size_t at_number = after[0] == ":" ? 1 : 0;
    if (after.size() < at_number + 2) continue;
    std::string_view number = after[at_number];
    if (!number.empty() && number.front() == ':') number.remove_prefix(1);
    const auto gbps = parse_number(number);
    const std::string_view unit = after[at_number + 1];
    if (!gbps || !unit.starts_with("gb/s")) continue;
    double bytes = 0;
    if (const size_t b = low.find("bytes:"); b != std::string::npos) {
      const auto parts = split_whitespace(std::string_view(low).substr(b + 6));
      if (parts.size() >= 2) bytes = bytes_of(parts[0], parts[1]).value_or(0);
    }
    // The group: the collective and the ranks it names ("[[0, 1, 2, 3]]").
    std::string group = collective;
    if (const size_t open = text.find('['); open != std::string_view::npos) {
      int depth = 0;
      for (size_t k = open; k < text.size(); ++k) {
        depth += text[k] == '[' ? 1 : text[k] == ']' ? -1 : 0;
        if (depth == 0) {
          group += " " + telemetry::printable(text.substr(open, k - open + 1));
          break;
        }
      }
    }
    add(l, bytes, *gbps, std::move(group));
  }
  return found;
}

// ---- Chainer's PrintReport -------------------------------------------------------------------
// Chainer's (and ESPnet 1's, ChainerMN's) LogReport as PrintReport prints it: a header of
// names ("epoch  iteration  main/loss ... elapsed_time"), each row's values left-aligned under
// them, blank where a value is missing (a validation's). Its elapsed_time is cumulative since
// the trainer started: the difference between two rows is their epochs' (or, with an
// iteration column, their steps') time.

bool scan_print_report(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  bool found = false;
  for (size_t h = 0; h + 2 < lines.size(); ++h) {
    const std::string_view header = lines[h].text;
    const auto names = split_whitespace(header);
    if (names.size() < 2 || names[0] != "epoch" ||
        std::find(names.begin(), names.end(), "elapsed_time") == names.end()) {
      continue;
    }
    // Where each column starts: its name's first character.
    const auto start_of = [&](std::string_view name) -> size_t {
      const auto at = std::find(names.begin(), names.end(), name);
      return at == names.end() ? std::string_view::npos
                               : static_cast<size_t>(at->data() - header.data());
    };
    const size_t elapsed_at = start_of("elapsed_time");
    const size_t iteration_at = start_of("iteration");
    // The value that starts at a column's start.
    const auto value_at = [](std::string_view row, size_t column) -> std::optional<double> {
      if (column == std::string_view::npos || column >= row.size() ||
          (column > 0 && row[column - 1] != ' ') || row[column] == ' ') {
        return std::nullopt;
      }
      const size_t end = std::min(row.find(' ', column), row.size());
      return parse_number(row.substr(column, end - column));
    };
    struct Row {
      const Line* line;
      double elapsed, iteration;
    };
    std::vector<Row> rows;
    size_t r = h + 1;
    for (; r < lines.size(); ++r) {
      const std::string_view row = lines[r].text;
      const auto words = split_whitespace(row);
      if (words.empty() || !parse_index(words[0])) break;
      const auto elapsed = value_at(row, elapsed_at);
      const auto iteration = value_at(row, iteration_at);
      if (!elapsed) continue;  // cut off before its last column
      rows.push_back({&lines[r], *elapsed, iteration.value_or(0)});
    }
    // Chainer's elapsed_time only grows; a logger printing each epoch's own time is another's.
    if (rows.size() < 2 ||
        std::adjacent_find(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
          return b.elapsed < a.elapsed;
        }) != rows.end()) {
      continue;
    }
    const bool steps = iteration_at != std::string_view::npos;
    const int file = files.of(steps ? TelemetryKind::kTrainLog : TelemetryKind::kThroughput);
    for (size_t k = 0; k < rows.size(); ++k) {
      const double seconds = rows[k].elapsed - (k > 0 ? rows[k - 1].elapsed : 0);
      const double iterations = rows[k].iteration - (k > 0 ? rows[k - 1].iteration : 0);
      if (seconds <= 0 || (steps && iterations < 1)) continue;  // rows out of order
      if (steps) {
        StepSample st;
        st.origin = {file, rows[k].line->number};
        st.time = static_cast<double>(out.steps.size());
        st.step_seconds = seconds / iterations;
        st.has_data = false;
        out.steps.push_back(st);
      } else {
        ThroughputSample t;
        t.origin = {file, rows[k].line->number};
        t.per_second = 1 / seconds;
        t.unit = "epochs";
        out.rates.push_back(t);
      }
      found = true;
    }
    h = r - 1;
  }
  return found;
}

// ---- a shell's `time` and GNU time -v ---------------------------------------------------------
// bash's and ksh's three lines ("real    44m45.176s", "user  4366m26.973s", "sys    182m31.383s"),
// zsh's one ("python dqn.py  31.98s user 1.76s system 94% cpu 35.960 total") and GNU time -v's
// fields ("User time (seconds): 30730.48", "System time (seconds): 1021.2", "Elapsed (wall
// clock) time (h:mm:ss or m:ss): 2:11:05"): each run's wall-clock time and its CPU time.

// The command a line (trimmed, and its words) times: what follows "time " ("$ time python
// train.py --epochs 3"), or GNU time -v's `Command being timed: "python train.py"`; empty when
// the line shows none.
std::string timed_command(std::string_view text, const std::vector<std::string_view>& words) {
  if (text.starts_with("Command being timed:")) {
    std::string_view c = trim(text.substr(20));
    if (c.size() >= 2 && c.front() == '"' && c.back() == '"') c = c.substr(1, c.size() - 2);
    return std::string(c);
  }
  for (size_t k = 0; k + 1 < words.size() && k < 3; ++k) {
    if (words[k] == "time") {
      return std::string(text.substr(static_cast<size_t>(words[k + 1].data() - text.data())));
    }
  }
  return {};
}

bool scan_process_times(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
  int file = -1;
  std::string command;  // the last command shown, for the times below it
  const auto add = [&](int64_t line, double real, double cpu) {
    if (real <= 0 || cpu < 0) return;
    if (file < 0) file = files.of(TelemetryKind::kProcessTimes);
    out.process_times.push_back(Telemetry::ProcessTimes{{file, line}, real, cpu, command});
    command.clear();
  };
  // Seconds read so far, NaN where not (a sentinel, not an optional: GCC 12 warns an
  // optional's value may be used uninitialized here); no number read is NaN.
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  const auto known = [](double v) { return !std::isnan(v); };
  // bash's three lines, in any order, within a few lines of one another.
  double real = kNone, user = kNone, sys = kNone;
  const auto none_yet = [&] { return !known(real) && !known(user) && !known(sys); };
  const auto forget = [&] { real = user = sys = kNone; };
  int64_t first = 0;
  // GNU time -v's fields.
  double gnu_user = kNone, gnu_sys = kNone;
  for (const Line& l : lines) {
    const std::string_view text = trim(l.text);
    if (text.empty()) continue;
    if (!none_yet() && l.number - first > 4) forget();
    const auto words = split_whitespace(text);
    if (std::string c = timed_command(text, words); !c.empty()) command = std::move(c);
    if (words.size() == 2 && (words[0] == "real" || words[0] == "user" || words[0] == "sys")) {
      if (const auto s = telemetry::parse_duration(words[1]); s && words[1].back() == 's') {
        if (none_yet()) first = l.number;
        (words[0] == "real" ? real : words[0] == "user" ? user : sys) = *s;
        if (known(real) && known(user) && known(sys)) {
          add(first, real, user + sys);
          forget();
        }
        continue;
      }
    }
    // zsh: "... 31.98s user 1.76s system 94% cpu 35.960 total".
    if (words.size() >= 8 && words.back() == "total") {
      const size_t n = words.size();
      if (words[n - 7] == "user" && words[n - 5] == "system" && words[n - 3] == "cpu") {
        const auto u = telemetry::parse_duration(words[n - 8]);
        const auto s = telemetry::parse_duration(words[n - 6]);
        const auto t = telemetry::parse_duration(words[n - 2]);  // "35.960", "1:02.35"
        // zsh prints the command first: "python dqn.py  31.98s user ...".
        command =
            std::string(text.substr(0, static_cast<size_t>(words[n - 8].data() - text.data())));
        if (u && s && t) add(l.number, *t, *u + *s);
        continue;
      }
    }
    const auto field = [&](std::string_view name) -> std::optional<double> {
      if (!text.starts_with(name)) return std::nullopt;
      return parse_number(trim(text.substr(name.size())));
    };
    if (const auto v = field("User time (seconds):")) gnu_user = *v;
    if (const auto v = field("System time (seconds):")) gnu_sys = *v;
    if (text.starts_with("Elapsed (wall clock) time")) {
      const size_t colon = text.find("):");
      const auto t = colon == std::string_view::npos
                         ? std::nullopt
                         : telemetry::parse_duration(trim(text.substr(colon + 2)));
      if (t && known(gnu_user) && known(gnu_sys)) add(l.number, *t, gnu_user + gnu_sys);
      gnu_user = gnu_sys = kNone;
    }
  }
  return file >= 0;
}

// ---- iostat and top: the CPU split helpers ---------------------------------------------------
// top's "%Cpu(s): 12.3 us,  1.2 sy,  0.0 ni, 85.9 id,  0.5 wa, ...": each part is a number then
// its field.
struct TopSummary {
  std::optional<double> idle, iowait;
};
std::optional<TopSummary> top_summary(std::string_view text) {
  const size_t at = text.find("%Cpu(s):");
  if (at == std::string_view::npos) return std::nullopt;
  TopSummary out;
  bool user = false;
  for (const std::string_view part : split_char(text.substr(at + 8), ',')) {
    const auto t = split_whitespace(part);
    if (t.size() != 2) continue;
    const auto v = parse_number(t[0]);
    if (!v) continue;
    if (t[1] == "us") user = true;
    if (t[1] == "id") out.idle = v;
    if (t[1] == "wa") out.iowait = v;
  }
  if (!user) return std::nullopt;
  return out;
}

// htop's CPU bars on a line: "  1  [|||||||||   45.2%]   2  [||  3.0%]".
std::vector<double> htop_bars(std::string_view text) {
  std::vector<double> out;
  size_t at = 0;
  while ((at = text.find('[', at)) != std::string_view::npos) {
    const size_t close = text.find(']', at);
    if (close == std::string_view::npos) break;
    // Before '[': a CPU number, after blanks.
    size_t k = at;
    while (k > 0 && text[k - 1] == ' ') --k;
    size_t d = k;
    while (d > 0 && text[d - 1] >= '0' && text[d - 1] <= '9') --d;
    const bool numbered = d < k && (d == 0 || text[d - 1] == ' ');
    std::string_view inside = trim(text.substr(at + 1, close - at - 1));
    if (numbered && !inside.empty() && inside.back() == '%') {
      inside.remove_suffix(1);
      size_t n = inside.size();
      while (n > 0 && ((inside[n - 1] >= '0' && inside[n - 1] <= '9') || inside[n - 1] == '.')) {
        --n;
      }
      if (const auto v = parse_number(inside.substr(n)); v && *v <= 100) out.push_back(*v);
    }
    at = close + 1;
  }
  return out;
}

// The state of a process row of `ps aux` ("yons 11082 39.5 4.1 21305204 5501024 pts/9 Dl+
// 19:34 11:29 python3 ...": STAT is the eighth column) or of top's table ("11082 yons 20 0 20.3g
// 5.2g 1.1g D 39.5 4.1 11:29.4 python3": S is the eighth); nullopt for any other line.
std::optional<char> process_state(const std::vector<std::string_view>& t) {
  const auto is_state = [](std::string_view s, bool flags) {
    if (s.empty() || std::string_view("RSDZTIWX").find(s[0]) == std::string_view::npos) {
      return false;
    }
    return flags ? s.substr(1).find_first_not_of("<NLsl+") == std::string_view::npos
                 : s.size() == 1;
  };
  // Kernel threads ("[jbd2/nvme0n1p2-8]", "[kworker/u64:3+flush-259:0]") pass through D on
  // every write-back: not the job's processes, not read.
  if (t.size() >= 11 && parse_index(t[1]) && parse_number(t[2]) && parse_number(t[3]) &&
      parse_index(t[4]) && parse_index(t[5]) && is_state(t[7], true)) {
    if (t[10].starts_with('[') || (t[4] == "0" && t[5] == "0")) return std::nullopt;
    return t[7][0];  // ps aux, ps -ef u
  }
  if (t.size() >= 12 && parse_index(t[0]) && is_state(t[7], false) && parse_number(t[8]) &&
      parse_number(t[9])) {
    if (t[11].starts_with('[') || t[11].starts_with("kworker") || t[11].starts_with("jbd2")) {
      return std::nullopt;
    }
    return t[7][0];  // top
  }
  return std::nullopt;
}

// A row of mpstat's or sar -u's all-CPU figures without its header: a time of day (12-hour
// with AM or PM too), "all", then sar's 6, or mpstat's 9 or 10 percentages (sysstat before
// and since %gnice) that add up to 100: its %idle (the last) and %iowait (the fourth).
std::optional<std::pair<double, double>> headerless_all_cpu_row(std::string_view text) {
  const auto t = split_whitespace(text);
  if (t.size() < 8 || !telemetry::parse_clock(t[0])) return std::nullopt;
  size_t at = t[1] == "AM" || t[1] == "PM" ? 2 : 1;
  if (t[at] != "all") return std::nullopt;
  ++at;
  const size_t n = t.size() - at;
  if (n != 6 && n != 9 && n != 10) return std::nullopt;
  double sum = 0;
  std::vector<double> v;
  for (size_t k = at; k < t.size(); ++k) {
    const auto x = parse_number(t[k]);
    if (!x || *x < 0 || *x > 100) return std::nullopt;
    v.push_back(*x);
    sum += *x;
  }
  if (std::abs(sum - 100) > 1) return std::nullopt;
  return std::make_pair(v.back(), v[3]);
}

// ---- iostat and top: the CPU split ----------------------------------------------------------
// iostat: "avg-cpu:  %user   %nice %system %iowait  %steal   %idle" then the numbers on the next
// line. top: "%Cpu(s): 12.3 us,  1.2 sy,  0.0 ni, 85.9 id,  0.5 wa,  0.0 hi, ...". Each is one
// all-CPU sample: busy = 100 - idle - iowait.
bool scan_cpu_summaries(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out) {
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
  // mpstat's or sar -u's rows for all CPUs pasted without their header ("03:22:52 PM  all
  // 17.74  0.00  1.64  0.00 ..."): read where two or more are (a lone row of percentages may
  // be another table's), each as its default columns — %iowait fourth, %idle last.
  std::vector<std::pair<const Line*, std::pair<double, double>>> headerless_cpu;  // idle, iowait
  int64_t headerless_n = 0;
  bool under_sysstat_header = false;  // rows below "10:00:01 AM  CPU  %usr ...": parse_sysstat's
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].text.size() > kMaxPastedLineBytes) continue;
    {
      const auto t = split_whitespace(lines[i].text);
      if (t.empty() || !telemetry::parse_clock(t[0])) {
        under_sysstat_header = false;  // a blank line or another kind of line ends the block
      } else if (std::find(t.begin(), t.begin() + std::min<size_t>(t.size(), 3), "CPU") !=
                 t.begin() + std::min<size_t>(t.size(), 3)) {
        under_sysstat_header = true;
      }
    }
    if (const auto row = headerless_all_cpu_row(lines[i].text)) {
      if (!under_sysstat_header) headerless_cpu.emplace_back(&lines[i], *row);
      continue;
    }
    if (const auto top = top_summary(lines[i].text)) {
      if (top->idle && top->iowait)
        add(TelemetryKind::kTop, lines[i], *top->idle, *top->iowait, top_n);
      top_idle = top->idle;
      continue;
    }
    // htop: "  1  [|||||||||   45.2%]" per CPU (two per line in its two-column header).
    {
      const auto found = htop_bars(lines[i].text);
      for (double v : found) bars.push_back(v);
      if (!found.empty()) {
        htop_line = lines[i].number;
        continue;
      }
      flush_bars();
    }
    const auto tokens = split_whitespace(lines[i].text);
    if (const auto state = process_state(tokens)) {
      ++out.process_rows;
      if (*state == 'D') {
        out.processes_in_d.push_back(Origin{files.of(TelemetryKind::kTop), lines[i].number});
        found = true;
      }
    }
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
  if (headerless_cpu.size() >= 2) {
    for (const auto& [line, row] : headerless_cpu) {
      add(TelemetryKind::kMpstat, *line, row.first, row.second, headerless_n);
    }
  }
  return found;
}

// A box-drawing character (U+2500 to U+257F, three bytes in UTF-8) at the start of `text` as
// the ASCII a table drawn without it uses: a vertical line '|', a horizontal one '-', a corner
// or junction '+' (tabulate's "fancy_grid", rich's tables, hand-drawn summaries), so that one
// table reader reads both; 0 when `text` starts with none.
char box_drawing_as_ascii(std::string_view text) {
  if (text.size() < 3 || text[0] != '\xe2' || (text[1] != '\x94' && text[1] != '\x95')) return 0;
  const auto last = static_cast<unsigned char>(text[2]);
  if ((last & 0xc0) != 0x80) return 0;  // no continuation byte: not UTF-8
  const int code = 0x2500 + (text[1] == '\x95' ? 0x40 : 0) + (last - 0x80);
  const auto one_of = [code](std::initializer_list<int> codes) {
    return std::find(codes.begin(), codes.end(), code) != codes.end();
  };
  // Light, heavy, dashed and double lines.
  if (one_of({0x2502, 0x2503, 0x2506, 0x2507, 0x250a, 0x250b, 0x254e, 0x254f, 0x2551})) return '|';
  if (one_of({0x2500, 0x2501, 0x2504, 0x2505, 0x2508, 0x2509, 0x254c, 0x254d, 0x2550})) return '-';
  return '+';
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
        } else if (const char box = box_drawing_as_ascii(rest.substr(i)); box != 0) {
          cleaned += box;
          i += 2;
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
void scan_whole_log_blocks(const std::vector<Line>& lines, const std::string& name,
                           PasteFiles& files, Telemetry& into) {
  size_t i = 0;
  while (i < lines.size()) {
    while (i < lines.size() && trim(lines[i].text).empty()) ++i;
    size_t j = i;
    while (j < lines.size() && !trim(lines[j].text).empty()) ++j;
    // A log may follow a line of prose without a blank line between: try the block from each
    // of its first lines.
    for (size_t from = i; from < j && from < i + 3; ++from) {
      std::string block;
      for (size_t k = from; k < j; ++k) block.append(lines[k].text).push_back('\n');
      if (const auto kind = telemetry::detect_whole_log(block)) {
        const std::vector<Line> part(lines.begin() + static_cast<std::ptrdiff_t>(from),
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
          for (GpuMemorySample s : one.memory) s.origin.file = f, into.memory.push_back(s);
          break;
        } catch (const Error&) {
        }
      }
    }
    i = j;
  }
}

}  // namespace

namespace telemetry {

int PasteFiles::of(TelemetryKind kind) {
  for (const auto& [k, i] : index_) {
    if (k == kind) return i;
  }
  TelemetryFile f;
  f.path = name_;
  f.kind = kind;
  f.time_base = TimeBase::kSequence;
  f.lines.reserve(lines_.size());
  for (const Line& l : lines_) f.lines.emplace_back(l.text.substr(0, kMaxPastedLineBytes));
  out_.files.push_back(std::move(f));
  const int i = static_cast<int>(out_.files.size()) - 1;
  index_.emplace_back(kind, i);
  return i;
}

}  // namespace telemetry

void read_pasted(std::string_view content, const std::string& name, Telemetry& into) {
  const std::string text = strip_markdown(content);
  auto lines = telemetry::split_lines(text);
  // Lines no tool writes (base64, minified blobs, a paragraph without breaks) are passed over
  // and counted: every scanner below is linear, but none needs to see them.
  int64_t long_lines = 0;
  for (Line& l : lines) {
    if (l.text.size() > telemetry::kMaxPastedLineBytes) {
      l.text = {};
      ++long_lines;
    }
  }
  const size_t first_file = into.files.size();
  PasteFiles files(lines, name, into);
  scan_whole_log_blocks(lines, name, files, into);
  scan_nvidia_smi_table(lines, files, into);
  scan_gpustat(lines, files, into);
  scan_gpu_table(lines, files, into);
  telemetry::scan_named_values(lines, files, into);
  {
    std::deque<std::string> store;
    telemetry::scan_run_tables(telemetry::pandas_as_pipes(lines, store), files, into);
  }
  telemetry::scan_stated_efficiency(lines, files, into);
  telemetry::scan_stated_speedups(lines, files, into);
  telemetry::scan_core_throughput(lines, files, into);
  telemetry::scan_mfu_table(lines, files, into);
  scan_lightning_profiler(lines, files, into);
  scan_torch_profiler(lines, files, into);
  scan_paddle_profiler(lines, files, into);
  scan_topology(lines, files, into);
  scan_cpu_summaries(lines, files, into);
  scan_collective_bench(lines, files, into);
  scan_process_times(lines, files, into);
  scan_print_report(lines, files, into);
  scan_cprofile(lines, files, into);
  scan_line_profiler(lines, files, into);
  if (into.gpus.empty()) scan_query_noheader(lines, files, into);
  if (files.empty()) telemetry::scan_unplaced(lines, files, into);
  // The causes its own words state, beside what it measures (alone, words are no telemetry).
  if (!files.empty()) {
    for (const Line& l : lines) {
      if (const auto cause = telemetry::cause_said_in_words(l.text)) {
        into.stated_causes.push_back({Origin{static_cast<int>(first_file), l.number}, *cause});
      }
    }
  }
  for (size_t f = first_file; f < into.files.size(); ++f) into.files[f].long_lines = long_lines;
  if (files.empty()) {
    std::string_view first;
    for (const Line& l : lines) {
      if (!trim(l.text).empty()) {
        first = trim(l.text);
        break;
      }
    }
    const std::string skipped =
        long_lines > 0 ? fmt::format(" ({} line{} over 16 KiB {} not read)", long_lines,
                                     long_lines == 1 ? "" : "s", long_lines == 1 ? "was" : "were")
                       : "";
    if (first.empty()) STOKER_THROW_ARG("{}: empty, not a telemetry log{}", name, skipped);
    STOKER_THROW_ARG(
        "{}: not a telemetry log stoker reads: looked for nvidia-smi tables, --format=csv or "
        "dmon, dcgmi dmon, gpustat, mpstat, sar -u, vmstat, top, iostat, a training loop's step "
        "and data times (time/data_time, Time/Data, iter_time, bch/smp, s/it), throughput "
        "lines (images/sec, samples/s), Slurm jobstats or seff, a Lightning or torch.profiler "
        "profile, a TPU or TensorFlow profiler's infeed share, topo -m, nccl-tests, stoker stats "
        "or monitor JSON lines{}; it starts with {}",
        name, skipped, telemetry::quote(first));
  }
}

}  // namespace stoker
