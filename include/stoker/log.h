// Minimal leveled logging to stderr, safe from any thread (one write per message).
// STOKER_LOG_LEVEL=debug|info|warning|error sets the threshold (default: info).
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace stoker {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

bool log_enabled(LogLevel level);
void log_message(LogLevel level, std::string_view message);

template <typename... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(level)) log_message(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace stoker
