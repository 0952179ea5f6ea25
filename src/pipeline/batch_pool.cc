#include "pipeline/batch_pool.h"

namespace stoker::pipeline {

BatchPool::BatchPool(int batch_size, size_t sample_bytes, std::shared_ptr<HostMemory> memory)
    : batch_size_(batch_size), memory_(std::move(memory)), sample_bytes_(sample_bytes) {}

std::unique_ptr<uint8_t[], Batch::StorageDelete> BatchPool::allocate(size_t bytes) const {
  // Default-initialised and 64-byte aligned (see Batch::storage), so that kernels may use
  // aligned and streaming stores and consumers get aligned tensors.
  if (memory_) {
    return std::unique_ptr<uint8_t[], Batch::StorageDelete>(memory_->allocate(bytes),
                                                            Batch::StorageDelete{memory_, bytes});
  }
  return std::unique_ptr<uint8_t[], Batch::StorageDelete>(new (std::align_val_t{64}) uint8_t[bytes],
                                                          Batch::StorageDelete{nullptr, bytes});
}

std::unique_ptr<Batch> BatchPool::acquire() {
  size_t bytes = 0;
  {
    util::MutexLock lock(mu_);
    if (!free_.empty()) {
      auto batch = std::move(free_.back());
      free_.pop_back();
      // Back to the full size (a short batch was cut, a staged one may hold a larger area).
      const auto slots = static_cast<size_t>(batch_size_);
      batch->batch_size = batch_size_;
      batch->labels.resize(slots);
      batch->indices.resize(slots);
      batch->valid.resize(slots);
      batch->images = std::span<uint8_t>(batch->storage.get(), batch->storage.get_deleter().bytes);
      return batch;
    }
    ++allocated_;
    bytes = static_cast<size_t>(batch_size_) * sample_bytes_;
  }
  auto batch = std::make_unique<Batch>();
  const auto slots = static_cast<size_t>(batch_size_);
  batch->storage = allocate(bytes);
  batch->images = std::span<uint8_t>(batch->storage.get(), bytes);
  batch->labels.resize(slots);
  batch->indices.resize(slots);
  batch->valid.resize(slots);
  batch->batch_size = batch_size_;
  return batch;
}

std::unique_ptr<uint8_t[], Batch::StorageDelete> BatchPool::allocate_larger(size_t bytes) {
  {
    util::MutexLock lock(mu_);
    const size_t per_sample = (bytes + batch_size_ - 1) / static_cast<size_t>(batch_size_);
    sample_bytes_ = std::max(sample_bytes_, (per_sample + 63) / 64 * 64);
  }
  return allocate(bytes);
}

void BatchPool::release(std::unique_ptr<Batch> batch) {
  if (!batch) return;
  util::MutexLock lock(mu_);
  free_.push_back(std::move(batch));
}

std::shared_ptr<const Batch> BatchPool::deliver(std::unique_ptr<Batch> batch) {
  Batch* raw = batch.release();
  auto self = shared_from_this();
  return std::shared_ptr<const Batch>(raw, [self](const Batch* b) {
    self->release(std::unique_ptr<Batch>(const_cast<Batch*>(b)));
  });
}

int64_t BatchPool::allocated() const {
  util::MutexLock lock(mu_);
  return allocated_;
}

}  // namespace stoker::pipeline
