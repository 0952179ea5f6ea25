#include "stoker/log.h"

#include <fmt/format.h>
#include <unistd.h>

#include <iterator>
#include <string>

#include "stoker/error.h"
#include "util/env_vars.h"
#include "util/redact.h"

namespace stoker {
namespace {
constexpr const char* kNames[] = {"debug", "info", "warning", "error"};

// STOKER_LOG_LEVEL, read at the first message. Logging cannot throw (it runs in destructors
// and on worker threads), so a malformed value is reported as an error line, naming the
// variable, and the threshold stays at info.
LogLevel threshold_from_env() {
  try {
    return static_cast<LogLevel>(
        util::env_choice(util::kLogLevel, 1, {std::begin(kNames), std::end(kNames)}));
  } catch (const Error& e) {
    log_message(LogLevel::kError, e.message() + " (logging at info)");
    return LogLevel::kInfo;
  }
}
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
  std::string line = fmt::format("stoker {}: {}\n", kNames[static_cast<int>(level)],
                                 printable(util::redact_urls(message)));
  // One write() so that lines from different threads never interleave.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}
}  // namespace stoker
