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
#include "stoker/dataset.h"
#include "stoker/error.h"

namespace stoker {
namespace io {
namespace {

// classes() holds one name per label up to the largest, so the largest bounds its memory.
constexpr int64_t kMaxLabel = (int64_t{1} << 24) - 1;
// Lists are read whole; this only stops absurd files.
constexpr int64_t kMaxListBytes = int64_t{1} << 36;

class FileList final : public Dataset {
 public:
  FileList(std::string list, SampleTable samples, int64_t max_label)
      : list_(std::move(list)), samples_(std::move(samples)) {
    const size_t slash = list_.rfind('/');
    if (slash != std::string::npos) prefix_ = list_.substr(0, slash + 1);
    classes_.reserve(max_label + 1);
    for (int64_t label = 0; label <= max_label; ++label) classes_.push_back(std::to_string(label));
    fingerprint_ = io::fingerprint(samples_);
  }

  int64_t size() const override { return samples_.size(); }
  int64_t label(int64_t index) const override {
    check(index);
    return samples_.labels[index];
  }
  std::string name(int64_t index) const override {
    check(index);
    const std::string_view path = samples_.path(index);
    return path.front() == '/' ? std::string(path) : prefix_ + std::string(path);
  }
  void read(int64_t index, std::vector<uint8_t>& out) const override {
    read_file(name(index), out);
  }
  const std::vector<std::string>& classes() const override { return classes_; }
  std::string fingerprint() const override { return fingerprint_; }
  std::string describe() const override {
    return fmt::format("file-list {} ({} samples, {} classes)", list_, size(), classes_.size());
  }

 private:
  void check(int64_t index) const {
    STOKER_CHECK(index >= 0 && index < size(), "{}: sample index {} out of range [0, {})", list_,
                 index, size());
  }

  std::string list_;
  std::string prefix_;  // the list's folder and a '/', or "" for a list in the current folder
  SampleTable samples_;
  std::vector<std::string> classes_;
  std::string fingerprint_;
};

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

}  // namespace
}  // namespace io

std::shared_ptr<Dataset> open_file_list(const std::filesystem::path& list) {
  const std::string list_name = list.string();
  STOKER_CHECK(!list_name.empty(), "file list: empty path");
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
    STOKER_CHECK(tab != std::string_view::npos, "{}:{}: expected 'path<TAB>label', found no tab",
                 list_name, line_number);
    const std::string_view path = line.substr(0, tab);
    const std::string_view token = line.substr(tab + 1);
    STOKER_CHECK(!path.empty(), "{}:{}: empty path", list_name, line_number);
    STOKER_CHECK(path.find('\0') == std::string_view::npos, "{}:{}: the path contains a NUL byte",
                 list_name, line_number);
    int64_t label = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), label);
    STOKER_CHECK(
        !token.empty() && ec != std::errc::invalid_argument && end == token.data() + token.size(),
        "{}:{}: label '{}' is not an integer", list_name, line_number, token);
    STOKER_CHECK(ec != std::errc::result_out_of_range && label >= 0 && label <= io::kMaxLabel,
                 "{}:{}: label {} is out of range [0, {}]", list_name, line_number, token,
                 io::kMaxLabel);
    samples.add(path, -1, label);
    max_label = std::max(max_label, label);
  }
  STOKER_CHECK(samples.size() > 0, "{}: no samples", list_name);
  return std::make_shared<io::FileList>(list_name, std::move(samples), max_label);
}

}  // namespace stoker
