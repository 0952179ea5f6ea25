#include "io/table_dataset.h"

#include <fmt/format.h>

#include "io/file_util.h"
#include "stoker/error.h"

namespace stoker::io {

TableDataset::TableDataset(std::string kind, std::string location, std::string prefix,
                           SampleTable samples, std::vector<std::string> classes)
    : kind_(std::move(kind)),
      location_(std::move(location)),
      prefix_(std::move(prefix)),
      samples_(std::move(samples)),
      classes_(std::move(classes)),
      fingerprint_(io::fingerprint(samples_)) {}

int64_t TableDataset::label(int64_t index) const {
  check(index);
  return samples_.labels[index];
}

std::span<const int32_t> TableDataset::label_set(int64_t index) const {
  check(index);
  return samples_.multi_label() ? samples_.label_set(index) : std::span<const int32_t>();
}

std::string TableDataset::name(int64_t index) const {
  check(index);
  const std::string_view path = samples_.path(index);
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
