#include "stoker/rng.h"

#include <cmath>
#include <cstddef>
#include <numeric>

namespace stoker {
namespace {
// Domain constants keep streams of different purposes apart.
constexpr uint64_t kKeyDomain = 0x73746f6b65720001ull;  // "stoker" + 1
}  // namespace

uint64_t stream_key(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t h = mix64(kKeyDomain ^ a);
  h = mix64(h ^ (b + 0x9E3779B97F4A7C15ull));
  h = mix64(h ^ (c + 0x3C6EF372FE94F82Aull));
  h = mix64(h ^ (d + 0xDAA66D2C7DDF743Full));
  return h;
}

uint64_t Rng::bounded(uint64_t n) {
  // Lemire: m = x * n (128-bit); accept unless the low half falls in the biased zone.
  unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

EpochPermutation::EpochPermutation(uint64_t seed, uint64_t epoch, int64_t n, PermutationKind kind)
    : n_(n > 0 ? n : 0) {
  if (n_ < 2) return;  // the identity
  if (kind == PermutationKind::kFisherYates ||
      (kind == PermutationKind::kKeyed && n_ <= kFisherYatesMax)) {
    table_.resize(static_cast<std::size_t>(n_));
    std::iota(table_.begin(), table_.end(), int64_t{0});
    Rng rng(stream_key(seed, epoch, kPermutationDomain));
    for (int64_t i = n_ - 1; i > 0; --i) {
      const auto j = static_cast<int64_t>(rng.bounded(static_cast<uint64_t>(i) + 1));
      std::swap(table_[static_cast<std::size_t>(i)], table_[static_cast<std::size_t>(j)]);
    }
    return;
  }
  int bits = 2;
  while (bits < 64 && (uint64_t{1} << bits) < static_cast<uint64_t>(n_)) bits += 2;
  half_bits_ = bits / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  Rng rng(stream_key(seed, epoch, kFeistelDomain));
  for (uint64_t& k : keys_) k = rng.next();
}

uint64_t EpochPermutation::encrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (const uint64_t k : keys_) {
    const uint64_t next = left ^ (mix64(right ^ k) & half_mask_);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

int64_t EpochPermutation::operator()(int64_t i) const {
  if (!table_.empty()) return table_[static_cast<std::size_t>(i)];
  if (n_ < 2) return i;
  // Cycle-walking: E permutes [0, 2^2h); following it from i until it lands below n gives a
  // permutation of [0, n) (each cycle of E visits [0, n) in its own order).
  uint64_t x = static_cast<uint64_t>(i);
  do {
    x = encrypt(x);
  } while (x >= static_cast<uint64_t>(n_));
  return static_cast<int64_t>(x);
}

std::vector<int64_t> permutation(uint64_t seed, uint64_t epoch, int64_t n, PermutationKind kind) {
  const EpochPermutation p(seed, epoch, n, kind);
  std::vector<int64_t> out(static_cast<std::size_t>(p.size()));
  for (int64_t i = 0; i < p.size(); ++i) out[static_cast<std::size_t>(i)] = p(i);
  return out;
}

// A standard normal draw (Box-Muller; one of the pair is used).
double sample_normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform01();  // (0, 1]
  const double u2 = rng.uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// Gamma(shape, 1): Marsaglia and Tsang (2000), with Gamma(a) = Gamma(a + 1) * U^(1/a) for a < 1.
double sample_gamma(Rng& rng, double shape) {
  if (shape < 1.0) {
    const double u = 1.0 - rng.uniform01();
    return sample_gamma(rng, shape + 1.0) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = sample_normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - rng.uniform01();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

double sample_beta(Rng& rng, double alpha) {
  const double x = sample_gamma(rng, alpha), y = sample_gamma(rng, alpha);
  return x + y > 0 ? x / (x + y) : 0.5;
}

}  // namespace stoker
