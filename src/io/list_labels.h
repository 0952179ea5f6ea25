// Labels as the label lists' rules make them (private to src/io; shared by the file lists and
// the WebDataset reader): from each sample's label tokens (several for a multi-label sample; a
// trailing "" marks an explicit JSON list, which makes the set multi-label), ids when every
// token is a decimal integer in [0, 2^24 - 1], else class names sorted by bytes (as ImageFolder
// sorts its folders) and ids their positions.
//
// Integer ids make one class per id up to the largest, so the largest is bounded by the labels
// seen: below 2 x the distinct ids + 1024 (sparse ids such as COCO's 1..90 pass; one id of
// 16,777,215 in a 27-byte list made 16.7 M classes, 5 GB per multi-hot batch), else an
// ArgumentError naming the sample.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace stoker::io {

// A single-label sample without tokens (in a labelled set) gets this label.
inline constexpr int64_t kMissingLabel = -2;

// The labels of a set too large to hold, in two passes over its samples: add() every sample's
// tokens, settle(), then label()/label_set() each sample's tokens again (in any order). Memory
// is bounded by the distinct labels, not the samples (ids: two bitmaps of up to 2 MiB).
class LabelCensus {
 public:
  LabelCensus();
  ~LabelCensus();

  // Pass 1. `sample` is what `where` names it by in errors (a list's line, a shard's sample).
  void add(const std::vector<std::string>& tokens, int64_t sample);
  // The classes; throws ArgumentError (naming `name` and where(sample)) when the ids are far
  // above the labels seen or the names are too many.
  void settle(const std::string& name, const std::function<std::string(int64_t)>& where);

  bool multi() const { return multi_; }
  const std::vector<std::string>& classes() const { return classes_; }

  // Pass 2 (after settle): a single-label sample's label (kMissingLabel without tokens), or a
  // multi-label sample's first id (-1 for an empty set) with its sorted, unique ids in `set`.
  // A token the first pass did not see (the set changed in between) gives -3.
  int64_t label(const std::vector<std::string>& tokens, std::vector<int32_t>& set) const;

 private:
  struct Bits;
  std::unique_ptr<Bits> ids_;        // every id seen
  std::unique_ptr<Bits> canonical_;  // the ids seen written as std::to_string writes them
  std::unordered_map<std::string, int64_t> names_;  // tokens that are not canonical ids
  bool all_ids_ = true;
  bool multi_ = false;
  int64_t max_id_ = -1;
  int64_t max_at_ = 0;
  bool settled_ = false;
  std::vector<std::string> classes_;
};

// One set's labels whole (the WebDataset reader's: its tokens are in memory anyway).
struct ResolvedLabels {
  std::vector<std::string> classes;
  std::vector<int64_t> first;  // per sample: the label (multi: the set's first, -1 for none)
  bool multi = false;
  std::vector<uint64_t> ends;   // multi only: sample i's ids are values[ends[i-1] .. ends[i])
  std::vector<int32_t> values;  //
  std::span<const int32_t> set(size_t i) const {
    const uint64_t begin = i == 0 ? 0 : ends[i - 1];
    return std::span<const int32_t>(values).subspan(begin, ends[i] - begin);
  }
};
// `name` names the set in errors, `where(i)` sample i.
ResolvedLabels resolve_labels(const std::vector<std::vector<std::string>>& tokens,
                              const std::string& name,
                              const std::function<std::string(int64_t)>& where = {});

}  // namespace stoker::io
