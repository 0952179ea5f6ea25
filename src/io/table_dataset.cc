#include "io/table_dataset.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include <algorithm>

#include "io/file_util.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker::io {

ListFields::ListFields(std::vector<std::string> field_names)
    : names(std::move(field_names)),
      bytes(names.size()),
      ends(names.size()),
      present(names.size()) {}

void ListFields::add(const std::vector<std::optional<std::string>>& values) {
  for (size_t k = 0; k < names.size(); ++k) {
    const bool has = k < values.size() && values[k].has_value();
    if (has) bytes[k] += *values[k];
    ends[k].push_back(bytes[k].size());
    present[k].push_back(has ? 1 : 0);
  }
}

TableDataset::TableDataset(std::string kind, std::string location, std::string prefix,
                           SampleView samples, std::vector<std::string> classes,
                           std::string fingerprint, ListFields fields)
    : kind_(std::move(kind)),
      location_(std::move(location)),
      prefix_(std::move(prefix)),
      samples_(std::move(samples)),
      classes_(std::move(classes)),
      fingerprint_(fingerprint.empty() ? io::fingerprint(samples_) : std::move(fingerprint)),
      fields_(std::move(fields)) {
  if (!fields_.names.empty()) {  // the same list with other fields is another dataset
    const std::string id =
        fmt::format("{}\nfields {}", fingerprint_, fmt::join(fields_.names, ","));
    fingerprint_ = fmt::format("{:016x}", XXH3_64bits(id.data(), id.size()));
  }
}

bool TableDataset::has_field(const std::string& field) const {
  return std::find(fields_.names.begin(), fields_.names.end(), field) != fields_.names.end();
}

void TableDataset::read_field(int64_t index, const std::string& field, std::string& out) const {
  check(index);
  const auto at = std::find(fields_.names.begin(), fields_.names.end(), field);
  if (at == fields_.names.end()) return Dataset::read_field(index, field, out);
  const auto k = static_cast<size_t>(at - fields_.names.begin());
  const auto i = static_cast<size_t>(index);
  STOKER_CHECK_DATA(fields_.present[k][i], "{}: no '{}' for the field (its line has none)",
                    name(index), field);
  const uint64_t begin = i == 0 ? 0 : fields_.ends[k][i - 1];
  out.assign(fields_.bytes[k], begin, fields_.ends[k][i] - begin);
}

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
