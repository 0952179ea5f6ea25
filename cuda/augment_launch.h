// The batched augmentation kernels (augment.cu), as plain C++ declarations for the host code.
// Private to the cuda layer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "image/augment_kernel.h"

namespace stoker::cuda {

// On `stream`: fills every slot's coefficient tables in `tables` (one thread per table entry),
// then every output pixel into `out` (one thread per pixel), both with the shared per-pixel
// functions of augment_kernel.h. All pointers are device memory: `geometry` holds `batch`
// entries (1..65535). Returns the launches' status (cudaErrorInvalidValue for a bad batch or
// spec); errors of the kernels themselves surface at the next synchronising call. The .cu side
// stays C++17 and free of stoker::Error: the caller checks the status (STOKER_CUDA_CHECK).
cudaError_t launch_augment(cudaStream_t stream, void* out, const uint8_t* staging, int32_t* tables,
                           const augment::Geometry* geometry, int batch,
                           const augment::OutputSpec& spec);

// Whether this binary carries code the current device runs (cudaFuncGetAttributes on the
// pixel kernel); the CUDA status otherwise.
cudaError_t probe_kernel_image();

}  // namespace stoker::cuda
