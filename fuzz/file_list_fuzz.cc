// libFuzzer harness for the label-list parser (src/io/file_list.h): headerless lines, CSV and
// TSV tables, JSON lines.
//
// Input: one byte choosing the form by the list's name (.txt, .csv, .tsv, .jsonl), then the
// list's text. The parser must either throw stoker::Error or return a dataset whose every
// sample has a name, a label in [-1, classes) and, for a multi-label list, a sorted set of ids
// below the class count; the fingerprint is computed.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "io/file_list.h"
#include "stoker/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kNames[] = {"fuzz/l.txt", "fuzz/l.csv", "fuzz/l.tsv", "fuzz/l.jsonl"};
  const std::string name = kNames[data[0] % 4];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::shared_ptr<stoker::Dataset> list;
  try {
    list = stoker::io::file_list_from_text(text, name, {});
  } catch (const stoker::Error&) {
    return 0;
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
