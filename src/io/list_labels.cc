#include "io/list_labels.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "io/list_rows.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker::io {
namespace {

// The tokens that are labels: an explicit list's trailing "" marker is not one.
std::span<const std::string> labels_of(const std::vector<std::string>& tokens) {
  std::span<const std::string> all(tokens);
  return !all.empty() && all.back().empty() ? all.first(all.size() - 1) : all;
}

}  // namespace

// A set of ids, grown to the largest (at most 2 MiB).
struct LabelCensus::Bits {
  std::vector<uint64_t> words;
  void set(int64_t i) {
    const auto word = static_cast<size_t>(i) / 64;
    if (word >= words.size()) words.resize(std::max(word + 1, 2 * words.size()));
    words[word] |= uint64_t{1} << (i % 64);
  }
  bool test(int64_t i) const {
    const auto word = static_cast<size_t>(i) / 64;
    return word < words.size() && ((words[word] >> (i % 64)) & 1) != 0;
  }
  int64_t count() const {
    int64_t n = 0;
    for (const uint64_t w : words) n += std::popcount(w);
    return n;
  }
};

LabelCensus::LabelCensus() = default;
LabelCensus::~LabelCensus() = default;

void LabelCensus::add(const std::vector<std::string>& tokens, int64_t sample) {
  const std::span<const std::string> labels = labels_of(tokens);
  multi_ = multi_ || labels.size() != tokens.size() || labels.size() > 1;
  for (const std::string& token : labels) {
    const std::optional<int64_t> id = parse_label_id(token);
    if (!id) {
      all_ids_ = false;
      names_.emplace(token, 0);
      continue;
    }
    if (!ids_) ids_ = std::make_unique<Bits>(), canonical_ = std::make_unique<Bits>();
    ids_->set(*id);
    if (token == std::to_string(*id)) {
      canonical_->set(*id);
    } else {
      names_.emplace(token, 0);  // "007": the class "007" if the set has names
    }
    if (*id > max_id_) max_id_ = *id, max_at_ = sample;
  }
}

void LabelCensus::settle(const std::string& name,
                         const std::function<std::string(int64_t)>& where) {
  settled_ = true;
  if (all_ids_) {
    const int64_t seen = ids_ ? ids_->count() : 0;
    const int64_t bound = 2 * seen + 1024;
    STOKER_CHECK_ARG(max_id_ < bound,
                     "{}{}: label {} is far above the {} distinct label{} seen (ids make a class "
                     "each up to the largest, and must be below {} here): number the classes "
                     "0..N-1, or give class names instead of ids",
                     name, where ? ": " + where(max_at_) : std::string(), max_id_, seen,
                     seen == 1 ? "" : "s", bound);
    classes_.reserve(static_cast<size_t>(max_id_ + 1));
    for (int64_t id = 0; id <= max_id_; ++id) classes_.push_back(std::to_string(id));
    names_.clear();
    return;
  }
  // Class names: the ids written canonically are names too.
  if (canonical_) {
    for (int64_t id = 0; id <= max_id_; ++id) {
      if (canonical_->test(id)) names_.emplace(std::to_string(id), 0);
    }
  }
  ids_.reset();
  canonical_.reset();
  STOKER_CHECK_ARG(static_cast<int64_t>(names_.size()) <= kMaxLabelId + 1,
                   "{}: {} class names, more than {}", name, names_.size(), kMaxLabelId + 1);
  classes_.reserve(names_.size());
  for (const auto& entry : names_) classes_.push_back(entry.first);
  // Byte order (of UTF-8: code point order), as ImageFolder sorts its folders.
  std::sort(classes_.begin(), classes_.end());
  for (size_t c = 0; c < classes_.size(); ++c) names_[classes_[c]] = static_cast<int64_t>(c);
}

int64_t LabelCensus::label(const std::vector<std::string>& tokens,
                           std::vector<int32_t>& set) const {
  STOKER_CHECK(settled_, "LabelCensus::label before settle");
  constexpr int64_t kUnseen = -3;
  const auto id_of = [&](const std::string& token) -> int64_t {
    if (all_ids_) {
      const std::optional<int64_t> id = parse_label_id(token);
      return id && *id <= max_id_ ? *id : kUnseen;
    }
    const auto it = names_.find(token);
    return it == names_.end() ? kUnseen : it->second;
  };
  const std::span<const std::string> labels = labels_of(tokens);
  set.clear();
  if (!multi_) return labels.empty() ? kMissingLabel : id_of(labels.front());
  for (const std::string& token : labels) {
    const int64_t id = id_of(token);
    if (id == kUnseen) return kUnseen;
    set.push_back(static_cast<int32_t>(id));
  }
  std::sort(set.begin(), set.end());
  set.erase(std::unique(set.begin(), set.end()), set.end());
  return set.empty() ? -1 : set.front();
}

ResolvedLabels resolve_labels(const std::vector<std::vector<std::string>>& tokens,
                              const std::string& name,
                              const std::function<std::string(int64_t)>& where) {
  LabelCensus census;
  for (size_t i = 0; i < tokens.size(); ++i) census.add(tokens[i], static_cast<int64_t>(i));
  census.settle(name, where);
  ResolvedLabels out;
  out.multi = census.multi();
  out.classes = census.classes();
  out.first.reserve(tokens.size());
  std::vector<int32_t> set;
  for (const std::vector<std::string>& sample : tokens) {
    out.first.push_back(census.label(sample, set));
    if (out.multi) {
      out.values.insert(out.values.end(), set.begin(), set.end());
      out.ends.push_back(out.values.size());
    }
  }
  return out;
}

}  // namespace stoker::io
