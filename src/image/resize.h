// resize_antialiased with a chosen kernel set, so tests can hold every SIMD path to the scalar
// one (private to src/image). All levels give the same bytes; only the speed differs.
#pragma once

#include <cstdint>
#include <vector>

#include "image/simd.h"
#include "stoker/image.h"

namespace stoker::image {

// The kernels by level: kSse41 the SSE4.1 horizontal RGB pass; kAvx2 the AVX2 horizontal RGB
// and vertical passes; kAvx512 the AVX-512 vertical pass; kAvx512Vbmi also the planar
// horizontal RGB pass. `level` must be at most best_simd_level().
void resize_antialiased_at(SimdLevel level, uint8_t* out, int out_width, int out_height,
                           const uint8_t* in, int in_width, int in_height, int channels,
                           const Box& box, const Box& bounds, std::vector<uint8_t>& scratch,
                           ResizeFilter filter = ResizeFilter::kBilinear);

// The vertical pass's kernel of `level` on one output row: n bytes from each of `taps` rows
// lying `stride` bytes apart, weighted by the 22-bit fixed-point k[0, taps), rounded and
// clipped; `acc` is scratch of n int32s. For bench/kernel_bench, which measures it alone.
void vertical_row_at(SimdLevel level, uint8_t* out, const uint8_t* rows, size_t stride, size_t n,
                     const int32_t* k, int taps, int32_t* acc);

}  // namespace stoker::image
