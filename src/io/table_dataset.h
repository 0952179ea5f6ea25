// A dataset of files named by a SampleTable (private to src/io): the one body shared by
// ImageFolder and file lists, which differ only in how they build the table.
// Thread-safety: immutable after construction.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/sample_table.h"
#include "stoker/dataset.h"

namespace stoker::io {

// A list's per-sample fields (FileListConfig::field_columns), packed: field k of sample i is
// bytes[k][ends[k][i - 1], ends[k][i]) (from 0 for i = 0), absent where present[k][i] is 0.
struct ListFields {
  ListFields() = default;
  explicit ListFields(std::vector<std::string> field_names);
  // The next sample's values, one per name.
  void add(const std::vector<std::optional<std::string>>& values);
  std::vector<std::string> names;
  std::vector<std::string> bytes;
  std::vector<std::vector<uint64_t>> ends;
  std::vector<std::vector<uint8_t>> present;
};

class TableDataset final : public Dataset {
 public:
  // kind: "image-folder" or "file-list"; location: the folder or list as the user named it;
  // prefix: prepended to relative paths ("" or ending in '/'); absolute paths stay as they are.
  // fingerprint: the listing's (io::fingerprint), computed here when empty.
  // fields: a list's per-sample fields (the fingerprint then covers their names).
  TableDataset(std::string kind, std::string location, std::string prefix, SampleView samples,
               std::vector<std::string> classes, std::string fingerprint = "",
               ListFields fields = {});

  int64_t size() const override { return samples_.size(); }
  int64_t label(int64_t index) const override;
  bool multi_label() const override { return samples_.multi_label(); }
  std::span<const int32_t> label_set(int64_t index) const override;
  std::string name(int64_t index) const override;
  void read(int64_t index, std::vector<uint8_t>& out) const override;
  const std::vector<std::string>& classes() const override { return classes_; }
  bool has_field(const std::string& field) const override;
  void read_field(int64_t index, const std::string& field, std::string& out) const override;
  // A column's values are text (a JSON line's non-string member as its JSON text).
  FieldKind field_kind(const std::string& /*field*/) const override { return FieldKind::kText; }
  std::string fingerprint() const override { return fingerprint_; }
  std::string describe() const override;

 private:
  void check(int64_t index) const;

  std::string kind_;
  std::string location_;
  std::string prefix_;
  SampleView samples_;
  std::vector<std::string> classes_;
  std::string fingerprint_;
  ListFields fields_;
};

}  // namespace stoker::io
