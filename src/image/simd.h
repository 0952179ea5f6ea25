// SIMD dispatch shared by the image kernels (private to src/image): one level enum, the
// run-time CPU check that picks the level once, a helper for tables of unrolled kernels, the
// intrinsics header and the byte permutation between 16 interleaved RGB pixels and their planes.
//
// Each kernel file keeps one table from SimdLevel to its kernels (resize.cc, pixels.cc); every
// level is a row of it, so a test can run each level this CPU has and hold it to kScalar (all
// levels give the same bytes; only the speed differs). On other architectures (aarch64)
// STOKER_X86 is 0, no intrinsic is included, best_simd_level() is kScalar and the portable C++
// kernels run (which the compiler vectorises with the baseline SIMD, NEON on aarch64).
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#define STOKER_X86 1
#else
#define STOKER_X86 0
#endif

#if STOKER_X86

// GCC 12 reports its own AVX-512 intrinsics as "may be used uninitialized" once inlined (the
// _mm512_undefined_* self-initialisation, GCC bug 105593, fixed in GCC 13): silenced for the
// header's lines only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // STOKER_X86

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace stoker::image {

// Ordered: a CPU that runs a level runs every level below it.
enum class SimdLevel : int {
  kScalar = 0,
  kSse41 = 1,       // SSE4.1
  kAvx2 = 2,        // AVX2
  kAvx512 = 3,      // AVX-512 F + BW (Skylake-SP and later)
  kAvx512Vbmi = 4,  // AVX-512 F + BW + VL + VBMI, for vpermb (Ice Lake and later)
};
inline constexpr int kSimdLevels = 5;

constexpr const char* to_string(SimdLevel level) {
  constexpr const char* kNames[kSimdLevels] = {"scalar", "sse4.1", "avx2", "avx512", "avx512-vbmi"};
  return kNames[static_cast<int>(level)];
}

// The highest level this CPU runs, checked once.
inline SimdLevel best_simd_level() {
#if STOKER_X86
  static const SimdLevel best = [] {
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    if (avx512 && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi")) {
      return SimdLevel::kAvx512Vbmi;
    }
    if (avx512) return SimdLevel::kAvx512;
    if (__builtin_cpu_supports("avx2")) return SimdLevel::kAvx2;
    if (__builtin_cpu_supports("sse4.1")) return SimdLevel::kSse41;
    return SimdLevel::kScalar;
  }();
  return best;
#else
  return SimdLevel::kScalar;
#endif
}

// A kernel unrolled for counts known at compile time: unrolled<Fn, N>(make) is the table
// {make(0), make(1), ..., make(N)}, where make(std::integral_constant<int, n>) returns the kernel
// for n and n = 0 stands for "counted at run time"; pick(table, n) takes entry n, or entry 0
// past the table. Replaces one switch per kernel family.
template <typename Fn, int N, typename Make>
constexpr std::array<Fn, N + 1> unrolled(Make make) {
  return [&]<int... I>(std::integer_sequence<int, I...>) {
    return std::array<Fn, N + 1>{make(std::integral_constant<int, I>{})...};
  }
  (std::make_integer_sequence<int, N + 1>{});
}

template <typename Fn, size_t M>
constexpr Fn pick(const std::array<Fn, M>& table, int n) {
  return n >= 1 && static_cast<size_t>(n) < M ? table[static_cast<size_t>(n)] : table[0];
}

// vpermb indices, built at compile time: kSplitRgb takes 16 interleaved RGB pixels (48 bytes) to
// R16 G16 B16, kJoinRgb takes them back.
struct alignas(64) ByteTable {
  uint8_t bytes[64];
};

constexpr ByteTable rgb_permutation(bool to_planes) {
  ByteTable t{};
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 16; ++i) {
      if (to_planes) {
        t.bytes[16 * c + i] = static_cast<uint8_t>(3 * i + c);
      } else {
        t.bytes[3 * i + c] = static_cast<uint8_t>(16 * c + i);
      }
    }
  }
  return t;
}

inline constexpr ByteTable kSplitRgb = rgb_permutation(true);
inline constexpr ByteTable kJoinRgb = rgb_permutation(false);

}  // namespace stoker::image
