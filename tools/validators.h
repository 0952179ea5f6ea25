// Range checks for the command's numeric flags whose messages read like "--batch must be ≥ 1
// (got 0)" (main() joins CLI11's "NAME: " prefix into the sentence) and whose --help shows the
// range plainly ("≥ 1", "in [1, 100]"), in place of CLI11's "Value 0 not in range 0.000000
// to 1.797693e+308".
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace stoker::cli {

CLI::Validator at_least(double min);  // value ≥ min
CLI::Validator above(double min);     // value > min
CLI::Validator between(double lo, double hi);

// --help's option column: "INT >= 1 [default: 256]", "{train,eval} [default: train]"; no
// default shown for an option whose description says what its default is.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override;
};

}  // namespace stoker::cli
