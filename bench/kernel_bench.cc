// Google Benchmark micro-benchmarks of the augmentation kernels, every SIMD level this CPU has
// side by side (the levels give identical bytes, see resize_test.cc), so that a kernel change
// can be judged in one run on a noisy machine (repetitions interleaved, medians):
//   build/bench/kernel_bench --benchmark_repetitions=9 --benchmark_min_time=0.2
//       --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
//
// Cases: "up" is the typical RandomResizedCrop of a packed 256-pixel image (a 163x163 crop of a
// 256x192 image upscaled to 224x224); "down" a 391x387 crop of a 0.3-megapixel photo downscaled
// to 224x224. Normalize is the float32 CHW output of one 224x224 RGB image into a batch-sized
// ring of buffers (streaming stores to memory, as in the loader). Restart segments: the
// "up" crop decoded from a 256x192 q90 JPEG without restart markers (0), with a marker every
// 2 MCUs (2), and the cost of finding the segments and planning the cut alone (scan).

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "image/decoders.h"
#include "image/resize.h"
#ifdef STOKER_BENCH_HIGHWAY
#include "bench/hwy_vertical.h"
#endif
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

// Labels the benchmark with its SIMD level; false (the benchmark skipped) when this CPU lacks it.
bool level_supported(benchmark::State& state, image::SimdLevel level) {
  state.SetLabel(to_string(level));
  if (level <= image::best_simd_level()) return true;
  state.SkipWithError("level not supported by this CPU");
  return false;
}

void resize_case(benchmark::State& state, int in_w, int in_h, Box box) {
  const auto level = static_cast<image::SimdLevel>(state.range(0));
  if (!level_supported(state, level)) return;
  const auto in = noise(static_cast<size_t>(in_w) * in_h * 3, 7);
  std::vector<uint8_t> out(224 * 224 * 3), scratch;
  for (auto _ : state) {
    image::resize_antialiased_at(level, out.data(), 224, 224, in.data(), in_w, in_h, 3, box, box,
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

// The vertical pass alone, as resize's "down" case runs it: 224 output rows of 224 RGB pixels,
// 5 taps each, over an intermediate of 230 rows. Range: (SIMD level, 0), or (0, 1) for the
// Highway port (bench/hwy_vertical.cc), which must give the scalar kernel's bytes.
struct VerticalCase {
  static constexpr size_t kRow = 224 * 3;
  static constexpr int kRows = 224, kTaps = 5;
  std::vector<uint8_t> rows = noise(kRow * (kRows + kTaps + 1), 3);
  std::vector<uint8_t> out = std::vector<uint8_t>(kRow * kRows);
  std::vector<int32_t> acc = std::vector<int32_t>(kRow);
  // A triangle over the taps summing to 2^22, as compute_axis makes them.
  int32_t k[kTaps] = {466034, 1165084, 1398101, 1165084, 0};
  VerticalCase() { k[4] = (1 << 22) - (k[0] + k[1] + k[2] + k[3]); }
  template <typename Row>
  void pass(Row row) {
    for (int y = 0; y < kRows; ++y) row(out.data() + kRow * y, rows.data() + kRow * y);
  }
};

void BM_VerticalPass(benchmark::State& state) {
  const auto level = static_cast<image::SimdLevel>(state.range(0));
  if (!level_supported(state, level)) return;
  VerticalCase c;
  for (auto _ : state) {
    c.pass([&](uint8_t* out, const uint8_t* rows) {
      image::vertical_row_at(level, out, rows, c.kRow, c.kRow, c.k, c.kTaps, c.acc.data());
    });
    benchmark::DoNotOptimize(c.out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_VerticalPass)->DenseRange(0, image::kSimdLevels - 1);

#ifdef STOKER_BENCH_HIGHWAY
void BM_VerticalPassHighway(benchmark::State& state) {
  state.SetLabel(std::string("highway ") + bench::highway_target());
  VerticalCase scalar, c;
  scalar.pass([&](uint8_t* out, const uint8_t* rows) {
    image::vertical_row_at(image::SimdLevel::kScalar, out, rows, scalar.kRow, scalar.kRow, scalar.k,
                           scalar.kTaps, scalar.acc.data());
  });
  c.pass([&](uint8_t* out, const uint8_t* rows) {
    bench::vertical_row_highway(out, rows, c.kRow, c.kRow, c.k, c.kTaps);
  });
  if (c.out != scalar.out) {
    state.SkipWithError("the Highway port's bytes differ from the scalar kernel's");
    return;
  }
  for (auto _ : state) {
    c.pass([&](uint8_t* out, const uint8_t* rows) {
      bench::vertical_row_highway(out, rows, c.kRow, c.kRow, c.k, c.kTaps);
    });
    benchmark::DoNotOptimize(c.out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_VerticalPassHighway);
#endif

void BM_NormalizeToChw(benchmark::State& state) {
  const auto level = static_cast<image::SimdLevel>(state.range(0));
  if (!level_supported(state, level)) return;
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

// A 256x192 q90 JPEG of the random walk above, with restart markers every `interval` MCUs.
std::vector<uint8_t> packed_jpeg(int interval) {
  const auto pixels = noise(256 * 192 * 3, 11);
  return encode_jpeg(pixels.data(), 256, 192, 3, 90, interval);
}

void BM_JpegCropDecode(benchmark::State& state) {
  const auto bytes = packed_jpeg(static_cast<int>(state.range(0)));
  const ImageHeader header = probe_image(bytes, "bench.jpg");
  const Rect need{40, 12, 163, 163};
  DecodedRegion region;
  for (auto _ : state) {
    decode_region(region, bytes, header, need, 163, 163, 3, "bench.jpg");
    benchmark::DoNotOptimize(region.pixels.data());
  }
  state.SetLabel(fmt::format("{} bytes", bytes.size()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_JpegCropDecode)->Arg(0)->Arg(2);

void BM_JpegRestartScan(benchmark::State& state) {
  const auto bytes = packed_jpeg(2);
  const ImageHeader header = probe_image(bytes, "bench.jpg");
  for (auto _ : state) {
    benchmark::DoNotOptimize(image::jpeg_restart_cut(bytes, header, Rect{40, 12, 163, 163}, 8));
  }
  state.SetLabel(fmt::format("{} bytes", bytes.size()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_JpegRestartScan);

// One position of an epoch permutation: the keyed bijection (Feistel + cycle-walking) for 10^6
// and 10^9 samples, against the Fisher-Yates table lookup it replaces above 2^16 samples.
void BM_PermutationPosition(benchmark::State& state) {
  const int64_t n = state.range(0);
  const EpochPermutation p(
      7, 1, n, state.range(1) != 0 ? PermutationKind::kFisherYates : PermutationKind::kKeyed);
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p(i));
    i = i + 1 == n ? 0 : i + 1;
  }
  state.SetLabel(p.keyed() ? "keyed" : "table");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PermutationPosition)->Args({1000000, 0})->Args({1000000000, 0})->Args({1000000, 1});

}  // namespace
}  // namespace stoker

BENCHMARK_MAIN();
