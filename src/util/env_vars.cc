#include "util/env_vars.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>

#include "stoker/error.h"
#include "util/check.h"

namespace stoker::util {

std::optional<std::string> env_text(const char* name) {
  // The one read of the process environment in stoker.
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::string env_string(const char* name, std::string_view fallback) {
  return env_text(name).value_or(std::string(fallback));
}

int64_t env_int(const EnvNumber<int64_t>& var) {
  const std::optional<std::string> text = env_text(var.name);
  if (!text) return var.fallback;
  int64_t value = 0;
  const char* end = text->data() + text->size();
  const auto [at, ec] = std::from_chars(text->data(), end, value, 10);
  STOKER_CHECK_ARG(ec == std::errc() && at == end && value >= var.low && value <= var.high,
                   "{}={}: expected an integer in [{}, {}]", var.name, *text, var.low, var.high);
  return value;
}

double env_number(const EnvNumber<double>& var) {
  const std::optional<std::string> text = env_text(var.name);
  if (!text) return var.fallback;
  // from_chars, not atof or strtod: no locale, and "1O" (a typo) is an error rather than 1.
  double value = 0;
  const char* end = text->data() + text->size();
  const auto [at, ec] = std::from_chars(text->data(), end, value, std::chars_format::general);
  STOKER_CHECK_ARG(ec == std::errc() && at == end && std::isfinite(value) && value >= var.low &&
                       value <= var.high,
                   "{}={}: expected a number in [{}, {}]", var.name, *text, var.low, var.high);
  return value;
}

size_t env_choice(const char* name, size_t fallback, const std::vector<std::string_view>& choices) {
  const std::optional<std::string> text = env_text(name);
  if (!text) return fallback;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == *text) return i;
  }
  std::string listed;
  for (size_t i = 0; i < choices.size(); ++i) {
    listed += i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ";
    listed += choices[i];
  }
  STOKER_THROW_ARG("{}={}: expected {}", name, *text, listed);
}

}  // namespace stoker::util
