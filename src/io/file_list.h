// The label-list parser on text already read (private to src/io; open_file_list reads the
// file, the fuzzer feeds it bytes). The list's forms and rules: stoker/dataset.h and
// docs/format.md "Label lists". `list_name` names the list in errors and picks the form by its
// extension; relative paths resolve against its folder.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/sample_table.h"
#include "stoker/dataset.h"

namespace stoker::io {

// Labels as the lists' rules make them, shared with the WebDataset reader: from each sample's
// label tokens (several for a multi-label sample; a trailing "" marks an explicit JSON list,
// which makes the set multi-label), ids when every token is a decimal integer in [0, 2^24 - 1],
// else class names sorted by bytes and ids their positions.
struct ResolvedLabels {
  std::vector<std::string> classes;
  std::vector<int64_t> first;  // per sample: the label (multi: the set's first, -1 for none)
  bool multi = false;
  std::vector<uint64_t> ends;   // multi only: sample i's ids are values[ends[i-1] .. ends[i])
  std::vector<int32_t> values;  //
  std::span<const int32_t> set(size_t i) const {
    const uint64_t begin = i == 0 ? 0 : ends[i - 1];
    return std::span<const int32_t>(values).subspan(begin, ends[i] - begin);
  }
};
// A single-label sample without tokens (in a labelled set) gets this label.
inline constexpr int64_t kMissingLabel = -2;

// Consumes the tokens (the explicit-list markers are removed). `name` names the set in errors,
// `where(i)` sample i (a list's line, a shard's key). Integer ids make one class per id up to
// the largest, so the largest is bounded by the labels seen: below 2 x the distinct ids + 1024
// (sparse ids such as COCO's 1..90 pass; one id of 16,777,215 in a 27-byte list made 16.7 M
// classes, 5 GB per multi-hot batch), else an ArgumentError naming the sample.
ResolvedLabels resolve_labels(std::vector<std::vector<std::string>>& tokens, bool explicit_lists,
                              const std::string& name,
                              const std::function<std::string(size_t)>& where = {});

// The member of a JSON object holding its label: `wanted`, else the first of label, labels,
// class, target, category, y; nullptr when there is none.
const std::string* json_label_member(const nlohmann::json& object, const std::string& wanted);
// The label tokens of a JSON label value: a class name, an integer, or a list of them (then a
// trailing "" marks the explicit list). `where` names it in errors.
std::vector<std::string> json_label_tokens(const nlohmann::json& value, const std::string& where);

// A list's table and class names, parsed from its text.
struct ParsedList {
  SampleTable table;
  std::vector<std::string> classes;
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
