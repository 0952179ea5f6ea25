// The rows of a label list, read incrementally (private to src/io): its bytes are fed in chunks
// of any size and each complete row comes out as soon as it is read, so that a list of 10^8
// lines is parsed in bounded memory (file_list.cc reads it twice this way). The forms and their
// rules: docs/format.md, "Label lists"; every error names the list and the line
// ("LIST:LINE: reason"), whatever the chunking.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/dataset.h"

namespace stoker::io {

// One sample as read: its path and label tokens (several for a multi-label row; a trailing ""
// marks an explicit JSON list).
struct Row {
  int64_t line = 0;
  std::string path;
  std::vector<std::string> labels;
  bool has_label = false;  // false: a label-free list
  // FileListConfig::field_columns, in order (nullopt: the JSON line has no such member).
  std::vector<std::optional<std::string>> fields = {};
};

enum class ListForm { kHeaderless, kCsv, kTsvTable, kJsonLines };

// The list's form, from its name and its first bytes (`start`: at least its first line, or the
// whole list when shorter).
ListForm list_form(std::string_view start, const std::string& list_name,
                   const FileListConfig& config);

// A decimal integer label id in [0, kMaxLabelId], the whole token.
inline constexpr int64_t kMaxLabelId = (int64_t{1} << 24) - 1;
std::optional<int64_t> parse_label_id(std::string_view token);

// The member of a JSON object holding its label: `wanted`, else the first of label, labels,
// class, target, category, y; nullptr when there is none.
const std::string* json_label_member(const nlohmann::json& object, const std::string& wanted);
// The label tokens of a JSON label value: a class name, an integer, or a list of them (then a
// trailing "" marks the explicit list). `where` names it in errors.
std::vector<std::string> json_label_tokens(const nlohmann::json& value, const std::string& where);

class RowReader {
 public:
  using OnRow = std::function<void(Row&&)>;
  RowReader(ListForm form, std::string list_name, FileListConfig config, OnRow on_row);
  ~RowReader();
  RowReader(const RowReader&) = delete;
  RowReader& operator=(const RowReader&) = delete;

  // The next bytes of the list, split anywhere.
  void feed(std::string_view bytes);
  // The end of the list: its last row, and the errors only the end can tell (an unclosed
  // quote, a table without a header).
  void finish();

 private:
  struct Delimited;
  void line(std::string_view text, int64_t number);
  void record(int64_t line, std::vector<std::string>&& fields);

  const ListForm form_;
  const std::string list_name_;
  const FileListConfig config_;
  const OnRow on_row_;
  // Line forms: the incomplete last line so far, and its number.
  std::string carry_;
  int64_t line_number_ = 0;
  std::optional<bool> labelled_;  // JSON lines: all rows labelled or none
  // Table forms.
  std::unique_ptr<Delimited> delimited_;
  std::vector<std::string> header_;
  std::optional<size_t> path_col_, label_col_;
  std::vector<size_t> field_cols_;
};

}  // namespace stoker::io
