// A dataset of files named by a SampleTable (private to src/io): the one body shared by
// ImageFolder and file lists, which differ only in how they build the table.
// Thread-safety: immutable after construction.
#pragma once

#include <string>
#include <vector>

#include "io/sample_table.h"
#include "stoker/dataset.h"

namespace stoker::io {

class TableDataset final : public Dataset {
 public:
  // kind: "image-folder" or "file-list"; location: the folder or list as the user named it;
  // prefix: prepended to relative paths ("" or ending in '/'); absolute paths stay as they are.
  // fingerprint: the listing's (io::fingerprint), computed here when empty.
  TableDataset(std::string kind, std::string location, std::string prefix, SampleView samples,
               std::vector<std::string> classes, std::string fingerprint = "");

  int64_t size() const override { return samples_.size(); }
  int64_t label(int64_t index) const override;
  bool multi_label() const override { return samples_.multi_label(); }
  std::span<const int32_t> label_set(int64_t index) const override;
  std::string name(int64_t index) const override;
  void read(int64_t index, std::vector<uint8_t>& out) const override;
  const std::vector<std::string>& classes() const override { return classes_; }
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
};

}  // namespace stoker::io
