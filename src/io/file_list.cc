// File lists and label manifests (see stoker/dataset.h): headerless `path<TAB>label` lines,
// CSV / TSV with a header, JSON lines.
//
// Headerless lines: lines end with '\n' (a '\r' before it is dropped, for lists written on
// Windows); a line that is empty or only spaces and tabs, or whose first character is '#', is
// skipped; otherwise the label follows the LAST tab, so a path may itself contain tabs. The
// label is a decimal integer in [0, kMaxLabel].
//
// Tables (CSV, TSV with a header): RFC 4180 fields (a field starting with '"' is quoted, ""
// inside it is one quote, quoted fields may hold delimiters and newlines), a UTF-8 byte-order
// mark ignored, blank lines skipped; every record has the header's number of fields. JSON
// lines: one object per non-blank line. Labels: see the header.
//
// Opening a list never touches the listed files: on a network file system a million stats
// would cost what the list exists to avoid, so sizes are unknown (-1) and the fingerprint
// covers the paths as written and the labels.
#include "io/file_list.h"

#include <fmt/ranges.h>
#include <malloc.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "io/cache_file.h"
#include "io/file_util.h"
#include "io/index_cache.h"
#include "io/json_limits.h"
#include "io/sample_table.h"
#include "io/table_dataset.h"
#include "io/table_file.h"
#include "stoker/dataset.h"
#include "stoker/error.h"
#include "util/check.h"
#include "util/text.h"

namespace stoker {
namespace io {
namespace {

// classes() holds one name per label up to the largest, so the largest bounds its memory.
constexpr int64_t kMaxLabel = (int64_t{1} << 24) - 1;
// Lists are read whole; this only stops absurd files.
constexpr int64_t kMaxListBytes = int64_t{1} << 36;

constexpr std::array<std::string_view, 7> kPathColumns = {
    "path", "file", "filename", "image", "image_path", "filepath", "img"};
constexpr std::array<std::string_view, 6> kLabelColumns = {"label",  "labels",   "class",
                                                           "target", "category", "y"};

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

// A decimal integer in [0, kMaxLabel], the whole token.
std::optional<int64_t> parse_id(std::string_view token) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (token.empty() || ec != std::errc() || end != token.data() + token.size()) return {};
  if (v < 0 || v > kMaxLabel) return {};
  return v;
}

// Calls f(line, line_number) for each line of `text` ('\n'-terminated or the last, a '\r'
// before the '\n' dropped), numbered from 1.
template <typename F>
void for_each_line(std::string_view text, F&& f) {
  int64_t line_number = 0;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t newline = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, newline - begin);
    begin = newline + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(line, line_number);
  }
}

// One sample as read: its path and label tokens (several for a multi-label row).
struct Row {
  int64_t line = 0;
  std::string path;
  std::vector<std::string> labels;
  bool has_label = false;  // false: a label-free list
};

// The legacy headerless list: path<TAB>integer label.
std::vector<Row> parse_headerless(std::string_view text, const std::string& list_name) {
  std::vector<Row> rows;
  for_each_line(text, [&](std::string_view line, int64_t line_number) {
    if (blank(line) || line.front() == '#') return;
    const size_t tab = line.rfind('\t');
    STOKER_CHECK_ARG(tab != std::string_view::npos,
                     "{}:{}: expected 'path<TAB>label', found no tab (a table needs a header "
                     "naming its path column: path, file, filename, image, ...)",
                     list_name, line_number);
    const std::string_view token = line.substr(tab + 1);
    int64_t label = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), label);
    STOKER_CHECK_ARG(
        !token.empty() && ec != std::errc::invalid_argument && end == token.data() + token.size(),
        "{}:{}: label '{}' is not an integer", list_name, line_number, token);
    STOKER_CHECK_ARG(ec != std::errc::result_out_of_range && label >= 0 && label <= kMaxLabel,
                     "{}:{}: label {} is out of range [0, {}]", list_name, line_number, token,
                     kMaxLabel);
    rows.push_back(Row{line_number, std::string(line.substr(0, tab)), {std::string(token)}, true});
  });
  return rows;
}

// RFC 4180 records: fields and the line each record starts on.
struct Record {
  int64_t line = 0;
  std::vector<std::string> fields;
};

std::vector<Record> parse_delimited(std::string_view text, char delimiter,
                                    const std::string& list_name) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte-order mark
  std::vector<Record> records;
  Record record;
  std::string field;
  int64_t line = 1;
  size_t i = 0;
  bool record_empty = true;  // nothing but an empty first field so far
  record.line = 1;
  const auto end_field = [&] {
    record.fields.push_back(std::move(field));
    field.clear();
  };
  const auto end_record = [&] {
    end_field();
    const bool is_blank = record_empty && record.fields.size() == 1 && blank(record.fields.front());
    if (!is_blank) records.push_back(std::move(record));
    record = Record{};
    record_empty = true;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' && field.empty()) {  // a quoted field
      const int64_t start_line = line;
      ++i;
      for (;;) {
        STOKER_CHECK_ARG(i < text.size(), "{}:{}: a quoted field is not closed", list_name,
                         start_line);
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (text[i] == '\n') ++line;
        field += text[i++];
      }
      record_empty = false;
      const bool at_end = i >= text.size() || text[i] == delimiter || text[i] == '\n' ||
                          (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n');
      STOKER_CHECK_ARG(at_end, "{}:{}: characters after a closing quote", list_name, line);
      continue;
    }
    if (c == delimiter) {
      end_field();
      record_empty = false;
      ++i;
    } else if (c == '\n' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      i += c == '\r' ? 2 : 1;
      end_record();
      ++line;
      record.line = line;
    } else {
      field += c;
      ++i;
    }
  }
  if (!field.empty() || !record.fields.empty()) end_record();
  return records;
}

// The column named `wanted`, else the first of `names` present; nullopt when none.
std::optional<size_t> find_column(const std::vector<std::string>& header, const std::string& wanted,
                                  const std::array<std::string_view, 7>* path_names,
                                  const std::array<std::string_view, 6>* label_names) {
  if (!wanted.empty()) {
    for (size_t c = 0; c < header.size(); ++c) {
      if (header[c] == wanted) return c;
    }
    return std::nullopt;
  }
  const auto try_names = [&](const auto& names) -> std::optional<size_t> {
    for (const std::string_view name : names) {
      for (size_t c = 0; c < header.size(); ++c) {
        if (util::lower(header[c]) == name) return c;
      }
    }
    return std::nullopt;
  };
  return path_names != nullptr ? try_names(*path_names) : try_names(*label_names);
}

bool is_table_header(const std::vector<std::string>& fields) {
  return find_column(fields, "", &kPathColumns, nullptr).has_value();
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
        all_ids = all_ids && parse_id(token).has_value();
        parts.emplace_back(token);
      }
      begin = end + 1;
    }
    if (all_ids) return parts;
  }
  if (!whole.empty()) out.emplace_back(whole);
  return out;
}

std::vector<Row> parse_table(std::string_view text, char delimiter, const std::string& list_name,
                             const FileListConfig& config) {
  const std::vector<Record> records = parse_delimited(text, delimiter, list_name);
  STOKER_CHECK_ARG(!records.empty(), "{}: no header and no samples", list_name);
  const std::vector<std::string>& header = records.front().fields;
  const std::optional<size_t> path_col =
      find_column(header, config.path_column, &kPathColumns, nullptr);
  STOKER_CHECK_ARG(path_col.has_value(),
                   "{}:{}: no {} column in the header ({}): name one path, file, filename, "
                   "image, image_path, filepath or img, or give the path column",
                   list_name, records.front().line,
                   config.path_column.empty() ? "path" : "'" + config.path_column + "'",
                   fmt::join(header, ", "));
  const std::optional<size_t> label_col =
      find_column(header, config.label_column, nullptr, &kLabelColumns);
  STOKER_CHECK_ARG(config.label_column.empty() || label_col.has_value(),
                   "{}:{}: no column '{}' in the header ({})", list_name, records.front().line,
                   config.label_column, fmt::join(header, ", "));
  std::vector<Row> rows;
  rows.reserve(records.size() - 1);
  for (size_t r = 1; r < records.size(); ++r) {
    const Record& rec = records[r];
    STOKER_CHECK_ARG(rec.fields.size() == header.size(), "{}:{}: {} fields, the header has {}",
                     list_name, rec.line, rec.fields.size(), header.size());
    Row row;
    row.line = rec.line;
    row.path = rec.fields[*path_col];
    if (label_col) {
      row.has_label = true;
      row.labels = split_labels(rec.fields[*label_col]);
      STOKER_CHECK_ARG(!row.labels.empty(), "{}:{}: empty label (column '{}')", list_name, rec.line,
                       header[*label_col]);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<Row> parse_json_lines(std::string_view text, const std::string& list_name,
                                  const FileListConfig& config) {
  std::vector<Row> rows;
  std::optional<bool> labelled;  // whether the list has labels: all rows or none
  for_each_line(text, [&](std::string_view line, int64_t line_number) {
    if (blank(line)) return;
    STOKER_CHECK_ARG(!json_nested_too_deep(line), "{}:{}: JSON nested deeper than {} levels",
                     list_name, line_number, kMaxJsonDepth);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      STOKER_THROW_ARG("{}:{}: not JSON: {}", list_name, line_number, e.what());
    }
    STOKER_CHECK_ARG(j.is_object(), "{}:{}: expected a JSON object", list_name, line_number);
    const auto key = [&](const std::string& wanted, const auto& names) -> std::string {
      if (!wanted.empty()) return j.contains(wanted) ? wanted : "";
      for (const std::string_view name : names) {
        if (j.contains(std::string(name))) return std::string(name);
      }
      return "";
    };
    const std::string path_key = key(config.path_column, kPathColumns);
    STOKER_CHECK_ARG(!path_key.empty() && j[path_key].is_string() && !j[path_key].empty(),
                     "{}:{}: no path: expected a string member {}", list_name, line_number,
                     config.path_column.empty() ? "\"path\" (or file, filename, image, ...)"
                                                : "\"" + config.path_column + "\"");
    Row row;
    row.line = line_number;
    row.path = j[path_key].get<std::string>();
    const std::string label_key = key(config.label_column, kLabelColumns);
    STOKER_CHECK_ARG(config.label_column.empty() || !label_key.empty(), "{}:{}: no member \"{}\"",
                     list_name, line_number, config.label_column);
    row.has_label = !label_key.empty();
    STOKER_CHECK_ARG(!labelled || *labelled == row.has_label,
                     "{}:{}: {} label where the lines before {}", list_name, line_number,
                     row.has_label ? "a" : "no", row.has_label ? "have none" : "have one");
    labelled = row.has_label;
    if (row.has_label) {
      row.labels = json_label_tokens(j[label_key], fmt::format("{}:{}", list_name, line_number));
    }
    rows.push_back(std::move(row));
  });
  return rows;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && util::lower(s.substr(s.size() - suffix.size())) == suffix;
}

}  // namespace
}  // namespace io

std::shared_ptr<Dataset> open_file_list(const std::filesystem::path& list,
                                        const FileListConfig& config) {
  const std::string list_name = list.string();
  STOKER_CHECK_ARG(!list_name.empty(), "file list: empty path");
  // The parsed table is cached for mapping (io/table_file.h), keyed by the list's identity
  // and stamp and the columns asked for: a changed list is parsed again.
  const std::filesystem::path dir = io::cache_dir_from_option("");
  struct stat before {};
  std::string canonical, key;
  std::filesystem::path cache;
  if (!dir.empty() && ::stat(list_name.c_str(), &before) == 0 && S_ISREG(before.st_mode)) {
    canonical = io::canonical_or_empty(list);
    if (!canonical.empty()) {
      key = io::list_cache_key(canonical, before, config);
      cache = dir / fmt::format("list-{:016x}.stktab", XXH3_64bits(key.data(), key.size()));
      if (std::optional<io::MappedTable> m = io::load_table_file(cache, key)) {
        return std::make_shared<io::TableDataset>("file-list", list_name,
                                                  io::list_prefix(list_name), std::move(m->samples),
                                                  std::move(m->classes), std::move(m->fingerprint));
      }
    }
  }
  io::ParsedList parsed;
  {
    std::vector<uint8_t> bytes;
    io::read_file(list_name, bytes, io::kMaxListBytes);
    parsed =
        io::parse_list(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                       list_name, config);
  }
  io::SampleView samples(std::move(parsed.table));
  std::string fingerprint = io::fingerprint(samples);
  // Cached only when the list did not change while it was read, and not just before.
  struct stat after {};
  if (!key.empty() && ::stat(list_name.c_str(), &after) == 0 &&
      io::list_cache_key(canonical, after, config) == key &&
      io::mtime_ns(after) < io::now_ns() - io::kRacyWindowNs &&
      io::store_table_file(cache, key, samples, parsed.classes, fingerprint)) {
    if (std::optional<io::MappedTable> m = io::load_table_file(cache, key)) {
      // The mapping replaces the parsed table, whose memory goes back to the system.
      samples = std::move(m->samples);
      ::malloc_trim(0);
    }
  }
  return std::make_shared<io::TableDataset>("file-list", list_name, io::list_prefix(list_name),
                                            std::move(samples), std::move(parsed.classes),
                                            std::move(fingerprint));
}

namespace io {

std::vector<std::string> json_label_tokens(const nlohmann::json& value, const std::string& where) {
  const auto token = [&](const nlohmann::json& v) {
    if (v.is_string() && !v.get<std::string>().empty()) return v.get<std::string>();
    STOKER_CHECK_ARG(
        v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= kMaxLabel,
        "{}: label {} is not a class name or an integer in [0, {}]", where, v.dump(), kMaxLabel);
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

ResolvedLabels resolve_labels(std::vector<std::vector<std::string>>& tokens, bool explicit_lists,
                              const std::string& name,
                              const std::function<std::string(size_t)>& where) {
  ResolvedLabels out;
  bool all_ids = true, multi = explicit_lists;
  for (std::vector<std::string>& sample : tokens) {
    if (!sample.empty() && sample.back().empty()) {
      sample.pop_back();
      multi = true;
    }
    for (const std::string& token : sample) all_ids = all_ids && parse_id(token);
    multi = multi || sample.size() > 1;
  }
  // Labels: ids when every label is a decimal integer, else class names sorted as ImageFolder
  // sorts its folders (byte order of UTF-8 = code point order), ids their positions.
  std::map<std::string, int64_t> names;
  if (all_ids) {
    int64_t max_label = -1;
    size_t max_at = 0;
    std::vector<int64_t> distinct;
    for (size_t i = 0; i < tokens.size(); ++i) {
      for (const std::string& t : tokens[i]) {
        const int64_t id = *parse_id(t);
        distinct.push_back(id);
        if (id > max_label) max_label = id, max_at = i;
      }
    }
    std::sort(distinct.begin(), distinct.end());
    const auto seen = static_cast<int64_t>(
        std::unique(distinct.begin(), distinct.end()) - distinct.begin());
    const int64_t bound = 2 * seen + 1024;
    STOKER_CHECK_ARG(max_label < bound,
                     "{}{}: label {} is far above the {} distinct label{} seen (ids make a class "
                     "each up to the largest, and must be below {} here): number the classes "
                     "0..N-1, or give class names instead of ids",
                     name, where ? ": " + where(max_at) : std::string(), max_label, seen,
                     seen == 1 ? "" : "s", bound);
    for (int64_t label = 0; label <= max_label; ++label) {
      out.classes.push_back(std::to_string(label));
    }
  } else {
    for (const auto& sample : tokens) {
      for (const std::string& t : sample) names.emplace(t, 0);
    }
    STOKER_CHECK_ARG(static_cast<int64_t>(names.size()) <= kMaxLabel + 1,
                     "{}: {} class names, more than {}", name, names.size(), kMaxLabel + 1);
    for (auto& [class_name, id] : names) {
      id = static_cast<int64_t>(out.classes.size());
      out.classes.push_back(class_name);
    }
  }
  const auto id_of = [&](const std::string& token) {
    return all_ids ? *parse_id(token) : names.at(token);
  };
  out.multi = multi;
  out.first.reserve(tokens.size());
  for (const auto& sample : tokens) {
    if (!multi) {
      out.first.push_back(sample.empty() ? kMissingLabel : id_of(sample.front()));
      continue;
    }
    std::vector<int32_t> set;
    for (const std::string& t : sample) set.push_back(static_cast<int32_t>(id_of(t)));
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    out.first.push_back(set.empty() ? -1 : set.front());
    out.values.insert(out.values.end(), set.begin(), set.end());
    out.ends.push_back(out.values.size());
  }
  return out;
}

ParsedList parse_list(std::string_view text, const std::string& list_name,
                      const FileListConfig& config) {
  std::vector<io::Row> rows;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (io::ends_with(list_name, ".jsonl") || io::ends_with(list_name, ".ndjson") ||
      (first != std::string_view::npos && text[first] == '{')) {
    rows = io::parse_json_lines(text, list_name, config);
  } else if (io::ends_with(list_name, ".csv")) {
    rows = io::parse_table(text, ',', list_name, config);
  } else {
    // A tab-separated table when its first record names a path column, else headerless lines.
    const size_t first_line_end = std::min(text.find('\n'), text.size());
    const auto head = io::parse_delimited(text.substr(0, first_line_end), '\t', list_name);
    const bool table =
        !config.path_column.empty() || (!head.empty() && io::is_table_header(head.front().fields));
    rows = table ? io::parse_table(text, '\t', list_name, config)
                 : io::parse_headerless(text, list_name);
  }
  STOKER_CHECK_ARG(!rows.empty(), "{}: no samples", list_name);

  std::vector<std::vector<std::string>> tokens;
  const bool labelled = rows.front().has_label;
  if (labelled) {
    tokens.reserve(rows.size());
    for (io::Row& row : rows) tokens.push_back(std::move(row.labels));
  }
  const io::ResolvedLabels labels = io::resolve_labels(
      tokens, false, list_name, [&](size_t i) { return fmt::format("line {}", rows[i].line); });
  ParsedList out;
  for (size_t r = 0; r < rows.size(); ++r) {
    const io::Row& row = rows[r];
    STOKER_CHECK_ARG(!row.path.empty(), "{}:{}: empty path", list_name, row.line);
    STOKER_CHECK_ARG(row.path.find('\0') == std::string::npos,
                     "{}:{}: the path contains a NUL byte", list_name, row.line);
    out.table.add(row.path, -1, labelled ? labels.first[r] : -1);
    if (labels.multi) out.table.add_label_set(labels.set(r));
  }
  out.classes = labels.classes;
  return out;
}

std::string list_prefix(const std::string& list_name) {
  // Relative paths are relative to the list's folder.
  const size_t slash = list_name.rfind('/');
  return slash == std::string::npos ? "" : list_name.substr(0, slash + 1);
}

std::string canonical_or_empty(const std::filesystem::path& path) {
  std::error_code ec;
  std::string canonical = std::filesystem::canonical(path, ec).string();
  return ec ? "" : canonical;
}

std::string list_cache_key(const std::string& canonical, const struct stat& st,
                           const FileListConfig& config) {
  // The layout version of what is cached, then everything the table depends on.
  return fmt::format("stoker file list 1\n{}\npath_column {}\nlabel_column {}\n{} {} {} {}\n",
                     canonical, config.path_column, config.label_column,
                     static_cast<uint64_t>(st.st_size), mtime_ns(st),
                     static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_dev));
}

std::shared_ptr<Dataset> file_list_from_text(std::string_view text, const std::string& list_name,
                                             const FileListConfig& config) {
  ParsedList parsed = parse_list(text, list_name, config);
  return std::make_shared<io::TableDataset>("file-list", list_name, list_prefix(list_name),
                                            SampleView(std::move(parsed.table)),
                                            std::move(parsed.classes));
}

}  // namespace io
}  // namespace stoker
