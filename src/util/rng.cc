#include "stoker/rng.h"

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

std::vector<int64_t> permutation(uint64_t seed, uint64_t epoch, int64_t n) {
  std::vector<int64_t> p(static_cast<std::size_t>(n > 0 ? n : 0));
  std::iota(p.begin(), p.end(), int64_t{0});
  Rng rng(stream_key(seed, epoch, kPermutationDomain));
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng.bounded(static_cast<uint64_t>(i) + 1));
    std::swap(p[i], p[j]);
  }
  return p;
}

}  // namespace stoker
