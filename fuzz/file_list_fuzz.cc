// libFuzzer harness for the label-list reader (src/io/file_list.h): headerless lines, CSV and
// TSV tables, JSON lines.
//
// Input: one byte choosing the form by the list's name (.txt, .csv, .tsv, .jsonl; low 2 bits)
// and the chunk size of a second read (high 6 bits: 1 to 64 bytes), then the list's text. The
// reader must either throw stoker::Error or return a dataset whose every sample has a name, a
// label in [-1, classes) and, for a multi-label list, a sorted set of ids below the class
// count; the fingerprint is computed. Read again in small chunks (as a file is streamed), the
// list must give the same samples, classes and error. The dataset is opened a second time
// keeping a "caption" column as a field (FileListConfig::field_columns): it must throw
// stoker::Error or give every sample's field or a kBadData error for it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "io/file_list.h"
#include "stoker/error.h"

namespace {

// Everything read_list gives, as text: the samples and classes, or the error.
std::string read_in_chunks(std::string_view text, const std::string& name, size_t chunk) {
  std::string out;
  const stoker::io::ListBytes bytes = [&](const std::function<void(std::string_view)>& each) {
    for (size_t at = 0; at < text.size(); at += chunk) each(text.substr(at, chunk));
  };
  try {
    const auto classes = stoker::io::read_list(
        text, bytes, name, {}, [&](bool multi) { out += multi ? "multi\n" : "single\n"; },
        [&](std::string_view path, int64_t label, std::span<const int32_t> set) {
          out += fmt::format("{:?} {} [{}]\n", path, label, fmt::join(set, ","));
        });
    out += fmt::format("classes {}\n", fmt::join(classes, "|"));
  } catch (const stoker::Error& e) {
    out = "error " + e.message();
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kNames[] = {"fuzz/l.txt", "fuzz/l.csv", "fuzz/l.tsv", "fuzz/l.jsonl"};
  const std::string name = kNames[data[0] % 4];
  const size_t chunk = data[0] / 4 + 1;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (read_in_chunks(text, name, chunk) != read_in_chunks(text, name, text.size() + 1)) {
    std::abort();
  }
  std::shared_ptr<stoker::Dataset> list;
  try {
    list = stoker::io::file_list_from_text(text, name, {});
  } catch (const stoker::Error&) {
    return 0;
  }
  try {
    const auto with_fields =
        stoker::io::file_list_from_text(text, name, {.field_columns = {"caption"}});
    std::string field;
    for (int64_t i = 0; i < with_fields->size(); ++i) {
      try {
        with_fields->read_field(i, "caption", field);
      } catch (const stoker::Error& e) {
        if (e.kind() != stoker::ErrorKind::kBadData) std::abort();
      }
    }
  } catch (const stoker::Error&) {
  }
  const auto classes = static_cast<int64_t>(list->classes().size());
  if (list->size() < 1 || list->fingerprint().size() != 16) std::abort();
  for (int64_t i = 0; i < list->size(); ++i) {
    if (list->name(i).empty()) std::abort();
    const int64_t label = list->label(i);
    if (label < -1 || label >= classes || (label == -1 && classes > 0 && !list->multi_label())) {
      std::abort();
    }
    int64_t previous = -1;
    for (const int32_t id : list->label_set(i)) {
      if (id <= previous || id >= classes) std::abort();
      previous = id;
    }
  }
  return 0;
}
