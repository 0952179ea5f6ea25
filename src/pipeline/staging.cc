#include "pipeline/staging.h"

#include <cstring>

#include "stoker/error.h"

namespace stoker {
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
  s.width = region.width;
  s.height = region.height;
  s.sample = sample;
  // Reserve [offset, offset + bytes) only when it fits, so that `used_` stays exact.
  const size_t need = round_up(bytes);
  const size_t capacity = batch_.images.size();
  size_t offset = used_.load(std::memory_order_relaxed);
  do {
    if (offset + need > capacity) {
      std::lock_guard lock(aside_mu_);
      aside_.emplace_back(
          slot, std::vector<uint8_t>(region.pixels.begin(), region.pixels.begin() + bytes));
      return;
    }
  } while (!used_.compare_exchange_weak(offset, offset + need, std::memory_order_relaxed));
  s.offset = offset;
  std::memcpy(batch_.images.data() + offset, region.pixels.data(), bytes);
}

void Staging::blank(int slot) { batch_.staged[static_cast<size_t>(slot)] = Batch::Staged{}; }

bool Staging::finish(BatchPool& pool) {
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

int64_t staged_geometry(const Batch& batch, int size, augment::Geometry* out) {
  STOKER_CHECK(batch.staged.size() == static_cast<size_t>(batch.batch_size),
               "staged_geometry: batch {} was not staged", batch.index);
  int64_t tables = 0;
  for (int i = 0; i < batch.batch_size; ++i) {
    const Batch::Staged& s = batch.staged[static_cast<size_t>(i)];
    augment::Geometry g;
    if (s.width > 0) {
      const Box& b = s.sample.box;
      const Box& u = s.sample.bounds;
      STOKER_CHECK(augment::make_geometry(g, b.x0, b.y0, b.x1, b.y1, u.x0, u.y0, u.x1, u.y1,
                                          s.width, s.height, size),
                   "batch {} slot {}: empty resize box ({}, {}, {}, {}) in a {}x{} region",
                   batch.index, i, b.x0, b.y0, b.x1, b.y1, s.width, s.height);
      STOKER_CHECK(
          s.offset + static_cast<size_t>(s.width) * s.height * batch.channels <= batch.staged_bytes,
          "batch {} slot {}: region past the staging area", batch.index, i);
      g.pixels = s.offset;
      g.flip = s.sample.flip ? 1 : 0;
      g.coeffs = tables;
      tables += augment::table_ints(g, size);
    }
    out[i] = g;
  }
  return tables;
}

augment::OutputSpec output_spec(const TransformConfig& config) {
  augment::OutputSpec spec;
  spec.size = config.size;
  spec.channels = config.channels;
  spec.dtype = static_cast<int32_t>(config.output);
  for (int c = 0; c < 3; ++c) {
    spec.mean[c] = config.mean[c];
    spec.std[c] = config.std[c];
  }
  return spec;
}

}  // namespace stoker
