// The resize's vertical pass written with Highway (Debian's libhwy-dev), dynamically dispatched
// to the best target of this CPU: the measured alternative to stoker's own SIMD table
// (src/image/simd.h). Same arithmetic as vertical_row in src/image/resize.cc: int32 sums of
// u8 x 22-bit coefficients, + 2^21, >> 22, saturated to 0..255, so the bytes are the same
// (kernel_bench checks before it measures). Built only when Highway is installed.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/hwy_vertical.cc"
#include "bench/hwy_vertical.h"

#include <hwy/foreach_target.h>  // NOLINT: includes this file once per target
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace stoker::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void VerticalRow(uint8_t* HWY_RESTRICT out, const uint8_t* HWY_RESTRICT rows, size_t stride,
                 size_t n, const int32_t* HWY_RESTRICT k, int taps) {
  constexpr int kPrecisionBits = 22;
  const hn::ScalableTag<int32_t> d32;
  const hn::Rebind<uint8_t, decltype(d32)> d8;  // as many u8 lanes as int32 lanes
  const size_t lanes = hn::Lanes(d32);
  const auto half = hn::Set(d32, int32_t{1} << (kPrecisionBits - 1));
  size_t i = 0;
  // Four vectors per step, as stoker's AVX-512 kernel does (64 bytes with 16 int32 lanes).
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    auto a0 = half, a1 = half, a2 = half, a3 = half;
    for (int t = 0; t < taps; ++t) {
      const uint8_t* r = rows + static_cast<size_t>(t) * stride + i;
      const auto kt = hn::Set(d32, k[t]);
      a0 = hn::Add(a0, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, r)), kt));
      a1 = hn::Add(a1, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, r + lanes)), kt));
      a2 = hn::Add(a2, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, r + 2 * lanes)), kt));
      a3 = hn::Add(a3, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, r + 3 * lanes)), kt));
    }
    hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(a0)), d8, out + i);
    hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(a1)), d8, out + i + lanes);
    hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(a2)), d8, out + i + 2 * lanes);
    hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(a3)), d8, out + i + 3 * lanes);
  }
  for (; i + lanes <= n; i += lanes) {
    auto acc = half;
    for (int t = 0; t < taps; ++t) {
      const auto px = hn::PromoteTo(d32, hn::LoadU(d8, rows + static_cast<size_t>(t) * stride + i));
      acc = hn::Add(acc, hn::Mul(px, hn::Set(d32, k[t])));
    }
    hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(acc)), d8, out + i);
  }
  for (; i < n; ++i) {
    int32_t acc = int32_t{1} << (kPrecisionBits - 1);
    for (int t = 0; t < taps; ++t) acc += rows[static_cast<size_t>(t) * stride + i] * k[t];
    const int32_t v = acc >> kPrecisionBits;
    out[i] = static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
  }
}

}  // namespace stoker::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stoker::bench {

HWY_EXPORT(VerticalRow);

void vertical_row_highway(uint8_t* out, const uint8_t* rows, size_t stride, size_t n,
                          const int32_t* k, int taps) {
  HWY_DYNAMIC_DISPATCH(VerticalRow)(out, rows, stride, n, k, taps);
}

const char* highway_target() {
  // Lower bits are better targets: the best one compiled in that this CPU supports.
  const int64_t usable = hwy::SupportedTargets() & HWY_TARGETS;
  return hwy::TargetName(usable & -usable);
}

}  // namespace stoker::bench
#endif
