#include "io/list_rows.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <functional>
#include <nlohmann/json.hpp>

#include "io/file_list.h"
#include "io/json_limits.h"
#include "stoker/error.h"
#include "util/check.h"
#include "util/text.h"

namespace stoker::io {
namespace {

constexpr std::array<std::string_view, 7> kPathColumns = {
    "path", "file", "filename", "image", "image_path", "filepath", "img"};
constexpr std::array<std::string_view, 6> kLabelColumns = {"label",  "labels",   "class",
                                                           "target", "category", "y"};

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && util::lower(s.substr(s.size() - suffix.size())) == suffix;
}

// The column named `wanted`, else the first of `names` present; nullopt when none.
template <size_t N>
std::optional<size_t> find_column(const std::vector<std::string>& header, const std::string& wanted,
                                  const std::array<std::string_view, N>& names) {
  if (!wanted.empty()) {
    for (size_t c = 0; c < header.size(); ++c) {
      if (header[c] == wanted) return c;
    }
    return std::nullopt;
  }
  for (const std::string_view name : names) {
    for (size_t c = 0; c < header.size(); ++c) {
      if (util::lower(header[c]) == name) return c;
    }
  }
  return std::nullopt;
}

// A table field's labels: several separated by ';' or '|', or by spaces when all are integers
// ("3 7 12"); otherwise the whole field is one label (a class name may hold spaces).
std::vector<std::string> split_labels(std::string_view field) {
  const auto trim = [](std::string_view s) {
    const size_t b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return std::string_view();
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
  };
  std::vector<std::string> out;
  if (field.find_first_of(";|") != std::string_view::npos) {
    size_t begin = 0;
    while (begin <= field.size()) {
      const size_t end = std::min(field.find_first_of(";|", begin), field.size());
      const std::string_view token = trim(field.substr(begin, end - begin));
      if (!token.empty()) out.emplace_back(token);
      begin = end + 1;
    }
    return out;
  }
  const std::string_view whole = trim(field);
  if (whole.find(' ') != std::string_view::npos) {
    std::vector<std::string> parts;
    size_t begin = 0;
    bool all_ids = true;
    while (begin < whole.size()) {
      const size_t end = std::min(whole.find(' ', begin), whole.size());
      const std::string_view token = whole.substr(begin, end - begin);
      if (!token.empty()) {
        all_ids = all_ids && parse_label_id(token).has_value();
        parts.emplace_back(token);
      }
      begin = end + 1;
    }
    if (all_ids) return parts;
  }
  if (!whole.empty()) out.emplace_back(whole);
  return out;
}

// RFC 4180 records, read a character at a time so that chunks may split a field, a quote or a
// CRLF anywhere: each record goes to on_record(line it starts on, fields).
class DelimitedSplitter {
 public:
  using OnRecord = std::function<void(int64_t, std::vector<std::string>&&)>;
  DelimitedSplitter(char delimiter, const std::string& list_name, OnRecord on_record)
      : delimiter_(delimiter), list_name_(list_name), on_record_(std::move(on_record)) {}

  void feed(std::string_view bytes) {
    for (const char c : bytes) take(c);
  }

  void finish() {
    if (!started_ && !bom_.empty()) {  // fewer bytes than a byte-order mark, and not one
      started_ = true;
      const std::string replay = std::move(bom_);
      feed(replay);
    }
    if (in_quote_ && !quote_seen_) {
      STOKER_THROW_ARG("{}:{}: a quoted field is not closed", list_name_, quote_line_);
    }
    if (pending_cr_) {
      STOKER_CHECK_ARG(!after_quote_, "{}:{}: characters after a closing quote", list_name_, line_);
      field_ += '\r';
    }
    if (!field_.empty() || !fields_.empty()) end_record();
  }

 private:
  void end_field() {
    fields_.push_back(std::move(field_));
    field_.clear();
  }
  void end_record() {
    end_field();
    const bool is_blank = record_empty_ && fields_.size() == 1 && blank(fields_.front());
    if (!is_blank) on_record_(record_line_, std::move(fields_));
    fields_.clear();
    record_empty_ = true;
  }
  void new_line() {
    end_record();
    ++line_;
    record_line_ = line_;
  }

  void take(char c) {
    if (!started_) {  // a UTF-8 byte-order mark at the very start is dropped
      bom_.push_back(c);
      if (std::string_view("\xEF\xBB\xBF").substr(0, bom_.size()) == bom_) {
        if (bom_.size() == 3) started_ = true, bom_.clear();
        return;
      }
      started_ = true;
      const std::string replay = std::move(bom_);
      bom_.clear();
      feed(replay);
      return;
    }
    if (in_quote_) {
      if (!quote_seen_) {
        if (c == '"') {
          quote_seen_ = true;
        } else {
          if (c == '\n') ++line_;
          field_ += c;
        }
        return;
      }
      quote_seen_ = false;
      if (c == '"') {  // "" inside quotes: one quote
        field_ += '"';
        return;
      }
      in_quote_ = false;  // the quote before c closed the field
      after_quote_ = true;
    }
    if (pending_cr_) {
      pending_cr_ = false;
      if (c == '\n') {  // CRLF ends the record
        after_quote_ = false;
        new_line();
        return;
      }
      STOKER_CHECK_ARG(!after_quote_, "{}:{}: characters after a closing quote", list_name_, line_);
      field_ += '\r';  // a lone CR is data
    }
    if (after_quote_) {
      if (c == '\r') {  // only as CRLF
        pending_cr_ = true;
        return;
      }
      STOKER_CHECK_ARG(c == delimiter_ || c == '\n', "{}:{}: characters after a closing quote",
                       list_name_, line_);
      after_quote_ = false;
    }
    if (c == '"' && field_.empty()) {  // a quoted field
      in_quote_ = true;
      quote_line_ = line_;
      record_empty_ = false;
    } else if (c == delimiter_) {
      end_field();
      record_empty_ = false;
    } else if (c == '\n') {
      new_line();
    } else if (c == '\r') {
      pending_cr_ = true;
    } else {
      field_ += c;
    }
  }

  const char delimiter_;
  const std::string& list_name_;
  const OnRecord on_record_;
  bool started_ = false;      // the byte-order mark was looked for
  std::string bom_;           // the first bytes, while they may still be one
  bool in_quote_ = false;     // inside a quoted field
  bool quote_seen_ = false;   // in a quoted field: a '"' that may be the first of a pair
  bool after_quote_ = false;  // a quoted field closed: a delimiter or a line end must follow
  bool pending_cr_ = false;   // a '\r' outside quotes, waiting for its '\n'
  int64_t line_ = 1;
  int64_t quote_line_ = 1;  // where the open quoted field started
  int64_t record_line_ = 1;
  bool record_empty_ = true;  // nothing but an empty first field so far
  std::string field_;
  std::vector<std::string> fields_;
};

}  // namespace

std::optional<int64_t> parse_label_id(std::string_view token) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (token.empty() || ec != std::errc() || end != token.data() + token.size()) return {};
  if (v < 0 || v > kMaxLabelId) return {};
  return v;
}

ListForm list_form(std::string_view start, const std::string& list_name,
                   const FileListConfig& config) {
  const size_t first = start.find_first_not_of(" \t\r\n");
  if (ends_with(list_name, ".jsonl") || ends_with(list_name, ".ndjson") ||
      (first != std::string_view::npos && start[first] == '{')) {
    return ListForm::kJsonLines;
  }
  if (ends_with(list_name, ".csv")) return ListForm::kCsv;
  // A tab-separated table when its first record names a path column, else headerless lines.
  if (!config.path_column.empty()) return ListForm::kTsvTable;
  std::vector<std::string> head;
  DelimitedSplitter first_record('\t', list_name, [&](int64_t, std::vector<std::string>&& f) {
    if (head.empty()) head = std::move(f);
  });
  first_record.feed(start.substr(0, std::min(start.find('\n'), start.size())));
  first_record.finish();
  return find_column(head, "", kPathColumns) ? ListForm::kTsvTable : ListForm::kHeaderless;
}

struct RowReader::Delimited {
  DelimitedSplitter splitter;
};

RowReader::RowReader(ListForm form, std::string list_name, FileListConfig config, OnRow on_row)
    : form_(form),
      list_name_(std::move(list_name)),
      config_(std::move(config)),
      on_row_(std::move(on_row)) {
  if (form_ == ListForm::kCsv || form_ == ListForm::kTsvTable) {
    delimited_ = std::make_unique<Delimited>(
        Delimited{DelimitedSplitter(form_ == ListForm::kCsv ? ',' : '\t', list_name_,
                                    [this](int64_t line, std::vector<std::string>&& fields) {
                                      record(line, std::move(fields));
                                    })});
  }
}

RowReader::~RowReader() = default;

void RowReader::feed(std::string_view bytes) {
  if (!delimited_) {
    // Lines ('\n'-terminated or the last, a '\r' before the '\n' dropped), numbered from 1.
    while (!bytes.empty()) {
      const size_t newline = bytes.find('\n');
      if (newline == std::string_view::npos) {
        carry_.append(bytes);
        return;
      }
      std::string_view text = bytes.substr(0, newline);
      if (!carry_.empty()) {
        carry_.append(text);
        text = carry_;
      }
      if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
      line(text, ++line_number_);
      carry_.clear();
      bytes.remove_prefix(newline + 1);
    }
    return;
  }
  delimited_->splitter.feed(bytes);
}

void RowReader::finish() {
  if (!delimited_) {
    if (!carry_.empty()) {
      std::string_view text = carry_;
      if (text.back() == '\r') text.remove_suffix(1);
      line(text, ++line_number_);
      carry_.clear();
    }
    return;
  }
  delimited_->splitter.finish();
  STOKER_CHECK_ARG(!header_.empty(), "{}: no header and no samples", list_name_);
}

void RowReader::record(int64_t line, std::vector<std::string>&& fields) {
  if (header_.empty()) {
    header_ = std::move(fields);
    path_col_ = find_column(header_, config_.path_column, kPathColumns);
    STOKER_CHECK_ARG(path_col_.has_value(),
                     "{}:{}: no {} column in the header ({}): name one path, file, filename, "
                     "image, image_path, filepath or img, or give the path column",
                     list_name_, line,
                     config_.path_column.empty() ? "path" : "'" + config_.path_column + "'",
                     fmt::join(header_, ", "));
    label_col_ = find_column(header_, config_.label_column, kLabelColumns);
    STOKER_CHECK_ARG(config_.label_column.empty() || label_col_.has_value(),
                     "{}:{}: no column '{}' in the header ({})", list_name_, line,
                     config_.label_column, fmt::join(header_, ", "));
    for (const std::string& field : config_.field_columns) {
      const auto at = std::find(header_.begin(), header_.end(), field);
      STOKER_CHECK_ARG(at != header_.end(), "{}:{}: no column '{}' for the field (the header: {})",
                       list_name_, line, field, fmt::join(header_, ", "));
      field_cols_.push_back(static_cast<size_t>(at - header_.begin()));
    }
    return;
  }
  STOKER_CHECK_ARG(fields.size() == header_.size(), "{}:{}: {} fields, the header has {}",
                   list_name_, line, fields.size(), header_.size());
  Row row;
  row.line = line;
  row.path = fields[*path_col_];  // a copy: the label may be read from the same column
  if (label_col_) {
    row.has_label = true;
    row.labels = split_labels(fields[*label_col_]);
    STOKER_CHECK_ARG(!row.labels.empty(), "{}:{}: empty label (column '{}')", list_name_, line,
                     header_[*label_col_]);
  }
  for (const size_t col : field_cols_) row.fields.emplace_back(fields[col]);
  on_row_(std::move(row));
}

void RowReader::line(std::string_view text, int64_t number) {
  if (form_ == ListForm::kHeaderless) {
    // The legacy headerless list: path<TAB>integer label.
    if (blank(text) || text.front() == '#') return;
    const size_t tab = text.rfind('\t');
    STOKER_CHECK_ARG(config_.field_columns.empty(),
                     "{}: a headerless 'path<TAB>label' list has no columns for fields (give a "
                     "table with a header, or JSON lines)",
                     list_name_);
    STOKER_CHECK_ARG(tab != std::string_view::npos,
                     "{}:{}: expected 'path<TAB>label', found no tab (a table needs a header "
                     "naming its path column: path, file, filename, image, ...)",
                     list_name_, number);
    const std::string_view token = text.substr(tab + 1);
    int64_t label = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), label);
    STOKER_CHECK_ARG(
        !token.empty() && ec != std::errc::invalid_argument && end == token.data() + token.size(),
        "{}:{}: label '{}' is not an integer", list_name_, number, token);
    STOKER_CHECK_ARG(ec != std::errc::result_out_of_range && label >= 0 && label <= kMaxLabelId,
                     "{}:{}: label {} is out of range [0, {}]", list_name_, number, token,
                     kMaxLabelId);
    on_row_(Row{number, std::string(text.substr(0, tab)), {std::string(token)}, true});
    return;
  }
  // JSON lines.
  if (blank(text)) return;
  STOKER_CHECK_ARG(!json_nested_too_deep(text), "{}:{}: JSON nested deeper than {} levels",
                   list_name_, number, kMaxJsonDepth);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    STOKER_THROW_ARG("{}:{}: not JSON: {}", list_name_, number, e.what());
  }
  STOKER_CHECK_ARG(j.is_object(), "{}:{}: expected a JSON object", list_name_, number);
  const auto key = [&](const std::string& wanted, const auto& names) -> std::string {
    if (!wanted.empty()) return j.contains(wanted) ? wanted : "";
    for (const std::string_view name : names) {
      if (j.contains(std::string(name))) return std::string(name);
    }
    return "";
  };
  const std::string path_key = key(config_.path_column, kPathColumns);
  STOKER_CHECK_ARG(!path_key.empty() && j[path_key].is_string() && !j[path_key].empty(),
                   "{}:{}: no path: expected a string member {}", list_name_, number,
                   config_.path_column.empty() ? "\"path\" (or file, filename, image, ...)"
                                               : "\"" + config_.path_column + "\"");
  Row row;
  row.line = number;
  row.path = j[path_key].get<std::string>();
  const std::string label_key = key(config_.label_column, kLabelColumns);
  STOKER_CHECK_ARG(config_.label_column.empty() || !label_key.empty(), "{}:{}: no member \"{}\"",
                   list_name_, number, config_.label_column);
  row.has_label = !label_key.empty();
  STOKER_CHECK_ARG(!labelled_ || *labelled_ == row.has_label,
                   "{}:{}: {} label where the lines before {}", list_name_, number,
                   row.has_label ? "a" : "no", row.has_label ? "have none" : "have one");
  labelled_ = row.has_label;
  if (row.has_label) {
    row.labels = json_label_tokens(j[label_key], fmt::format("{}:{}", list_name_, number));
  }
  for (const std::string& field : config_.field_columns) {
    const auto it = j.find(field);
    if (it == j.end()) {
      row.fields.emplace_back(std::nullopt);
    } else {
      row.fields.emplace_back(it->is_string() ? it->get<std::string>() : it->dump());
    }
  }
  on_row_(std::move(row));
}

std::vector<std::string> json_label_tokens(const nlohmann::json& value, const std::string& where) {
  const auto token = [&](const nlohmann::json& v) {
    if (v.is_string() && !v.get<std::string>().empty()) return v.get<std::string>();
    STOKER_CHECK_ARG(
        v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= kMaxLabelId,
        "{}: label {} is not a class name or an integer in [0, {}]", where, v.dump(), kMaxLabelId);
    return std::to_string(v.get<int64_t>());
  };
  std::vector<std::string> tokens;
  if (value.is_array()) {
    for (const nlohmann::json& v : value) tokens.push_back(token(v));
    tokens.push_back("");  // marks an explicit list
  } else {
    tokens.push_back(token(value));
  }
  return tokens;
}

const std::string* json_label_member(const nlohmann::json& object, const std::string& wanted) {
  if (!wanted.empty()) {
    const auto it = object.find(wanted);
    return it == object.end() ? nullptr : &it.key();
  }
  for (const std::string_view name : kLabelColumns) {
    const auto it = object.find(std::string(name));
    if (it != object.end()) return &it.key();
  }
  return nullptr;
}

}  // namespace stoker::io
