// resize_bilinear with a chosen kernel set, so tests can hold every SIMD path to the scalar
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
void resize_bilinear_at(SimdLevel level, uint8_t* out, int out_width, int out_height,
                        const uint8_t* in, int in_width, int in_height, int channels,
                        const Box& box, const Box& bounds, std::vector<uint8_t>& scratch);

}  // namespace stoker::image
