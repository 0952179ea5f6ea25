// Random numbers we specify ourselves, so that every standard library, compiler and
// platform produces the same permutations and the same augmentation parameters (the output of
// std::shuffle and std::uniform_*_distribution differs between standard libraries).
//
// The generator is SplitMix64 (Steele, Lea, Flood 2014): state += 0x9E3779B97F4A7C15, then
// the finaliser below. Streams are derived by hashing keys, e.g. stream_key(seed, epoch, i).
// Thread-safety: values; one Rng per thread or per sample.
#pragma once

#include <cstdint>
#include <vector>

namespace stoker {

// The SplitMix64 finaliser: a bijective 64-bit mix.
constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A key for a stream from a few integers: mix64 chained over the parts with distinct
// domain constants, so (a, b, c) and (b, a, c) give unrelated streams.
uint64_t stream_key(uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0);

class Rng {
 public:
  explicit Rng(uint64_t key) : state_(key) {}

  uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    return mix64(state_);
  }

  // Uniform in [0, n) for n >= 1, without modulo bias: Lemire's multiply-shift with
  // rejection (Lemire 2019, "Fast Random Integer Generation in an Interval").
  uint64_t bounded(uint64_t n);

  // Uniform double in [0, 1): the top 53 bits.
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform double in [lo, hi): lo + (hi - lo) * uniform01(), like torch.empty(1).uniform_.
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }

 private:
  uint64_t state_;
};

// A standard normal draw: Box-Muller, one of the pair used (two uniform01() draws).
double sample_normal(Rng& rng);
// Gamma(shape, 1): Marsaglia and Tsang (2000), with Gamma(a) = Gamma(a + 1) * U^(1/a) for
// a < 1 (normal and uniform01() draws, a varying number: rejection).
double sample_gamma(Rng& rng, double shape);
// Beta(alpha, alpha): x / (x + y) of two Gamma(alpha) draws (0.5 when both are 0).
double sample_beta(Rng& rng, double alpha);

// The stream key's last part for epoch permutations ("permute1" in ASCII), and for the keyed
// bijection's round keys ("feistel1").
inline constexpr uint64_t kPermutationDomain = 0x7065726d75746531ull;
inline constexpr uint64_t kFeistelDomain = 0x6665697374656c31ull;

// How an epoch's permutation is computed; part of a job's resume state, so that a state keeps
// meaning the order it was taken in.
enum class PermutationKind {
  // Fisher-Yates up to kFisherYatesMax samples (exactly uniform; a table of at most 512 KiB),
  // above that a keyed bijection computed position by position in O(1) memory.
  kKeyed,
  // Fisher-Yates at every size: how resume states of format version 1 were taken.
  kFisherYates,
  // The keyed bijection at every size (no table, O(1) to set up): the lanes of a shard
  // window (stoker/sampler.h), of which each batch evaluates a few positions.
  kFeistel,
};
inline constexpr int64_t kFisherYatesMax = int64_t{1} << 16;

// The permutation P of [0, n) for one (seed, epoch), the same on every rank and platform:
//   Fisher-Yates: from the back with Rng(stream_key(seed, epoch, kPermutationDomain))
//     .bounded(i + 1) swaps (the identity when n < 2), held as a table;
//   keyed: P[i] = the first value below n of E(i), E(E(i)), ... (cycle-walking), E an
//     8-round balanced Feistel network on 2h-bit values (2h = the even bit count with
//     2^2h >= n, so fewer than 4 steps on average), round r mapping (L, R) to
//     (R, L xor (mix64(R xor k_r) & (2^h - 1))), the keys k_0..k_7 the first 8 outputs of
//     Rng(stream_key(seed, epoch, kFeistelDomain)). A pseudo-random permutation (Luby and
//     Rackoff), ~16 ns per position here (kernel_bench); shuffle quality is tested
//     (rng_test.cc: uniform positions, no correlation between consecutive epochs).
// Thread-safety: immutable after construction.
class EpochPermutation {
 public:
  EpochPermutation(uint64_t seed, uint64_t epoch, int64_t n,
                   PermutationKind kind = PermutationKind::kKeyed);
  int64_t operator()(int64_t i) const;  // P[i]; requires 0 <= i < n
  int64_t size() const { return n_; }
  bool keyed() const { return table_.empty() && n_ > 1; }  // no N-sized table

 private:
  uint64_t encrypt(uint64_t x) const;

  int64_t n_;
  std::vector<int64_t> table_;  // Fisher-Yates
  int half_bits_ = 0;
  uint64_t half_mask_ = 0;
  uint64_t keys_[8] = {};
};

// P[0..n) as a vector (EpochPermutation's values).
std::vector<int64_t> permutation(uint64_t seed, uint64_t epoch, int64_t n,
                                 PermutationKind kind = PermutationKind::kKeyed);

}  // namespace stoker
