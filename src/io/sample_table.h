// The listing of a dataset: paths, sizes and labels in index order (private to src/io).
//
// Paths live in one string so that a million-sample index costs a few allocations, not a
// million, and so that the index cache can load them with one copy. A SampleTable is built;
// a SampleView reads one, held in memory or mapped from a table file (io/table_file.h).
#pragma once

#include <cstdint>
#include <memory>
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

// Read-only access to a listing whose arrays live elsewhere: a SampleTable it owns, or a
// mapped table file (kept alive by `storage`). The arrays of a mapped file are trusted only
// as far as its checksum goes, so every access checks the offsets it follows (a bad file is
// an error naming it, never a read out of bounds). Thread-safety: immutable.
class SampleView {
 public:
  struct Arrays {
    std::string_view paths;
    std::span<const uint64_t> ends;
    std::span<const int64_t> sizes;
    std::span<const int64_t> labels;
    std::span<const uint64_t> label_ends;  // multi-label only
    std::span<const int32_t> label_values;
  };

  SampleView() = default;
  // A view of `table`, which it keeps.
  explicit SampleView(SampleTable table);
  // A view of `table`, which must outlive it.
  static SampleView of(const SampleTable& table);
  // A view of arrays owned by `storage`; `source` names them in errors.
  SampleView(Arrays arrays, std::shared_ptr<const void> storage, std::string source);

  int64_t size() const { return static_cast<int64_t>(a_.ends.size()); }
  std::string_view path(int64_t index) const;
  int64_t file_size(int64_t index) const { return a_.sizes[index]; }
  int64_t label(int64_t index) const { return a_.labels[index]; }
  bool multi_label() const { return !a_.label_ends.empty(); }
  std::span<const int32_t> label_set(int64_t index) const;
  const Arrays& arrays() const { return a_; }

 private:
  [[noreturn]] void corrupt(int64_t index, const char* what) const;

  Arrays a_;
  std::shared_ptr<const void> storage_;
  std::string source_;
};

// XXH3-64 of the listing in index order, as 16 lowercase hex digits. Each sample contributes
// (u64 path length, path bytes, i64 size, i64 label), little-endian, so that no two listings
// share an encoding; a multi-label table then adds each sample's (u64 count, i32 ids). Index
// order is what ranks must agree on; for an image folder it is
// the sorted order torchvision defines.
std::string fingerprint(const SampleView& table);

// The same fingerprint, fed sample by sample (a table written as it is read, never whole in
// memory): sample() for each sample in index order, then, for a multi-label table,
// label_set() for each in index order, then digest().
class FingerprintBuilder {
 public:
  FingerprintBuilder();
  ~FingerprintBuilder();
  void sample(std::string_view path, int64_t size, int64_t label);
  void label_set(std::span<const int32_t> ids);
  std::string digest();

 private:
  struct Hasher;
  std::unique_ptr<Hasher> hasher_;
};

}  // namespace stoker::io
