// BatchDigest: one XXH3-64 over delivered batches in order, the digest `stoker bench --digest`
// prints. Per batch it hashes the image bytes, each label as a little-endian int64 and the
// valid mask as one byte per slot, so that two runs agree exactly when they delivered the same
// bytes, labels and masks in the same order (whatever the thread count). Image bytes are hashed
// as they lie in memory (float outputs in the machine's byte order); labels are byte-order
// independent.
// Thread-safety: none (one owner); not copyable.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "stoker/loader.h"

namespace stoker {

class BatchDigest {
 public:
  BatchDigest();
  ~BatchDigest();
  BatchDigest(const BatchDigest&) = delete;
  BatchDigest& operator=(const BatchDigest&) = delete;

  // A batch as the loader delivered it (its images bytes as stored).
  void add(const Batch& batch);
  // The same from separate parts: `images` may be a copy (a GPU batch brought to the host).
  void add(std::span<const uint8_t> images, std::span<const int64_t> labels,
           std::span<const uint8_t> valid);

  uint64_t value() const;
  std::string hex() const;  // 16 lowercase hex digits

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker
