#include "pipeline/staging.h"

#include <cstring>

#include "stoker/error.h"
#include "util/check.h"

namespace stoker::pipeline {
namespace {

size_t round_up(size_t n) { return (n + Staging::kAlign - 1) / Staging::kAlign * Staging::kAlign; }

}  // namespace

Staging::Staging(Batch& batch) : batch_(batch) {
  batch_.staged.assign(static_cast<size_t>(batch_.batch_size), Batch::Staged{});
  batch_.staged_bytes = 0;
}

void Staging::put(int slot, const DecodedRegion& region, const StagedSample& sample) {
  const size_t bytes = static_cast<size_t>(region.width) * region.height * region.channels;
  STOKER_CHECK(region.width > 0 && region.height > 0 && bytes <= region.pixels.size(),
               "staging: region {}x{}x{} holds {} bytes", region.width, region.height,
               region.channels, region.pixels.size());
  Batch::Staged& s = batch_.staged[static_cast<size_t>(slot)];
  s = Batch::Staged{};
  s.width = region.width;
  s.height = region.height;
  s.sample = sample;
  copy_in(slot, std::span<const uint8_t>(region.pixels.data(), bytes));
}

void Staging::put_encoded(int slot, std::span<const uint8_t> jpeg, const EncodedStage& encoded,
                          const StagedSample& sample) {
  STOKER_CHECK(encoded.encoded && !jpeg.empty() && encoded.roi.width > 0 && encoded.roi.height > 0,
               "staging: slot {} is not an encoded JPEG", slot);
  Batch::Staged& s = batch_.staged[static_cast<size_t>(slot)];
  s = Batch::Staged{};
  s.width = encoded.width;
  s.height = encoded.height;
  s.sample = sample;
  s.encoded_bytes = jpeg.size();
  s.roi = encoded.roi;
  copy_in(slot, jpeg);
}

void Staging::copy_in(int slot, std::span<const uint8_t> data) {
  // Reserve [offset, offset + bytes) only when it fits, so that `used_` stays exact.
  const size_t need = round_up(data.size());
  const size_t capacity = batch_.images.size();
  size_t offset = used_.load(std::memory_order_relaxed);
  do {
    if (offset + need > capacity) {
      util::MutexLock lock(aside_mu_);
      aside_.emplace_back(slot, std::vector<uint8_t>(data.begin(), data.end()));
      return;
    }
  } while (!used_.compare_exchange_weak(offset, offset + need, std::memory_order_relaxed));
  batch_.staged[static_cast<size_t>(slot)].offset = offset;
  std::memcpy(batch_.images.data() + offset, data.data(), data.size());
}

void Staging::blank(int slot) { batch_.staged[static_cast<size_t>(slot)] = Batch::Staged{}; }

bool Staging::finish(BatchPool& pool) {
  // Called once the workers are done with the batch: the lock is uncontended (one a batch).
  util::MutexLock lock(aside_mu_);
  size_t used = used_.load();
  if (aside_.empty()) {
    batch_.staged_bytes = used;
    return false;
  }
  size_t total = used;
  for (const auto& [slot, pixels] : aside_) total += round_up(pixels.size());
  // A quarter more than this batch needed, so that the next large batch fits too.
  auto storage = pool.allocate_larger(round_up(total + total / 4));
  std::memcpy(storage.get(), batch_.storage.get(), used);
  for (auto& [slot, pixels] : aside_) {
    std::memcpy(storage.get() + used, pixels.data(), pixels.size());
    batch_.staged[static_cast<size_t>(slot)].offset = used;
    used += round_up(pixels.size());
  }
  aside_.clear();
  batch_.images = std::span<uint8_t>(storage.get(), storage.get_deleter().bytes);
  batch_.storage = std::move(storage);
  batch_.staged_bytes = used;
  return true;
}

}  // namespace stoker::pipeline
