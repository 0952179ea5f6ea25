// nvidia-smi logs: `--query-gpu=... --format=csv` and `dmon` (stoker/telemetry.h).
#include <algorithm>
#include <map>

#include "diagnose/telemetry_parse.h"

namespace stoker::telemetry {
namespace {

// A field of a --query-gpu header: "utilization.gpu [%]" -> "utilization.gpu".
std::string query_name(std::string_view field) {
  field = trim(field);
  const size_t bracket = field.find('[');
  if (bracket != std::string_view::npos) field = trim(field.substr(0, bracket));
  return lower(field);
}

// The words of a "# gpu sm ..." or "#Entity GPUTL ..." header line, after its '#'s.
std::vector<std::string_view> header_words(std::string_view text) {
  while (!text.empty() && text.front() == '#') text.remove_prefix(1);
  return split_whitespace(text);
}

bool missing_value(std::string_view v) {
  return v.empty() || v.front() == '[' || v == "N/A" || v == "-";
}

// "87 %", "87", "1234 MiB", "250.12 W" -> the number; nullopt for [N/A] and the like; throws
// for anything else.
std::optional<double> csv_value(const Source& src, const Line& line, std::string_view column,
                                std::string_view v) {
  v = trim(v);
  if (missing_value(v)) return std::nullopt;
  const size_t space = v.find(' ');
  std::string_view number = v.substr(0, space);
  if (space != std::string_view::npos) {
    const std::string_view unit = trim(v.substr(space));
    bool unit_ok = !unit.empty() && unit.size() <= 8;
    for (char c : unit) {
      unit_ok =
          unit_ok && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '%' || c == '/');
    }
    if (!unit_ok) src.fail(line, "{}: expected a number, found {}", column, quote(v));
  } else if (!number.empty() && number.back() == '%') {
    number.remove_suffix(1);
  }
  const auto value = parse_number(number);
  if (!value) src.fail(line, "{}: expected a number, found {}", column, quote(v));
  return value;
}

double check_percent(const Source& src, const Line& line, std::string_view column, double v) {
  if (v < 0 || v > 100) src.fail(line, "{}: {} is not a percentage", column, v);
  return v;
}

// "2024/01/15 10:23:45.123" -> seconds since 1970 of that wall-clock time.
double csv_timestamp(const Source& src, const Line& line, std::string_view v) {
  v = trim(v);
  std::optional<int64_t> days;
  std::optional<double> clock;
  if (v.size() >= 19 && v[4] == '/' && v[7] == '/' && v[10] == ' ') {
    const auto y = parse_index(v.substr(0, 4));
    const auto m = parse_index(v.substr(5, 2));
    const auto d = parse_index(v.substr(8, 2));
    if (y && m && d) days = days_from_civil(*y, *m, *d);
    clock = parse_clock(v.substr(11));
  }
  if (!days || !clock) {
    src.fail(line, "timestamp: expected YYYY/MM/DD HH:MM:SS.mmm, found {}", quote(v));
  }
  return static_cast<double>(*days) * 86400.0 + *clock;
}

}  // namespace

void parse_nvidia_smi_csv(const std::vector<Line>& lines, const Source& src) {
  TelemetryFile& file = src.out.files[static_cast<size_t>(src.file)];
  std::vector<std::string> header;
  int col_time = -1, col_index = -1, col_id = -1, col_util = -1, col_mem_util = -1,
      col_mem_used = -1, col_mem_free = -1, col_mem_total = -1;
  int64_t row = 0;  // memory-only: rows since the header, the GPU when there is no index
  std::map<std::string, int, std::less<>> ids;  // uuid / pci.bus_id -> GPU number
  std::map<int, int64_t> rounds;
  for (const Line& line : lines) {
    if (trim(line.text).empty()) continue;
    const auto fields = split_char(line.text, ',');
    if (header.empty() || query_name(fields[0]) == header[0]) {
      // The header (again, when nvidia-smi was restarted into the same file).
      std::vector<std::string> names;
      for (auto f : fields) names.push_back(query_name(f));
      if (!header.empty() && names != header) {
        src.fail(line, "a different header in the middle of the file");
      }
      header = std::move(names);
      for (size_t i = 0; i < header.size(); ++i) {
        const int c = static_cast<int>(i);
        const std::string& n = header[i];
        if (n == "timestamp") col_time = c;
        if (n == "index") col_index = c;
        if ((n == "uuid" || n == "pci.bus_id") && col_id < 0) col_id = c;
        if (n == "utilization.gpu") col_util = c;
        if (n == "utilization.memory") col_mem_util = c;
        if (n == "memory.used") col_mem_used = c;
        if (n == "memory.free") col_mem_free = c;
        if (n == "memory.total") col_mem_total = c;
      }
      if (col_util < 0 && col_mem_used < 0) {
        src.fail(line, "no utilization.gpu column: add it to nvidia-smi --query-gpu");
      }
      row = 0;
      continue;
    }
    if (fields.size() != header.size()) {
      src.fail(line, "expected {} comma-separated fields like the header, found {}", header.size(),
               fields.size());
    }
    int gpu = 0;
    if (col_index >= 0) {
      const auto index = parse_index(trim(fields[static_cast<size_t>(col_index)]));
      if (!index) {
        src.fail(line, "index: expected a GPU number, found {}",
                 quote(fields[static_cast<size_t>(col_index)]));
      }
      gpu = *index;
    } else if (col_id >= 0) {
      const std::string id(trim(fields[static_cast<size_t>(col_id)]));
      gpu = ids.emplace(id, static_cast<int>(ids.size())).first->second;
    }
    const std::optional<double> time =
        col_time >= 0
            ? std::optional(csv_timestamp(src, line, fields[static_cast<size_t>(col_time)]))
            : std::nullopt;
    if (col_util < 0) {
      // Memory only (`--query-gpu=memory.used,memory.free`): what each GPU holds, not how
      // busy it is. Without an index the rows of one query are the GPUs in order.
      const auto used =
          csv_value(src, line, "memory.used", fields[static_cast<size_t>(col_mem_used)]);
      const auto column = [&](int c, const char* name) {
        return c >= 0 ? csv_value(src, line, name, fields[static_cast<size_t>(c)])
                      : std::optional<double>();
      };
      const auto free = column(col_mem_free, "memory.free");
      std::optional<double> total = column(col_mem_total, "memory.total");
      if (!total && free && used) total = *used + *free;
      const int index = col_index >= 0 || col_id >= 0 ? gpu : static_cast<int>(row);
      ++row;
      if (!used) continue;
      src.out.memory.push_back(GpuMemorySample{
          .origin = src.origin(line), .gpu = index, .used_mib = *used, .total_mib = total});
      continue;
    }
    const auto util =
        csv_value(src, line, "utilization.gpu", fields[static_cast<size_t>(col_util)]);
    if (!util) continue;  // [N/A]: this GPU does not report it
    GpuSample s;
    s.origin = src.origin(line);
    s.gpu = gpu;
    s.round = rounds[gpu]++;
    s.time = time ? *time : static_cast<double>(s.round);
    s.util = check_percent(src, line, "utilization.gpu", *util);
    if (col_mem_util >= 0) {
      s.memory_util =
          csv_value(src, line, "utilization.memory", fields[static_cast<size_t>(col_mem_util)]);
      if (s.memory_util) check_percent(src, line, "utilization.memory", *s.memory_util);
    }
    if (col_mem_used >= 0) {
      s.memory_used_mib =
          csv_value(src, line, "memory.used", fields[static_cast<size_t>(col_mem_used)]);
    }
    src.out.gpus.push_back(std::move(s));
  }
  file.time_base = col_time >= 0 ? TimeBase::kAbsolute : TimeBase::kSequence;
}

void parse_nvidia_smi_dmon(const std::vector<Line>& lines, const Source& src) {
  TelemetryFile& file = src.out.files[static_cast<size_t>(src.file)];
  std::vector<std::string> header;
  int col_date = -1, col_time = -1, col_gpu = -1, col_sm = -1, col_mem = -1, col_fb = -1,
      col_rx = -1, col_tx = -1;
  std::map<int, int64_t> rounds;
  bool any_time = false;
  double day_offset = 0, last_clock = -1;  // `-o T`: times of day that pass midnight
  for (const Line& line : lines) {
    const std::string_view text = trim(line.text);
    if (text.empty()) continue;
    if (text.front() == '#') {
      std::vector<std::string> names;
      for (auto t : header_words(text)) names.push_back(lower(t));
      bool has_gpu = false;
      for (const auto& n : names) has_gpu = has_gpu || n == "gpu";
      if (!has_gpu) continue;  // the units line (# Idx W C ...) or another comment
      header = std::move(names);
      col_date = col_time = col_gpu = col_sm = col_mem = col_fb = col_rx = col_tx = -1;
      for (size_t i = 0; i < header.size(); ++i) {
        const int c = static_cast<int>(i);
        const std::string& n = header[i];
        if (n == "date") col_date = c;
        if (n == "time") col_time = c;
        if (n == "gpu") col_gpu = c;
        if (n == "sm") col_sm = c;
        if (n == "mem") col_mem = c;
        if (n == "fb") col_fb = c;
        if (n == "rxpci") col_rx = c;
        if (n == "txpci") col_tx = c;
      }
      if (col_sm < 0) src.fail(line, "no sm column: run nvidia-smi dmon -s u (or -s ut)");
      continue;
    }
    if (header.empty()) src.fail(line, "a data row before the '# gpu ...' header");
    const auto tokens = split_whitespace(text);
    if (tokens.size() != header.size()) {
      src.fail(line, "expected {} columns like the header, found {}", header.size(), tokens.size());
    }
    const auto at = [&](int c) { return tokens[static_cast<size_t>(c)]; };
    const auto gpu = parse_index(at(col_gpu));
    if (!gpu) src.fail(line, "gpu: expected a GPU number, found {}", quote(at(col_gpu)));
    // A number or '-' in a column we use.
    const auto value = [&](int c, std::string_view name) -> std::optional<double> {
      if (c < 0 || at(c) == "-") return std::nullopt;
      const auto v = parse_number(at(c));
      if (!v || *v < 0)
        src.fail(line, "{}: expected a number or '-', found {}", name, quote(at(c)));
      return v;
    };
    std::optional<double> time;
    if (col_time >= 0) {
      time = parse_clock(at(col_time));
      if (!time) src.fail(line, "Time: expected HH:MM:SS, found {}", quote(at(col_time)));
      if (col_date >= 0) {
        const std::string_view d = at(col_date);
        std::optional<int64_t> days;
        if (d.size() == 8) {
          const auto y = parse_index(d.substr(0, 4));
          const auto m = parse_index(d.substr(4, 2));
          const auto dd = parse_index(d.substr(6, 2));
          if (y && m && dd) days = days_from_civil(*y, *m, *dd);
        }
        if (!days) src.fail(line, "Date: expected YYYYMMDD, found {}", quote(d));
        *time += static_cast<double>(*days) * 86400.0;
      } else {
        if (last_clock >= 0 && *time + 3600 < last_clock) day_offset += 86400;
        last_clock = *time;
        *time += day_offset;
      }
      any_time = true;
    }
    const auto sm = value(col_sm, "sm");
    const auto mem = value(col_mem, "mem");
    const auto fb = value(col_fb, "fb");
    const auto rx = value(col_rx, "rxpci");
    const auto tx = value(col_tx, "txpci");
    if (!sm) continue;  // '-': not reported
    GpuSample s;
    s.origin = src.origin(line);
    s.gpu = *gpu;
    s.round = rounds[*gpu]++;
    s.time = time ? *time : static_cast<double>(s.round);
    if (*sm > 100) src.fail(line, "sm: {} is not a percentage", *sm);
    if (mem && *mem > 100) src.fail(line, "mem: {} is not a percentage", *mem);
    s.util = *sm;
    s.memory_util = mem;
    s.memory_used_mib = fb;
    s.pcie_rx_mbps = rx;
    s.pcie_tx_mbps = tx;
    src.out.gpus.push_back(std::move(s));
  }
  file.time_base = !any_time       ? TimeBase::kSequence
                   : col_date >= 0 ? TimeBase::kAbsolute
                                   : TimeBase::kTimeOfDay;
}

// dcgmi dmon -e <fields>: "#Entity  GPUTL  SMACT  FBUSD ..." (DCGM's short field names), a
// units line "ID  ...", then rows "GPU 0  87  0.412  28456"; "N/A" where a field has no value.
// Utilisation: GPUTL (percent), else GRACT or SMACT (fractions of time, x100).
void parse_dcgm_dmon(const std::vector<Line>& lines, const Source& src) {
  std::vector<std::string> header;
  int col_util = -1, col_fb = -1, col_tx = -1, col_rx = -1;
  double util_scale = 1;
  std::map<int, int64_t> rounds;
  for (const Line& line : lines) {
    const std::string_view text = trim(line.text);
    if (text.empty()) continue;
    if (text.front() == '#') {
      const auto tokens = header_words(text);
      if (tokens.empty() || lower(tokens[0]) != "entity") continue;
      header.clear();
      for (size_t i = 1; i < tokens.size(); ++i) header.push_back(lower(tokens[i]));
      col_util = col_fb = col_tx = col_rx = -1;
      for (const auto& [name, scale] :
           {std::pair{"gputl", 1.0}, {"gract", 100.0}, {"smact", 100.0}}) {
        const auto it = std::find(header.begin(), header.end(), name);
        if (it != header.end()) {
          col_util = static_cast<int>(it - header.begin());
          util_scale = scale;
          break;
        }
      }
      for (size_t i = 0; i < header.size(); ++i) {
        if (header[i] == "fbusd") col_fb = static_cast<int>(i);
        if (header[i] == "pcitx") col_tx = static_cast<int>(i);
        if (header[i] == "pcirx") col_rx = static_cast<int>(i);
      }
      if (col_util < 0) {
        src.fail(line,
                 "no utilisation field: add GPUTL (203), GRACT (1001) or SMACT (1002) to "
                 "dcgmi dmon -e");
      }
      continue;
    }
    const auto tokens = split_whitespace(text);
    if (tokens.size() >= 1 && tokens[0] == "ID") continue;  // the units line
    if (header.empty()) src.fail(line, "a data row before the '#Entity ...' header");
    // "GPU 0" (GPU-I / GPU-CI: MIG instances, read as their own GPUs).
    if (tokens.size() != header.size() + 2 || tokens[0].substr(0, 3) != "GPU") {
      src.fail(line, "expected an entity and {} values like the header", header.size());
    }
    const auto gpu = parse_index(tokens[1]);
    if (!gpu) src.fail(line, "expected a GPU number, found {}", quote(tokens[1]));
    const auto value = [&](int c, std::string_view name) -> std::optional<double> {
      if (c < 0) return std::nullopt;
      const std::string_view v = tokens[static_cast<size_t>(c) + 2];
      if (v == "N/A" || v == "-") return std::nullopt;
      const auto n = parse_number(v);
      if (!n || *n < 0) src.fail(line, "{}: expected a number or N/A, found {}", name, quote(v));
      return n;
    };
    const auto util = value(col_util, header[static_cast<size_t>(col_util)]);
    if (!util) continue;
    GpuSample s;
    s.origin = src.origin(line);
    s.gpu = *gpu;
    s.round = rounds[*gpu]++;
    s.time = static_cast<double>(s.round);
    s.util = *util * util_scale;
    if (s.util > 100.0001) src.fail(line, "{:.4g} is not a utilisation", *util);
    s.util = std::min(s.util, 100.0);
    s.memory_used_mib = value(col_fb, "FBUSD");
    // PCIe counters are bytes per second.
    if (const auto tx = value(col_tx, "PCITX")) s.pcie_tx_mbps = *tx / 1e6;
    if (const auto rx = value(col_rx, "PCIRX")) s.pcie_rx_mbps = *rx / 1e6;
    src.out.gpus.push_back(s);
  }
}

}  // namespace stoker::telemetry
