#include "io/sample_table.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <cstring>
#include <memory>

#include "stoker/error.h"
#include "util/check.h"

namespace stoker::io {

// Feeds the hash through a buffer: one update call per 8-byte field would dominate the cost.
struct FingerprintBuilder::Hasher {
  Hasher() : state_(XXH3_createState(), XXH3_freeState) {
    STOKER_CHECK(state_ != nullptr && XXH3_64bits_reset(state_.get()) == XXH_OK,
                 "fingerprint: cannot create a hash state");
  }
  void u64(uint64_t value) {
    if (used_ + 8 > sizeof(buffer_)) flush();
    for (int i = 0; i < 8; ++i) buffer_[used_ + i] = static_cast<char>(value >> (8 * i));
    used_ += 8;
  }
  void bytes(std::string_view data) {
    if (used_ + data.size() > sizeof(buffer_)) flush();
    if (data.size() > sizeof(buffer_)) {
      XXH3_64bits_update(state_.get(), data.data(), data.size());
      return;
    }
    std::memcpy(buffer_ + used_, data.data(), data.size());
    used_ += data.size();
  }
  uint64_t digest() {
    flush();
    return XXH3_64bits_digest(state_.get());
  }

  void flush() {
    XXH3_64bits_update(state_.get(), buffer_, used_);
    used_ = 0;
  }

  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state_;
  char buffer_[1 << 16];
  size_t used_ = 0;
};

SampleView::SampleView(SampleTable table) {
  auto owned = std::make_shared<const SampleTable>(std::move(table));
  a_ = Arrays{owned->paths,  owned->ends,       owned->sizes,
              owned->labels, owned->label_ends, owned->label_values};
  storage_ = std::move(owned);
}

SampleView SampleView::of(const SampleTable& table) {
  return SampleView(Arrays{table.paths, table.ends, table.sizes, table.labels, table.label_ends,
                           table.label_values},
                    nullptr, "");
}

SampleView::SampleView(Arrays arrays, std::shared_ptr<const void> storage, std::string source)
    : a_(arrays), storage_(std::move(storage)), source_(std::move(source)) {
  if (a_.sizes.size() != a_.ends.size() || a_.labels.size() != a_.ends.size() ||
      (!a_.label_ends.empty() && a_.label_ends.size() != a_.ends.size())) {
    corrupt(-1, "array lengths");
  }
}

std::string_view SampleView::path(int64_t index) const {
  const uint64_t begin = index == 0 ? 0 : a_.ends[index - 1];
  const uint64_t end = a_.ends[index];
  if (begin > end || end > a_.paths.size()) corrupt(index, "path offsets");
  return a_.paths.substr(begin, end - begin);
}

std::span<const int32_t> SampleView::label_set(int64_t index) const {
  const uint64_t begin = index == 0 ? 0 : a_.label_ends[index - 1];
  const uint64_t end = a_.label_ends[index];
  if (begin > end || end > a_.label_values.size()) corrupt(index, "label set offsets");
  return a_.label_values.subspan(begin, end - begin);
}

void SampleView::corrupt(int64_t index, const char* what) const {
  STOKER_THROW("{}: corrupt {} at sample {} (a damaged cache file: delete it, it is rebuilt)",
               source_, what, index);
}

// 64 KiB of buffer: on the heap, not on the stack of a worker thread.
FingerprintBuilder::FingerprintBuilder() : hasher_(std::make_unique<Hasher>()) {}
FingerprintBuilder::~FingerprintBuilder() = default;

void FingerprintBuilder::sample(std::string_view path, int64_t size, int64_t label) {
  hasher_->u64(path.size());
  hasher_->bytes(path);
  hasher_->u64(static_cast<uint64_t>(size));
  hasher_->u64(static_cast<uint64_t>(label));
}

void FingerprintBuilder::label_set(std::span<const int32_t> ids) {
  hasher_->u64(ids.size());
  for (const int32_t id : ids) hasher_->u64(static_cast<uint64_t>(static_cast<int64_t>(id)));
}

std::string FingerprintBuilder::digest() { return fmt::format("{:016x}", hasher_->digest()); }

std::string fingerprint(const SampleView& table) {
  FingerprintBuilder f;
  for (int64_t i = 0; i < table.size(); ++i) {
    f.sample(table.path(i), table.file_size(i), table.label(i));
  }
  if (table.multi_label()) {
    for (int64_t i = 0; i < table.size(); ++i) f.label_set(table.label_set(i));
  }
  return f.digest();
}

}  // namespace stoker::io
