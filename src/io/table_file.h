// A dataset's listing stored for mapping (private to src/io): a file list's parsed table in
// CACHE_DIR/list-<XXH3 of its key>.stktab, so that the next open maps it instead of parsing the
// list again and holds only the pages it touches (docs/format.md, "Table files").
//
// The file (little-endian; every array 8-byte aligned from the start of the file):
//
//   offset  size  field
//        0     8  magic "STKTAB01"
//        8     8  u64 file size
//       16     8  u64 XXH3-64 of bytes [32, file size)
//       24     8  u64 reserved, 0
//       32        u32 length + key bytes (what the table was built from: checked on load)
//                 u32 length + fingerprint (the dataset's, 16 hex digits)
//                 u64 class count, then u32 length + bytes per class name
//                 padding to 8
//                 u64 n, u64 path bytes P, u64 label values V, u64 multi-label (0 or 1)
//                 u64 ends[n], i64 sizes[n], i64 labels[n],
//                 [u64 label_ends[n], i32 label_values[V], padding to 8]  (multi-label only)
//                 P path bytes
//
// Like every cache, a table file is never trusted: a bad magic, size, checksum, key or layout
// is a miss (debug log), never an error. The checksum is checked with reads, not through the
// mapping, so that a load adds no resident pages; after it the arrays are used in place, and
// SampleView checks every offset it follows.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/sample_table.h"

namespace stoker::io {

struct MappedTable {
  SampleView samples;
  std::vector<std::string> classes;
  std::string fingerprint;
};

// Writes `table` to `file` atomically (a warning and false when it cannot).
bool store_table_file(const std::filesystem::path& file, std::string_view key,
                      const SampleView& table, const std::vector<std::string>& classes,
                      const std::string& fingerprint);

// Maps `file` when it is a complete table file built from `key`; nullopt (debug log) otherwise.
std::optional<MappedTable> load_table_file(const std::filesystem::path& file, std::string_view key);

// A table file written as its samples come, in bounded memory: each column goes to a temporary
// file in `folder` as samples are added, and finish() writes the table file (the bytes
// store_table_file writes for the same samples) and renames it into place, computing the
// fingerprint on the way. The temporary columns are removed on destruction. Not thread-safe.
class TableFileWriter {
 public:
  TableFileWriter(const std::filesystem::path& folder, bool multi_label);
  ~TableFileWriter();
  TableFileWriter(const TableFileWriter&) = delete;
  TableFileWriter& operator=(const TableFileWriter&) = delete;

  // False once a write failed (the folder is full, gone or not writable).
  bool ok() const { return error_ == 0; }
  // The next sample; `set` its label ids when the table is multi-label.
  void add(std::string_view path, int64_t size, int64_t label, std::span<const int32_t> set);
  // Writes the table file `file` for `key`, its fingerprint in `fingerprint`. False (a
  // warning) when it could not.
  bool finish(const std::filesystem::path& file, std::string_view key,
              const std::vector<std::string>& classes, std::string& fingerprint);

 private:
  struct Column;
  enum Part { kEnds, kSizes, kLabels, kLabelEnds, kLabelValues, kPaths, kColumns };
  bool multi_;
  int error_ = 0;                                 // the first write's errno
  std::vector<std::unique_ptr<Column>> columns_;  // by Part
  uint64_t n_ = 0, path_bytes_ = 0, values_ = 0;
  std::unique_ptr<FingerprintBuilder> fingerprint_;
};

}  // namespace stoker::io
