// Text helpers of the telemetry parsers: lines, tokens, numbers and dates (telemetry_parse.h).
#include <charconv>
#include <cmath>

#include "diagnose/telemetry_parse.h"
#include "util/text.h"

namespace stoker::telemetry {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

}  // namespace

std::vector<Line> split_lines(std::string_view content) {
  std::vector<Line> lines;
  int64_t number = 0;
  size_t start = 0;
  while (start < content.size()) {
    size_t end = content.find('\n', start);
    if (end == std::string_view::npos) end = content.size();
    std::string_view text = content.substr(start, end - start);
    while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
    lines.push_back({++number, text, end < content.size()});
    start = end + 1;
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_whitespace(std::string_view s) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    const size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > start) tokens.push_back(s.substr(start, i - start));
  }
  return tokens;
}

std::vector<std::string_view> split_char(std::string_view s, char sep) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    if (end == std::string_view::npos) {
      fields.push_back(s.substr(start));
      return fields;
    }
    fields.push_back(s.substr(start, end - start));
    start = end + 1;
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::optional<int> parse_index(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

std::optional<int64_t> days_from_civil(int64_t y, int m, int d) {
  if (y < 1900 || y > 9999 || m < 1 || m > 12 || d < 1) return std::nullopt;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kDays[m - 1] + (m == 2 && leap ? 1 : 0)) return std::nullopt;
  // Howard Hinnant's days_from_civil.
  y -= m <= 2;
  const int64_t era = y / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

std::optional<int64_t> slashed_date_days(std::string_view t) {
  if ((t.size() != 8 && t.size() != 10) || t[2] != '/' || t[5] != '/') return std::nullopt;
  const auto a = parse_index(t.substr(0, 2));
  const auto b = parse_index(t.substr(3, 2));
  auto y = parse_index(t.substr(6));
  if (!a || !b || !y) return std::nullopt;
  if (t.size() == 8) *y += 2000;
  return *a > 12 ? days_from_civil(*y, *b, *a) : days_from_civil(*y, *a, *b);
}

std::optional<double> parse_clock(std::string_view s) {
  // HH:MM:SS[.fff]
  if (s.size() < 8 || s[2] != ':' || s[5] != ':') return std::nullopt;
  const auto h = parse_index(s.substr(0, 2));
  const auto m = parse_index(s.substr(3, 2));
  if (!h || !m || *h > 23 || *m > 59) return std::nullopt;
  std::optional<double> sec;
  const std::string_view rest = s.substr(6);
  if (rest.size() >= 2 && rest[0] >= '0' && rest[0] <= '9' && rest[1] >= '0' && rest[1] <= '9' &&
      (rest.size() == 2 ||
       (rest[2] == '.' && rest.size() > 3 && parse_index(rest.substr(3)).has_value()))) {
    sec = parse_number(rest);
  }
  if (!sec || *sec >= 61) return std::nullopt;
  return *h * 3600.0 + *m * 60.0 + *sec;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += (c >= 0x20 && c != 0x7f) || c == '\t' ? static_cast<char>(c) : '?';
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence is kept; any other byte becomes '?'.
    const size_t n = util::utf8_sequence_length(s.substr(i));
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

std::string quote(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 80)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f) ? c : '?';
  }
  if (s.size() > 80) out += "...";
  return "'" + out + "'";
}

}  // namespace stoker::telemetry
