// resize_bilinear with a chosen kernel set, so tests can hold every SIMD path to the scalar
// one (private to src/image). All levels give the same bytes; only the speed differs.
#pragma once

#include <cstdint>
#include <vector>

#include "stoker/image.h"

namespace stoker::image_internal {

constexpr int kResizeScalar = 0;
constexpr int kResizeSse41 = 1;  // SSE4.1 horizontal RGB pass
constexpr int kResizeAvx2 = 2;   // AVX2 horizontal RGB and vertical passes
// AVX-512 F+BW vertical pass; with VL+VBMI also the planar horizontal RGB pass.
constexpr int kResizeAvx512 = 3;

// The highest level this CPU runs.
int best_resize_level();

void resize_bilinear_at(int level, uint8_t* out, int out_width, int out_height, const uint8_t* in,
                        int in_width, int in_height, int channels, const Box& box,
                        const Box& bounds, std::vector<uint8_t>& scratch);

}  // namespace stoker::image_internal
