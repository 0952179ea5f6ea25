// The batched augmentation kernels: thin wrappers over augment_kernel.h's shared functions, so
// that the CPU test of those functions (augment_kernel_test.cc) checks this arithmetic too.
// Built with --fmad=false: no FMA contraction, so the coefficients' double arithmetic rounds as
// on the host (built with -ffp-contract=off) and the device bytes equal the CPU's.

#include "augment_launch.h"

namespace stoker::cuda {
namespace {

constexpr int kTableThreads = 128;
constexpr int kTileX = 32, kTileY = 8;

// One thread per table entry: blockIdx.y is the slot, x runs over 2 * size entries.
__global__ void tables_kernel(int32_t* tables, const augment::Geometry* geometry, int size) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= 2 * size) return;
  const augment::Geometry g = geometry[blockIdx.y];  // one load into registers
  if (g.width == 0) return;
  augment::table_entry(tables + g.coeffs, g, size, e);
}

// One thread per output pixel: blockIdx.z is the slot.
__global__ void pixels_kernel(void* out, const uint8_t* staging, const int32_t* tables,
                              const augment::Geometry* geometry, augment::OutputSpec spec) {
  const int x = blockIdx.x * kTileX + threadIdx.x;
  const int y = blockIdx.y * kTileY + threadIdx.y;
  if (x >= spec.size || y >= spec.size) return;
  const int64_t s = blockIdx.z;
  const augment::Geometry g = geometry[s];  // one load into registers, not one per use
  augment::augment_pixel(out, staging, tables, g, spec, s, x, y);
}

}  // namespace

cudaError_t launch_augment(cudaStream_t stream, void* out, const uint8_t* staging, int32_t* tables,
                           const augment::Geometry* geometry, int batch,
                           const augment::OutputSpec& spec) {
  if (batch < 1 || batch > 65535 || spec.size < 1 || (spec.channels != 1 && spec.channels != 3)) {
    return cudaErrorInvalidValue;
  }
  const dim3 table_grid((2 * spec.size + kTableThreads - 1) / kTableThreads, batch);
  tables_kernel<<<table_grid, kTableThreads, 0, stream>>>(tables, geometry, spec.size);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) return status;
  const dim3 block(kTileX, kTileY);
  const dim3 grid((spec.size + kTileX - 1) / kTileX, (spec.size + kTileY - 1) / kTileY, batch);
  pixels_kernel<<<grid, block, 0, stream>>>(out, staging, tables, geometry, spec);
  return cudaGetLastError();
}

cudaError_t probe_kernel_image() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, pixels_kernel);
}

}  // namespace stoker::cuda
