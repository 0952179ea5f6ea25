// Small text helpers shared by the library's parsers (private to src/).
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace stoker::util {

// `s` without leading and trailing spaces, tabs, carriage returns and newlines.
inline std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// `s` in ASCII lower case (bytes above 0x7f unchanged).
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace stoker::util
