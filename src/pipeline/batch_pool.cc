#include "pipeline/batch_pool.h"

namespace stoker {

BatchPool::BatchPool(int batch_size, size_t sample_bytes)
    : batch_size_(batch_size), sample_bytes_(sample_bytes) {}

std::unique_ptr<Batch> BatchPool::acquire() {
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      auto batch = std::move(free_.back());
      free_.pop_back();
      return batch;
    }
    ++allocated_;
  }
  auto batch = std::make_unique<Batch>();
  const auto slots = static_cast<size_t>(batch_size_);
  const size_t bytes = slots * sample_bytes_;
  // Default-initialised and 64-byte aligned (see Batch::storage), so that kernels may use
  // aligned and streaming stores and consumers get aligned tensors.
  batch->storage.reset(new (std::align_val_t{64}) uint8_t[bytes]);
  batch->images = std::span<uint8_t>(batch->storage.get(), bytes);
  batch->labels.resize(slots);
  batch->indices.resize(slots);
  batch->valid.resize(slots);
  batch->batch_size = batch_size_;
  return batch;
}

void BatchPool::release(std::unique_ptr<Batch> batch) {
  if (!batch) return;
  std::lock_guard lock(mu_);
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
  std::lock_guard lock(mu_);
  return allocated_;
}

}  // namespace stoker
