#include "io/field_json.h"

#include <nlohmann/json.hpp>

#include "io/json_limits.h"
#include "util/check.h"

namespace stoker::io {

void select_json_key(std::string& json, const std::string& key, const std::string& sample,
                     const std::string& field) {
  STOKER_CHECK_DATA(!json_nested_too_deep(json), "{}: its .json member nests too deep", sample);
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  STOKER_CHECK_DATA(!j.is_discarded() && j.is_object(),
                    "{}: its .json member is not a JSON object (for the field '{}')", sample,
                    field);
  const auto it = j.find(key);
  STOKER_CHECK_DATA(it != j.end(), "{}: its .json member has no '{}' (for the field '{}')", sample,
                    key, field);
  json = it->dump();
}

}  // namespace stoker::io
