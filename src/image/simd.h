// x86 SIMD support shared by the image kernels (private to src/image): the intrinsics header,
// the run-time CPU feature checks that pick a kernel, and the byte permutation between 16
// interleaved RGB pixels and their planes. On other architectures (aarch64) STOKER_X86 is 0,
// no intrinsic is included, every have_*() is false and the kernels' portable C++ paths run
// (which the compiler vectorises with the architecture's baseline SIMD, NEON on aarch64).
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

#include <cstdint>

namespace stoker::image_internal {

#if STOKER_X86
inline bool have_sse41() {
  static const bool have = __builtin_cpu_supports("sse4.1");
  return have;
}

inline bool have_avx2() {
  static const bool have = __builtin_cpu_supports("avx2");
  return have;
}

// AVX-512 F + BW (Skylake-SP and later).
inline bool have_avx512() {
  static const bool have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  return have;
}

// AVX-512 F + BW + VL + VBMI, for vpermb (Ice Lake and later).
inline bool have_avx512_vbmi() {
  static const bool have =
      have_avx512() && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi");
  return have;
}
#else
inline bool have_sse41() { return false; }
inline bool have_avx2() { return false; }
inline bool have_avx512() { return false; }
inline bool have_avx512_vbmi() { return false; }
#endif  // STOKER_X86

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

}  // namespace stoker::image_internal
