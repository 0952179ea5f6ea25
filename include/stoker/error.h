// Errors: one exception type carrying a kind and the source location that raised it.
//
// The kind is chosen where the error is raised, and it decides what happens next:
//   kBadData          this sample (file, record, label) is broken. The only kind the
//                     bad-sample policy may skip (bad_samples = skip).
//   kIo               the storage failed (errno in sys_errno(), the file in path()). The
//                     loader retries a bounded number of times, then the job stops.
//   kInvalidArgument  the caller asked for something invalid (an option, a config value).
//   kInternal         a broken invariant, or anything not classified: never skipped.
// Inside stoker, errors are raised with the formatting macros of src/util/check.h (private:
// fmt stays out of the installed headers). Messages name the object (file, shard, option) and
// the reason, e.g. "photo.jpg: not a JPEG, PNG or WebP image".
// Thread-safety: the type is an ordinary value; throwing is thread-safe.
#pragma once

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
