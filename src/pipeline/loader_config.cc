// LoaderConfig's default from the environment (docs/environment.md).
#include "stoker/loader.h"
#include "util/env_vars.h"

namespace stoker::detail {

double default_close_timeout_seconds() { return util::env_number(util::kCloseTimeout); }

}  // namespace stoker::detail
