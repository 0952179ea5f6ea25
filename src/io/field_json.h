// One key of a sample's JSON field: the "json.KEY" fields of WebDataset shards and packs
// (Dataset::read_field, docs/fields.md). Private to src/io.
#pragma once

#include <string>

namespace stoker::io {

// Replaces `json` (the text of a JSON object) by the text of its member `key` ("0.31",
// "\"a cat\"", "[1, 2]"). Throws kBadData naming `sample` and `field` when the text nests too
// deep, is not a JSON object, or has no such member.
void select_json_key(std::string& json, const std::string& key, const std::string& sample,
                     const std::string& field);

}  // namespace stoker::io
