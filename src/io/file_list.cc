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
// A list is read twice, a chunk at a time (io/list_rows.h): the first pass checks every row
// and counts its labels (io/list_labels.h), the second writes the table file that later opens
// map (io/table_file.h), so the first open of a list of 10^8 lines needs no more memory than
// one of a thousand. Without a cache folder the table is built in memory.
//
// Opening a list never touches the listed files: on a network file system a million stats
// would cost what the list exists to avoid, so sizes are unknown (-1) and the fingerprint
// covers the paths as written and the labels.
#include "io/file_list.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "io/cache_file.h"
#include "io/file_util.h"
#include "io/index_cache.h"
#include "io/list_labels.h"
#include "io/list_rows.h"
#include "io/sample_table.h"
#include "io/table_dataset.h"
#include "io/table_file.h"
#include "stoker/dataset.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker {
namespace io {
namespace {

// Lists read whole into memory (without a cache folder); this only stops absurd files.
constexpr int64_t kMaxListBytes = int64_t{1} << 36;

// The list at `list_name` (whose stat is `before`), streamed into the table file `cache` for
// `key`: its mapping. The file is kept for later opens when the list did not change while it
// was read (and not just before: a change within the clock's resolution would keep the stamp);
// otherwise it is mapped once and removed. nullopt (a warning) when the table file cannot be
// written: the caller reads the list in memory.
std::optional<MappedTable> stream_list(const std::string& list_name, const FileListConfig& config,
                                       const std::filesystem::path& cache, const std::string& key,
                                       const std::string& canonical) {
  uint64_t size = 0;
  const UniqueFd fd = open_regular_file(list_name, list_name, size);
  const ListBytes bytes = [&](const std::function<void(std::string_view)>& each) {
    std::vector<uint8_t> chunk(size_t{1} << 20);
    for (uint64_t at = 0;;) {
      const ssize_t n = ::pread(fd.get(), chunk.data(), chunk.size(), static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) STOKER_THROW_IO(errno, list_name, "{}: {}", list_name, errno_message(errno));
      if (n == 0) return;
      each(std::string_view(reinterpret_cast<const char*>(chunk.data()), static_cast<size_t>(n)));
      at += static_cast<uint64_t>(n);
    }
  };
  std::vector<uint8_t> start(std::min<uint64_t>(size, kListFormBytes));
  if (const int error = pread_fully(fd.get(), 0, start); error > 0) {
    STOKER_THROW_IO(error, list_name, "{}: {}", list_name, errno_message(error));
  }
  std::unique_ptr<TableFileWriter> writer;
  const std::vector<std::string> classes = read_list(
      std::string_view(reinterpret_cast<const char*>(start.data()), start.size()), bytes, list_name,
      config,
      [&](bool multi) { writer = std::make_unique<TableFileWriter>(cache.parent_path(), multi); },
      [&](std::string_view path, int64_t label, std::span<const int32_t> set) {
        writer->add(path, -1, label, set);
      });
  struct stat after {};
  const bool keep = ::stat(list_name.c_str(), &after) == 0 &&
                    list_cache_key(canonical, after, config) == key &&
                    mtime_ns(after) < now_ns() - kRacyWindowNs;
  const std::filesystem::path file =
      keep ? cache : std::filesystem::path(cache.string() + temporary_suffix());
  std::string fingerprint;
  if (!writer->finish(file, key, classes, fingerprint)) return std::nullopt;
  std::optional<MappedTable> mapped = load_table_file(file, key);
  if (!keep) ::unlink(file.c_str());  // the mapping stays
  return mapped;
}

}  // namespace

std::vector<std::string> read_list(std::string_view start, const ListBytes& bytes,
                                   const std::string& list_name, const FileListConfig& config,
                                   const std::function<void(bool multi_label)>& begin,
                                   const std::function<void(std::string_view path, int64_t label,
                                                            std::span<const int32_t> set)>& add,
                                   const std::function<void(const RowFields&)>& fields) {
  const ListForm form = list_form(start.substr(0, kListFormBytes), list_name, config);
  // Pass 1: every row checked, the labels counted. A path's fault is reported after the labels'
  // (as when the rows were all read first).
  LabelCensus census;
  int64_t rows = 0;
  bool labelled = false;
  std::string path_fault;
  {
    RowReader reader(form, list_name, config, [&](Row&& row) {
      if (rows++ == 0) labelled = row.has_label;
      if (labelled) census.add(row.labels, row.line);
      if (path_fault.empty() && row.path.empty()) {
        path_fault = fmt::format("{}:{}: empty path", list_name, row.line);
      } else if (path_fault.empty() && row.path.find('\0') != std::string::npos) {
        path_fault = fmt::format("{}:{}: the path contains a NUL byte", list_name, row.line);
      }
    });
    bytes([&](std::string_view chunk) { reader.feed(chunk); });
    reader.finish();
  }
  STOKER_CHECK_ARG(rows > 0, "{}: no samples", list_name);
  census.settle(list_name, [](int64_t line) { return fmt::format("line {}", line); });
  STOKER_CHECK_ARG(path_fault.empty(), "{}", path_fault);

  // Pass 2: the samples. Only a list changed in between can differ from pass 1.
  begin(census.multi());
  int64_t second = 0;
  std::vector<int32_t> set;
  RowReader reader(form, list_name, config, [&](Row&& row) {
    ++second;
    const int64_t label = labelled ? census.label(row.labels, set) : -1;
    STOKER_CHECK_ARG(label >= kMissingLabel && second <= rows,
                     "{}:{}: the list changed while it was read: open it again", list_name,
                     row.line);
    add(row.path, label, set);
    if (fields) fields(row.fields);
  });
  bytes([&](std::string_view chunk) { reader.feed(chunk); });
  reader.finish();
  STOKER_CHECK_ARG(second == rows, "{}: the list changed while it was read: open it again",
                   list_name);
  return census.classes();
}

ParsedList parse_list(std::string_view text, const std::string& list_name,
                      const FileListConfig& config) {
  ParsedList out;
  out.fields = ListFields(config.field_columns);
  bool multi = false;
  out.classes = read_list(
      text, [&](const std::function<void(std::string_view)>& each) { each(text); }, list_name,
      config, [&](bool multi_label) { multi = multi_label; },
      [&](std::string_view path, int64_t label, std::span<const int32_t> set) {
        out.table.add(path, -1, label);
        if (multi) out.table.add_label_set(set);
      },
      [&](const RowFields& row) { out.fields.add(row); });
  return out;
}

}  // namespace io

std::shared_ptr<Dataset> open_file_list(const std::filesystem::path& list,
                                        const FileListConfig& config) {
  const std::string list_name = list.string();
  STOKER_CHECK_ARG(!list_name.empty(), "file list: empty path");
  // The table is cached for mapping (io/table_file.h), keyed by the list's identity and stamp
  // and the columns asked for: a changed list is read again.
  const std::filesystem::path dir = io::cache_dir_from_option("");
  struct stat before {};
  // A list with fields is held in memory: the table file has no place for them.
  if (config.field_columns.empty() && !dir.empty() && ::stat(list_name.c_str(), &before) == 0 &&
      S_ISREG(before.st_mode)) {
    const std::string canonical = io::canonical_or_empty(list);
    if (!canonical.empty()) {
      const std::string key = io::list_cache_key(canonical, before, config);
      const std::filesystem::path cache =
          dir / fmt::format("list-{:016x}.stktab", XXH3_64bits(key.data(), key.size()));
      std::optional<io::MappedTable> m = io::load_table_file(cache, key);
      if (!m) m = io::stream_list(list_name, config, cache, key, canonical);
      if (m) {
        return std::make_shared<io::TableDataset>("file-list", list_name,
                                                  io::list_prefix(list_name), std::move(m->samples),
                                                  std::move(m->classes), std::move(m->fingerprint));
      }
    }
  }
  std::vector<uint8_t> bytes;
  io::read_file(list_name, bytes, io::kMaxListBytes);
  return io::file_list_from_text(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), list_name,
      config);
}

namespace io {

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
  return std::make_shared<io::TableDataset>(
      "file-list", list_name, list_prefix(list_name), SampleView(std::move(parsed.table)),
      std::move(parsed.classes), "", std::move(parsed.fields));
}

}  // namespace io
}  // namespace stoker
