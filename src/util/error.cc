#include "stoker/error.h"

#include <fmt/format.h>

#include <filesystem>

#include "util/redact.h"

namespace stoker {
namespace {
std::string with_location(const std::string& message, const std::source_location& where) {
  return fmt::format("{} [{}:{}]", message,
                     std::filesystem::path(where.file_name()).filename().string(), where.line());
}
}  // namespace

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadData:
      return "bad-data";
    case ErrorKind::kIo:
      return "io";
    case ErrorKind::kInvalidArgument:
      return "invalid-argument";
    case ErrorKind::kInternal:
      return "internal";
  }
  return "internal";
}

// Messages and paths are redacted once, here: a presigned URL's signature or a URL's password
// in any error stoker raises never reaches a log, a terminal or Python (util/redact.h).
Error::Error(ErrorKind kind, std::string message, int sys_errno, std::string path,
             std::source_location where)
    : std::runtime_error(with_location(util::redact_urls(message), where)),
      kind_(kind),
      message_(util::redact_urls(message)),
      sys_errno_(sys_errno),
      path_(util::redact_urls(path)),
      where_(where) {}

namespace detail {
void throw_error(ErrorKind kind, std::string message, std::source_location where, int sys_errno,
                 std::string path) {
  throw Error(kind, std::move(message), sys_errno, std::move(path), where);
}
}  // namespace detail
}  // namespace stoker
