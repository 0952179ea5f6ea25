// WebDataset tar shards as a dataset (private to src/io; opened through open_dataset). The
// conventions, the shard patterns and the index cache: stoker/dataset.h and docs/format.md
// "WebDataset shards".
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/dataset.h"

namespace stoker::io {

// Whether `location` names WebDataset shards: a pattern with braces or "::", or a path or URL
// ending in ".tar" (".tar.gz", ".tgz": refused when read). Another http(s):// or s3://
// location is a packed dataset's folder (or its manifest.json).
bool is_webdataset_location(std::string_view location);

// The shards a pattern names, in order: "a-{000..012}.tar" counts (keeping the width of the
// first bound's digits), "{x,y}" lists alternatives, several braces multiply out left to right,
// and "::" separates patterns (webdataset's convention). An unbalanced or reversed brace is an
// invalid-argument Error; more than 10^7 shards too.
std::vector<std::string> expand_shard_pattern(std::string_view pattern);

// `config.label_column`: the extension whose member holds the label ("cls", "txt", "json",
// "label.txt"...), or, when no member has that extension, the JSON member of the ".json" file.
// `io`: how the shards are read (remote ones: retries, read-ahead, the object cache).
std::shared_ptr<Dataset> open_webdataset(const std::string& pattern, const FileListConfig& config,
                                         const ImageFolderConfig& cache = {},
                                         const IoConfig& io = {});

}  // namespace stoker::io
