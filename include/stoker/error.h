// Errors: one exception type carrying the source location that raised it.
//
// The core reports failure by throwing stoker::Error through STOKER_THROW or STOKER_CHECK.
// Messages should name the object (file, shard, option) and the reason, e.g.
//   STOKER_THROW("{}: not a JPEG, PNG or WebP file", path);
// Thread-safety: the type is an ordinary value; throwing is thread-safe.
#pragma once

#include <fmt/format.h>

#include <source_location>
#include <stdexcept>
#include <string>

namespace stoker {

class Error : public std::runtime_error {
 public:
  Error(std::string message, std::source_location where = std::source_location::current());

  // The message without the location, for users; what() carries both.
  const std::string& message() const { return message_; }
  const std::source_location& where() const { return where_; }

 private:
  std::string message_;
  std::source_location where_;
};

namespace detail {
[[noreturn]] void throw_error(std::string message, std::source_location where);
}  // namespace detail

}  // namespace stoker

#define STOKER_THROW(...) \
  ::stoker::detail::throw_error(::fmt::format(__VA_ARGS__), std::source_location::current())

#define STOKER_CHECK(cond, ...)  \
  do {                           \
    if (!(cond)) {               \
      STOKER_THROW(__VA_ARGS__); \
    }                            \
  } while (0)
