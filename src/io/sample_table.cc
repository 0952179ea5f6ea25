#include "io/sample_table.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <cstring>
#include <memory>

#include "stoker/error.h"

namespace stoker::io {
namespace {

struct StateDeleter {
  void operator()(XXH3_state_t* state) const { XXH3_freeState(state); }
};

// Feeds the hash through a buffer: one update call per 8-byte field would dominate the cost.
class Hasher {
 public:
  Hasher() : state_(XXH3_createState()) {
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

 private:
  void flush() {
    XXH3_64bits_update(state_.get(), buffer_, used_);
    used_ = 0;
  }

  std::unique_ptr<XXH3_state_t, StateDeleter> state_;
  char buffer_[1 << 16];
  size_t used_ = 0;
};

}  // namespace

std::string fingerprint(const SampleTable& table) {
  auto hasher = std::make_unique<Hasher>();  // 64 KiB: not on the stack of a worker thread
  for (int64_t i = 0; i < table.size(); ++i) {
    const std::string_view path = table.path(i);
    hasher->u64(path.size());
    hasher->bytes(path);
    hasher->u64(static_cast<uint64_t>(table.sizes[i]));
    hasher->u64(static_cast<uint64_t>(table.labels[i]));
  }
  if (table.multi_label()) {
    for (int64_t i = 0; i < table.size(); ++i) {
      const auto set = table.label_set(i);
      hasher->u64(set.size());
      for (const int32_t id : set) hasher->u64(static_cast<uint64_t>(static_cast<int64_t>(id)));
    }
  }
  return fmt::format("{:016x}", hasher->digest());
}

}  // namespace stoker::io
