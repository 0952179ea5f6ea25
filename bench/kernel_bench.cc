// Google Benchmark micro-benchmarks of the augmentation kernels, every SIMD level this CPU has
// side by side (the levels give identical bytes, see resize_test.cc), so that a kernel change
// can be judged in one run on a noisy machine (repetitions interleaved, medians):
//   build/bench/kernel_bench --benchmark_repetitions=9 --benchmark_min_time=0.2
//       --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
//
// Cases: "up" is the typical RandomResizedCrop of a packed 256-pixel image (a 163x163 crop of a
// 256x192 image upscaled to 224x224); "down" a 391x387 crop of a 0.3-megapixel photo downscaled
// to 224x224. Normalize is the float32 CHW output of one 224x224 RGB image into a batch-sized
// ring of buffers (streaming stores to memory, as in the loader).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "image/decoders.h"
#include "image/resize.h"
#include "stoker/image.h"
#include "stoker/rng.h"

namespace stoker {
namespace {

std::vector<uint8_t> noise(size_t n, uint64_t seed) {
  Rng rng(stream_key(seed, 1));
  std::vector<uint8_t> v(n);
  // Smooth-ish content: a random walk, so the bytes look like an image row by row.
  int value = 128;
  for (auto& b : v) {
    value = std::clamp(value + static_cast<int>(rng.bounded(17)) - 8, 0, 255);
    b = static_cast<uint8_t>(value);
  }
  return v;
}

void resize_case(benchmark::State& state, int in_w, int in_h, Box box) {
  const auto level = static_cast<image::SimdLevel>(state.range(0));
  state.SetLabel(to_string(level));
  if (level > image::best_simd_level()) {
    state.SkipWithError("level not supported by this CPU");
    return;
  }
  const auto in = noise(static_cast<size_t>(in_w) * in_h * 3, 7);
  std::vector<uint8_t> out(224 * 224 * 3), scratch;
  for (auto _ : state) {
    image::resize_bilinear_at(level, out.data(), 224, 224, in.data(), in_w, in_h, 3, box, box,
                              scratch);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ResizeUp(benchmark::State& state) { resize_case(state, 256, 192, Box{40, 12, 203, 175}); }
void BM_ResizeDown(benchmark::State& state) {
  resize_case(state, 640, 480, Box{100, 50, 491, 437});
}
BENCHMARK(BM_ResizeUp)->DenseRange(0, image::kSimdLevels - 1);
BENCHMARK(BM_ResizeDown)->DenseRange(0, image::kSimdLevels - 1);

void BM_NormalizeToChw(benchmark::State& state) {
  const auto level = static_cast<image::SimdLevel>(state.range(0));
  state.SetLabel(to_string(level));
  if (level > image::best_simd_level()) {
    state.SkipWithError("level not supported by this CPU");
    return;
  }
  constexpr int kSize = 224, kRing = 256;
  const size_t plane = kSize * kSize;
  const auto in = noise(plane * 3, 9);
  std::vector<float> storage(plane * 3 * kRing + 16);  // + room to align to 64 bytes
  float* ring = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64 / 4;
  const float mean[] = {0.485f, 0.456f, 0.406f}, std[] = {0.229f, 0.224f, 0.225f};
  int i = 0;
  for (auto _ : state) {
    image::normalize_to_chw_at(level, ring + plane * 3 * (i % kRing), in.data(), kSize, kSize, 3,
                               i % 2 == 1, mean, std);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NormalizeToChw)->DenseRange(0, image::kSimdLevels - 1);

}  // namespace
}  // namespace stoker

BENCHMARK_MAIN();
