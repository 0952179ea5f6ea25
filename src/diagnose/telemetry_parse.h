// Shared by the telemetry parsers (telemetry_*.cc): lines, tokens, numbers, dates, and the
// "FILE:LINE: reason" error. Not a public header.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/error.h"
#include "stoker/telemetry.h"
#include "util/check.h"
#include "util/text.h"

namespace stoker::telemetry {

// Whether a rate's unit counts whole epochs or runs: a duration of the same work, kept as its
// rate (ThroughputSample::unit, RunMeasure's).
inline bool whole_durations(std::string_view unit) { return unit == "epochs" || unit == "runs"; }

struct Line {
  int64_t number = 0;     // 1-based
  std::string_view text;  // without the line break, '\r' and trailing spaces
  bool complete = true;   // false for a last line without its line break (a cut-off write)
};

// Every line of `content`, blank ones included (so that numbers match the file).
std::vector<Line> split_lines(std::string_view content);

// The middle value, or the mean of the two middle ones; 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string_view trim(std::string_view s);
std::vector<std::string_view> split_whitespace(std::string_view s);
std::vector<std::string_view> split_char(std::string_view s, char sep);
std::string lower(std::string_view s);

using util::parse_number;  // the whole of `s` as a finite number
// A non-negative integer below 2^31; nullopt otherwise.
std::optional<int> parse_index(std::string_view s);

// Lines that time a wait for data but not their step, fewer than this, are no series to judge
// (Telemetry::lone_waits).
constexpr size_t kLoneWaitsToJudge = 5;

// Days since 1970-01-01 of a proleptic Gregorian date; nullopt for an invalid date.
std::optional<int64_t> days_from_civil(int64_t y, int m, int d);
// "04/04/2021" or "04/04/21": days since 1970-01-01, the month first unless the first part
// cannot be one (over 12: "25/04/2021"); nullopt for anything else.
std::optional<int64_t> slashed_date_days(std::string_view text);
// "HH:MM:SS" or "HH:MM:SS.fff" -> seconds since midnight; nullopt when malformed.
std::optional<double> parse_clock(std::string_view s);

// A duration as people type it: "7m", "36 mins", "1 h 45 mins", "100 s", "44m45.176s", "69d
// 23h", "15:17" (mm:ss), "1:02:03", a bare number of seconds; nullopt for anything else.
std::optional<double> parse_duration(std::string_view cell);

// One file being parsed: its name, index in Telemetry::files, and the output.
struct Source {
  const std::string& name;
  int file;
  Telemetry& out;

  Origin origin(const Line& line) const { return {file, line.number}; }

  template <typename... Args>
  [[noreturn]] void fail(const Line& line, fmt::format_string<Args...> format,
                         Args&&... args) const {
    STOKER_THROW("{}:{}: {}", name, line.number, fmt::format(format, std::forward<Args>(args)...));
  }
};

// `s` with control characters and bytes that are not well-formed UTF-8 replaced by '?', so
// that quoted log lines are valid JSON strings.
std::string printable(std::string_view s);
// A short, printable quote of untrusted text for error messages.
std::string quote(std::string_view s);

// The kind of a whole-file log (CSV, dmon, mpstat, sar, vmstat, stoker JSON lines) from its
// first lines; nullopt when it is none of them.
std::optional<TelemetryKind> detect_whole_log(std::string_view content);
// Parses `lines` as a whole-file log of `kind` into src (throws "NAME:LINE: reason").
void parse_whole_log(TelemetryKind kind, const std::vector<Line>& lines, const Source& src);

// The TelemetryFiles of one pasted message: one per kind found, registered on first use, each
// holding all of the message's lines (for quoting).
class PasteFiles {
 public:
  PasteFiles(const std::vector<Line>& lines, const std::string& name, Telemetry& out)
      : lines_(lines), name_(name), out_(out) {}
  int of(TelemetryKind kind);
  bool empty() const { return index_.empty(); }
  const std::string& name() const { return name_; }

 private:
  const std::vector<Line>& lines_;
  const std::string& name_;
  Telemetry& out_;
  std::vector<std::pair<TelemetryKind, int>> index_;
};

// The cells of a table row: "| a | b |" (Markdown) or, without bars, tab- or two-space-separated
// columns (torch.profiler's tables, aligned runs tables), trimmed.
std::vector<std::string_view> table_cells(std::string_view row);

// A table's rule: markdown's "|---|:---:|", tabulate's and prettytable's "+------+----+" and
// "+======+" — no cells.
bool rule_line(std::string_view t);

// The collective a benchmark's line measures when it states its bandwidth ("AllReduce: [[0, 1]]
// ... Bandwidth: 5.08 GB/s" is "allreduce"); empty for any other line. Its "Time:" is the
// collective's, not a training step's.
std::string collective_with_bandwidth(std::string_view text);

// "One of my CPU cores is at its max", "one core at 100%", "a single core pegged": one core of
// the host saturated, said in words — one process's work (a loader in the main process, one
// generator thread, the loop's own Python), not the machine's.
bool one_core_said_full(std::string_view line);

// The cause a line's own words state as found ("We are dataloader bottlenecked": input-bound;
// "CPU-bottlenecked", "cpu bound": input-bound-cpu; "I/O bound": io-bound; "communication is
// the bottleneck": communication-bound; "GPU-bound", "compute bound": healthy), in a sentence
// that neither asks, doubts, negates nor makes a condition of it; nullopt where none is, or
// where two sentences state different ones.
std::optional<Verdict> cause_said_in_words(std::string_view line);

// A speedup said in prose over one GPU or one node, at a scale the same sentence names ("4
// nodes means a 3.9x gain over one node"; a later sentence without a baseline keeps the one
// before, "On 16 nodes, it's 14.4x"): each the efficiency it states, in percent.
std::vector<double> speedups_over_one(std::string_view line);

// Training-loop step lines, throughput lines, job summaries and panels, read by vocabulary
// (telemetry_lines.cc); true when any was found.
bool scan_named_values(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out);
// Measurements no other reader placed (Telemetry::unplaced): named values that state a duration,
// a rate or a utilisation, or a duration under a name that says it times something ("Time
// taken for encode_key: 0.006"). One whose unit says what it is (a duration's or rate's unit, a
// percentage named a utilisation) makes the paste read, else two or more; fewer are prose's
// numbers. Called only when nothing else was read. True when it read them.
bool scan_unplaced(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out);
// The unplaced kind of a TPU monitor's idle time shown without its infeed share.
inline constexpr std::string_view kTpuIdleTime = "TPU idle time";
// The unplaced kind of the DLIO benchmark's accelerator utilisation printed as 0: no step was
// timed (its statistics were not collected), not a wait for the whole run.
inline constexpr std::string_view kDlioZeroUtilisation = "DLIO accelerator utilisation of 0 %";
// The most of them kept (their kinds are counted, the first lines cited).
constexpr size_t kMaxUnplaced = 64;

// Tables whose rows are runs at different GPU (or node) counts, with rates or step times
// (telemetry_lines.cc); true when any was found.
bool scan_run_tables(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out);

// "4.0", "GB" (a payload, a total size, a memory cell, a bandwidth's numerator): bytes; "MB" and
// "MiB" alike, 1024-based; an empty unit is bytes. nullopt for any other unit.
std::optional<double> bytes_of(std::string_view number, std::string_view unit);

// FlagPerf's tables of throughput ("| 配置 | ... | p_whole | p_train | p_core |"): p_train is
// its training throughput, p_core the same without the time spent in data IO (FlagPerf's own
// definition, "不包含数据IO部分的耗时"), so each row gives the share of its time spent waiting
// for data, 1 - p_train/p_core: a StepSample of shares in Telemetry::steps (its run's, where a
// run table made one of the row).
bool scan_core_throughput(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out);

// A table column of scaling efficiencies as the paste states them ("| 8 GPU efficiency |" over
// "| 95.4% |"): each row's, in Telemetry::stated_scaling_efficiency. A CPU's, memory's or the
// model's FLOPs' efficiency is none.
bool scan_stated_efficiency(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out);

// Speedups said in prose over one GPU or one node (speedups_over_one): each the efficiency it
// states, in Telemetry::stated_scaling_efficiency.
bool scan_stated_speedups(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out);

// A table column of MFU figures ("| MFU |" over "| 53.0% |"), one configuration a row: each in
// Telemetry::mfu_configurations, in percent (in Telemetry::mfu, a trainer's lines, where the
// table has a step, iteration or epoch column).
bool scan_mfu_table(const std::vector<Line>& lines, PasteFiles& files, Telemetry& out);

// A pandas DataFrame as print() shows it ("compiler model_name  Num GPUS  ...  eager" over "0
// phi-2  1 ...  228.394457"): each column right-aligned under its header, an index of row
// numbers 0, 1, ... on the left. Returns `lines` with each such table rewritten as a pipe table
// ("| model_name | Num GPUS | ... |", its cells the header's words over each column; no index)
// for the table readers; the rewritten lines' text lives in `store`.
std::vector<Line> pandas_as_pipes(const std::vector<Line>& lines, std::deque<std::string>& store);

void parse_nvidia_smi_csv(const std::vector<Line>& lines, const Source& src);
void parse_nvidia_smi_dmon(const std::vector<Line>& lines, const Source& src);
void parse_dcgm_dmon(const std::vector<Line>& lines, const Source& src);
void parse_sysstat(const std::vector<Line>& lines, const Source& src);  // mpstat and sar
void parse_vmstat(const std::vector<Line>& lines, const Source& src);
void parse_stoker_stats(const std::vector<Line>& lines, const Source& src);
void parse_stoker_monitor(const std::vector<Line>& lines, const Source& src);

}  // namespace stoker::telemetry
