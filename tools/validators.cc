#include "validators.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

namespace stoker::cli {
namespace {

// "1" for whole numbers, else the shortest round-trip form.
std::string number(double v) {
  return v == std::floor(v) && std::fabs(v) < 1e15 ? fmt::format("{}", static_cast<long long>(v))
                                                   : fmt::format("{}", v);
}

CLI::Validator check(const std::string& description, std::function<bool(double)> ok,
                     const std::string& requirement) {
  return CLI::Validator(
      [ok = std::move(ok), requirement](std::string& input) -> std::string {
        double v = 0;
        try {
          size_t used = 0;
          v = std::stod(input, &used);
          if (used != input.size()) throw std::invalid_argument(input);
        } catch (const std::exception&) {
          return fmt::format("must be a number (got '{}')", input);
        }
        if (!ok(v)) return fmt::format("must be {} (got {})", requirement, input);
        return {};
      },
      description);
}

}  // namespace

CLI::Validator at_least(double min) {
  // --help's columns count bytes: ASCII there, the sign in messages.
  return check(
      ">= " + number(min), [min](double v) { return v >= min; }, "≥ " + number(min));
}

CLI::Validator above(double min) {
  return check(
      "> " + number(min), [min](double v) { return v > min; }, "> " + number(min));
}

CLI::Validator between(double lo, double hi) {
  const std::string range = fmt::format("in [{}, {}]", number(lo), number(hi));
  return check(
      range, [lo, hi](double v) { return v >= lo && v <= hi; }, range);
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  std::string out;
  if (opt->get_type_size() != 0) {
    std::string type = opt->get_type_name();
    if (type.rfind("TEXT:{", 0) == 0) {
      type = type.substr(5);  // an enum: its values say enough
    } else if (const size_t colon = type.find(':'); colon != std::string::npos) {
      type[colon] = ' ';
    }
    out += " " + type;
    const std::string value = opt->get_default_str();
    if (!value.empty() && opt->get_description().find("default") == std::string::npos) {
      out += " [default: " + value + "]";
    }
  }
  for (const CLI::Option* need : opt->get_needs()) out += " Needs: " + need->get_name();
  for (const CLI::Option* other : opt->get_excludes()) out += " Excludes: " + other->get_name();
  return out;
}

}  // namespace stoker::cli
