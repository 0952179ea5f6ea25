// Recycled batch buffers. acquire() hands out a buffer (allocating only when none is free);
// the shared_ptr made by deliver() returns it to the pool when its last owner lets go, even
// after the loader is gone (the deleter keeps the pool alive).
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "stoker/loader.h"

namespace stoker {

class BatchPool : public std::enable_shared_from_this<BatchPool> {
 public:
  // Every buffer holds `batch_size` slots of `sample_bytes` image bytes.
  BatchPool(int batch_size, size_t sample_bytes);

  std::unique_ptr<Batch> acquire();
  void release(std::unique_ptr<Batch> batch);
  // Wraps a finished batch for the consumer; releasing the last reference recycles it.
  std::shared_ptr<const Batch> deliver(std::unique_ptr<Batch> batch);

  int64_t allocated() const;

 private:
  const int batch_size_;
  const size_t sample_bytes_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Batch>> free_;
  int64_t allocated_ = 0;
};

}  // namespace stoker
