// Minimal leveled logging to stderr, safe from any thread (one write per message); stoker's own
// messages go through log() with a format (src/util/logging.h, private).
// STOKER_LOG_LEVEL=debug|info|warning|error sets the threshold (default: info), read at the
// first message; another value is reported by an error line naming it, and info applies.
// Messages are printed through printable(): file names come from the data, and a name with a
// newline or an ANSI escape must not forge a line or repaint the terminal.
#pragma once

#include <string>
#include <string_view>

namespace stoker {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// `text` with its control characters (bytes below 0x20, and 0x7f) written as C escapes: \n,
// \r, \t, else \xNN. Other bytes (UTF-8 names included) are kept.
std::string printable(std::string_view text);

bool log_enabled(LogLevel level);
void log_message(LogLevel level, std::string_view message);

}  // namespace stoker
