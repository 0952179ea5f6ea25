// The nesting limit on JSON that stoker reads from files (private to src/io): manifests and
// JSON-lines label lists. nlohmann::json parses any depth without recursion, but dump() and
// comparisons recurse, so a document nesting a million arrays would overflow the stack.
// Counted on the text, before parsing: strings (and escapes in them) are skipped.
#pragma once

#include <string_view>

namespace stoker::io {

inline constexpr int kMaxJsonDepth = 32;

inline bool json_nested_too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace stoker::io
