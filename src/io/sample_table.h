// The listing of a dataset: paths, sizes and labels in index order (private to src/io).
//
// Paths live in one string so that a million-sample index costs a few allocations, not a
// million, and so that the index cache can load them with one copy.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::io {

struct SampleTable {
  std::string paths;            // every sample's path, concatenated
  std::vector<uint64_t> ends;   // ends[i]: end offset of sample i's path in `paths`
  std::vector<int64_t> sizes;   // file size in bytes; -1 = unknown (dangling link, file list)
  std::vector<int64_t> labels;  // multi-label: the set's first id, or -1 for an empty set
  // Multi-label tables only (empty otherwise): sample i's class ids, sorted and unique, are
  // label_values[label_ends[i - 1] .. label_ends[i]).
  std::vector<uint64_t> label_ends;
  std::vector<int32_t> label_values;

  int64_t size() const { return static_cast<int64_t>(ends.size()); }
  std::string_view path(int64_t index) const {
    const uint64_t begin = index == 0 ? 0 : ends[index - 1];
    return std::string_view(paths).substr(begin, ends[index] - begin);
  }
  void add(std::string_view path, int64_t size, int64_t label) {
    paths.append(path);
    ends.push_back(paths.size());
    sizes.push_back(size);
    labels.push_back(label);
  }
  void add_label_set(std::span<const int32_t> set) {
    label_values.insert(label_values.end(), set.begin(), set.end());
    label_ends.push_back(label_values.size());
  }
  bool multi_label() const { return !label_ends.empty(); }
  std::span<const int32_t> label_set(int64_t index) const {
    const uint64_t begin = index == 0 ? 0 : label_ends[index - 1];
    return std::span<const int32_t>(label_values).subspan(begin, label_ends[index] - begin);
  }
};

// XXH3-64 of the listing in index order, as 16 lowercase hex digits. Each sample contributes
// (u64 path length, path bytes, i64 size, i64 label), little-endian, so that no two listings
// share an encoding; a multi-label table then adds each sample's (u64 count, i32 ids). Index
// order is what ranks must agree on; for an image folder it is
// the sorted order torchvision defines.
std::string fingerprint(const SampleTable& table);

}  // namespace stoker::io
