#include "stoker/error.h"

#include <filesystem>

namespace stoker {
namespace {
std::string with_location(const std::string& message, const std::source_location& where) {
  return fmt::format("{} [{}:{}]", message,
                     std::filesystem::path(where.file_name()).filename().string(), where.line());
}
}  // namespace

Error::Error(std::string message, std::source_location where)
    : std::runtime_error(with_location(message, where)),
      message_(std::move(message)),
      where_(where) {}

namespace detail {
void throw_error(std::string message, std::source_location where) {
  throw Error(std::move(message), where);
}
}  // namespace detail
}  // namespace stoker
