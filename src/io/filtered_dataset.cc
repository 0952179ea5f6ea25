// filter_dataset: a view of the samples of a dataset that pass conditions on their fields.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "io/open_all.h"
#include "stoker/dataset.h"
#include "stoker/error.h"
#include "util/check.h"
#include "util/text.h"

namespace stoker {
namespace {

constexpr std::array<std::string_view, 6> kOps = {"<", "<=", ">", ">=", "==", "!="};

// A field's or a condition's text as a number (surrounding white space allowed).
std::optional<double> number(std::string_view text) { return util::parse_number(util::trim(text)); }

// A field's text as compared: a JSON string without its quotes, else as it is.
std::string as_text(const std::string& field) {
  if (field.size() >= 2 && field.front() == '"') {
    const nlohmann::json j = nlohmann::json::parse(field, nullptr, false);
    if (j.is_string()) return j.get<std::string>();
  }
  return field;
}

template <typename T>
bool compare(const T& a, std::string_view op, const T& b) {
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  if (op == ">=") return a >= b;
  if (op == "==") return a == b;
  return a != b;
}

bool holds(const FieldCondition& c, const std::string& field) {
  if (const std::optional<double> want = number(c.value)) {
    const std::optional<double> got = number(field);
    return got.has_value() && compare(*got, c.op, *want);
  }
  return compare(as_text(field), c.op, c.value);
}

class FilteredDataset final : public Dataset {
 public:
  FilteredDataset(std::shared_ptr<const Dataset> base, std::vector<FieldCondition> where)
      : base_(std::move(base)), where_(std::move(where)) {
    STOKER_CHECK_ARG(!where_.empty(), "filter: no conditions");
    for (const FieldCondition& c : where_) {
      STOKER_CHECK_ARG(std::find(kOps.begin(), kOps.end(), c.op) != kOps.end(),
                       "filter: '{}' is not a comparison (one of {})", c.op, fmt::join(kOps, " "));
      STOKER_CHECK_ARG(base_->has_field(c.field), "filter: {} has no field '{}'", base_->describe(),
                       c.field);
    }
    const int64_t n = base_->size();
    std::vector<uint8_t> keep(static_cast<size_t>(n), 0);
    constexpr int64_t kChunk = 256;
    io::open_all(static_cast<size_t>((n + kChunk - 1) / kChunk), [&](size_t chunk) {
      std::string field;
      const int64_t begin = static_cast<int64_t>(chunk) * kChunk;
      for (int64_t i = begin; i < std::min(n, begin + kChunk); ++i) {
        bool pass = true;
        for (const FieldCondition& c : where_) {
          try {
            read_field_with_retries(*base_, i, c.field, field);
          } catch (const Error& e) {
            if (e.kind() != ErrorKind::kBadData) throw;
            pass = false;
            break;
          }
          if (!holds(c, field)) {
            pass = false;
            break;
          }
        }
        keep[static_cast<size_t>(i)] = pass ? 1 : 0;
      }
    });
    for (int64_t i = 0; i < n; ++i) {
      if (keep[static_cast<size_t>(i)]) kept_.push_back(i);
    }
    STOKER_CHECK_ARG(!kept_.empty(), "filter: no sample of {} passes {}", base_->describe(),
                     conditions());
    std::string id = base_->fingerprint() + "\nwhere";
    for (const FieldCondition& c : where_)
      id += fmt::format("\n{}\t{}\t{}", c.field, c.op, c.value);
    fingerprint_ = fmt::format("{:016x}", XXH3_64bits(id.data(), id.size()));
    // The base's shards, as runs of kept samples (a shard left empty is no shard).
    const std::vector<int64_t> ends = base_->shard_ends();
    size_t shard = 0;
    for (size_t p = 0; p < kept_.size() && !ends.empty(); ++p) {
      while (kept_[p] >= ends[shard]) {
        if (p > 0 && (shard_ends_.empty() || shard_ends_.back() < static_cast<int64_t>(p))) {
          shard_ends_.push_back(static_cast<int64_t>(p));
        }
        ++shard;
      }
    }
    if (!ends.empty()) shard_ends_.push_back(size());
  }

  int64_t size() const override { return static_cast<int64_t>(kept_.size()); }
  int64_t label(int64_t index) const override { return base_->label(at(index)); }
  bool multi_label() const override { return base_->multi_label(); }
  std::span<const int32_t> label_set(int64_t index) const override {
    return base_->label_set(at(index));
  }
  std::string name(int64_t index) const override { return base_->name(at(index)); }
  void read(int64_t index, std::vector<uint8_t>& out) const override {
    base_->read(at(index), out);
  }
  void read_ahead(std::span<const int64_t> indices) const override {
    std::vector<int64_t> mapped;
    mapped.reserve(indices.size());
    for (const int64_t i : indices) {
      if (i >= 0 && i < size()) mapped.push_back(kept_[static_cast<size_t>(i)]);
    }
    base_->read_ahead(mapped);
  }
  void cancel_read_ahead() const override { base_->cancel_read_ahead(); }
  std::vector<int64_t> shard_ends() const override { return shard_ends_; }
  bool prefers_shard_order() const override { return base_->prefers_shard_order(); }
  const std::vector<std::string>& classes() const override { return base_->classes(); }
  bool has_field(const std::string& field) const override { return base_->has_field(field); }
  FieldKind field_kind(const std::string& field) const override { return base_->field_kind(field); }
  void read_field(int64_t index, const std::string& field, std::string& out) const override {
    base_->read_field(at(index), field, out);
  }
  int64_t filtered() const override { return base_->size() - size(); }
  std::string fingerprint() const override { return fingerprint_; }
  std::string describe() const override {
    return fmt::format("{}, filtered to {} by {}", base_->describe(), size(), conditions());
  }

 private:
  int64_t at(int64_t index) const {
    STOKER_CHECK_ARG(index >= 0 && index < size(), "sample index {} out of range [0, {})", index,
                     size());
    return kept_[static_cast<size_t>(index)];
  }
  std::string conditions() const {
    std::vector<std::string> parts;
    for (const FieldCondition& c : where_) parts.push_back(c.field + " " + c.op + " " + c.value);
    return fmt::format("{}", fmt::join(parts, " and "));
  }

  std::shared_ptr<const Dataset> base_;
  std::vector<FieldCondition> where_;
  std::vector<int64_t> kept_;
  std::vector<int64_t> shard_ends_;
  std::string fingerprint_;
};

}  // namespace

std::shared_ptr<Dataset> filter_dataset(std::shared_ptr<const Dataset> base,
                                        std::vector<FieldCondition> where) {
  return std::make_shared<FilteredDataset>(std::move(base), std::move(where));
}

}  // namespace stoker
