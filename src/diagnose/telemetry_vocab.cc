// Reading pasted text by vocabulary (telemetry_vocab.h): named numbers, the synonym table and
// GPU counts.
#include "diagnose/telemetry_vocab.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "diagnose/telemetry_parse.h"

namespace stoker::telemetry {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }
char lower_char(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Characters that end a name: the separators of the layouts read ("a: 1 | b: 2", "a=1, b=2",
// "[a 1]", "{\"a\": 1}", "a 1\tb 2").
bool is_separator(char c) {
  switch (c) {
    case '|':
    case ',':
    case ';':
    case '\t':
    case '[':
    case ']':
    case '{':
    case '}':
    case '<':
    case '>':
    case '"':
    case '\'':
    case '`':
      return true;
    default:
      return false;
  }
}

// A number at line[i]: digits with an optional fraction and exponent; returns its end (i when
// none). A sign is part of it only where it cannot be a dash inside a word.
size_t scan_number(std::string_view line, size_t i) {
  const size_t n = line.size();
  size_t j = i;
  if (j < n && (line[j] == '-' || line[j] == '+')) ++j;
  const size_t digits = j;
  while (j < n && is_digit(line[j])) ++j;
  if (j < n && line[j] == '.' && j + 1 < n && is_digit(line[j + 1])) {
    ++j;
    while (j < n && is_digit(line[j])) ++j;
  }
  if (j == digits) return i;
  if (j < n && (line[j] == 'e' || line[j] == 'E')) {
    size_t k = j + 1;
    if (k < n && (line[k] == '-' || line[k] == '+')) ++k;
    if (k < n && is_digit(line[k])) {
      while (k < n && is_digit(line[k])) ++k;
      j = k;
    }
  }
  return j;
}

bool starts_number(std::string_view line, size_t i) {
  if (i >= line.size()) return false;
  const char c = line[i];
  const bool glued =
      i > 0 && (is_alpha(line[i - 1]) || is_digit(line[i - 1]) || line[i - 1] == '_' ||
                line[i - 1] == '@' || line[i - 1] == '.' || line[i - 1] == '#');
  if (glued) return false;
  if (is_digit(c)) return true;
  return (c == '-' || c == '+') && i + 1 < line.size() && is_digit(line[i + 1]);
}

// Units read after a space ("87 %", "1234 MiB", "198.0 images/sec"); a unit glued to its
// number ("0.5s", "8558Mb", "5.95s/it") may be any short run of letters, '%' and '/'.
// "wps", "tps", "tgs": fairseq's words, and tokens (per GPU), per second ("10K wps"); "sps"
// samples (sequences) per second. "ex": examples, a count (TFDS's benchmark: "(total: 701184
// ex, 3739.99 sec)"), so that the number before it is no bare duration.
constexpr std::array<std::string_view, 30> kSpacedUnits = {
    "%",         "s",           "ms",       "sec",          "secs",     "seconds",
    "mib",       "mb",          "gb",       "gib",          "w",        "s/it",
    "sec/it",    "it/s",        "img/s",    "img/sec",      "images/s", "images/sec",
    "samples/s", "samples/sec", "tokens/s", "examples/sec", "fps",      "wps",
    "tps",       "tgs",         "tflops",   "tflop/s",      "sps",      "ex"};

bool unit_char(char c) { return is_alpha(c) || c == '%' || c == '/'; }

std::string rate_unit_of(std::string_view text);
bool ends_with(std::string_view s, std::string_view tail);

// A rate's or a step's unit ("samples/s", "s/it"), which may stand in parentheses after its
// number ("89.81(samples/s)") or be typed with spaces ("1.27 second / it").
bool rate_or_step_unit(std::string_view unit) {
  return !rate_unit_of(unit).empty() || per_iteration_scale(unit).has_value();
}

// After a unit at line[b], the rest of a unit typed with spaces or words: "0.5s / it",
// "1.27 second / it", "3 it /s", "230 seconds per step". Appends it to `unit` and advances b
// when the whole is a rate's or a step's unit.
void extend_unit(std::string_view line, std::string& unit, size_t& b) {
  const size_t n = line.size();
  for (const std::string_view per : {" / ", " /", "/ ", " per "}) {
    if (line.substr(b, per.size()) != per) continue;
    const size_t c = b + per.size();
    size_t d = c;
    while (d < n && d - c < 12 && is_alpha(line[d])) ++d;
    if (d > c && (d == n || !is_alpha(line[d]))) {
      std::string whole = unit + "/" + lower(line.substr(c, d - c));
      if (rate_or_step_unit(whole) || ends_with(whole, "/s")) {
        unit = std::move(whole);
        b = d;
      }
    }
    return;
  }
}

// The unit glued to a number or after one space at line[j]; advances j past it.
std::string scan_unit(std::string_view line, size_t& j) {
  const size_t n = line.size();
  {
    size_t open = j < n && line[j] == ' ' ? j + 1 : j;
    if (open < n && line[open] == '(') {
      size_t close = open + 1;
      while (close < n && close - open <= 16 && unit_char(line[close])) ++close;
      if (close < n && line[close] == ')') {
        const std::string unit = lower(line.substr(open + 1, close - open - 1));
        if (rate_or_step_unit(unit)) {
          j = close + 1;
          return unit;
        }
      }
    }
  }
  size_t k = j;
  while (k < n && k - j < 16 && unit_char(line[k])) ++k;
  if (k > j && (k == n || !(is_digit(line[k]) || line[k] == '_'))) {
    std::string unit;
    for (size_t m = j; m < k; ++m) unit.push_back(lower_char(line[m]));
    extend_unit(line, unit, k);
    j = k;
    return unit;
  }
  if (j < n && line[j] == ' ') {
    size_t a = j + 1;
    size_t b = a;
    while (b < n && b - a < 24 && unit_char(line[b])) ++b;  // "tokens/device/second"
    // The unit may end a sentence ("4.0445 iters/sec. Estimated time ...").
    if (b > a && (b == n || is_blank(line[b]) || is_separator(line[b]) || line[b] == ')' ||
                  line[b] == '.')) {
      std::string unit;
      for (size_t m = a; m < b; ++m) unit.push_back(lower_char(line[m]));
      extend_unit(line, unit, b);
      // Any "thing/s" word is a rate's unit ("tokens/s/gpu", "seq/s").
      const bool rate = unit.find("/s") != std::string::npos && unit.front() != '/';
      if (rate || per_iteration_scale(unit) ||
          std::find(kSpacedUnits.begin(), kSpacedUnits.end(), unit) != kSpacedUnits.end()) {
        j = b;
        return unit;
      }
    }
  }
  return {};
}

bool is_unit_hint(std::string_view s) {
  return s == "ms" || s == "s" || s == "sec" || s == "%" || s == "sec/sec" || s == "mb" ||
         s == "gb" || s == "mib" || s == "w";
}

}  // namespace

// Chinese words of the pastes read, in the English words the reader knows ("单卡" one card,
// "单机4卡" one machine with 4 cards, "8卡吞吐" the throughput on 8 cards): 卡 card, 单 single,
// 双 dual, 机 / 节点 node, 吞吐(量) throughput, 利用率 utilization, 其余 / 其他 others, the
// loading of data (数据加载, 加载数据, 载入数据; 读取数据, 数据读取 its reading), 网络 the
// network, 前向 forward, 反向 backward ("载入数据要1.2s多，而网络才0.6s": loading the data takes
// over 1.2 s, the network only 0.6 s), and the full-width comma, colon and parentheses. Other
// characters are kept.
std::string in_english(std::string_view line) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 25> kWords = {{
      {"\xef\xbc\x8c", ", "},  // full-width comma, colon and parentheses
      {"\xef\xbc\x9a", ": "},
      {"\xef\xbc\x88", " ("},
      {"\xef\xbc\x89", ") "},
      {"\xe5\x90\x9e\xe5\x90\x90\xe9\x87\x8f", " throughput "},
      {"\xe5\x88\xa9\xe7\x94\xa8\xe7\x8e\x87", " utilization "},
      {"\xe5\x85\xb6\xe4\xbd\x99", " others "},
      {"\xe5\x85\xb6\xe4\xbb\x96", " others "},
      {"\xe5\x90\x9e\xe5\x90\x90", " throughput "},
      {"\xe6\x95\xb0\xe6\x8d\xae\xe5\x8a\xa0\xe8\xbd\xbd", " data loading "},
      {"\xe5\x8a\xa0\xe8\xbd\xbd\xe6\x95\xb0\xe6\x8d\xae", " data loading "},
      {"\xe8\xbd\xbd\xe5\x85\xa5\xe6\x95\xb0\xe6\x8d\xae", " data loading "},
      {"\xe8\xaf\xbb\xe5\x8f\x96\xe6\x95\xb0\xe6\x8d\xae", " data reading "},
      {"\xe6\x95\xb0\xe6\x8d\xae\xe8\xaf\xbb\xe5\x8f\x96", " data reading "},
      {"\xe7\xbd\x91\xe7\xbb\x9c", " network "},
      {"\xe5\x89\x8d\xe5\x90\x91", " forward "},
      {"\xe5\x8f\x8d\xe5\x90\x91", " backward "},
      {"\xe5\x8d\xa1", " card "},
      {"\xe5\x8d\x95", " single "},
      {"\xe5\x8f\x8c", " dual "},
      {"\xe6\x9c\xba", " node "},
      // "多机", "多卡", "多节点": several machines, cards, nodes ("多" alone is "many", "最多"
      // "at most").
      {"\xe5\xa4\x9a\xe6\x9c\xba", " multi node "},
      {"\xe5\xa4\x9a\xe5\x8d\xa1", " multi card "},
      {"\xe5\xa4\x9a\xe8\x8a\x82\xe7\x82\xb9", " multi node "},
      {"\xe8\x8a\x82\xe7\x82\xb9", " node "},
  }};
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size();) {
    bool replaced = false;
    // "耗时" (time taken) glued to an English name is that name's time: PaddleVideo's table
    // headers "batch耗时/s", "reader耗时/s" are batch_time and reader_time. Not after a name
    // that already says it ("current_batch_cost_time耗时"), nor alone ("耗时：103.4s", a run's).
    static constexpr std::string_view kTimeTaken = "\xe8\x80\x97\xe6\x97\xb6";
    if (line.substr(i, kTimeTaken.size()) == kTimeTaken && !out.empty() && is_alpha(out.back())) {
      const std::string tail =
          lower(std::string_view(out).substr(out.size() - std::min<size_t>(4, out.size())));
      if (tail != "time" && tail != "cost") out += "_time";
      out += ' ';
      i += kTimeTaken.size();
      continue;
    }
    if (static_cast<unsigned char>(line[i]) >= 0x80) {
      for (const auto& [word, english] : kWords) {
        if (line.substr(i, word.size()) == word) {
          out += english;
          i += word.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out.push_back(line[i++]);
  }
  return out;
}

namespace {

// The name in line[from, to): the last separator-delimited part before the number, without
// ':' / '=', quotes and a trailing "(ms)"-style unit (returned in `unit_hint`), normalised.
// A dash between blanks at `k` right after a dotted logger's name ("o.d.o.l.PerformanceListener
// - ETL") or a log record's level ("INFO - data: 0.6s"): what follows is the message. Not after
// a plain word ("Train - time", "Validation - time": the word qualifies the name).
bool after_logger_name(std::string_view s, size_t k) {
  if (k < 2 || k + 1 >= s.size() || s[k - 1] != ' ' || s[k + 1] != ' ') return false;
  const std::string_view before = s.substr(0, k - 1);
  const size_t start = before.find_last_of(' ');
  const std::string_view word = start == std::string_view::npos ? before : before.substr(start + 1);
  if (word.empty()) return false;
  // A log record's level before its message ("INFO - data: 0.6s", "__main__ - INFO - ...").
  const std::string level = lower(word);
  for (const std::string_view l : {"info", "debug", "warning", "warn", "error", "critical"}) {
    if (level == l) return true;
  }
  return word.find('.') != std::string_view::npos && word.back() != '.';
}

std::string name_before(std::string_view line, size_t from, size_t to, std::string& unit_hint) {
  const std::string english = in_english(line.substr(from, to - from));
  std::string_view s = english;
  const auto strip_tail = [&] {
    while (!s.empty() && (is_blank(s.back()) || s.back() == ':' || s.back() == '=' ||
                          s.back() == '"' || s.back() == '\'' || s.back() == '~')) {
      s.remove_suffix(1);
    }
  };
  strip_tail();
  // A table's cell: the name is the whole cell before it, without its parenthesised notes
  // ("Load batch (n=24) | 0.744", "| Data loading (s) | 0.3 |").
  if (!s.empty() && s.back() == '|') {
    s.remove_suffix(1);
    const size_t bar = s.rfind('|');
    std::string_view cell = trim(bar == std::string_view::npos ? s : s.substr(bar + 1));
    const size_t open = cell.find('(');
    if (open != std::string_view::npos && cell.back() == ')') {
      const std::string inside = lower(cell.substr(open + 1, cell.size() - open - 2));
      if (is_unit_hint(inside)) unit_hint = inside;
      cell = trim(cell.substr(0, open));
    }
    if (!cell.empty()) s = cell;
  }
  if (!s.empty() && s.back() == ')') {
    const size_t open = s.rfind('(');
    if (open != std::string_view::npos) {
      const std::string inside = lower(s.substr(open + 1, s.size() - open - 2));
      const std::string before = lower(trim(s.substr(0, open)));
      if (inside == "s" && before.size() >= 3 && before.substr(before.size() - 3) == "gpu") {
        s = s.substr(0, open);  // "GPU(s)": a plural, not seconds
        unit_hint = "count";
      } else if (inside == "t") {
        s = s.substr(0, open);  // OpenCLIP's "Data (t): 12.822 Batch (t): 14.049": a time
      } else if (is_unit_hint(inside)) {
        unit_hint = inside;
        s = s.substr(0, open);
      } else if (inside.find('=') != std::string::npos && !trim(before).empty()) {
        s = s.substr(0, open);  // "time per batch (num_workers=4)": the run's setting
      } else if (const auto words = split_whitespace(inside);
                 words.size() == 2 && parse_index(words[0]) && !trim(before).empty() &&
                 (words[1].starts_with("gpu") || words[1].starts_with("node") ||
                  words[1].starts_with("card") || words[1].starts_with("rank"))) {
        s = s.substr(0, open);  // "DDP step time (2 GPUs) 26.36ms": the run's scale
      }
      strip_tail();
    }
  }
  // A setting after the name ("avg time per batch for num workers=0"): the run's label (read
  // as such from the whole line), not part of what the value is.
  {
    size_t k = s.size();
    while (k > 0 && is_digit(s[k - 1])) --k;
    if (k < s.size() && k > 0 && s[k - 1] == '=') {
      const std::string low = lower(s.substr(0, k));
      for (const std::string_view cut : {" for ", " with "}) {
        if (const size_t at = low.rfind(cut); at != std::string::npos && at > 0) {
          s = s.substr(0, at);
          strip_tail();
          break;
        }
      }
    }
  }
  // The last non-empty part between separators, runs of two spaces or a dash after a logger's
  // name ("GPU utilization [|||||   33%]" is named by the part before the bar; DL4J's
  // "o.d.o.l.PerformanceListener - ETL" by what follows its logger's name).
  std::string_view part;
  size_t end = s.size();
  for (size_t k = s.size(); k-- > 0;) {
    if (is_separator(s[k]) || s[k] == '(' || s[k] == ')' ||
        (s[k] == ' ' && k + 1 < s.size() && s[k + 1] == ' ') ||
        (s[k] == '-' && after_logger_name(s, k))) {
      part = trim(s.substr(k + 1, end - k - 1));
      if (!part.empty()) break;
      end = k;
    }
  }
  s = part.empty() ? trim(s.substr(0, end)) : part;
  while (!s.empty() && (s.front() == ':' || s.front() == '=' || s.front() == '.')) {
    s.remove_prefix(1);
  }
  if (s.size() > 64) s = s.substr(s.size() - 64);
  std::string name;
  for (char c : s) {
    const char l = lower_char(c);
    if (l == ' ' || l == '-' || l == '_') {
      if (!name.empty() && name.back() != '_') name.push_back('_');
    } else if (static_cast<unsigned char>(l) >= 0x80) {
      // Words in other scripts ("current_batch_cost_time耗时"): a separator, not the name.
      if (!name.empty() && name.back() != '_') name.push_back('_');
    } else {
      name.push_back(l);
    }
  }
  while (!name.empty() && name.back() == '_') name.pop_back();
  return name;
}

// "speed: 3.52(0.65s r2.79)s/itr", the timer line of the trainers of I2L-MeshNet, Hand4Whole,
// Pose2Pose and their kin: the step (the number before the group), its GPU time (not used) and its
// read time (after 'r'), the step's unit after the group.
struct ReadSplit {
  double read_seconds = 0;
  std::string unit;
  size_t end = 0;
};

std::optional<ReadSplit> read_split(std::string_view line, size_t j) {
  if (j >= line.size() || line[j] != '(') return std::nullopt;
  size_t k = scan_number(line, j + 1);
  if (k == j + 1 || k >= line.size() || line[k] != 's') return std::nullopt;
  ++k;
  while (k < line.size() && is_blank(line[k])) ++k;
  if (k >= line.size() || line[k] != 'r') return std::nullopt;
  const size_t read_end = scan_number(line, k + 1);
  const auto read = parse_number(line.substr(k + 1, read_end - k - 1));
  if (!read || read_end >= line.size() || line[read_end] != ')') return std::nullopt;
  size_t end = read_end + 1;
  std::string unit = scan_unit(line, end);
  if (!per_iteration_scale(unit)) return std::nullopt;
  return ReadSplit{*read * *per_iteration_scale(unit), std::move(unit), end};
}

// A "(0.989)" or "(0.428s, 598/s)" group at line[j]: its numbers, and the end of the group.
// Empty when the parentheses hold anything but numbers and units.
std::vector<double> average_group(std::string_view line, size_t j, size_t& end) {
  std::vector<double> out;
  if (j >= line.size() || line[j] != '(') return out;
  size_t k = j + 1;
  while (k < line.size()) {
    while (k < line.size() && (is_blank(line[k]) || line[k] == ',')) ++k;
    if (k < line.size() && line[k] == ')') {
      end = k + 1;
      return out;
    }
    const size_t e = scan_number(line, k);
    if (e == k) return {};
    const auto v = parse_number(line.substr(k, e - k));
    if (!v) return {};
    out.push_back(*v);
    k = e;
    scan_unit(line, k);
  }
  return {};
}

// "0:00:1.390", "1:02:03", "12:30.5": hours, minutes and seconds as a duration in seconds;
// nullopt for anything else (a date, more than three parts).
std::optional<double> clock_duration(std::string_view text) {
  const auto parts = split_char(text, ':');
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  double seconds = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const auto v = parse_number(parts[k]);
    if (!v || *v < 0 || (k > 0 && *v >= 60) || (k + 1 < parts.size() && *v != std::floor(*v))) {
      return std::nullopt;
    }
    seconds = seconds * 60 + *v;
  }
  return seconds;
}

// One number and its unit in parentheses at line[k] ("(0.833 iter/s)", "(1.941 sec)"); nullopt
// for anything else. `value` is empty when the number does not parse.
struct Parenthesized {
  std::optional<double> value;
  std::string unit;
};
std::optional<Parenthesized> number_in_parentheses(std::string_view line, size_t k) {
  if (k >= line.size() || line[k] != '(') return std::nullopt;
  size_t e = scan_number(line, k + 1);
  if (e == k + 1) return std::nullopt;
  Parenthesized p{parse_number(line.substr(k + 1, e - k - 1)), scan_unit(line, e)};
  if (e >= line.size() || line[e] != ')') return std::nullopt;
  return p;
}

// "(0.833 iter/s)" at line[k]: one number with a rate's or a step's unit in parentheses.
bool rate_in_parentheses(std::string_view line, size_t k) {
  const auto p = number_in_parentheses(line, k);
  return p && rate_or_step_unit(p->unit);
}

// TensorFlow's LoggingTensorHook, "loss = 2.30294, step = 15 (1.941 sec)": after a step
// counter, a duration in parentheses is the time since the previous log line (its steps), no
// average of the counter. The duration in seconds; nullopt for anything else — the hook's own
// unit only: "Iteration 100 (25.1 s)" is as often a cumulative clock.
std::optional<double> interval_in_parentheses(std::string_view line, size_t k) {
  const auto p = number_in_parentheses(line, k);
  if (!p || !p->value || p->unit != "sec") return std::nullopt;
  return p->value;
}

// Keras' epoch line without a time per step ("3198/3198 - 2287s - loss: 2.7595", verbose=2,
// and Keras 2.0's "3198/3198 [=====] - 2287s - loss: ..."): the epoch's duration over its
// steps is the mean step. The counter is line[start, slash) "/" line[slash + 1, end).
struct KerasEpoch {
  double step_seconds = 0;
  size_t column = 0;
  size_t end = 0;
};

std::optional<KerasEpoch> keras_epoch(std::string_view line, size_t start, size_t slash,
                                      size_t end) {
  const std::string_view done = line.substr(start, slash - start);
  const std::string_view steps = line.substr(slash + 1, end - slash - 1);
  if (done != steps || done.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  const auto count = parse_number(steps);
  size_t k = end;
  while (k < line.size() && is_blank(line[k])) ++k;
  if (k < line.size() && line[k] == '[') {  // the progress bar
    const size_t close = line.find(']', k);
    if (close == std::string_view::npos) return std::nullopt;
    k = close + 1;
    while (k < line.size() && is_blank(line[k])) ++k;
  }
  if (line.substr(k, 2) != "- ") return std::nullopt;
  k += 2;
  const size_t number = k;
  k = scan_number(line, k);
  if (k == number) return std::nullopt;
  const auto value = parse_number(line.substr(number, k - number));
  std::string unit = scan_unit(line, k);
  const auto scale = duration_scale(unit);
  // A time per step after it ("- 2287s 715ms/step") is read as it is.
  if (!count || *count <= 0 || !value || !scale ||
      !(k == line.size() || line.substr(k, 3) == " - ")) {
    return std::nullopt;
  }
  return KerasEpoch{*value * *scale / *count, number, k};
}

bool is_statistic(std::string_view name) {
  return name == "mean" || name == "avg" || name == "average" || name == "median";
}

bool is_spread(std::string_view name) {
  return name == "std" || name == "stdev" || name == "stddev" || name == "sd";
}

// The label a statistic belongs to: "  Blocking, waiting for batch (threaded) (10/10):  " is
// "waiting_for_batch" (its notes in parentheses dropped, the last part kept).
std::string label_before(std::string_view text) {
  for (bool stripped = true; stripped;) {
    stripped = false;
    while (!text.empty() && (is_blank(text.back()) || text.back() == ':')) text.remove_suffix(1);
    if (!text.empty() && text.back() == ')') {
      const size_t open = text.rfind('(');
      if (open != std::string_view::npos) {
        text = text.substr(0, open);
        stripped = true;
      }
    }
  }
  std::string hint;
  return name_before(text, 0, text.size(), hint);
}

// tinygrad's step line names each value after it, in parts parted by commas ("   3   56.88 ms
// run,  55.70 ms python,  64.61 ms fetch data, 1.18 ms prefetch data, 7.17 loss, 3.53 GB
// used"): each part a number, then its unit and name in words (the first part may start with a
// counter or a code fence). Read when three parts or more are such and two of them durations;
// the whole step, "run", is the step's time. Empty otherwise.
std::vector<NamedValue> values_before_names(std::string_view line) {
  // Most lines have no second part led by a number: passed over before any word is split.
  {
    size_t k = line.find(',');
    if (k == std::string_view::npos) return {};
    for (++k; k < line.size() && is_blank(line[k]);) ++k;
    if (k == line.size() || !is_digit(line[k])) return {};
  }
  std::vector<NamedValue> out;
  size_t durations = 0;
  size_t start = 0;
  for (bool first = true; start <= line.size(); first = false) {
    size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) comma = line.size();
    const std::vector<std::string_view> words = split_whitespace(line.substr(start, comma - start));
    size_t at = 0;  // the number's word: the part's first, or the first part's last number
    if (first) {
      at = words.size();
      for (size_t w = 0; w < words.size(); ++w) {
        if (parse_number(words[w])) at = w;
      }
    }
    if (at + 1 >= words.size() || !parse_number(words[at])) return {};
    NamedValue v;
    v.value = *parse_number(words[at]);
    v.column = static_cast<size_t>(words[at].data() - line.data());
    size_t w = at + 1;
    if (duration_scale(lower(words[w])) && w + 1 < words.size()) {
      v.unit = lower(words[w]);
      ++durations;
      ++w;
    }
    for (; w < words.size(); ++w) {
      std::string_view word = words[w];
      // tinygrad's device time on each of several GPUs, "0.26 ms HIP * 6": the count after the
      // name is no part of it.
      if (word == "*" && w + 2 == words.size() && parse_index(words[w + 1]) && !v.name.empty()) {
        break;
      }
      // The line's last word may close a code fence or a Markdown line ("GFLOPS```\\").
      if (comma == line.size() && w + 1 == words.size()) {
        while (!word.empty() && !is_alpha(word.back()) && !is_digit(word.back())) {
          word.remove_suffix(1);
        }
      }
      if (word.empty() || !std::all_of(word.begin(), word.end(), is_alpha)) return {};
      if (!v.name.empty()) v.name += '_';
      v.name += lower(word);
    }
    if (v.name.empty() || duration_scale(v.name)) return {};  // "5 ms": a unit, no name
    if (v.name == "run" && !v.unit.empty()) v.name = "step_time";
    out.push_back(std::move(v));
    start = comma + 1;
  }
  if (out.size() < 3 || durations < 2) return {};
  return out;
}

}  // namespace

std::vector<NamedValue> min_max_timer(std::string_view line) {
  const size_t dots = line.find("...");
  if (dots == std::string_view::npos) return {};
  const std::string_view name = trim(line.substr(0, dots));
  if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
        return is_alpha(c) || is_digit(c) || c == '-' || c == '_' || c == ' ';
      })) {
    return {};
  }
  size_t k = dots;
  while (k < line.size() && line[k] == '.') ++k;
  if (k >= line.size() || line[k] != ':') return {};
  for (++k; k < line.size() && is_blank(line[k]);) ++k;
  size_t end = 0;
  const std::vector<double> pair = average_group(line, k, end);
  if (pair.size() != 2 || pair[0] > pair[1] ||
      line.substr(k, end - k).find(',') == std::string_view::npos) {
    return {};
  }
  std::string hint;
  NamedValue v{name_before(name, 0, name.size(), hint), "ms", pair[1], std::nullopt, k + 1};
  if (meaning_of(v).quantity == Quantity::kDataWait) v.value = pair[0];
  return {v};
}

bool counts_steps(const NamedValue& v) {
  return (v.name == "step" || v.name == "iter" || v.name == "iteration" || v.name == "batch") &&
         v.unit.empty() && v.value == std::floor(v.value);
}

namespace {

// "takes", "took", "takes about": a verb joined to the name before a duration ("500
// steps_take 10 seconds").
bool is_takes_verb(std::string_view verb) {
  return verb == "take" || verb == "takes" || verb == "took" || verb == "take_about" ||
         verb == "takes_about" || verb == "took_about";
}

// The plural of a window of the loop's steps: "1000 steps", "40 batches", "100 iters".
bool counts_window_of_steps(std::string_view w) {
  return w == "steps" || w == "iterations" || w == "iters" || w == "batches" || w == "its";
}

// A time named as another phase than training, or as what is left of a run ("eval_time",
// "validation took", "eta", "time remaining", "data loading took"): not a step's.
bool names_another_phase(std::string_view name) {
  for (const std::string_view w :
       {"eval", "valid", "test", "eta", "remain", "left", "load", "download", "infer"}) {
    if (name.find(w) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

std::vector<NamedValue> named_values(std::string_view line) {
  std::vector<NamedValue> out;
  if (line.size() > kMaxPastedLineBytes) return out;
  if (auto before = values_before_names(line); !before.empty()) return before;
  if (auto timer = min_max_timer(line); !timer.empty()) return timer;
  const size_t n = line.size();
  size_t name_start = 0;
  size_t last_named = 0;   // index in `out` of the last value with a name
  size_t label_start = 0;  // where the text after the last value starts (counters included)
  size_t i = 0;
  while (i < n) {
    if (!starts_number(line, i)) {
      ++i;
      continue;
    }
    const size_t number_start = i;
    size_t j = scan_number(line, i);
    if (j == i) {
      ++i;
      continue;
    }
    // An index that ends a name before its colon ("GPUUtil/0: 94.606", tensorpack's monitor):
    // part of the name, not a value.
    if (number_start > name_start && line[number_start - 1] == '/' && j < n && line[j] == ':' &&
        std::all_of(line.begin() + number_start, line.begin() + j, is_digit)) {
      i = j;
      continue;
    }
    // Clock times ("8:29:46", "00:59<00:05") and counters ("24/1051", "[1/300]"): not values.
    if (j + 1 < n && (line[j] == ':' || line[j] == '/') && is_digit(line[j + 1])) {
      const bool pair = line[j] == '/';
      const size_t first_end = j;
      while (j < n && (is_digit(line[j]) || line[j] == ':' || line[j] == '/' || line[j] == '.')) {
        ++j;
      }
      // OpenNMT's "23006/21669 tok/s": source and target tokens per second; the first is read.
      size_t after = j;
      std::string unit = pair ? scan_unit(line, after) : std::string();
      const auto first = parse_number(line.substr(number_start, first_end - number_start));
      // A step's time as a clock reads ("time per step = 0:00:1.390"): H:MM:SS.fff, under a
      // name that says it is a step's (a bare "time" before a clock is the time of day).
      // Only after a word and '=' or ':' ("time per step = 0:00:1.390"), not a progress bar's
      // "[00:12<01:00" or a log's time of day: the name is looked up only then.
      size_t before = number_start;
      while (before > name_start && is_blank(line[before - 1])) --before;
      const bool after_name =
          !pair && before > name_start && (line[before - 1] == '=' || line[before - 1] == ':');
      const double clock =  // -1: none (a sentinel: GCC 12 misjudges an optional here)
          after_name ? clock_duration(line.substr(number_start, j - number_start)).value_or(-1)
                     : -1;
      std::string hint;
      std::string name =
          clock > 0 ? name_before(line, name_start, number_start, hint) : std::string();
      const Meaning named = meaning_of(NamedValue{name, "s", clock, std::nullopt, 0});
      if (clock > 0 && named.quantity == Quantity::kStep && named.priority >= 3) {
        out.push_back(NamedValue{std::move(name), "s", clock, std::nullopt, number_start});
      } else if (first && !rate_unit_of(unit).empty()) {
        std::string hint;
        out.push_back(NamedValue{name_before(line, name_start, number_start, hint), std::move(unit),
                                 *first, std::nullopt, number_start});
        j = after;
      } else if (const auto epoch =
                     pair ? keras_epoch(line, number_start, first_end, j) : std::nullopt) {
        out.push_back(
            NamedValue{"step_time", "s", epoch->step_seconds, std::nullopt, epoch->column});
        j = epoch->end;
      }
      i = name_start = j;
      continue;
    }
    // A note inside a name ("Load batch (n=24)", "(bs=64)"): part of the name, not a value —
    // unless it names a rate or a time ("(lr=1.34E-05, s/sec=0.715)").
    if (j < n && line[j] == ')' && number_start > 0 && line[number_start - 1] == '=') {
      // The key alone, from a bounded window: a line of many notes stays linear.
      std::string hint;
      const size_t from = std::max(name_start, number_start > 64 ? number_start - 64 : 0);
      NamedValue note{name_before(line, from, number_start, hint), {}, 1, std::nullopt, 0};
      if (meaning_of(note).quantity != Quantity::kRate) {
        i = j;
        continue;
      }
    }
    // A setting after a name ("for" or "with" it), a colon and the name's own bare value after
    // it ("avg time per batch for num workers=0: 0.609"): part of the name, not a value; a
    // setting alone before its value ("workers=0: 0.13s") is the value's label, read as one.
    if (j + 1 < n && line[j] == ':' && number_start > 0 && line[number_start - 1] == '=') {
      size_t u = j + 1;
      while (u < n && is_blank(line[u])) ++u;
      // Only before a bare value: one with its unit ("Time taken for num_workers=4: 120.5s")
      // is read as the setting's run already.
      size_t v = u < n ? scan_number(line, u) : u;
      while (v < n && is_blank(line[v])) ++v;
      const bool unit = v < n && (is_alpha(line[v]) || line[v] == '%' || line[v] == '/');
      const auto after_for_or_with = [&] {
        const std::string name = lower(line.substr(name_start, number_start - name_start));
        return name.find(" for ") != std::string::npos || name.find(" with ") != std::string::npos;
      };
      if (u < n && starts_number(line, u) && !unit && after_for_or_with()) {
        i = j;
        continue;
      }
    }
    // A window in parentheses right after a name ("GPU utilization(1min): 55%", "(5 s avg)"):
    // how the next value was averaged, not a value.
    if (number_start > 0 && line[number_start - 1] == '(') {
      size_t u = j;
      while (u < n && is_blank(line[u])) ++u;
      size_t v = u;
      while (v < n && is_alpha(line[v])) ++v;
      size_t close = v;
      while (close < n && close < v + 24 && line[close] != ')' && line[close] != '(') ++close;
      const std::string word = lower(line.substr(u, v - u));
      const bool window =
          duration_scale(word).has_value() || word.starts_with("min") || word.starts_with("hour");
      // HugeCTR's "Time(1000 iters): 5.381177s": the time of that many steps, the value read one
      // step's — a duration only, under a name that is no mean ("Avg step time (100 steps):
      // 0.52s" and "Throughput (100 iters): 1234 samples/s" are averaged over the window, read
      // as they are).
      static constexpr std::array<std::string_view, 9> kSteps = {
          "iter", "iters", "iteration", "iterations", "step", "steps", "batch", "batches", "its"};
      const auto steps = std::find(kSteps.begin(), kSteps.end(), word) != kSteps.end()
                             ? parse_number(line.substr(number_start, j - number_start))
                             : std::nullopt;
      size_t after = close + 1;
      while (after < n && is_blank(line[after])) ++after;
      size_t at = after + 1;
      while (at < n && is_blank(line[at])) ++at;
      if ((window || (steps && *steps >= 1)) && close < n && line[close] == ')' && after < n &&
          (line[after] == ':' || line[after] == '=') && starts_number(line, at)) {
        const size_t end = scan_number(line, at);
        size_t unit_end = end;
        std::string unit = scan_unit(line, unit_end);
        if (const auto v = parse_number(line.substr(at, end - at)); v && end > at) {
          std::string hint;
          std::string name = name_before(line, name_start, number_start - 1, hint);
          if (unit.empty()) unit = hint;
          NamedValue read{std::move(name), std::move(unit), *v, std::nullopt, at};
          const bool mean = read.name.find("avg") != std::string::npos ||
                            read.name.find("mean") != std::string::npos ||
                            read.name.find("average") != std::string::npos ||
                            read.name.find("per_") != std::string::npos;
          if (!window && !mean && duration_scale(read.unit)) read.value /= *steps;
          out.push_back(std::move(read));
          if (!out.back().name.empty()) last_named = out.size() - 1;
          i = name_start = label_start = unit_end;
          continue;
        }
      }
    }
    auto value = parse_number(line.substr(number_start, j - number_start));
    if (!value) {
      i = j;
      continue;
    }
    // "tok/sec: 529,882", "wps: 1,786": thousands parted by commas, in a value after its name's
    // ':' or '=', or in a table's cell ("| 27,941 tok/s (1,746/GPU) |"), not a CSV row's
    // "100,512" — a whole number of one to three digits (not led by a zero), then groups of
    // exactly three, the last not followed by another digit or a comma and digit ("1,200,3" is
    // no number); three groups or more led by three digits are a list ("310,305,298,301").
    size_t named_at = number_start;
    while (named_at > 0 && is_blank(line[named_at - 1])) --named_at;
    const bool after_name =
        named_at > 0 &&
        (line[named_at - 1] == ':' || line[named_at - 1] == '=' || line[named_at - 1] == '|');
    if (after_name && j - number_start <= 3 && line[number_start] != '0' &&
        std::all_of(line.begin() + static_cast<std::ptrdiff_t>(number_start),
                    line.begin() + static_cast<std::ptrdiff_t>(j), is_digit)) {
      size_t k = j;
      double whole = *value;
      while (k + 3 < n && line[k] == ',' && is_digit(line[k + 1]) && is_digit(line[k + 2]) &&
             is_digit(line[k + 3]) && !(k + 4 < n && is_digit(line[k + 4]))) {
        whole = whole * 1000 + (line[k + 1] - '0') * 100 + (line[k + 2] - '0') * 10 +
                (line[k + 3] - '0');
        k += 4;
      }
      const bool csv =
          k < n && (line[k] == ',' || line[k] == '.') && k + 1 < n && is_digit(line[k + 1]);
      const bool list = j - number_start == 3 && k - j >= 8;  // two groups or more after it
      if (k > j && !csv && !list) {
        value = whole;
        j = k;
      }
    }
    // "Total img/sec on 8 GPU(s): 2320.6": a count inside a name, not a value.
    {
      size_t k = j;
      if (k < n && line[k] == ' ') ++k;
      const std::string head = lower(line.substr(k, 3));
      const std::string_view before = trim(line.substr(name_start, number_start - name_start));
      if (head == "gpu" && !before.empty() && before.back() != ':' && before.back() != '=') {
        i = j;
        continue;
      }
    }
    NamedValue v;
    v.value = *value;
    v.column = number_start;
    std::string unit_hint;
    v.name = name_before(line, name_start, number_start, unit_hint);
    // "Forward pass (10/10):  mean:  11ms   std:  3ms": a statistic is named by the label
    // before it, and its spread is no reading of its own.
    if (is_statistic(v.name)) {
      const size_t word = lower(line.substr(0, number_start)).rfind(v.name);
      if (word != std::string_view::npos && word >= label_start) {
        v.name = label_before(line.substr(label_start, word - label_start));
      }
    } else if (is_spread(v.name) && !out.empty()) {
      scan_unit(line, j);
      i = name_start = label_start = j;
      continue;
    }
    if (const auto split = read_split(line, j)) {
      v.unit = split->unit;
      out.push_back(std::move(v));
      out.push_back(NamedValue{"read_time", "s", split->read_seconds, std::nullopt, j});
      last_named = out.size() - 1;
      i = name_start = label_start = split->end;
      continue;
    }
    const size_t unit_at = j;
    v.unit = scan_unit(line, j);
    // "~245K FPS", "1.2M tokens/s": thousands or millions, then the rate's unit after a blank.
    if ((v.unit == "k" || (v.unit == "m" && line[unit_at] == 'M')) && j < n && line[j] == ' ') {
      size_t after = j;
      if (std::string rate = scan_unit(line, after);
          !rate.empty() && (rate_or_step_unit(rate) || rate == "fps")) {
        v.value *= v.unit == "k" ? 1e3 : 1e6;
        v.unit = std::move(rate);
        j = after;
      }
    }
    // "~4419.71 total img/sec" (Horovod's benchmark summary): the job's rate, its unit after
    // the word "total".
    if (v.unit.empty() && j < n && line[j] == ' ' && lower(line.substr(j + 1, 6)) == "total ") {
      size_t after = j + 7;
      if (std::string rate = scan_unit(line, after); !rate.empty() && rate_or_step_unit(rate)) {
        v.name = v.name.empty() ? "total_rate" : "total_" + v.name;
        v.unit = std::move(rate);
        j = after;
      }
    }
    if (v.unit.empty() && !unit_hint.empty() && unit_hint != "count") v.unit = unit_hint;
    if (unit_hint == "count") v.name += "s";  // "gpu(s)" reads as "gpus"
    // Prose names a percentage after it: "seeing ~20% GPU utilization", "at 90% CPU usage"
    // (not "GPU util 95% CPU util 20%", whose 95 is named before it).
    if (v.unit == "%" && meaning_of(v).quantity == Quantity::kNone) {
      size_t k = j;
      while (k < n && is_blank(line[k])) ++k;
      const std::string after = lower(line.substr(k, 24));
      for (const std::string_view what : {"gpu", "cpu"}) {
        for (const std::string_view how : {" util", " usage", "-util", " load", " compute"}) {
          if (after.starts_with(std::string(what) + std::string(how))) {
            v.name = std::string(what) + "_utilization";
          }
        }
      }
      // "we get 90% scaling efficiency on 64 GPUs", "scales very well within a node with 97%
      // efficiency" (a line about scaling): the scaling's.
      // Not "loss scaling" nor "rescaling the images": the words whole.
      const auto about_scaling = [&] {
        const std::string low = lower(line);
        if (low.find("loss scal") != std::string::npos) return false;
        for (size_t at = low.find("scal"); at != std::string::npos; at = low.find("scal", at + 1)) {
          size_t end = at;
          while (end < low.size() && is_alpha(low[end])) ++end;
          const std::string_view w = std::string_view(low).substr(at, end - at);
          if ((at == 0 || !is_alpha(low[at - 1])) &&
              (w == "scaling" || w == "scales" || w == "scale" || w == "scaled")) {
            return true;
          }
        }
        return false;
      };
      if (after.starts_with("scaling efficiency") ||
          (after.starts_with("efficiency") && about_scaling())) {
        v.name = "scaling_efficiency";
      }
    }
    // NeMo 2's "train_step_timing in s: 0.9765": the unit said in the name.
    if (v.unit.empty()) {
      for (const auto& [suffix, unit] :
           {std::pair<std::string_view, std::string_view>{"_in_s", "s"},
            {"_in_sec", "s"},
            {"_in_seconds", "s"},
            {"_in_ms", "ms"}}) {
        if (v.name.size() > suffix.size() && ends_with(v.name, suffix)) {
          v.name.resize(v.name.size() - suffix.size());
          v.unit = std::string(unit);
          break;
        }
      }
    }
    out.push_back(std::move(v));
    if (!out.back().name.empty()) last_named = out.size() - 1;
    // A running average: "(0.989)" after the value, or "(0.428s, 598/s)" after a run of values
    // whose first has the name.
    size_t k = j;
    while (k < n && is_blank(line[k])) ++k;
    size_t end = k;
    // "Iteration 200 (0.833 iter/s)", "loss = 2.5009 (1.218 sec/step)": a count or a metric
    // without a unit, then a rate or a step of its own, not its average.
    const bool counter_then_rate = out.back().unit.empty() && rate_in_parentheses(line, k);
    {
      const NamedValue& last = out.back();
      const bool counter = (last.name == "step" || last.name == "global_step") &&
                           last.unit.empty() && last.value == std::floor(last.value);
      if (const auto interval = counter ? interval_in_parentheses(line, k) : std::nullopt) {
        out.back().name = "step_counter";
        out.push_back(NamedValue{"interval_time", "s", *interval, std::nullopt, k});
        while (k < n && line[k] != ')') ++k;
        i = name_start = label_start = k + 1;
        continue;
      }
      // TensorFlow's fully_connected_feed.py, "Step 100: loss = 2.22 (0.012 sec)": after a
      // metric of the step its counter names first, the step's own time in seconds (no
      // metric's average has a unit).
      const bool counted_first = out.size() >= 2 && out.front().name == "step" &&
                                 out.front().unit.empty() && !out.front().average &&
                                 out.front().value == std::floor(out.front().value);
      const auto took = counted_first && last.unit.empty() && !last.name.empty()
                            ? interval_in_parentheses(line, k)
                            : std::nullopt;
      if (took) {
        out.push_back(NamedValue{"time", "s", *took, std::nullopt, k});
        while (k < n && line[k] != ')') ++k;
        i = name_start = label_start = k + 1;
        continue;
      }
    }
    const std::vector<double> group =
        counter_then_rate ? std::vector<double>() : average_group(line, k, end);
    if (!group.empty()) {
      const size_t run = out.size() - last_named;
      if (group.size() == run && run > 1) {
        for (size_t g = 0; g < run; ++g) out[last_named + g].average = group[g];
      } else {
        out.back().average = group.front();
      }
      j = end;
      // BasicSR's "time (data): 1.970 (0.708)": the step, then its wait in parentheses, named
      // in that order — no running average.
      const std::string named = lower(trim(line.substr(name_start, number_start - name_start)));
      if (group.size() == 1 && named.ends_with("time (data):")) {
        out.back().name = "time";
        out.back().average.reset();
        out.push_back(NamedValue{"data_time", out.back().unit, group.front(), std::nullopt, k});
      }
    }
    i = name_start = label_start = j;
  }
  // Timer lines state their unit once, up front: Megatron's and DeepSpeed's "time (ms) |
  // forward: 1180.2 | batch-generator: 500.3".
  if (lower(line.substr(0, std::min<size_t>(line.size(), 256))).find("time (ms) |") !=
      std::string::npos) {
    for (NamedValue& v : out) {
      if (v.unit.empty()) v.unit = "ms";
    }
  }
  // "load 0 takes 4.06 seconds", "batch 12 took 0.8s": a counter, then how long its thing took;
  // the duration is the counted thing's.
  for (size_t k = 1; k < out.size(); ++k) {
    const std::string_view verb = out[k].name;
    NamedValue& counted = out[k - 1];
    if (is_takes_verb(verb) && verb != "take" && verb != "take_about" &&
        duration_scale(out[k].unit) && counted.unit.empty() && !counted.average &&
        counted.value >= 0 && counted.value == std::floor(counted.value) && !counted.name.empty()) {
      counted.value = out[k].value;
      counted.unit = out[k].unit;
      counted.average = out[k].average;
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(k));
      --k;
    }
  }
  // Theano-MPI's "time per 40 batches: 48.80 (train 48.68 sync 0.00 comm 0.00 wait 0.12)": a
  // window of N batches and its parts; each per batch. Rates and percentages are no parts.
  // Its "time per 5120 images: 4.89 (train 3.90 comm 0.87 wait 0.12)": the window of images is
  // one step, its parts as they are.
  for (size_t k = 0; k + 1 < out.size(); ++k) {
    const NamedValue& count = out[k];
    const std::string_view things = out[k + 1].name;
    const bool images = things == "images" || things == "samples" || things == "examples";
    if (!(count.name == "time_per" || count.name.ends_with("_time_per")) || !count.unit.empty() ||
        count.value < 2 || count.value != std::floor(count.value) ||
        !((counts_window_of_steps(things) && things != "its") || images) ||
        !(out[k + 1].unit.empty() || duration_scale(out[k + 1].unit))) {
      continue;
    }
    const double n = images ? 1 : count.value;
    out[k + 1].name = "time_per_batch";
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(k));
    for (size_t m = k; m < out.size(); ++m) {
      NamedValue& v = out[m];
      if (!(v.unit.empty() || duration_scale(v.unit))) continue;
      v.value /= n;
      if (v.average) *v.average /= n;
    }
    break;
  }
  // A duration of a window of N steps, the count after it or before it: DGL-KE's "32.530 secs /
  // 1000 steps" and "500 steps take 10.092 seconds", "41.6 s per 1000 iterations". Each is one
  // step's time, N times over; a named part of the step ("data_time: 12.3 s per 100 iters")
  // keeps its name, and what is left of a run or another phase's time is no step's.
  const auto window = [](const NamedValue& v) {
    return v.unit.empty() && !v.average && v.value >= 2 && v.value == std::floor(v.value);
  };
  for (size_t k = 0; k + 1 < out.size(); ++k) {
    NamedValue& time = out[k];
    const NamedValue& count = out[k + 1];
    if (!duration_scale(time.unit) || time.average ||
        !(count.name == "/" || count.name == "per" || count.name == "for") || !window(count)) {
      continue;
    }
    size_t w = scan_number(line, count.column);
    while (w < line.size() && line[w] == ' ') ++w;
    size_t e = w;
    while (e < line.size() && std::isalpha(static_cast<unsigned char>(line[e]))) ++e;
    if (!counts_window_of_steps(lower(line.substr(w, e - w))) || names_another_phase(time.name)) {
      continue;
    }
    time.value /= count.value;
    if (meaning_of(time).quantity == Quantity::kNone) time.name = "time_per_batch";
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(k + 1));
  }
  for (size_t k = 0; k + 1 < out.size(); ++k) {
    const NamedValue& count = out[k];
    NamedValue& time = out[k + 1];
    const size_t cut = time.name.find('_');
    if (!count.name.empty() || !window(count) || !duration_scale(time.unit) || time.average ||
        cut == std::string::npos || !counts_window_of_steps(time.name.substr(0, cut)) ||
        !is_takes_verb(std::string_view(time.name).substr(cut + 1))) {
      continue;
    }
    time.value /= count.value;
    time.name = "time_per_batch";
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return out;
}

namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}
bool starts_with(std::string_view s, std::string_view head) {
  return s.substr(0, head.size()) == head;
}
bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// "images/sec", "img/s", "samples_per_second", "tokens/s/gpu", "it/s", "wps": the thing
// counted per second, or empty.
std::string rate_unit_of(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 27> kThings = {{
      {"images", "images"},    {"image", "images"},    {"imgs", "images"},
      {"sent", "samples"},  // XLM's and DyNet's "14.63 sent/s", "sent/sec: 280.034" (sentences)
      {"im", "images"},     // "1GPU: 111 im/s" (tf_cnn_benchmarks#29)
      {"pics", "images"},      {"pic", "images"},  // Horovod's examples: "440.6 pic/sec"
      {"img", "images"},       {"samples", "samples"}, {"sample", "samples"},
      {"examples", "samples"}, {"seqs", "samples"},    {"sentences", "samples"},
      {"tokens", "tokens"},    {"toks", "tokens"},     {"tok", "tokens"},
      {"words", "tokens"},     {"w", "tokens"},  // Marian's "4100 w/s" (words)
      {"its", "iterations"},   {"it", "iterations"},   {"steps", "iterations"},
      {"step", "iterations"},  // TensorFlow's "global_step/sec"
      {"iters", "iterations"}, {"iter", "iterations"}, {"batches", "iterations"},
      {"batch", "iterations"},  // Composer's "train mean 4.242 batch/s"
      {"ite", "iterations"},    // "1.26ite/s" (accelerate#192's table)
  }};
  // InternLM's "tokens/gpu/second", OLMo's "tokens/device/second".
  static constexpr std::array<std::string_view, 12> kPer = {
      "/sec",        "/s",       "_per_second", "_per_sec",       "/second",     "_per_s",
      "/gpu/second", "/gpu/sec", "/gpu/s",      "/device/second", "/device/sec", "/device/s"};
  // Every rate below is written with a '/' or a "per"; the rest are names of their own. Most
  // names and units are neither: no search for each thing and each "per" (the hot path of a
  // long log).
  const bool has_per =
      text.find('/') != std::string_view::npos || text.find("per") != std::string_view::npos;
  for (const auto& [thing, unit] : kThings) {
    if (!has_per) break;
    for (const std::string_view per : kPer) {
      for (size_t at = text.find(thing); at != std::string_view::npos;
           at = text.find(thing, at + 1)) {
        const bool word_start = at == 0 || !is_alpha(text[at - 1]);
        if (word_start && text.substr(at + thing.size(), per.size()) == per) {
          const size_t after = at + thing.size() + per.size();
          if (after == text.size() || !is_alpha(text[after])) {
            return std::string(unit);
          }
        }
      }
    }
  }
  if (text == "s/sec") return "samples";  // WeatherGenerator's "(lr=1.34E-05, s/sec=0.715)"
  if (text == "sps") return "samples";    // punctuator2's "Speed: 281.17 sps" (samples/s)
  if (text == "wps" || text == "tps" || text == "tgs")
    return "tokens";                       // fairseq, torchtitan, InternLM
  if (text == "ups") return "iterations";  // fairseq's updates/s
  // NVIDIA DLLogger's "total_ips" and "train.total_ips" (DeepLearningExamples' classifiers):
  // the images a second of all the GPUs in training ("val.total_ips" is evaluation's).
  // (PaddlePaddle's bare "ips" is left to its step times.)
  if (ends_with(text, "total_ips")) {
    const std::string_view before = text.substr(0, text.size() - 9);
    if (!contains(before, "val") && !contains(before, "test") && !contains(before, "infer")) {
      return "images";
    }
  }
  // "185 iterations/second" (lightning#7932): "it" above is a word start only.
  for (const std::string_view per : {"/s", "/sec", "/second", "_per_sec", "_per_second"}) {
    if (text.starts_with("iterations") && text.substr(10) == per) return "iterations";
  }
  // FlagPerf's throughputs (samples/s): the whole run's with evaluation, training's, and the
  // model's own steps without loading.
  if (text == "p_whole" || text == "p_train" || text == "p_core") return "samples";
  // "throughput: ~70", "8 card throughput": a rate of the job's samples, its unit unstated.
  if (text == "throughput" || ends_with(text, "_throughput")) return "samples";
  // CamelCase names lower-cased lose their word starts: DeepSpeed's "RunningAvgSamplesPerSec".
  for (const auto& [thing, unit] : kThings) {
    if (!has_per) break;
    if (thing.size() >= 5 && (contains(text, std::string(thing) + "persec") ||
                              contains(text, std::string(thing) + "_per_sec"))) {
      return std::string(unit);
    }
  }
  return {};
}

// A duration per iteration ("5.95s/it", "57.29s/batch", Keras' "50ms/step", "3.5s/itr",
// "1.2 sec/iter"): the seconds per unit; nullopt for other units.

struct Synonym {
  std::string_view name;
  Quantity quantity;
  int priority;
};

// The synonym table (docs/doctor.md, "Pasted messages"): names of a step's wait for data and
// of the step, as the trainers people paste from print them.
constexpr std::array<Synonym, 96> kSynonyms = {{
    {"data", Quantity::kDataWait, 0},
    {"data_time", Quantity::kDataWait, 0},
    {"data_s", Quantity::kDataWait, 0},
    {"datatime", Quantity::kDataWait, 0},
    {"data_load", Quantity::kDataWait, 0},
    {"data_load_time", Quantity::kDataWait, 0},
    {"data_loading", Quantity::kDataWait, 0},
    {"data_loading_time", Quantity::kDataWait, 0},
    {"dataloadingtime", Quantity::kDataWait, 0},  // imagenet-multiGPU.torch: "DataLoadingTime"
    // detectron2's evaluator: "Dataloading: 0.0008 s/iter".
    {"dataloading", Quantity::kDataWait, 0},
    {"data_times", Quantity::kDataWait, 0},   // starVLA's progress bar: "data_times=0.001"
    {"batch_input", Quantity::kDataWait, 0},  // DeepSpeed's pipeline timers
    {"dataload", Quantity::kDataWait, 0},
    {"dataloader", Quantity::kDataWait, 0},
    {"dataloader_time", Quantity::kDataWait, 0},
    {"data_wait", Quantity::kDataWait, 0},
    {"wait_for_data", Quantity::kDataWait, 0},
    {"wait_for_batch", Quantity::kDataWait, 0},
    {"waiting_for_data", Quantity::kDataWait, 0},
    {"waiting_for_batch", Quantity::kDataWait, 0},  // "Blocking, waiting for batch: mean: 189ms"
    {"smp", Quantity::kDataWait, 0},
    {"load", Quantity::kDataWait, 0},
    {"load_time", Quantity::kDataWait, 0},
    {"fetch", Quantity::kDataWait, 0},
    {"fetch_time", Quantity::kDataWait, 0},
    {"fetch_data", Quantity::kDataWait, 0},        // tinygrad: "64.61 ms fetch data"
    {"sample+data_copy", Quantity::kDataWait, 0},  // DistDGL: "sample+data_copy: 6.0583"
    {"wait", Quantity::kDataWait, 0},
    {"wait_time", Quantity::kDataWait, 0},
    {"waiting_time", Quantity::kDataWait, 0},     // a table's "Waiting time" column
    {"reader_cost", Quantity::kDataWait, 0},      // PaddlePaddle: reader_cost and batch_cost
    {"reader_time", Quantity::kDataWait, 0},      // ... as a table's "reader耗时/s" names it
    {"get_minibatch", Quantity::kDataWait, 0},    // CNTK's profiler: "__Get Minibatch"
    {"data_cost", Quantity::kDataWait, 0},        // PaddleDetection: data_cost and batch_cost
    {"data_processing", Quantity::kDataWait, 0},  // NeMo-RL's step breakdown
    {"dl", Quantity::kDataWait, 0},
    {"loadertime", Quantity::kDataWait, 0},  // Mozilla TTS
    {"loader_time", Quantity::kDataWait, 0},
    {"load_batch", Quantity::kDataWait, 0},
    {"data_fetch", Quantity::kDataWait, 0},
    {"data_fetch_time", Quantity::kDataWait, 0},
    {"batch_generator", Quantity::kDataWait, 0},  // Megatron's timers
    {"read_time", Quantity::kDataWait, 0},
    // PaddlePaddle/models' dygraph Transformer: "read_t: 0.0001 s".
    {"read_t", Quantity::kDataWait, 0},
    {"read_sample", Quantity::kDataWait, 0},  // VISSL's perf stats: "read_sample: 133.48 ms"
    {"read_data", Quantity::kDataWait, 0},    // Blocks' timing table: "Read data  41.36  84.89%"
    {"loaded", Quantity::kDataWait, 0},       // darknet's "Loaded: 2.078771 seconds"
    {"rtime", Quantity::kDataWait, 0},        // pips' "rtime 0.06; itime 1.95"
    {"etl", Quantity::kDataWait, 0},  // DL4J's PerformanceListener: "ETL: 0 ms; ... iteration time"
    // PySlowFast's json_stats: "dt": the iteration, "dt_data" its wait, "dt_net" the rest.
    {"dt_data", Quantity::kDataWait, 0},
    // Habitat's PPO trainers: "env-time: 175.496s  pth-time: 90.586s" (since the start). The
    // environments' stepping is a reinforcement learner's input; the learner's own time is the
    // rest of its step.
    {"env_time", Quantity::kDataWait, 0},
    {"itime", Quantity::kStep, 4},
    {"time_train", Quantity::kStep, 5},   // "Time_train(average) 30.307 (30.044)"
    {"train_batch", Quantity::kStep, 5},  // DeepSpeed's timers: "train_batch: 87510.72" (ms)
    {"train_time", Quantity::kStep, 5},
    {"iter_time", Quantity::kStep, 4},
    {"itertime", Quantity::kStep, 4},
    {"iteration_time", Quantity::kStep, 4},
    {"minibatch_iteration", Quantity::kStep, 4},  // CNTK's profiler: "_Minibatch Iteration"
    {"time_per_iteration", Quantity::kStep, 4},   // Megatron: "elapsed time per iteration (ms)"
    {"time_per_step", Quantity::kStep, 4},        // OpenSeq2Seq: "time per step = 0:00:1.390"
    {"time/step", Quantity::kStep, 4},            // CLIP4Clip: "Time/step: 44.222691"
    {"time_per_batch", Quantity::kStep, 4},
    {"time/batch", Quantity::kStep, 4},  // char-rnn: "time/batch = 0.1690s"
    {"time_per_iter", Quantity::kStep, 4},
    {"batch_time", Quantity::kStep, 4},
    {"batchtime", Quantity::kStep, 4},
    {"batch", Quantity::kStep, 4},
    {"bch", Quantity::kStep, 4},
    {"batch_cost", Quantity::kStep, 4},
    {"batch_cost_time", Quantity::kStep, 4},
    {"step_time", Quantity::kStep, 3},
    {"step_total", Quantity::kStep, 3},         // VISSL's perf stats: "train_step_total: 952.28 ms"
    {"train_step_timing", Quantity::kStep, 3},  // NeMo: "train_step_timing in s"
    {"step_timing", Quantity::kStep, 3},
    {"step", Quantity::kStep, 3},
    {"time", Quantity::kStep, 2},
    {"elapse", Quantity::kStep, 2},           // PaddleClas: "elapse: 0.436s"
    {"timer", Quantity::kStep, 2},            // ssd.pytorch, yolact: "Timer: 0.2107 sec."
    {"epoch_time", Quantity::kStep, 2},       // "Epoch time: 948457.4916 ms" (an epoch's step)
    {"iteration_total", Quantity::kStep, 1},  // "total" after its parts: "dl=.. fwd=.. total="
    {"total", Quantity::kStep, 1},
    // pytracking: "DataTime: 2.217 , TotalTime: 3.076" (not a profile's "Total time: 40.5 s")
    {"totaltime", Quantity::kStep, 1},
    {"updt_s", Quantity::kStepWithoutData, 1},
    {"pth_time", Quantity::kStepWithoutData, 1},
    {"dt_net", Quantity::kStepWithoutData, 1},
    {"iteration_without_data", Quantity::kStepWithoutData, 1},  // darknet's "0.76 seconds,"
    {"gpu_utilization", Quantity::kGpuUtilisation, 0},
    {"gpu_utilisation", Quantity::kGpuUtilisation, 0},
    {"gpu_util", Quantity::kGpuUtilisation, 0},
    {"gpu_usage", Quantity::kGpuUtilisation, 0},
    {"cpu_utilization", Quantity::kCpuUtilisation, 0},
    {"cpu_utilisation", Quantity::kCpuUtilisation, 0},
    {"cpu_efficiency", Quantity::kCpuUtilisation, 0},
    {"cpu_usage", Quantity::kCpuUtilisation, 0},
    {"cpu_util", Quantity::kCpuUtilisation, 0},
}};

}  // namespace

std::optional<double> per_iteration_scale(std::string_view u) {
  // "b": a batch (CNTK's examples print "Load  11.0 ms/b").
  static constexpr std::array<std::string_view, 12> kIterations = {
      "it",        "ite",   "its",  "itr",       "iter",       "iters",
      "iteration", "batch", "step", "minibatch", "mini-batch", "b"};
  const size_t slash = u.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto scale = duration_scale(u.substr(0, slash));
  const std::string_view per = u.substr(slash + 1);
  if (!scale || std::find(kIterations.begin(), kIterations.end(), per) == kIterations.end()) {
    return std::nullopt;
  }
  return scale;
}

std::string_view without_filler(std::string_view name) {
  static constexpr std::array<std::string_view, 23> kFiller = {
      "is",      "was",    "are",           "were",  "of",     "at",     "around",
      "about",   "almost", "always",        "only",  "just",   "stays",  "remains",
      "roughly", "nearly", "approximately", "still", "merely", "barely", "mostly",
      "now",     "busy"};
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (const std::string_view f : kFiller) {
      if (name.size() > f.size() + 1 && ends_with(name, f) &&
          name[name.size() - f.size() - 1] == '_') {
        name.remove_suffix(f.size() + 1);
        dropped = true;
      }
    }
  }
  if (starts_with(name, "the_")) name.remove_prefix(4);
  return name;
}

Meaning meaning_of(const NamedValue& v) {
  Meaning m;
  const std::string_view name = without_filler(v.name);
  // "speeds up by 1.2 s/batch", "reduced by 30 %": a change, not a reading; "std 0.09 batch/s":
  // a spread.
  if (name == "by" || ends_with(name, "_by") || name == "std" || ends_with(name, "_std")) {
    return m;
  }
  // tqdm's "?it/s" before its first rate ("?it/s][0301 12:56:31"): the number after it is
  // the next line's, glued on.
  if (starts_with(name, "?it/s") || starts_with(name, "?s/it")) return m;
  // verl's timers in seconds, "timing_s/gen:74.020 - ... - timing_s/step:96.551": the step
  // and the phases it is made of (generation, log-probabilities, the actor's update), none of
  // them the wait for a batch, which verl does not time.
  if (starts_with(name, "timing_s/") && v.unit.empty() && v.value >= 0) {
    // Its top-level phases only: others nest inside them ("generate_sequences" and "reshard"
    // inside "gen") and would be counted twice.
    static constexpr std::array<std::string_view, 10> kTopLevel = {
        "gen", "reward",        "old_log_prob", "ref",     "values",
        "adv", "update_critic", "update_actor", "testing", "save_checkpoint"};
    const std::string_view phase = name.substr(9);
    if (phase == "step") {
      m.quantity = Quantity::kStep;
      m.priority = 3;
    } else if (std::find(kTopLevel.begin(), kTopLevel.end(), phase) != kTopLevel.end()) {
      m.quantity = Quantity::kCompute;
    }
    return m;
  }
  // "Communication time per step 11.24ms", "Compute time per step 15.12ms": a step's phases,
  // though their names end in the step's own.
  if (!v.unit.empty() && seconds_of(v)) {
    const auto led_by = [&](std::string_view w) {
      return name == w || (starts_with(name, w) && name[w.size()] == '_');
    };
    if (led_by("communication_time") || led_by("comm_time")) {
      m.quantity = Quantity::kCommunication;
      return m;
    }
    if (led_by("compute_time") || led_by("computation_time")) {
      m.quantity = Quantity::kCompute;
      return m;
    }
  }
  for (const Synonym& s : kSynonyms) {
    if (name == s.name) {
      m.quantity = s.quantity;
      m.priority = s.priority;
      break;
    }
  }
  // A name that ends in a synonym of two words or more names the same thing with a prefix
  // ("load_data_time", "train_step_time", "current_batch_cost_time"); one-word synonyms
  // ("time", "data") would match too much ("forward_time") and must match whole.
  if (m.quantity == Quantity::kNone) {
    for (const Synonym& s : kSynonyms) {
      if (s.name.find('_') != std::string_view::npos && name.size() > s.name.size() &&
          ends_with(name, s.name) && name[name.size() - s.name.size() - 1] == '_' &&
          s.quantity != Quantity::kStepWithoutData) {
        m.quantity = s.quantity;
        m.priority = s.priority - 1;  // below the plain name on the same line
        break;
      }
    }
  }
  // "CPU: 100%", "the cpu is almost 100% occupied": a percentage of the CPU is its use.
  if (m.quantity == Quantity::kNone && v.unit == "%" && name == "cpu") {
    m.quantity = Quantity::kCpuUtilisation;
  }
  // tensorpack's GPUUtilizationTracker, an epoch's mean per GPU: "GPUUtil/0: 94.606".
  if (m.quantity == Quantity::kNone && (v.unit.empty() || v.unit == "%") &&
      starts_with(name, "gpuutil/")) {
    if (const auto k = parse_index(std::string_view(name).substr(8)); k && *k < 1024) {
      m.quantity = Quantity::kGpuUtilisation;
      m.gpu = *k;
      return m;
    }
  }
  // A percentage named by its GPU: "[GPU0 0%] [GPU1 0%]", "gpu_1: 35 %".
  if (m.quantity == Quantity::kNone && v.unit == "%" && starts_with(name, "gpu")) {
    std::string_view index = std::string_view(name).substr(3);
    if (!index.empty() && index.front() == '_') index.remove_prefix(1);
    if (const auto k = parse_index(index); k && *k < 1024) {
      m.quantity = Quantity::kGpuUtilisation;
      m.gpu = *k;
    }
  }
  // Timers of a step's phases (Megatron's "backward-params-all-reduce", DeepSpeed's
  // "backward_allreduce_microstep", "forward-compute"): gradient exchange against compute.
  if (m.quantity == Quantity::kNone && !v.unit.empty() && seconds_of(v)) {
    // CNTK's profiler: "__Gradient Aggregation".
    static constexpr std::array<std::string_view, 6> kExchange = {
        "all_reduce", "allreduce", "reduce_scatter",
        "all_gather", "allgather", "gradient_aggregation"};
    // DeepSpeed's pipeline engine sums its exchanges in one timer, "comms: 74766.41".
    const bool exchange = name == "comms" || name == "comm_time" ||
                          std::any_of(kExchange.begin(), kExchange.end(),
                                      [&](std::string_view w) { return contains(name, w); });
    if (exchange) {
      m.quantity = Quantity::kCommunication;
    } else if (((starts_with(name, "forward") || starts_with(name, "backward") ||
                 starts_with(name, "optimizer")) &&
                !contains(name, "inner")) ||
               name == "compute" || name == "compute_time") {
      m.quantity = Quantity::kCompute;
    }
    if (m.quantity != Quantity::kNone) return m;
  }
  if (m.quantity == Quantity::kGpuUtilisation || m.quantity == Quantity::kCpuUtilisation) {
    if (!(v.unit == "%" || v.unit.empty())) m.quantity = Quantity::kNone;
    return m;
  }
  // RSL-RL's runner (legged_gym, Isaac Lab, mjlab): "Computation: 116 steps/s (collection:
  // 218.512s, learning 0.610s)", or "Collection time: 22.542s" over "Learning time: 0.150s".
  // Stepping the environments is a reinforcement learner's input (as Habitat's env-time), the
  // policy's update its own step. With a duration's unit only: "learning" alone is too common a
  // word to read a bare number after it.
  if (m.quantity == Quantity::kNone && duration_scale(v.unit)) {
    if (name == "collection" || name == "collection_time") {
      m.quantity = Quantity::kDataWait;
      return m;
    }
    if (name == "learning" || name == "learning_time") {
      m.quantity = Quantity::kStepWithoutData;
      m.priority = 1;
      return m;
    }
  }
  // "iter: 14.7154s" (SparK's MetricLogger), "iteration 0.52 s": a counter's name before a
  // duration is the step's time.
  if (m.quantity == Quantity::kNone && (name == "iter" || name == "iteration" || name == "it") &&
      duration_scale(v.unit)) {
    m.quantity = Quantity::kStep;
    m.priority = 3;
    return m;
  }
  // "batch" and "step" also name counters ("step:10", "batch: 32"): a whole number without a
  // unit or an average is one.
  if ((name == "batch" || name == "step") && v.unit.empty() && !v.average &&
      v.value == std::floor(v.value)) {
    m.quantity = Quantity::kNone;
  }
  if (m.quantity == Quantity::kStep || m.quantity == Quantity::kDataWait ||
      m.quantity == Quantity::kStepWithoutData) {
    // "Data 626.6" per second is not a wait; units that are not durations neither.
    if (!seconds_of(v)) m.quantity = Quantity::kNone;
    return m;
  }
  // A duration per iteration, or iterations per second, without a name ("5.95s/it",
  // "57.29s/batch", Keras' "50ms/step", a progress bar's "9.57it/s"): the step.
  if (per_iteration_scale(v.unit) ||
      (name.empty() && rate_unit_of(v.unit) == "iterations" && v.value > 0)) {
    m.quantity = Quantity::kStep;
    m.priority = 1;
    return m;
  }
  std::string rate = rate_unit_of(v.unit);
  // The name says what is counted when the unit does not ("samples_per_second_per_gpu is
  // 30/s/gpu"), not when the unit counts something else ("memory throughput 900 GB/s").
  if (rate.empty() && (v.unit.empty() || v.unit.front() == '/')) rate = rate_unit_of(name);
  // "405.65/s" (timm), "p50: 122/s": per second of what the line counts, its samples; "~245K
  // FPS", "650fps": frames (or an RL trainer's env steps) a second — as a unit only: a config's
  // "fps: 30" is a video's frame rate.
  if (rate.empty() && (v.unit == "/s" || v.unit == "/sec" || v.unit == "fps")) rate = "samples";
  if (!rate.empty() && v.value > 0) {
    m.quantity = Quantity::kRate;
    m.rate_unit = rate;
    // "x2_gpu" is what is left of "1x2 GPU: 1481.3 img/sec" (a scale's own line, its count
    // glued): the scale, not "per GPU".
    const std::string_view before_gpu =
        ends_with(name, "_gpu") ? std::string_view(name).substr(0, name.size() - 4) : "";
    const bool a_count = !before_gpu.empty() &&
                         before_gpu.find_first_not_of("x0123456789") == std::string_view::npos;
    m.per_gpu = contains(name, "per_gpu") || contains(name, "/gpu") ||
                (ends_with(name, "_gpu") && !a_count) || contains(v.unit, "/gpu") ||
                name == "tgs" ||  // InternLM's tokens per GPU
                contains(name, "per_device") || contains(v.unit, "/device");
    m.total = starts_with(name, "total");
  }
  return m;
}

std::optional<double> duration_scale(std::string_view u) {
  if (u == "s" || u == "sec" || u == "secs" || u == "second" || u == "seconds") return 1.0;
  if (u == "ms" || u == "msec") return 1e-3;
  if (u == "us" || u == "usec") return 1e-6;
  return std::nullopt;
}

std::optional<double> seconds_of(const NamedValue& v) {
  const std::string& u = v.unit;
  if (u.empty()) return v.value;
  if (const auto scale = duration_scale(u)) return v.value * *scale;
  if (const auto scale = per_iteration_scale(u)) return v.value * *scale;
  if (rate_unit_of(u) == "iterations" && v.value > 0) return 1.0 / v.value;
  return std::nullopt;
}

namespace {

// Words of a line, lower case: runs of letters, digits and "_-.()'=%" (so that
// "--nproc_per_node=8", "gpu(s)" and "1080ti" stay one word, and "100 %" is no count).
std::vector<std::string> words_of(std::string_view line) {
  std::vector<std::string> words;
  std::string w;
  for (char c : line) {
    const char l = lower_char(c);
    if (is_alpha(l) || is_digit(l) || l == '_' || l == '-' || l == '.' || l == '(' || l == ')' ||
        l == '=' || l == '\'' || l == '%') {
      w.push_back(l);
    } else if (!w.empty()) {
      words.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) words.push_back(std::move(w));
  // "16GPUs(2 nodes)", "DataParallel(two GPUs)": a note glued to its word is a word of its own;
  // "gpu(s)" keeps its own, and "nodes(8 v100" stays one (its 8 GPUs are per node).
  for (size_t k = 0; k < words.size(); ++k) {
    const size_t open = words[k].find('(');
    if (open == std::string::npos || open == 0 || words[k].substr(open).starts_with("(s)")) {
      continue;
    }
    const std::string_view head = std::string_view(words[k]).substr(0, open);
    // "4 GPUs(per node)" counts per node, as one word it is no count of the job's GPUs.
    if (head.ends_with("node") || head.ends_with("nodes") || head.ends_with("machines") ||
        head.ends_with("hosts") || head.ends_with("servers") ||
        std::string_view(words[k]).substr(open + 1).starts_with("per")) {
      continue;
    }
    std::string note = words[k].substr(open + 1);
    words[k].resize(open);
    if (!note.empty()) words.insert(words.begin() + static_cast<std::ptrdiff_t>(k) + 1, note);
  }
  // A word in parentheses ("(2x 3090)") is the word; "gpu(s)" keeps its own.
  for (std::string& word : words) {
    word.erase(0, std::min(word.size(), word.find_first_not_of('(')));
    if (!word.empty() && word.back() == ')' && word.find('(') == std::string::npos) {
      word.pop_back();
    }
    // A sentence's full stop ("on two nodes."), not a version's or a number's point.
    while (word.size() > 1 && word.back() == '.' && is_alpha(word[word.size() - 2])) {
      word.pop_back();
    }
  }
  return words;
}

std::optional<int> small_count(std::string_view w) {
  static constexpr std::array<std::string_view, 9> kWords = {
      "zero", "one", "two", "three", "four", "five", "six", "seven", "eight"};
  if (w == "single" || w == "a") return 1;
  if (w == "dual") return 2;
  if (w == "quad") return 4;
  if (w == "sixteen") return 16;
  for (size_t i = 1; i < kWords.size(); ++i) {
    if (w == kWords[i]) return static_cast<int>(i);
  }
  const auto n = parse_index(w);
  if (n && *n >= 1 && *n <= 4096) return *n;
  return std::nullopt;
}

}  // namespace

bool gpu_word(std::string_view w) {
  while (!w.empty() && (w.back() == '.' || w.back() == ')' || w.back() == '(')) w.remove_suffix(1);
  if (w == "gpu" || w == "gpus" || w == "gpu(s" || w == "gpu's" || w == "cards" || w == "card") {
    return true;
  }
  static constexpr std::array<std::string_view, 24> kModels = {
      "v100",  "a100", "h100",  "h200", "h800", "a800", "p100",  "k80",
      "k40",   "t4",   "a6000", "a40",  "l40",  "rtx",  "gtx",   "titan",
      "tesla", "1080", "2080",  "a10",  "a30",  "l4",   "mi250", "mi300"};
  for (const std::string_view m : kModels) {
    if (starts_with(w, m)) return true;
  }
  // 3090, 4090, "3090ti" (not 300000, a counter's total)
  return w.size() >= 4 && (w.substr(0, 2) == "30" || w.substr(0, 2) == "40") && is_digit(w[2]) &&
         is_digit(w[3]) && (w.size() == 4 || is_alpha(w[4]) || w[4] == '-');
}

namespace {

// A word between a count and "GPU" that names the model: "P4", "A10G", "NVIDIA" ("2 Dual P4
// GPU", "8 A10G GPUs"), not "per" or "of".
bool model_like(std::string_view w) {
  if (w == "nvidia" || w == "geforce" || w == "amd") return true;
  if (w.empty() || w.size() > 8 || !is_alpha(w.front())) return false;
  return std::any_of(w.begin(), w.end(), is_digit) &&
         std::all_of(w.begin(), w.end(), [](char c) { return is_alpha(c) || is_digit(c); });
}

// "8gpu", "8gpus", "4xv100", "8x": a count glued to its GPU word.
std::optional<int> glued_count(std::string_view w, bool& pending_x) {
  size_t k = 0;
  while (k < w.size() && is_digit(w[k])) ++k;
  if (k == 0 || k > 4) return std::nullopt;
  const auto n = parse_index(w.substr(0, k));
  if (!n || *n < 1) return std::nullopt;
  std::string_view rest = w.substr(k);
  if (rest == "x") {
    pending_x = true;
    return n;
  }
  if (!rest.empty() && (rest.front() == 'x' || rest.front() == '-')) rest.remove_prefix(1);
  if (!rest.empty() && gpu_word(rest)) return n;
  return std::nullopt;
}

// A word counting machines after its number: "2 nodes", "two machines", "2 servers", "4 hosts"
// (Horovod's word).
bool machine_word(std::string_view w) {
  return w == "node" || w == "nodes" || w == "machine" || w == "machines" || w == "servers" ||
         w == "hosts";
}

// The GPUs of a cloud instance type ("p3.16xlarge": 8 V100), for the types GPU jobs run on.
std::optional<int> instance_gpus(std::string_view w) {
  static constexpr std::array<std::pair<std::string_view, int>, 20> kInstances = {{
      {"p2.xlarge", 1},     {"p2.8xlarge", 8},  {"p2.16xlarge", 16},  {"p3.2xlarge", 1},
      {"p3.8xlarge", 4},    {"p3.16xlarge", 8}, {"p3dn.24xlarge", 8}, {"p4d.24xlarge", 8},
      {"p4de.24xlarge", 8}, {"p5.48xlarge", 8}, {"p5e.48xlarge", 8},  {"g4dn.xlarge", 1},
      {"g4dn.12xlarge", 4}, {"g4dn.metal", 8},  {"g5.xlarge", 1},     {"g5.12xlarge", 4},
      {"g5.48xlarge", 8},   {"g6.48xlarge", 8}, {"a2-highgpu-8g", 8}, {"a3-highgpu-8g", 8},
  }};
  for (const auto& [name, gpus] : kInstances) {
    if (w == name) return gpus;
  }
  return std::nullopt;
}

// "--nproc_per_node=8", "--gpus 4", "-np 8", "--devices 2" (Lightning's and litgpt's CLI),
// "--num_processes 4" (accelerate launch): the value of a launcher's GPU-count flag.
std::optional<int> flag_count(const std::vector<std::string>& words, size_t i) {
  static constexpr std::array<std::string_view, 15> kFlags = {
      "--nproc_per_node", "--nproc-per-node", "--gpus",
      "--num_gpus",       "--num-gpus",       "--ngpus",
      "--n_gpus",         "--ngpu",           "-np",
      "--gpus-per-node",  "--devices",        "--trainer.devices",
      "--num_processes",  "--num-processes",  "--trainer.gpus"};
  const std::string& w = words[i];
  // "--gpus 0,1,2,3" (MXNet, Keras): a list of device ids, as many GPUs as ids.
  if (w == "--gpus" || w == "--gpu" || w == "--devices") {
    size_t ids = 0;
    while (i + 1 + ids < words.size() && parse_index(words[i + 1 + ids])) ++ids;
    if (ids >= 2) return static_cast<int>(ids);
  }
  for (const std::string_view f : kFlags) {
    if (w == f && i + 1 < words.size()) return small_count(words[i + 1]);
    if (starts_with(w, f) && w.size() > f.size() && w[f.size()] == '=') {
      return small_count(std::string_view(w).substr(f.size() + 1));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> gpu_count_of(std::string_view line, std::optional<int>* nodes, bool* from_flag) {
  if (line.size() > kMaxPastedLineBytes) return std::nullopt;
  // The nodes are read whether or not the caller asks for them: a count per node needs them.
  std::optional<int> own_nodes;
  if (nodes == nullptr) nodes = &own_nodes;
  const std::vector<std::string> words = words_of(in_english(line));
  const std::string low_line = lower(line);
  std::optional<int> gpus;
  // "on H100" beside "on 2x H100": a model named without a count is one GPU, unless the line
  // states a count elsewhere.
  bool one_model = false;
  // A line naming two counts compares them ("speed-up between 1GPU and 8GPU"): no heading.
  bool two_counts = false;
  bool per_node = false;  // the count is per node (torchrun's nproc_per_node)
  const auto found = [&](std::optional<int> c) {
    if (!c) return;
    if (!gpus) {
      gpus = c;
    } else if (*gpus != *c) {
      two_counts = true;
    }
  };
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const std::string next = i + 1 < words.size() ? words[i + 1] : std::string();
    const std::string after = i + 2 < words.size() ? words[i + 2] : std::string();
    if (nodes != nullptr && !nodes->has_value()) {
      // "2 nodes", "two machines", "2 servers", "4 hosts" (Horovod's word) — a count of its own,
      // not a timestamp's milliseconds before a logger named "Node" ("15:52:03,188 Node").
      const auto standalone = [&] {
        const size_t at = low_line.find(w + " " + next);
        return at == std::string::npos || at == 0 ||
               !(low_line[at - 1] == ',' || low_line[at - 1] == ':' || low_line[at - 1] == '.' ||
                 is_digit(low_line[at - 1]));
      };
      if (const auto c = small_count(w); c && machine_word(next) && standalone()) {
        *nodes = c;
      }
      if (ends_with(w, "node") || ends_with(w, "nodes")) {
        const std::string_view head = std::string_view(w).substr(0, w.find('n'));
        if (const auto c = parse_index(head); c && *c >= 1) *nodes = c;
      }
      // torchrun's "--nnodes=2", Lightning's "--num_nodes 2" ("--trainer.num_nodes=2"),
      // accelerate's "--num_machines 2".
      for (const std::string_view f : {"--nnodes", "--num_nodes", "--num-nodes",
                                       "--trainer.num_nodes", "--num_machines", "--num-machines"}) {
        if (w == f) *nodes = small_count(next);
        if (starts_with(w, f) && w.size() > f.size() && w[f.size()] == '=') {
          *nodes = small_count(std::string_view(w).substr(f.size() + 1));
        }
      }
      // "nnodes = 2" (torchrun's, as a run's settings list it).
      if (w == "nnodes" && next == "=") *nodes = small_count(after);
    }
    // Horovod's process count told as "np = 2" (mpirun's -np), torchrun's as "nproc_per_node =
    // 2" (ignite-examples#75): a GPU each.
    if ((w == "np" || w == "nproc_per_node" || w == "nproc-per-node") && next == "=" &&
        small_count(after)) {
      per_node = w != "np";
      found(small_count(after));
      i += 2;
      continue;
    }
    // "GPUs: 8" (a job summary's field); not "8 GPUs: 25 hours", a count before its word.
    if ((w == "gpus" || w == "gpus:") && small_count(next) && words.size() <= 4 &&
        (i == 0 || !small_count(words[i - 1]))) {
      found(small_count(next));
      continue;
    }
    // "CUDA_VISIBLE_DEVICES=0,1 python train.py": as many GPUs as the ids it lists, which the
    // job sees whatever the machine has: read as a count in words, not as a launcher's flag
    // (so it names its run even below a heading in words, "4 x GPU NVIDIA Titan X").
    if (starts_with(w, "cuda_visible_devices=") && parse_index(std::string_view(w).substr(21))) {
      size_t ids = 1;
      while (i + ids < words.size() && parse_index(words[i + ids])) ++ids;
      found(static_cast<int>(ids));
      i += ids - 1;
      continue;
    }
    if (const auto f = flag_count(words, i)) {
      // --nproc_per_node, --gpus-per-node; Lightning's --devices counts a node's GPUs too.
      // DeepSpeed's and Detectron2's --num_gpus / --num-gpus beside --num_nodes / --num-machines
      // are each node's as well.
      per_node = w.find("per") != std::string::npos || w.find("devices") != std::string::npos ||
                 starts_with(w, "--num_gpus") || starts_with(w, "--num-gpus");
      found(f);
      if (from_flag != nullptr) *from_flag = true;
      continue;
    }
    // "#of gpus=1, 191 img/sec", "ngpu=8": a count named in the text, not a launcher's flag;
    // spaced too, "nGPU =4", "ngpus = 2" (deepspeech.torch#40).
    const auto count_key = [](std::string_view key) {
      return key == "gpus" || key == "gpu" || key == "ngpu" || key == "ngpus" ||
             key == "num_gpus" || key == "n_gpu" || key == "n_gpus" || key == "nproc_per_node";
    };
    if (count_key(w) && w != "gpus" && w != "gpu" && (next == "=" || starts_with(next, "="))) {
      const std::string_view value =
          next == "=" ? std::string_view(after) : std::string_view(next).substr(1);
      if (const auto c = small_count(value)) {
        found(c);
        i += next == "=" ? 2 : 1;
        continue;
      }
    }
    if (const size_t eq = w.find('='); eq != std::string::npos) {
      const std::string_view key = std::string_view(w).substr(0, eq);
      if (count_key(key)) {
        found(small_count(std::string_view(w).substr(eq + 1)));
        continue;
      }
      // "2x4=8GPU": the product, glued to its GPU word — a word, not a number ("size=1920x1080").
      const std::string_view product = std::string_view(w).substr(eq + 1);
      const size_t word_at = product.find_first_not_of("0123456789");
      bool pending = false;
      if (const auto c = glued_count(product, pending);
          c && !pending && word_at != std::string_view::npos && is_alpha(product[word_at]) &&
          product[word_at] != 'x') {
        found(c);
        continue;
      }
    }
    // "2 p3.16xlarge: 2632.95 images/sec": cloud instances of a known GPU count, each a node.
    if (const auto per = instance_gpus(w)) {
      // "2 p3.16xlarge", or "Two Nodes: p3.16xlarge" (the count stated before).
      int count = 1;
      if (i > 0 && small_count(words[i - 1])) {
        count = *small_count(words[i - 1]);
      } else if (nodes != nullptr && nodes->has_value()) {
        count = **nodes;
      }
      found(count * *per);
      if (nodes != nullptr && !nodes->has_value()) *nodes = count;
      continue;
    }
    // "2M/8G" (machines / GPUs per machine, PyTorch's DDP benchmarks): 16 GPUs on 2 nodes.
    // Only glued ("2M/8G" as written), small, and not on a line about memory ("Mem: 900M/16G").
    if (w.size() >= 2 && w.back() == 'm' && next.size() >= 2 && next.back() == 'g' &&
        low_line.find(w + "/" + next) != std::string::npos &&
        low_line.find("mem") == std::string::npos && low_line.find("ram") == std::string::npos &&
        low_line.find("swap") == std::string::npos) {
      const auto machines = parse_index(std::string_view(w).substr(0, w.size() - 1));
      const auto per = parse_index(std::string_view(next).substr(0, next.size() - 1));
      if (machines && per && *machines >= 1 && *per >= 1 && *machines <= 64 && *per <= 16) {
        found(*machines * *per);
        if (nodes != nullptr && !nodes->has_value()) *nodes = machines;
        ++i;
        continue;
      }
    }
    // "4 * 8 A100", "2 x 8 V100", "4x8 A100": nodes times the GPUs of each (openfold#198's
    // "4 * 8 A100(40GB)" is 32). words_of drops the '*', so the line says where it stood.
    {
      std::optional<int> per, machines;
      size_t model = 0;
      if (const size_t x = w.find_first_of("x*");
          x != std::string::npos && x > 0 && x + 1 < w.size() && gpu_word(next)) {
        machines = small_count(std::string_view(w).substr(0, x));
        per = small_count(std::string_view(w).substr(x + 1));
        model = i + 1;
      } else if (small_count(w) && next == "x" && small_count(after) && i + 3 < words.size() &&
                 gpu_word(words[i + 3])) {
        machines = small_count(w);
        per = small_count(after);
        model = i + 3;
      } else if (small_count(w) && small_count(next) && gpu_word(after) &&
                 (low_line.find(w + " * " + next) != std::string::npos ||
                  low_line.find(w + "*" + next) != std::string::npos)) {
        machines = small_count(w);
        per = small_count(next);
        model = i + 2;
      }
      // A node holds 16 GPUs at most ("3090*4" is a model times its count, read below); on a
      // line about the batch, the product is the batch's ("global batch size 256 (32 x 8
      // GPUs)": 32 a GPU, on 8).
      if (machines && per && *machines >= 1 && *machines <= 128 && *per >= 1 && *per <= 16 &&
          low_line.find("batch") == std::string::npos) {
        found(*machines * *per);  // the nodes: not read from a product (it may be 4 x 8 cards)
        i = model;
        continue;
      }
    }
    bool pending_x = false;
    // "-4xGPU's within the node" (a list's dash glued on): the count after it.
    const std::string_view glued =
        w.size() > 2 && w[0] == '-' && is_digit(w[1]) ? std::string_view(w).substr(1) : w;
    if (const auto g = glued_count(glued, pending_x)) {
      if (!pending_x || gpu_word(next)) found(g);
      continue;
    }
    // "1080ti x 4", "V100 * 8": a count after its model.
    if (gpu_word(w) && (next == "x" || next == "*") && small_count(after)) {
      found(small_count(after));
      continue;
    }
    // "with only GPU" (one): not "only GPU 0", a device.
    if (w == "only" && (next == "gpu" || next == "card") && !parse_index(after)) one_model = true;
    if ((w == "on" || w == "one" || w == "an") && gpu_word(next) && next != "gpu" &&
        next != "gpus" && next != "card" && next != "cards") {
      one_model = true;
    }
    // "2/4000" (a progress bar's counter; "4000" is also a Quadro's name): no count of GPUs.
    // Looked up only for a count before a GPU word: a search of the line for every word made a
    // line of numbers quadratic.
    const auto fraction = [&] { return low_line.find(w + "/" + next) != std::string::npos; };
    if (const auto c = small_count(w)) {
      // "8 GPUs", "2 x V100", "single GPU", "a single V100", "3 V100 32G".
      if (gpu_word(next) || ((next == "x" || next == "*" || model_like(next)) && gpu_word(after))) {
        if (!(w == "a" && !gpu_word(next)) && !fraction()) {
          found(c);
          // "2 nodes (each with 8 A100 GPUs)", "2 machines with 8 GPUs each", "8 GPUs per
          // node": a count per node, which the nodes multiply (below).
          const size_t gpu_at = gpu_word(next) ? i + 1 : i + 2;
          const auto word_at = [&](size_t k) -> std::string {
            return k < words.size() ? words[k] : std::string();
          };
          const auto a_machine = [&](size_t k) {
            return machine_word(word_at(k)) || machine_word(word_at(k) + "s");
          };
          const std::string then = word_at(gpu_at + 1);
          // "8 GPUs each" ends its phrase; "8 GPUs, each with 80GB memory" or "each with batch
          // size 32" says what each GPU has, not how many a node holds.
          const std::string after_each = word_at(gpu_at + 2);
          const bool each_after = then == "each" && after_each != "with" && after_each != "has" &&
                                  after_each != "having" && after_each != "of";
          if ((i >= 1 && words[i - 1] == "each") ||
              (i >= 2 && words[i - 2] == "each" && words[i - 1] == "with") || each_after ||
              (then == "per" && a_machine(gpu_at + 2)) ||
              (then == "in" && word_at(gpu_at + 2) == "each" && a_machine(gpu_at + 3))) {
            per_node = true;
          }
        }
      } else if (next == "single" && gpu_word(after) && !fraction()) {
        found(1);
      }
    }
    // "single device is much faster" (torchtune's single-device recipes against its
    // distributed ones): one accelerator.
    if ((w == "single" && next == "device") || w == "single-device") {
      found(1);
    }
  }
  if (!gpus && one_model) gpus = 1;
  // A count per node beside the nodes ("nnodes = 2, nproc_per_node = 8"): the job's is both.
  if (gpus && per_node && nodes != nullptr && nodes->has_value() && **nodes > 1 && !two_counts) {
    gpus = *gpus * **nodes;
  }
  return two_counts ? std::nullopt : gpus;
}

namespace {

// The scale one side of a comparison names: its node count when it states one, else its GPU
// count; "multi gpu", "multiple GPUs", "more GPUs" and "multi-node" as 2 (more than one).
struct Scale {
  std::optional<int> nodes, gpus;
};

Scale scale_of(std::string_view side) {
  Scale s;
  s.gpus = gpu_count_of(side, &s.nodes);
  const std::vector<std::string> words = words_of(side);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const std::string next = i + 1 < words.size() ? words[i + 1] : std::string();
    const bool many = w == "multi" || w == "multiple" || w == "more" || w == "several";
    if (!s.gpus && ((many && gpu_word(next)) || w == "multi-gpu" || w == "multigpu")) s.gpus = 2;
    if (!s.nodes &&
        ((many && (next == "node" || next == "nodes")) || w == "multi-node" || w == "multinode")) {
      s.nodes = 2;
    }
  }
  return s;
}

}  // namespace

namespace {
// Chinese words saying a comparison is what should be, not what was: "正常" (normal), "应该"
// and "应当" (should), "理论" (theory), "预期" and "期望" (expected), "本应" (ought to).
constexpr std::string_view kExpectedZh[] = {"\xe6\xad\xa3\xe5\xb8\xb8", "\xe5\xba\x94\xe8\xaf\xa5",
                                            "\xe5\xba\x94\xe5\xbd\x93", "\xe7\x90\x86\xe8\xae\xba",
                                            "\xe9\xa2\x84\xe6\x9c\x9f", "\xe6\x9c\x9f\xe6\x9c\x9b",
                                            "\xe6\x9c\xac\xe5\xba\x94"};
}  // namespace

std::optional<bool> larger_scale_slower(std::string_view line) {
  if (line.size() > kMaxPastedLineBytes) return std::nullopt;
  // Chinese compares "A 比 B 慢" (A is slower than B) or "快" (faster): fastreid#656's
  // "多机单卡比单机单卡慢66倍" (one card on each of several machines is 66 times slower than
  // one card on one machine). Read as the English sentence, each side in English, A from the
  // clause's start.
  static constexpr std::string_view kThan = "\xe6\xaf\x94", kSlow = "\xe6\x85\xa2",
                                    kFast = "\xe5\xbf\xab";
  for (size_t than = line.find(kThan); than != std::string_view::npos;
       than = line.find(kThan, than + kThan.size())) {
    const size_t slow = line.find(kSlow, than), fast = line.find(kFast, than);
    const size_t verb = std::min(slow, fast);
    // Not what the person expected: "按正常情况，2个节点训练比单个节点要快很多" (normally two
    // nodes would train much faster than one; llamafactory#5014), "应该" (should), "理论上"
    // (in theory), "预期"/"期望" (expected), anywhere in the sentence before it — after its
    // last "但" (but): "按理说多机应该更快，但多机比单机慢" observed the opposite.
    size_t sentence = line.rfind("\xe3\x80\x82", than);  // the full stop
    sentence = sentence == std::string_view::npos ? 0 : sentence + 3;
    if (const size_t but = line.rfind("\xe4\xbd\x86", than);
        but != std::string_view::npos && but >= sentence) {
      sentence = but + 3;
    }
    const std::string_view before = line.substr(sentence, than - sentence);
    const bool expected =
        std::any_of(std::begin(kExpectedZh), std::end(kExpectedZh),
                    [&](std::string_view w) { return before.find(w) != std::string_view::npos; });
    if (verb != std::string_view::npos && verb - than <= 60 && !expected) {
      size_t from = 0;
      // The clause's start: after the last comma, full stop or colon before "比" (ASCII or
      // full width).
      for (const std::string_view stop :
           {",", ":", ";", "\xef\xbc\x8c", "\xef\xbc\x9a", "\xe3\x80\x82"}) {
        if (const size_t at = line.rfind(stop, than); at != std::string_view::npos) {
          from = std::max(from, at + stop.size());
        }
      }
      const std::string english =
          in_english(line.substr(from, than - from)) +
          (verb == slow ? " is slower than " : " is faster than ") +
          in_english(line.substr(than + kThan.size(), verb - than - kThan.size()));
      if (const auto said = larger_scale_slower(english)) return said;
    }
  }
  const std::string text = lower(line);
  // "X is slower than Y", "X gives worse throughput than Y", "X is not any faster than Y": a
  // comparative up to three words before "than", turned round by a "not" just before it.
  static constexpr std::array<std::string_view, 3> kSlower = {"slower", "worse", "longer"};
  static constexpr std::array<std::string_view, 3> kFaster = {"faster", "better", "quicker"};
  static constexpr std::array<std::string_view, 6> kNot = {"not",    "isn't", "wasn't",
                                                           "aren't", "no",    "never"};
  const auto in = [](std::string_view w, const auto& list) {
    return std::find(list.begin(), list.end(), w) != list.end();
  };
  for (size_t than = text.find(" than "); than != std::string::npos;
       than = text.find(" than ", than + 1)) {
    // The words before "than", nearest first (at most six).
    std::vector<std::pair<std::string_view, size_t>> before;  // word, where it starts
    size_t end = than;
    while (before.size() < 9 && end > 0) {
      const size_t space = text.rfind(' ', end - 1);
      const size_t from = space == std::string::npos ? 0 : space + 1;
      std::string_view word = std::string_view(text).substr(from, end - from);
      // Markdown's emphasis around it: "**LOWER**".
      while (!word.empty() && (word.front() == '*' || word.front() == '_')) word.remove_prefix(1);
      while (!word.empty() && (word.back() == '*' || word.back() == '_')) word.remove_suffix(1);
      if (!word.empty()) before.emplace_back(word, from);
      if (space == std::string::npos) break;
      end = space;
    }
    // "the speed is up to 50% lower than": lower or higher said of a speed, a throughput or a
    // performance — the subject of its clause, within five words before it, no other quantity
    // ("loss", "latency", "time") nearer.
    const auto of_speed = [&](size_t k) {
      for (size_t m = k + 1; m < before.size() && m <= k + 5; ++m) {
        const std::string_view w = before[m].first;
        if (w == "speed" || w == "throughput" || w == "performance" || w == "fps") return true;
        if (w.ends_with(',') || w == "loss" || w == "latency" || w == "time" || w == "memory" ||
            w == "error" || w == "accuracy" || w == "usage" || w == "utilization" ||
            w == "utilisation" || w == "cost") {
          return false;
        }
      }
      return false;
    };
    std::optional<bool> slower;
    size_t comparative_at = than;
    for (size_t k = 0; k < before.size() && k < 3 && !slower; ++k) {
      const std::string_view w = before[k].first;
      if (in(w, kSlower) || (w == "lower" && of_speed(k))) slower = true;
      if (in(w, kFaster) || (w == "higher" && of_speed(k))) slower = false;
      if (!slower) continue;
      comparative_at = before[k].second;
      // "not faster", "isn't any faster": the larger is no faster, so the slower.
      for (size_t m = k + 1; m < before.size() && m <= k + 2; ++m) {
        if (in(before[m].first, kNot)) {
          slower = !*slower;
          comparative_at = before[m].second;
          break;
        }
      }
    }
    if (!slower) continue;
    // The two sides: the words just before (back to the clause's start) and just after.
    size_t left_from = comparative_at > 80 ? comparative_at - 80 : 0;
    const size_t clause = text.find_last_of(",;:", comparative_at);
    if (clause != std::string::npos && clause + 1 > left_from) left_from = clause + 1;
    Scale left = scale_of(std::string_view(text).substr(left_from, comparative_at - left_from));
    // "when multi_gpu_model is set to 2 GPU, the speed is up to 50% lower than with a single
    // GPU" (keras#11342): a clause without its scale takes the one of the clause before it.
    if (!left.gpus && !left.nodes && clause != std::string::npos && clause > 0 &&
        text[clause] == ',') {
      size_t previous = text.find_last_of(",;:.", clause - 1);
      previous = previous == std::string::npos ? 0 : previous + 1;
      if (clause - previous <= 80) {
        left = scale_of(std::string_view(text).substr(previous, clause - previous));
      }
    }
    const Scale right = scale_of(std::string_view(text).substr(than + 6, 60));
    std::optional<bool> left_larger;
    if (left.nodes && right.nodes && *left.nodes != *right.nodes) {
      left_larger = *left.nodes > *right.nodes;
    } else if (left.gpus && right.gpus && *left.gpus != *right.gpus) {
      left_larger = *left.gpus > *right.gpus;
    }
    if (left_larger) return *slower ? *left_larger : !*left_larger;
  }
  return std::nullopt;
}

std::vector<std::string_view> sentences_of(std::string_view text) {
  std::vector<std::string_view> sentences;
  size_t from = 0;
  while (from < text.size()) {
    size_t end = text.find_first_of(".?!", from);
    while (end != std::string_view::npos && end + 1 < text.size() && text[end + 1] != ' ') {
      end = text.find_first_of(".?!", end + 1);
    }
    if (end == std::string_view::npos) end = text.size();
    sentences.push_back(text.substr(from, end - from));
    from = end + 1;
  }
  return sentences;
}

std::optional<ScaleKind> speed_unchanged_with(std::string_view line) {
  if (line.size() > kMaxPastedLineBytes) return std::nullopt;
  const std::string text = lower(line);
  const auto speed_word = [](std::string_view w) {
    return w == "speed" || w == "throughput" || w == "time" || w == "fast" || w == "faster" ||
           w == "slow" || w == "slower" || w == "fps" || w == "pace" || w == "performance";
  };
  for (const std::string_view s : sentences_of(text)) {
    const std::vector<std::string> words = words_of(s);
    const auto word = [&](size_t k) { return k < words.size() ? words[k] : std::string(); };
    // Said of the job's speed or its time, not of its memory or its loss: a speed's word, or a
    // rate's unit outside a link ("images/sec", "it/s").
    const bool rate_unit = !contains(s, "http") && (contains(s, "/s") || contains(s, "s/it"));
    if (!rate_unit && std::none_of(words.begin(), words.end(), speed_word)) continue;
    // "the speed stays the same", "remains about 1 images/second", "does not reduce at all":
    // words that say the speed did not change.
    bool unchanged = false;
    for (size_t i = 0; i < words.size() && !unchanged; ++i) {
      const std::string& w = words[i];
      const std::string& next = word(i + 1);
      // A speed's subject within three words before a negation of change ("the training
      // speed does not reduce"; "the loss does not decrease" is no speed).
      const auto speed_before = [&](size_t within) {
        for (size_t k = i; k-- > 0 && k + within >= i;) {
          if (speed_word(words[k])) return true;
        }
        return false;
      };
      if ((w == "not" || w.ends_with("n't")) && speed_before(3)) {
        for (const std::string& n : {next, word(i + 2)}) {
          if (n == "reduce" || n == "decrease" || n == "improve" || n == "change" ||
              n == "increase" || n == "accelerate" || n == "faster") {
            unchanged = true;
          }
        }
      }
      if (w == "no" && (next == "speedup" || next == "speed-up" ||
                        (next == "speed" && word(i + 2) == "up") || next == "faster")) {
        unchanged = true;
      }
      // "the same speed", "at the same speed", "take same time it takes"; "at the same time"
      // and "in the same time" are together and as much work, not as fast.
      if (w == "same" || w == "similar") {
        const bool at_or_in = (i >= 1 && (words[i - 1] == "at" || words[i - 1] == "in")) ||
                              (i >= 2 && (words[i - 2] == "at" || words[i - 2] == "in")) ||
                              (i >= 3 && words[i - 3] == "at");
        if (next == "speed" || next == "throughput" || next == "pace" || next == "performance" ||
            (next == "time" && !at_or_in)) {
          unchanged = true;
        }
        // "the speed stays (relatively) the same", "is the same with": said of a speed.
        if ((next.empty() || next == "as" || next == "regardless" || next == "no" ||
             next == "with" || next == "on" || next == "for") &&
            speed_before(6)) {
          unchanged = true;
        }
      }
      if ((w == "remains" || w == "remain" || w == "stays" || w == "stay") && speed_before(3)) {
        unchanged = true;
      }
    }
    std::optional<ScaleKind> counted, any_number_of, either;
    for (size_t i = 0; i < words.size(); ++i) {
      const std::string& w = words[i];
      const auto c = small_count(w);
      // "4 gpu cards", "2 machines": a larger scale the sentence runs at.
      if (c && *c >= 2 && w != "a" && w != "single") {
        if (gpu_word(word(i + 1))) counted = ScaleKind::kGpus;
        if (machine_word(word(i + 1))) counted = ScaleKind::kNodes;
      }
      // "no matter how many gpus", "regardless of the number of machines".
      const bool any =
          (w == "many" && i > 0 && words[i - 1] == "how" &&
           (contains(s, "no matter how many") || contains(s, "regardless of how many"))) ||
          (w == "number" && word(i + 1) == "of" &&
           (contains(s, "regardless of the number of") ||
            contains(s, "irrespective of the number of") ||
            contains(s, "independent of the number of")));
      if (any) {
        const std::string what = word(i + 1) == "of" ? word(i + 2) : word(i + 1);
        if (gpu_word(what)) any_number_of = ScaleKind::kGpus;
        if (machine_word(what)) any_number_of = ScaleKind::kNodes;
      }
      // "on 1 GPU or 4 GPU", "with 1 or 4 gpus" beside a rate it states: either's rate.
      if (c && ((word(i + 2) == "or" && gpu_word(word(i + 1)) && small_count(word(i + 3)) &&
                 gpu_word(word(i + 4))) ||
                (word(i + 1) == "or" && small_count(word(i + 2)) && gpu_word(word(i + 3))))) {
        either = ScaleKind::kGpus;
      }
    }
    // A speed said alongside either scale, as one number for both, that no comparative sets
    // apart ("4 is much faster").
    if (either && rate_unit && std::none_of(words.begin(), words.end(), [](const std::string& w) {
          return w == "faster" || w == "slower" || w == "than";
        })) {
      return either;
    }
    if (!unchanged) continue;
    if (any_number_of) return any_number_of;
    if (!counted) continue;
    // Unless the sentence varied something else beside the scale.
    for (const std::string& w : words) {
      if (w.starts_with("worker") || w == "threads" || w == "num_threads" || w == "batch" ||
          w.starts_with("batch_size") || w == "fp16" || w == "amp" || w == "precision" ||
          w.starts_with("prefetch") || w.starts_with("num_parallel") || w == "version") {
        return std::nullopt;
      }
    }
    return counted;
  }
  return std::nullopt;
}

std::optional<UtilisationAtScales> utilisation_at_scales(std::string_view line) {
  if (line.size() > kMaxPastedLineBytes) return std::nullopt;
  const std::string text = lower(line);
  for (const std::string_view s : sentences_of(text)) {
    // The GPUs' utilisation, not the CPUs' or their memory's; one GPU against the others
    // ("one GPU at 98 % while the other 7 show 10 %") is one look, read elsewhere.
    if (!contains(s, "gpu") || contains(s, "cpu") || contains(s, "mem") || contains(s, "other") ||
        contains(s, "rest") || contains(s, "remaining") ||
        !(contains(s, "utili") || contains(s, "usage") || contains(s, "util "))) {
      continue;
    }
    struct AtScale {
      double percent;
      Scale scale;
    };
    std::vector<AtScale> found;
    // The first few percentages, each in a clause of at most 80 characters either side: a
    // line of many costs no more than a line of few.
    int percentages = 0;
    for (size_t k = 0; k < s.size() && percentages < 6; ++k) {
      if (s[k] != '%') continue;
      ++percentages;
      size_t b = k;
      while (b > 0 && s[b - 1] == ' ') --b;
      const size_t number_end = b;
      while (b > 0 && (is_digit(s[b - 1]) || s[b - 1] == '.')) --b;
      if (b == number_end) continue;
      const auto percent = parse_number(s.substr(b, number_end - b));
      if (!percent || *percent < 0 || *percent > 100) continue;
      // The clause around it: back to a comma or "but", on to the next.
      const size_t window_from = b > 80 ? b - 80 : 0;
      size_t from = window_from, to = std::min(s.size(), k + 80);
      const std::string_view window = s.substr(window_from, to - window_from);
      for (const std::string_view cut : {",", " but ", " while ", " whereas ", " and "}) {
        if (const size_t at = window.rfind(cut, b - window_from); at != std::string_view::npos) {
          from = std::max(from, window_from + at + cut.size());
        }
        if (const size_t at = window.find(cut, k - window_from); at != std::string_view::npos) {
          to = std::min(to, window_from + at);
        }
      }
      const std::string_view clause = s.substr(from, to - from);
      // A speed-up or a scaling efficiency in percent is no utilisation.
      if (contains(clause, "faster") || contains(clause, "slower") ||
          contains(clause, "efficien") || contains(clause, "speed")) {
        continue;
      }
      const Scale scale = scale_of(clause);
      if (scale.nodes || scale.gpus) found.push_back({*percent, scale});
    }
    if (found.size() < 2) continue;
    const AtScale& first = found.front();
    const AtScale& second = found.back();
    const auto kind_of = [](const Scale& a, const Scale& b) -> std::optional<ScaleKind> {
      if (a.nodes && b.nodes && *a.nodes != *b.nodes) return ScaleKind::kNodes;
      if (a.gpus && b.gpus && *a.gpus != *b.gpus) return ScaleKind::kGpus;
      return std::nullopt;
    };
    const auto kind = kind_of(first.scale, second.scale);
    if (!kind) continue;
    const auto count = [&](const Scale& c) {
      return *kind == ScaleKind::kNodes ? *c.nodes : *c.gpus;
    };
    const bool first_smaller = count(first.scale) < count(second.scale);
    const AtScale& small = first_smaller ? first : second;
    const AtScale& large = first_smaller ? second : first;
    return UtilisationAtScales{.smaller_scale = count(small.scale),
                               .larger_scale = count(large.scale),
                               .smaller = small.percent,
                               .larger = large.percent,
                               .kind = *kind};
  }
  return std::nullopt;
}

// Stems of the words loader_setting_of reads: workers, synthetic/random/fake/dummy data,
// persistent, pin memory, prefetch, multiproc, CPUs, cores, nodes, threads, parallel calls,
// feed_dict, processes, and where preprocessing ("process") or augmentation runs.
constexpr std::string_view kSettingStems[] = {
    "worker",  "synth",  "random",         "fake",      "procs",   "dummy",
    "persist", "pin",    "prefetch",       "multiproc", "cpu",     "core",
    "node",    "thread", "parallel_calls", "feed_dict", "process", "augment"};

ModelSizes model_sizes_named(std::string_view low) {
  ModelSizes out;
  // Every size it reads ends in a digit and 'b' ("7b", "a3b"): most lines of a long log have
  // none, and are not split into words for it.
  bool digit_b = false;
  for (size_t at = low.find('b', 1); at != std::string_view::npos && !digit_b;
       at = low.find('b', at + 1)) {
    digit_b = is_digit(low[at - 1]);
  }
  if (!digit_b) return out;
  const std::vector<std::string_view> words = split_whitespace(low);
  for (size_t k = 0; k < words.size(); ++k) {
    std::string_view word = words[k];
    while (!word.empty() && !is_alpha(word.back()) && !is_digit(word.back())) {
      word.remove_suffix(1);
    }
    while (!word.empty() && !is_alpha(word.front()) && !is_digit(word.front())) {
      word.remove_prefix(1);
    }
    // Its parts between '-' and '_': a size ("7b", "3.82b") among a name's, or alone where
    // the words around it say it counts parameters ("parameters: 3.82B", "a 7B model").
    std::vector<std::string_view> parts;
    for (size_t from = 0; from <= word.size();) {
      size_t to = word.find_first_of("-_", from);
      if (to == std::string_view::npos) to = word.size();
      parts.push_back(word.substr(from, to - from));
      from = to + 1;
    }
    // A GPU's UUID ("GPU-8f2c4e1a-013b-4c5d-..."), a hash: hex, no model's name.
    // Hex of 8 or more with a letter a-f in it (a date stamp, "20240315", is none).
    const bool hash = std::any_of(parts.begin(), parts.end(), [](std::string_view part) {
      return part.size() >= 8 &&
             std::all_of(part.begin(), part.end(),
                         [](char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }) &&
             std::any_of(part.begin(), part.end(), [](char c) { return c >= 'a' && c <= 'f'; });
    });
    if (word.starts_with("gpu-") || word.starts_with("mig-") || hash) continue;
    std::optional<double> size;
    bool named = false, active = false;
    for (const std::string_view part : parts) {
      // "7b", "3.82b", "0.5b"; not "013b" (a leading zero before a digit).
      const bool billions = part.size() >= 2 && part.back() == 'b' && is_digit(part.front()) &&
                            !(part[0] == '0' && part.size() > 2 && is_digit(part[1])) &&
                            parse_number(part.substr(0, part.size() - 1));
      if (billions && !size) {
        size = parse_number(part.substr(0, part.size() - 1));
      } else if (billions) {
        active = true;  // "30b-a3b": a total and an active count
      }
      active =
          active || (part.size() >= 3 && part[0] == 'a' && part.back() == 'b' && is_digit(part[1]));
      named = named || (!part.empty() && is_alpha(part.front()));
    }
    if (active) {
      out.active = true;
      continue;
    }
    if (!size || *size < 0.1 || *size > 2000) continue;
    const std::string_view before = k > 0 ? words[k - 1] : "";
    const std::string_view after = k + 1 < words.size() ? words[k + 1] : "";
    if (after.starts_with("token")) continue;  // "1B tokens": a count of tokens
    const bool counts_parameters = before.starts_with("parameters") ||
                                   before.starts_with("params") || after.starts_with("model") ||
                                   after.starts_with("param");
    if (named || counts_parameters) out.billions.insert(*size);
  }
  return out;
}

std::string model_size_of(std::string_view low) {
  const ModelSizes named = model_sizes_named(low);
  if (named.active || named.billions.size() != 1) return {};
  return fmt::format("{:g}B", *named.billions.begin());
}

bool says_synthetic_data(std::string_view low) {
  return std::any_of(std::begin(kSyntheticDataWords), std::end(kSyntheticDataWords),
                     [&](std::string_view w) { return low.find(w) != std::string_view::npos; });
}

std::vector<int> job_gpus_of(std::string_view line) {
  if (line.size() > kMaxPastedLineBytes) return {};
  const std::vector<std::string> words = words_of(lower(line));
  // The ids after `from`, parted by commas, "and" or "&": "1 and 3", "0,1,2".
  const auto ids_from = [&](size_t from) {
    std::vector<int> ids;
    for (size_t k = from; k < words.size(); ++k) {
      std::string_view w = words[k];
      if (w == "and" || w == "&") continue;
      if (w.ends_with('.')) w.remove_suffix(1);  // "... GPU 1 and 3."
      bool any = false;
      for (const std::string_view part : split_char(w, ',')) {
        if (part.empty()) continue;
        const auto id = parse_index(part);
        if (!id || *id >= 1024) return ids;
        ids.push_back(*id);
        any = true;
      }
      if (!any) break;
    }
    return ids;
  };
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (starts_with(w, "cuda_visible_devices=")) {
      const auto first = parse_index(std::string_view(w).substr(21));
      if (!first) return {};
      std::vector<int> ids = {*first};
      for (const int id : ids_from(i + 1)) ids.push_back(id);
      return ids;
    }
    // "using GPU 1 and 3", "use gpus 0,1", "I used GPU 2"
    if ((w == "using" || w == "use" || w == "used") && i + 2 < words.size() &&
        (words[i + 1] == "gpu" || words[i + 1] == "gpus")) {
      if (auto ids = ids_from(i + 2); !ids.empty()) return ids;
    }
  }
  return {};
}

namespace {

// The digits of `text` after `from` and the blanks, '=' and ':' that follow it ("num_workers =
// 4"): [begin, end), empty when none.
std::pair<size_t, size_t> digits_after(std::string_view text, size_t from) {
  size_t k = from;
  while (k < text.size() && (text[k] == ' ' || text[k] == '=' || text[k] == ':')) ++k;
  size_t end = k;
  while (end < text.size() && is_digit(text[end])) ++end;
  return {k, end};
}

// The count written right before text[at] ("4" of "4 dataloader workers" at the blank);
// nullopt when no digit is there.
std::optional<int> count_ending_at(std::string_view text, size_t at) {
  size_t begin = at;
  while (begin > 0 && is_digit(text[begin - 1])) --begin;
  return begin < at ? parse_index(text.substr(begin, at - begin)) : std::nullopt;
}

}  // namespace

std::optional<std::string> exchange_setting_of(std::string_view line) {
  if (line.size() > 100) return std::nullopt;
  // A heading holds few digits ("ZeRO-3", "zero_stage=2", "ZeRO-1, TP1DP16/EP8"); a log line many
  // (most lines of a long log are passed over here, without a lower-case copy).
  if (std::count_if(line.begin(), line.end(), [](char c) { return is_digit(c); }) > 6) {
    return std::nullopt;
  }
  const std::string low = lower(line);
  // Most lines name none: one look for the letters every name below holds.
  static constexpr std::array<std::string_view, 5> kLibraries = {"horovod", "byteps", "bagua",
                                                                 "nccl", "gloo"};
  if (low.find("dp") == std::string::npos && low.find("zero") == std::string::npos &&
      low.find("shard") == std::string::npos &&
      std::none_of(kLibraries.begin(), kLibraries.end(),
                   [&](std::string_view l) { return low.find(l) != std::string::npos; })) {
    return std::nullopt;
  }
  std::set<std::string> named;
  // Words without what ends a sentence or a field, a value after its "=" a word of its own
  // ("zero_stage=2").
  std::vector<std::string> words;
  for (std::string w : words_of(low)) {
    while (!w.empty() && (w.back() == '.' || w.back() == ')' || w.back() == '(' ||
                          w.back() == ':' || w.back() == ',')) {
      w.pop_back();
    }
    // "2:DDP" (a table's GPUs before the strategy): the part after the colon.
    if (const size_t colon = w.rfind(':'); colon != std::string::npos) w.erase(0, colon + 1);
    if (const size_t eq = w.find('='); eq != std::string::npos) {
      words.push_back(w.substr(0, eq));
      w = w.substr(eq + 1);
    }
    if (!w.empty()) words.push_back(std::move(w));
  }
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const std::string next = i + 1 < words.size() ? words[i + 1] : std::string();
    const std::string after = i + 2 < words.size() ? words[i + 2] : std::string();
    if (w == "ddp" || w == "fsdp") named.insert(w);
    // The library or backend that exchanges the gradients ("horovod-bert:", "byteps:", "gloo").
    for (const std::string_view l : kLibraries) {
      if (w == l || (w.starts_with(l) && (w[l.size()] == '-' || w[l.size()] == '_'))) {
        named.insert(std::string(l));
      }
    }
    // "zero-3", "zero3", "ZeRO stage 2", "zero_stage: 1".
    for (const std::string_view z : {"zero-", "zero", "zero_stage"}) {
      if (w.size() == z.size() + 1 && w.starts_with(z) && w.back() >= '0' && w.back() <= '3') {
        named.insert(fmt::format("zero-{}", w.back()));
      }
    }
    if ((w == "zero" && next == "stage") || w == "zero_stage") {
      const std::string& n = w == "zero" ? after : next;
      if (n.size() == 1 && n[0] >= '0' && n[0] <= '3') named.insert(fmt::format("zero-{}", n));
    }
    for (const std::string_view s : {"full_shard", "shard_grad_op", "hybrid_shard", "no_shard"}) {
      if (w == s) named.insert(std::string(s));
    }
  }
  if (named.size() != 1) return std::nullopt;
  return *named.begin();
}

std::optional<std::string> link_setting_of(std::string_view label) {
  if (label.size() > 100) return std::nullopt;
  const std::string low = lower(label);
  // Off: a negation just before the link's name, within its clause ("IB disabled, NVLink" is
  // NVLink on), or "off" or "disabled" after it ("NVLink: off").
  const auto off_at = [&](size_t at, size_t length) {
    size_t from = at > 12 ? at - 12 : 0;
    if (const size_t clause = low.find_last_of(",;(", at);
        clause != std::string::npos && clause >= from && clause < at) {
      from = clause + 1;
    }
    const std::string_view before = std::string_view(low).substr(from, at - from);
    for (const std::string_view w : {"w/o", "without", "no ", "no-", "disable"}) {
      if (before.find(w) != std::string_view::npos) return true;
    }
    std::string_view next = std::string_view(low).substr(at + length);
    while (!next.empty() && (next.front() == ' ' || next.front() == ':' || next.front() == '=')) {
      next.remove_prefix(1);
    }
    return next.starts_with("off") || next.starts_with("disable");
  };
  if (const size_t at = low.find("nvlink"); at != std::string::npos) {
    return std::string(off_at(at, 6) ? "no nvlink" : "nvlink");
  }
  std::string compact;
  for (const char c : low) {
    if (c != ' ') compact.push_back(c);
  }
  // NCCL's variable: set to 1 or true (or named alone, as set) disables P2P; 0 or false does not.
  if (const size_t at = compact.find("p2p_disable"); at != std::string::npos) {
    std::string_view value = std::string_view(compact).substr(at + 11);
    if (!value.empty() && (value.front() == '=' || value.front() == ':')) value.remove_prefix(1);
    return std::string(value.starts_with("0") || value.starts_with("false") ? "p2p" : "no p2p");
  }
  if (const size_t at = low.find("p2p"); at != std::string::npos) {
    return std::string(off_at(at, 3) ? "no p2p" : "p2p");
  }
  // Between machines: InfiniBand (RDMA, RoCE) against Ethernet's TCP sockets, named as words
  // of their own ("DDP (Ethernet)", "DDP (InfiniBand)", "IB disabled").
  const auto word_at = [&](std::string_view w) -> size_t {
    for (size_t at = low.find(w); at != std::string::npos; at = low.find(w, at + 1)) {
      const bool starts = at == 0 || !is_alpha(low[at - 1]);
      const bool ends = at + w.size() == low.size() || !is_alpha(low[at + w.size()]);
      if (starts && ends) return at;
    }
    return std::string::npos;
  };
  for (const std::string_view w : {"infiniband", "ib", "rdma", "roce"}) {
    if (const size_t at = word_at(w); at != std::string::npos) {
      return std::string(off_at(at, w.size()) ? "no infiniband" : "infiniband");
    }
  }
  for (const std::string_view w : {"ethernet", "tcp"}) {
    if (word_at(w) != std::string::npos) return std::string("no infiniband");
  }
  return std::nullopt;
}

bool names_model_tflops(const NamedValue& v) {
  const auto is_tflops = [](std::string_view w) {
    for (const std::string_view t :
         {"tflops", "tflop/s", "tflop/s/gpu", "tflops/gpu", "tflops_per_gpu", "tflop/s_per_gpu"}) {
      if (w == t || (w.ends_with(t) && w.size() > t.size() &&
                     (w[w.size() - t.size() - 1] == '_' || w[w.size() - t.size() - 1] == '/'))) {
        return true;
      }
    }
    return false;
  };
  // Most values are none: a name or unit without "flop" is passed over at once.
  const auto flop = [](std::string_view w) { return w.find("flop") != std::string_view::npos; };
  if (!flop(v.name) && !flop(v.unit)) return false;
  if (!is_tflops(v.name) && !is_tflops(v.unit)) return false;
  // litgpt's "Measured TFLOPs: 165.47" and "Estimated TFLOPs" are one step's FLOPs over all
  // GPUs (measure_flops() * world_size / 1e12), not a rate.
  for (const std::string_view w :
       {"total", "peak", "theoretical", "max", "promised", "spec", "measured", "estimated"}) {
    if (v.name.find(w) != std::string::npos) return false;
  }
  return true;
}

std::vector<std::string> alnum_words(std::string_view low, bool underscore_joins) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : low) {
    if (is_alpha(c) || is_digit(c) || (underscore_joins && c == '_')) {
      word.push_back(c);
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

bool names_storage(std::string_view text) {
  if (text.size() > kMaxPastedLineBytes) return false;
  const std::string low = lower(text);
  if (low.find("/dev/shm") != std::string::npos) return true;
  // Whole words, so "fused", "SSD300" (a detector) and "hddl" are none.
  static constexpr std::string_view kWords[] = {
      "nfs",   "ssd",     "ssds",  "hdd",      "hdds",    "nvme",    "fuse", "lustre",
      "tmpfs", "ramdisk", "hdfs",  "readtype", "gpfs",    "ceph",    "s3",   "gcs",
      "efs",   "ebs",     "cache", "cached",   "caching", "uncached"};
  const std::vector<std::string> words = alnum_words(low, false);
  for (size_t k = 0; k < words.size(); ++k) {
    const std::string& word = words[k];
    const bool cache = word.find("cach") != std::string::npos;
    // "kv cache", "use_cache" (Hugging Face's generation flag): a model's cache, not the data's.
    const bool models = cache && k > 0 && (words[k - 1] == "kv" || words[k - 1] == "use");
    if (std::find(std::begin(kWords), std::end(kWords), word) != std::end(kWords) && !models) {
      return true;
    }
  }
  return false;
}

namespace {

// Words that name a storage medium, whole ('_' joining a word), each with its canonical name
// and whether its reads wait on a network or a spinning disk: the one vocabulary of
// names_remote_storage and storage_medium_of.
struct StorageWord {
  std::string_view word, medium;
  bool remote;
};
constexpr std::array<StorageWord, 21> kStorageWords = {{
    {"nvme", "nvme", false},     {"ssd", "ssd", false},
    {"ssds", "ssd", false},      {"hdd", "hdd", true},
    {"hdds", "hdd", true},       {"nfs", "nfs", true},
    {"s3", "s3", true},          {"s3fs", "s3", true},
    {"minio", "minio", true},    {"gcs", "gcs", true},
    {"gcsfuse", "gcs", true},    {"efs", "efs", true},
    {"ebs", "ebs", false},       {"lustre", "lustre", true},
    {"gpfs", "gpfs", true},      {"ceph", "ceph", true},
    {"hdfs", "hdfs", true},      {"tmpfs", "tmpfs", false},
    {"ramdisk", "tmpfs", false}, {"blobfuse", "azure blob", true},
    {"goofys", "s3", true},
}};

// Words that make a paste's workers machines or GPUs (names_worker_machines), found anywhere in
// a lower-cased line ("worker machines", "one worker per machine", not "on my machine").
constexpr std::array<std::string_view, 15> kWorkerMachineWords = {
    "scalingconfig",  "use_gpu",          "parameter server",    "worker_hosts",     "ps_hosts",
    "per worker",     "separate machine", "worker is a machine", "worker is a node", "horovod",
    "worker machine", "machines",         "per machine",         "each machine",     "/job:worker"};

}  // namespace

bool names_remote_storage(std::string_view text) {
  if (text.size() > kMaxPastedLineBytes) return false;
  const std::vector<std::string> words = alnum_words(lower(text), true);
  return std::any_of(words.begin(), words.end(), [](const std::string& w) {
    return std::any_of(kStorageWords.begin(), kStorageWords.end(),
                       [&](const StorageWord& s) { return s.remote && s.word == w; });
  });
}

bool names_worker_machines(std::string_view text) {
  if (text.size() > kMaxPastedLineBytes) return false;
  const std::string low = lower(text);
  return std::any_of(kWorkerMachineWords.begin(), kWorkerMachineWords.end(),
                     [&](std::string_view w) { return low.find(w) != std::string::npos; });
}

std::optional<std::string> storage_medium_of(std::string_view text) {
  if (text.size() > kMaxPastedLineBytes) return std::nullopt;
  std::string low = lower(text);
  std::optional<std::string> medium;
  // "local NVMe SSD" is one medium.
  const auto name = [&](std::string_view m) {
    if (medium && *medium != m) {
      const bool nvme_ssd = (*medium == "nvme" && m == "ssd") || (*medium == "ssd" && m == "nvme");
      if (!nvme_ssd) return false;
      m = "nvme";
    }
    medium = std::string(m);
    return true;
  };
  // "/dev/shm" is a path, not a word.
  if (low.find("/dev/shm") != std::string::npos && !name("tmpfs")) return std::nullopt;
  for (const std::string& word : alnum_words(low, true)) {
    for (const StorageWord& s : kStorageWords) {
      if (word == s.word && !name(s.medium)) return std::nullopt;
    }
  }
  return medium;
}

std::optional<LoaderSetting> loader_setting_of(std::string_view line) {
  if (line.size() > kMaxPastedLineBytes) return std::nullopt;
  const std::string text = lower(line);
  // Every setting read below names one of these (most lines name none: one pass each).
  if (std::none_of(std::begin(kSettingStems), std::end(kSettingStems),
                   [&](std::string_view w) { return text.find(w) != std::string::npos; })) {
    return std::nullopt;
  }
  const auto has = [&](std::string_view w) { return text.find(w) != std::string::npos; };
  LoaderSetting s;
  // The workers' count after its name ("num_workers=2", "num_workers: 4", "--workers 8",
  // "--num-workers 0", "nworkers=16") or before "loader workers" ("4 dataloader workers"). A
  // bare "workers" is a machine to Horovod and BytePS ("1 worker 8 gpus"): not read.
  // A table's column names it too: "num worker" (a row's "num worker=2"), "#workers",
  // "# worker=8", "loader_procs" (a loader's subprocesses), Petastorm's "workers_count = 3". A
  // name inside a longer one is another setting: "io_workers=16" counts a process's I/O threads.
  for (const std::string_view name :
       {"num_workers", "num-workers", "num workers", "n_workers", "nworkers", "--workers",
        "workers=", "num worker", "num_worker", "#workers", "# workers", "#worker", "# worker",
        "loader_procs", "workers_count"}) {
    for (size_t at = text.find(name); at != std::string::npos && !s.workers;
         at = text.find(name, at + 1)) {
      if (name == "workers=" && at > 0 &&
          (is_alpha(text[at - 1]) || is_digit(text[at - 1]) || text[at - 1] == '_')) {
        continue;
      }
      const auto [k, end] = digits_after(text, at + name.size());
      if (end > k && (end == text.size() || !is_alpha(text[end]))) {
        s.workers = parse_index(std::string_view(text).substr(k, end - k));
      }
    }
  }
  if (!s.workers) {
    for (const std::string_view after :
         {" dataloader workers", " data loader workers", " loader workers", " data workers",
          " loader subprocesses", " loader processes", " dataloader processes",
          " data loader processes"}) {
      if (const size_t at = text.find(after); at != std::string::npos) {
        s.workers = count_ending_at(text, at);
      }
      if (s.workers) break;
    }
  }
  // Loading in the training process itself: no workers ("in-process loader", pocket-tts#263).
  if (!s.workers && (has("in-process loader") || has("in-process data loader") ||
                     has("in-process loading") || has("in-process data loading"))) {
    s.workers = 0;
  }
  // A count of workers heading the line or after "with" ("Zero workers: about 33 seconds per
  // Epoch", "Loading with 8 workers: 100%|"), on a line about loading or epochs that names no
  // GPUs or machines (Horovod's and a parameter server's "2 workers: 400 images/sec" are
  // machines).
  if (!s.workers && (has("epoch") || has("load") || has("data"))) {
    const auto words = words_of(text);
    const bool machines = std::any_of(words.begin(), words.end(), [](const std::string& w) {
      return gpu_word(w) || w.starts_with("node") || w.starts_with("machine") ||
             w.starts_with("server") || w.starts_with("host");
    });
    for (size_t i = 1; i < words.size() && !machines && !s.workers; ++i) {
      if (!words[i].starts_with("worker") || !(i == 1 || words[i - 2] == "with")) continue;
      std::string_view w = words[i - 1];
      s.workers = w == "zero" || w == "0" ? std::optional<int>(0) : small_count(w);
      if (w == "a" || w == "single") s.workers.reset();  // "a worker": no count of them
    }
  }
  // The loader's threads, by the name a loader or a decoder gives them: "--num_threads=32"
  // (threads in each DataLoader worker, pytorch#158218), tf.data's "num_parallel_calls=8",
  // MXNet's "preprocess_threads=4", OpenCV's "setNumThreads(0)", "OMP_NUM_THREADS=1" (what the
  // CPU-side transforms get).
  std::optional<int>& threads = s.threads;
  for (const std::string_view name :
       {"num_threads", "num-threads", "nthreads", "n_threads", "num_parallel_calls",
        "preprocess_threads", "decode_threads", "data_threads", "setnumthreads("}) {
    for (size_t at = text.find(name); at != std::string::npos && !threads;
         at = text.find(name, at + 1)) {
      const auto [k, end] = digits_after(text, at + name.size());
      if (end > k && (end == text.size() || !is_alpha(text[end]))) {
        threads = parse_index(std::string_view(text).substr(k, end - k));
        // OpenMP's and MKL's threads (OMP_NUM_THREADS), a decoder's, a map's: CPU work in
        // parallel, not reads overlapped.
        const std::string_view before = std::string_view(text).substr(0, at);
        s.compute_threads = before.ends_with("omp_") || before.ends_with("mkl_") ||
                            name == "num_parallel_calls" || name == "preprocess_threads" ||
                            name == "decode_threads" || name == "setnumthreads(";
      }
    }
    if (threads) break;
  }
  // The CPUs given to the loader: "# cpus=3" (a table's column), "--cpus 8", "8 cpus",
  // "16 cores".
  std::optional<int> cpus;
  for (const std::string_view name : {"cpus", "cores"}) {
    for (size_t at = text.find(name); at != std::string::npos && !cpus;
         at = text.find(name, at + 1)) {
      if (at + name.size() < text.size() && is_alpha(text[at + name.size()])) continue;
      const auto [k, end] = digits_after(text, at + name.size());
      if (end > k && k > at + name.size()) {
        cpus = parse_index(std::string_view(text).substr(k, end - k));
      } else if (at > 0 && text[at - 1] == ' ') {  // the count before: "8 cpus"
        cpus = count_ending_at(text, at - 1);
      }
    }
  }
  // CPU machines added for the loading (Ray Data's heterogeneous clusters): "1 extra CPU
  // node", "0 extra nodes", "4 cpu nodes".
  std::optional<int> cpu_nodes;
  for (const std::string_view after : {" extra cpu node", " extra node", " cpu node"}) {
    if (const size_t at = text.find(after); at != std::string::npos) {
      cpu_nodes = count_ending_at(text, at);
    }
    if (cpu_nodes) break;
  }
  s.synthetic = says_synthetic_data(text);
  // Without blanks, for values: "pin_memory = False" is "pin_memory=false".
  std::string compact;
  for (const char c : text) {
    if (c != ' ') compact.push_back(c);
  }
  // "Without multiproc", "w/o pin memory", "no prefetch": the setting off, a run of its own —
  // a negation just before the setting's word, not anywhere on the line.
  const auto negated_before = [&](size_t at) {
    const size_t from = at > 24 ? at - 24 : 0;
    const std::string_view before = std::string_view(text).substr(from, at - from);
    for (const std::string_view w : {"without", "w/o", "no ", "no-", "disable"}) {
      if (before.find(w) != std::string_view::npos) return true;
    }
    return false;
  };
  const auto flag = [&](std::initializer_list<std::string_view> words, std::string_view label,
                        std::initializer_list<std::string_view> off,
                        std::vector<std::string>& parts) {
    size_t at = std::string::npos;
    for (const std::string_view w : words) at = std::min(at, text.find(w));
    if (at == std::string::npos) return;
    // "pin_memory=False" names the setting off: a run of its own beside one with it on.
    const bool said_off = std::any_of(off.begin(), off.end(), [&](std::string_view o) {
      return compact.find(o) != std::string::npos;
    });
    parts.push_back(said_off || negated_before(at) ? fmt::format("no {}", label)
                                                   : std::string(label));
  };
  std::vector<std::string> parts;
  if (s.workers) parts.push_back(fmt::format("num_workers={}", *s.workers));
  if (threads) parts.push_back(fmt::format("{} thread{}", *threads, *threads == 1 ? "" : "s"));
  if (cpus) parts.push_back(fmt::format("{} CPUs", *cpus));
  if (cpu_nodes) parts.push_back(fmt::format("{} CPU nodes", *cpu_nodes));
  flag({"persistent"}, "persistent workers",
       {"persistent_workers=false", "persistent_workers:false"}, parts);
  flag({"pin_memory", "pin memory", "pinned memory"}, "pinned memory",
       {"pin_memory=false", "pin_memory:false"}, parts);
  // A prefetch setting as code or a command line writes it ("prefetch_factor=4",
  // "prefetch_load=true", "--prefetch"), not a trainer's message about its prefetching (Caffe's
  // "Restarting data prefetching", "prefetch queue empty").
  flag({"prefetch_", "prefetch=", "--prefetch", "with prefetch"}, "prefetching", {}, parts);
  // verl's "Without multiproc" / "With multiproc": loading in worker processes or not.
  flag({"multiproc"}, "multiprocess loading", {}, parts);
  // TensorFlow 1's feed_dict as a setting: each batch copied in from Python every step, against
  // a queue, tf.data or a batch already on the device ("feed_dict=True: 102 ms/minibatch",
  // "without feed_dict") — not the code every TF1 loop is written in ("sess.run(train_op,
  // feed_dict={x: xb})").
  if (compact.find("feed_dict=true") != std::string::npos ||
      compact.find("feed_dict:true") != std::string::npos ||
      compact.find("feed_dict=false") != std::string::npos ||
      compact.find("feed_dict:false") != std::string::npos || has("with feed_dict") ||
      has("without feed_dict") || has("w/o feed_dict") || has("no feed_dict")) {
    flag({"feed_dict"}, "feed_dict", {"feed_dict=false", "feed_dict:false"}, parts);
  }
  // Where the input's preprocessing or augmentation runs, the CPU's loader or the GPU: "gpu" or
  // "cpu" right before the word or after "on" ("using gpu preprocess time(ms/batch)" beside
  // "using cpu preprocess time", PaddleClas#172; "augmentation on the GPU"), or in the cell of a
  // column named for it (nanopath#18's "Augmentation": "Pillow + GPU augmentations" beside
  // "Original CPU"); not a device the line names for the training ("training on cpu with
  // augmentation"). On the GPU, the loader's CPU work per batch is gone.
  if (has("preprocess") || has("augment")) {
    const auto words = words_of(text);
    const auto device = [](std::string_view w) { return w == "gpu" || w == "cpu"; };
    const auto step_word = [](std::string_view w) {
      return w.starts_with("preprocess") || w.starts_with("augment");
    };
    std::string_view where;
    for (size_t i = 0; i < words.size() && where.empty(); ++i) {
      if (!step_word(words[i])) continue;
      if (i > 0 && device(words[i - 1])) where = words[i - 1];  // "gpu augmentations"
      // "preprocessing on gpu", "augmentation on the cpu"
      if (i + 2 < words.size() && words[i + 1] == "on" && device(words[i + 2])) {
        where = words[i + 2];
      }
      if (i + 3 < words.size() && words[i + 1] == "on" && words[i + 2] == "the" &&
          device(words[i + 3])) {
        where = words[i + 3];
      }
    }
    // A table's column named for it, its cell naming the device: "augmentation=original cpu".
    if (const size_t eq = text.find('='); where.empty() && eq != std::string::npos) {
      const std::string_view name = std::string_view(text).substr(0, eq);
      if (name.find("preprocess") != std::string_view::npos ||
          name.find("augment") != std::string_view::npos) {
        for (const std::string& w : words_of(std::string_view(text).substr(eq + 1))) {
          if (device(w)) {
            where = w == "gpu" ? "gpu" : "cpu";
            break;
          }
        }
      }
    }
    if (where == "gpu") parts.emplace_back("preprocessing on the GPU");
    if (where == "cpu") parts.emplace_back("preprocessing on the CPU");
  }
  if (s.synthetic) parts.emplace_back("synthetic data");
  if (parts.empty()) return std::nullopt;
  s.label = fmt::format("{}", fmt::join(parts, ", "));
  return s;
}

}  // namespace stoker::telemetry
