// The Highway port of the resize's vertical pass (bench/hwy_vertical.cc), for kernel_bench.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stoker::bench {

void vertical_row_highway(uint8_t* out, const uint8_t* rows, size_t stride, size_t n,
                          const int32_t* k, int taps);
// The target HWY_DYNAMIC_DISPATCH chose on this CPU ("AVX3_DL", "AVX2", ...).
const char* highway_target();

}  // namespace stoker::bench
