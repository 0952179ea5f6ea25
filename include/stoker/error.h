// Errors: one exception type carrying a kind and the source location that raised it.
//
// The kind is chosen where the error is raised, and it decides what happens next:
//   kBadData          this sample (file, record, label) is broken. The only kind the
//                     bad-sample policy may skip (bad_samples = skip).
//   kIo               the storage failed (errno in sys_errno(), the file in path()). The
//                     loader retries a bounded number of times, then the job stops.
//   kInvalidArgument  the caller asked for something invalid (an option, a config value).
//   kInternal         a broken invariant, or anything not classified: never skipped.
// Raise with STOKER_THROW / STOKER_CHECK (internal), STOKER_BAD_DATA / STOKER_CHECK_DATA,
// STOKER_THROW_ARG / STOKER_CHECK_ARG, or STOKER_THROW_IO(errno, path, ...). Messages name the
// object (file, shard, option) and the reason, e.g.
//   STOKER_BAD_DATA("{}: not a JPEG, PNG or WebP image", path);
// Thread-safety: the type is an ordinary value; throwing is thread-safe.
#pragma once

#include <fmt/format.h>

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>

namespace stoker {

enum class ErrorKind { kBadData, kIo, kInvalidArgument, kInternal };

// "bad-data", "io", "invalid-argument", "internal".
std::string_view to_string(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, int sys_errno = 0, std::string path = {},
        std::source_location where = std::source_location::current());

  ErrorKind kind() const { return kind_; }
  // The message without the location, for users; what() carries both.
  const std::string& message() const { return message_; }
  const std::source_location& where() const { return where_; }
  // kIo: the errno of the failed call (0 when none) and the file it was about ("" when none).
  int sys_errno() const { return sys_errno_; }
  const std::string& path() const { return path_; }

 private:
  ErrorKind kind_;
  std::string message_;
  int sys_errno_;
  std::string path_;
  std::source_location where_;
};

namespace detail {
[[noreturn]] void throw_error(ErrorKind kind, std::string message, std::source_location where,
                              int sys_errno = 0, std::string path = {});
}  // namespace detail

}  // namespace stoker

#define STOKER_THROW_AS(kind, ...) \
  ::stoker::detail::throw_error(kind, ::fmt::format(__VA_ARGS__), std::source_location::current())

#define STOKER_CHECK_AS(kind, cond, ...)  \
  do {                                    \
    if (!(cond)) {                        \
      STOKER_THROW_AS(kind, __VA_ARGS__); \
    }                                     \
  } while (0)

#define STOKER_THROW(...) STOKER_THROW_AS(::stoker::ErrorKind::kInternal, __VA_ARGS__)
#define STOKER_CHECK(cond, ...) STOKER_CHECK_AS(::stoker::ErrorKind::kInternal, cond, __VA_ARGS__)
#define STOKER_BAD_DATA(...) STOKER_THROW_AS(::stoker::ErrorKind::kBadData, __VA_ARGS__)
#define STOKER_CHECK_DATA(cond, ...) \
  STOKER_CHECK_AS(::stoker::ErrorKind::kBadData, cond, __VA_ARGS__)
#define STOKER_THROW_ARG(...) STOKER_THROW_AS(::stoker::ErrorKind::kInvalidArgument, __VA_ARGS__)
#define STOKER_CHECK_ARG(cond, ...) \
  STOKER_CHECK_AS(::stoker::ErrorKind::kInvalidArgument, cond, __VA_ARGS__)
// An I/O error: `err` is the errno, `path` the file; the message is formatted as usual.
#define STOKER_THROW_IO(err, path, ...)                                               \
  ::stoker::detail::throw_error(::stoker::ErrorKind::kIo, ::fmt::format(__VA_ARGS__), \
                                std::source_location::current(), err, path)
