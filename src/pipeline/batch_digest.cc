#include "stoker/batch_digest.h"

#include <fmt/format.h>
#include <xxhash.h>

#include "stoker/error.h"
#include "util/check.h"

namespace stoker {

struct BatchDigest::State {
  XXH3_state_t* xxh = nullptr;
  ~State() { XXH3_freeState(xxh); }
};

BatchDigest::BatchDigest() : state_(std::make_unique<State>()) {
  state_->xxh = XXH3_createState();
  STOKER_CHECK(state_->xxh != nullptr && XXH3_64bits_reset(state_->xxh) == XXH_OK,
               "BatchDigest: out of memory");
}

BatchDigest::~BatchDigest() = default;

void BatchDigest::add(const Batch& batch) { add(batch.images, batch.labels, batch.valid); }

void BatchDigest::add(std::span<const uint8_t> images, std::span<const int64_t> labels,
                      std::span<const uint8_t> valid) {
  XXH3_64bits_update(state_->xxh, images.data(), images.size());
  for (int64_t label : labels) {
    uint8_t le[8];
    for (int b = 0; b < 8; ++b)
      le[b] = static_cast<uint8_t>(static_cast<uint64_t>(label) >> (8 * b));
    XXH3_64bits_update(state_->xxh, le, sizeof le);
  }
  XXH3_64bits_update(state_->xxh, valid.data(), valid.size());
}

uint64_t BatchDigest::value() const { return XXH3_64bits_digest(state_->xxh); }

std::string BatchDigest::hex() const { return fmt::format("{:016x}", value()); }

}  // namespace stoker
