// log(level, format, args...): a leveled message formatted with fmt, written only when the
// level is enabled (stoker/log.h: the threshold, the sink, printable()). Private: the installed
// headers carry no fmt.
#pragma once

#include <fmt/format.h>

#include <utility>

#include "stoker/log.h"

namespace stoker {

template <typename... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(level)) log_message(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace stoker
