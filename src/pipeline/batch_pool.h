// Recycled batch buffers. acquire() hands out a buffer (allocating only when none is free);
// the shared_ptr made by deliver() returns it to the pool when its last owner lets go, even
// after the loader is gone (the deleter keeps the pool alive).
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "stoker/loader.h"
#include "util/mutex.h"

namespace stoker::pipeline {

class BatchPool : public std::enable_shared_from_this<BatchPool> {
 public:
  // Every buffer holds `batch_size` slots of `sample_bytes` image bytes, from `memory`
  // (nullptr: aligned operator new).
  BatchPool(int batch_size, size_t sample_bytes, std::shared_ptr<HostMemory> memory = nullptr);

  std::unique_ptr<Batch> acquire();
  void release(std::unique_ptr<Batch> batch);
  // Wraps a finished batch for the consumer; releasing the last reference recycles it.
  std::shared_ptr<const Batch> deliver(std::unique_ptr<Batch> batch);

  // A buffer of `bytes` from the pool's memory, for a batch whose staging area must grow;
  // buffers allocated from now on are at least that large too.
  std::unique_ptr<uint8_t[], Batch::StorageDelete> allocate_larger(size_t bytes);

  int64_t allocated() const;

 private:
  std::unique_ptr<uint8_t[], Batch::StorageDelete> allocate(size_t bytes) const;

  const int batch_size_;
  const std::shared_ptr<HostMemory> memory_;
  mutable util::Mutex mu_;
  size_t sample_bytes_ STOKER_GUARDED_BY(mu_);  // grows with allocate_larger
  std::vector<std::unique_ptr<Batch>> free_ STOKER_GUARDED_BY(mu_);
  int64_t allocated_ STOKER_GUARDED_BY(mu_) = 0;
};

}  // namespace stoker::pipeline
