// The label-list reader (private to src/io; open_file_list streams the file into a table file,
// the fuzzer feeds it bytes). The list's forms and rules: stoker/dataset.h and
// docs/format.md "Label lists". `list_name` names the list in errors and picks the form by its
// extension; relative paths resolve against its folder.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/sample_table.h"
#include "io/table_dataset.h"
#include "stoker/dataset.h"

namespace stoker::io {

// Every byte of a list, in order and in chunks of any size: calls each(chunk) until the end.
using ListBytes = std::function<void(const std::function<void(std::string_view)>& each)>;

// Reads a list twice through `bytes`: the first pass checks every row and takes the census of
// its labels, the second gives each sample to `add` in order (after `begin(multi_label)`).
// Memory is bounded by the distinct labels, not the rows. `start` is the list's first bytes
// (up to kListFormBytes: they decide its form). Returns the class names.
inline constexpr size_t kListFormBytes = size_t{1} << 20;
// `fields`, when set, gets each sample's FileListConfig::field_columns right after its add().
using RowFields = std::vector<std::optional<std::string>>;
std::vector<std::string> read_list(std::string_view start, const ListBytes& bytes,
                                   const std::string& list_name, const FileListConfig& config,
                                   const std::function<void(bool multi_label)>& begin,
                                   const std::function<void(std::string_view path, int64_t label,
                                                            std::span<const int32_t> set)>& add,
                                   const std::function<void(const RowFields&)>& fields = {});

// A list's table, class names and fields, parsed from its text.
struct ParsedList {
  SampleTable table;
  std::vector<std::string> classes;
  ListFields fields;
};
ParsedList parse_list(std::string_view text, const std::string& list_name,
                      const FileListConfig& config);

// The dataset of a list's text, held in memory (open_file_list maps a cached table instead).
std::shared_ptr<Dataset> file_list_from_text(std::string_view text, const std::string& list_name,
                                             const FileListConfig& config);

// What relative paths of the list `list_name` are prefixed with: its folder ("" or ending '/').
std::string list_prefix(const std::string& list_name);
// The canonical absolute path, or "" when it cannot be resolved.
std::string canonical_or_empty(const std::filesystem::path& path);
// What a list's cached table is keyed by: its canonical path, stamp (size, mtime, inode,
// device) and the columns asked for.
std::string list_cache_key(const std::string& canonical, const struct stat& st,
                           const FileListConfig& config);

}  // namespace stoker::io
