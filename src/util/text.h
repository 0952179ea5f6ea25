// Small text helpers shared by the library's parsers (private to src/).
#pragma once

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

namespace stoker::util {

// `s` without leading and trailing spaces, tabs, carriage returns and newlines.
inline std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// The whole of `s` as a finite number (no leading '+', no trailing text); nullopt otherwise.
inline std::optional<double> parse_number(std::string_view s) {
  if (s.empty() || s.front() == '+') return std::nullopt;
  double value = 0;
  const auto [end, ec] =
      std::from_chars(s.data(), s.data() + s.size(), value, std::chars_format::general);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// `s` in ASCII lower case (bytes above 0x7f unchanged).
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The length (1 to 4) of the well-formed UTF-8 sequence at the start of `s` (no overlong
// forms, surrogates or code points above U+10FFFF), or 0 when it is not one (or `s` is empty).
inline size_t utf8_sequence_length(std::string_view s) {
  if (s.empty()) return 0;
  const auto c = static_cast<unsigned char>(s[0]);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned lo = 0x80, hi = 0xbf;  // the second byte's range; later ones are 0x80..0xbf
  if (c >= 0xc2 && c <= 0xdf) {
    n = 1;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 2;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 3;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (s.size() <= n) return 0;
  for (size_t k = 1; k <= n; ++k) {
    const auto b = static_cast<unsigned char>(s[k]);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf)) return 0;
  }
  return n + 1;
}

// Whether all of `s` is well-formed UTF-8; `bad_at` (optional) gets the first bad byte's offset.
inline bool is_utf8(std::string_view s, size_t* bad_at = nullptr) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s.substr(i));
    if (n == 0) {
      if (bad_at != nullptr) *bad_at = i;
      return false;
    }
    i += n;
  }
  return true;
}

}  // namespace stoker::util
