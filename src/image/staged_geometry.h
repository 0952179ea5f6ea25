// The shared augmentation kernels' input (image/augment_kernel.h) for a batch staged in
// AugmentMode::kDeferred (stoker/loader.h): what the CUDA layer launches and what the tests run
// on the host as the GPU's reference. Private to the library.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "image/augment_kernel.h"
#include "stoker/image.h"
#include "stoker/transform.h"

namespace stoker::image {

// A staged batch's fields (Batch::staged, batch_size, channels, staged_bytes, index).
struct StagedView {
  std::span<const StagedRegion> slots;
  int batch_size = 0;
  int channels = 0;
  size_t staged_bytes = 0;
  int64_t index = 0;  // for messages
};

// Where an encoded slot (StagedRegion::encoded_bytes > 0) is decoded to: its roi, uint8 HWC
// (channels per pixel, rows roi.width * channels apart), at byte `offset` of the same memory
// as the staged pixels (the staging area, then the decoded rois after it).
struct DecodedSlot {
  int slot = 0;
  size_t offset = 0;
  Rect roi;
};

// The decoded rois of a batch's encoded slots, 64-byte aligned from `base` on (base itself
// rounded up); *end gets the first byte after the last. Empty for a batch with none.
std::vector<DecodedSlot> encoded_layout(const StagedView& batch, size_t base, size_t* end);

// One Geometry per slot into out[0, batch_size) (pixels at staged offsets, or at the decoded
// offset of `decoded` for encoded slots; coefficient tables laid out one after another).
// Returns the int32s all tables need. Throws stoker::Error where resize_antialiased would (an
// empty box), naming the slot, for a batch that was not staged, and for an encoded slot
// missing from `decoded`.
int64_t staged_geometry(const StagedView& batch, int size, augment::Geometry* out,
                        std::span<const DecodedSlot> decoded = {});

// The host's decode of encoded slots, the GPU decoder's reference and its fallback: each slot's
// JPEG (at staging + its offset) decoded by libjpeg-turbo at scale 1, its roi written at
// memory + DecodedSlot::offset. Throws decode_region's bad-data error (naming `name(slot)`).
void decode_encoded_on_host(const StagedView& batch, const uint8_t* staging,
                            std::span<const DecodedSlot> decoded, uint8_t* memory,
                            const DecodeConfig& options);

// The output every slot gets under `config` (size, channels, dtype, mean and std).
augment::OutputSpec output_spec(const TransformConfig& config);

}  // namespace stoker::image
