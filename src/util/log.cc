#include "stoker/log.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace stoker {
namespace {
LogLevel threshold_from_env() {
  const char* value = std::getenv("STOKER_LOG_LEVEL");
  if (value == nullptr) return LogLevel::kInfo;
  if (std::strcmp(value, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(value, "warning") == 0) return LogLevel::kWarning;
  if (std::strcmp(value, "error") == 0) return LogLevel::kError;
  return LogLevel::kInfo;
}
constexpr const char* kNames[] = {"debug", "info", "warning", "error"};
}  // namespace

bool log_enabled(LogLevel level) {
  static const LogLevel threshold = threshold_from_env();
  return level >= threshold;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += fmt::format("\\x{:02x}", u);
    }
  }
  return out;
}

void log_message(LogLevel level, std::string_view message) {
  std::string line =
      fmt::format("stoker {}: {}\n", kNames[static_cast<int>(level)], printable(message));
  // One write() so that lines from different threads never interleave.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}
}  // namespace stoker
