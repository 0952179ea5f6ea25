#include "io/table_dataset.h"

#include <fmt/format.h>

#include "io/file_util.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker::io {

TableDataset::TableDataset(std::string kind, std::string location, std::string prefix,
                           SampleView samples, std::vector<std::string> classes,
                           std::string fingerprint)
    : kind_(std::move(kind)),
      location_(std::move(location)),
      prefix_(std::move(prefix)),
      samples_(std::move(samples)),
      classes_(std::move(classes)),
      fingerprint_(fingerprint.empty() ? io::fingerprint(samples_) : std::move(fingerprint)) {}

int64_t TableDataset::label(int64_t index) const {
  check(index);
  const int64_t label = samples_.label(index);
  // A mapped table is trusted as far as its checksum: the range is checked where it is used.
  STOKER_CHECK(label >= -1 && label < static_cast<int64_t>(classes_.size()),
               "{}: sample {} has label {}, outside [-1, {}) (a damaged cache file?)", location_,
               index, label, classes_.size());
  return label;
}

std::span<const int32_t> TableDataset::label_set(int64_t index) const {
  check(index);
  if (!samples_.multi_label()) return {};
  const std::span<const int32_t> set = samples_.label_set(index);
  for (const int32_t id : set) {
    STOKER_CHECK(id >= 0 && id < static_cast<int64_t>(classes_.size()),
                 "{}: sample {} has label {}, outside [0, {}) (a damaged cache file?)", location_,
                 index, id, classes_.size());
  }
  return set;
}

std::string TableDataset::name(int64_t index) const {
  check(index);
  const std::string_view path = samples_.path(index);
  STOKER_CHECK(!path.empty(), "{}: sample {} has an empty path (a damaged cache file?)", location_,
               index);
  return path.front() == '/' ? std::string(path) : prefix_ + std::string(path);
}

void TableDataset::read(int64_t index, std::vector<uint8_t>& out) const {
  read_file(name(index), out);
}

std::string TableDataset::describe() const {
  return fmt::format("{} {} ({} samples, {} classes)", kind_, location_, size(), classes_.size());
}

void TableDataset::check(int64_t index) const {
  STOKER_CHECK(index >= 0 && index < size(), "{}: sample index {} out of range [0, {})", location_,
               index, size());
}

}  // namespace stoker::io
