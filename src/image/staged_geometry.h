// The shared augmentation kernels' input (image/augment_kernel.h) for a batch staged in
// AugmentMode::kDeferred (stoker/loader.h): what the CUDA layer launches and what the tests run
// on the host as the GPU's reference. Private to the library.
#pragma once

#include <cstdint>
#include <span>

#include "image/augment_kernel.h"
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

// One Geometry per slot into out[0, batch_size) (pixels at staged offsets, coefficient tables
// laid out one after another). Returns the int32s all tables need. Throws stoker::Error where
// resize_bilinear would (an empty box), naming the slot, and for a batch that was not staged.
int64_t staged_geometry(const StagedView& batch, int size, augment::Geometry* out);

// The output every slot gets under `config` (size, channels, dtype, mean and std).
augment::OutputSpec output_spec(const TransformConfig& config);

}  // namespace stoker::image
