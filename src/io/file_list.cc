// File list: `path<TAB>label` lines (see stoker/dataset.h).
//
// Parsing rules: lines end with '\n' (a '\r' before it is dropped, for lists written on
// Windows); a line that is empty or only spaces and tabs, or whose first character is '#', is
// skipped; otherwise the label follows the LAST tab, so a path may itself contain tabs. The
// label is a decimal integer in [0, kMaxLabel]. Opening a list never touches the listed files:
// on a network file system a million stats would cost what the list exists to avoid, so
// sizes are unknown (-1) and the fingerprint covers the paths as written and the labels.
#include <charconv>
#include <string_view>

#include "io/file_util.h"
#include "io/sample_table.h"
#include "io/table_dataset.h"
#include "stoker/dataset.h"
#include "stoker/error.h"

namespace stoker {
namespace io {
namespace {

// classes() holds one name per label up to the largest, so the largest bounds its memory.
constexpr int64_t kMaxLabel = (int64_t{1} << 24) - 1;
// Lists are read whole; this only stops absurd files.
constexpr int64_t kMaxListBytes = int64_t{1} << 36;

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

}  // namespace
}  // namespace io

std::shared_ptr<Dataset> open_file_list(const std::filesystem::path& list) {
  const std::string list_name = list.string();
  STOKER_CHECK_ARG(!list_name.empty(), "file list: empty path");
  std::vector<uint8_t> bytes;
  io::read_file(list_name, bytes, io::kMaxListBytes);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());

  io::SampleTable samples;
  int64_t max_label = -1;
  int64_t line_number = 0;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t newline = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, newline - begin);
    begin = newline + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (io::blank(line) || line.front() == '#') continue;

    const size_t tab = line.rfind('\t');
    STOKER_CHECK_ARG(tab != std::string_view::npos,
                     "{}:{}: expected 'path<TAB>label', found no tab", list_name, line_number);
    const std::string_view path = line.substr(0, tab);
    const std::string_view token = line.substr(tab + 1);
    STOKER_CHECK_ARG(!path.empty(), "{}:{}: empty path", list_name, line_number);
    STOKER_CHECK_ARG(path.find('\0') == std::string_view::npos,
                     "{}:{}: the path contains a NUL byte", list_name, line_number);
    int64_t label = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), label);
    STOKER_CHECK_ARG(
        !token.empty() && ec != std::errc::invalid_argument && end == token.data() + token.size(),
        "{}:{}: label '{}' is not an integer", list_name, line_number, token);
    STOKER_CHECK_ARG(ec != std::errc::result_out_of_range && label >= 0 && label <= io::kMaxLabel,
                     "{}:{}: label {} is out of range [0, {}]", list_name, line_number, token,
                     io::kMaxLabel);
    samples.add(path, -1, label);
    max_label = std::max(max_label, label);
  }
  STOKER_CHECK_ARG(samples.size() > 0, "{}: no samples", list_name);
  // Relative paths are relative to the list's folder.
  const size_t slash = list_name.rfind('/');
  std::string prefix = slash == std::string::npos ? "" : list_name.substr(0, slash + 1);
  std::vector<std::string> classes;
  classes.reserve(static_cast<size_t>(max_label) + 1);
  for (int64_t label = 0; label <= max_label; ++label) classes.push_back(std::to_string(label));
  return std::make_shared<io::TableDataset>("file-list", list_name, std::move(prefix),
                                            std::move(samples), std::move(classes));
}

}  // namespace stoker
