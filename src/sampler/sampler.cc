#include "stoker/sampler.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <system_error>

#include "stoker/error.h"
#include "stoker/rng.h"
#include "util/check.h"

namespace stoker {
namespace {

// Bumped when a field changes meaning; from_json refuses versions it does not know, so an
// old binary never silently misreads a newer job's state.
// Version 2: the permutation is PermutationKind::kKeyed (version 1: Fisher-Yates at every size).
constexpr int kResumeStateVersion = 2;

int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

const nlohmann::json& field(const nlohmann::json& j, const char* name) {
  const auto it = j.find(name);
  STOKER_CHECK_ARG(it != j.end(), "sampler resume state: missing field \"{}\"", name);
  return *it;
}

// Integers only: 3.0 or "3" in a resume file is a sign it was produced by something else.
int64_t int64_field(const nlohmann::json& j, const char* name) {
  const nlohmann::json& v = field(j, name);
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    STOKER_CHECK_ARG(u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                     "sampler resume state: field \"{}\" = {} is out of range", name, u);
    return static_cast<int64_t>(u);
  }
  STOKER_CHECK_ARG(v.is_number_integer(),
                   "sampler resume state: field \"{}\" must be an integer, got {}", name, v.dump());
  return v.get<int64_t>();
}

// The seed is written as a decimal string because JSON readers in other languages (and
// nlohmann's own double fallback) lose precision above 2^53; a plain unsigned number is also
// accepted since nlohmann and Python read those exactly.
uint64_t seed_field(const nlohmann::json& j) {
  const nlohmann::json& v = field(j, "seed");
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    uint64_t seed = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), seed, 10);
    STOKER_CHECK_ARG(!s.empty() && ec == std::errc() && end == s.data() + s.size(),
                     "sampler resume state: field \"seed\" = \"{}\" is not an unsigned 64-bit "
                     "decimal integer",
                     s);
    return seed;
  }
  STOKER_THROW_ARG(
      "sampler resume state: field \"seed\" must be a decimal string or a non-negative integer, "
      "got {}",
      v.dump());
}

}  // namespace

SamplerMode parse_sampler_mode(const std::string& name) {
  if (name == "exact") return SamplerMode::kExact;
  if (name == "short") return SamplerMode::kShort;
  if (name == "pad") return SamplerMode::kPad;
  if (name == "even") return SamplerMode::kEven;
  if (name == "drop") return SamplerMode::kDrop;
  STOKER_THROW_ARG("unknown sampler mode \"{}\" (allowed: exact, short, pad, even, drop)", name);
}

const char* to_string(SamplerMode mode) {
  switch (mode) {
    case SamplerMode::kExact:
      return "exact";
    case SamplerMode::kPad:
      return "pad";
    case SamplerMode::kDrop:
      return "drop";
    case SamplerMode::kShort:
      return "short";
    case SamplerMode::kEven:
      return "even";
  }
  return "unknown";
}

std::string ResumeState::to_json() const {
  nlohmann::json j;
  j["version"] = permutation == PermutationKind::kFisherYates ? 1 : kResumeStateVersion;
  j["fingerprint"] = fingerprint;
  j["dataset_size"] = dataset_size;
  j["mode"] = to_string(mode);
  j["shuffle"] = shuffle;
  j["seed"] = std::to_string(seed);
  j["epoch"] = epoch;
  j["consumed"] = consumed;
  if (shard_window > 0) {
    j["shard_window"] = shard_window;
    j["shard_lanes"] = shard_lanes;
  }
  return j.dump();
}

ResumeState ResumeState::from_json(const std::string& json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    STOKER_THROW_ARG("sampler resume state: malformed JSON: {}", e.what());
  }
  STOKER_CHECK_ARG(j.is_object(), "sampler resume state: expected a JSON object, got {}",
                   j.type_name());

  const int64_t version = int64_field(j, "version");
  STOKER_CHECK_ARG(version == 1 || version == kResumeStateVersion,
                   "sampler resume state: unsupported version {} (this build reads versions 1 "
                   "and {})",
                   version, kResumeStateVersion);

  ResumeState s;
  s.permutation = version == 1 ? PermutationKind::kFisherYates : PermutationKind::kKeyed;
  const nlohmann::json& fp = field(j, "fingerprint");
  STOKER_CHECK_ARG(fp.is_string(), "sampler resume state: field \"fingerprint\" must be a string");
  s.fingerprint = fp.get<std::string>();

  const nlohmann::json& mode = field(j, "mode");
  STOKER_CHECK_ARG(mode.is_string(), "sampler resume state: field \"mode\" must be a string");
  s.mode = parse_sampler_mode(mode.get<std::string>());

  const nlohmann::json& shuffle = field(j, "shuffle");
  STOKER_CHECK_ARG(shuffle.is_boolean(),
                   "sampler resume state: field \"shuffle\" must be a boolean");
  s.shuffle = shuffle.get<bool>();

  s.seed = seed_field(j);
  s.dataset_size = int64_field(j, "dataset_size");
  s.epoch = int64_field(j, "epoch");
  s.consumed = int64_field(j, "consumed");
  if (j.contains("shard_window")) {
    s.shard_window = int64_field(j, "shard_window");
    const int64_t lanes = int64_field(j, "shard_lanes");
    STOKER_CHECK_ARG(s.shard_window >= 0 && lanes >= 1 && lanes <= (int64_t{1} << 20),
                     "sampler resume state: shard_window {} / shard_lanes {} out of range",
                     s.shard_window, lanes);
    s.shard_lanes = static_cast<int>(lanes);
  }

  STOKER_CHECK_ARG(s.dataset_size >= 0, "sampler resume state: dataset_size {} is negative",
                   s.dataset_size);
  STOKER_CHECK_ARG(s.epoch >= 0, "sampler resume state: epoch {} is negative", s.epoch);
  STOKER_CHECK_ARG(s.consumed >= 0 && s.consumed <= s.dataset_size,
                   "sampler resume state: consumed {} is outside [0, dataset_size = {}]",
                   s.consumed, s.dataset_size);
  return s;
}

int64_t EpochPlan::count_batches(const SamplerConfig& config, int64_t consumed) {
  // W and B are ints, so W*B fits easily in int64.
  const int64_t w = config.world_size;
  const int64_t b = config.batch_size;
  const int64_t remaining = config.dataset_size - consumed;
  switch (config.mode) {
    case SamplerMode::kExact:
    case SamplerMode::kShort:
      return ceil_div(remaining, w * b);
    case SamplerMode::kPad:
      return ceil_div(ceil_div(remaining, w), b);
    case SamplerMode::kEven:
      return ceil_div(remaining / w, b);
    case SamplerMode::kDrop:
      return remaining / (w * b);
  }
  STOKER_THROW_ARG("sampler: invalid mode {}", static_cast<int>(config.mode));
}

EpochPlan::EpochPlan(const SamplerConfig& config, int64_t epoch, int64_t consumed)
    : config_(config), epoch_(epoch), consumed_(consumed) {
  const int64_t n = config.dataset_size;
  STOKER_CHECK_ARG(n >= 1, "sampler: dataset_size must be at least 1, got {}", n);
  STOKER_CHECK_ARG(config.batch_size >= 1, "sampler: batch_size must be at least 1, got {}",
                   config.batch_size);
  STOKER_CHECK_ARG(config.world_size >= 1, "sampler: world_size must be at least 1, got {}",
                   config.world_size);
  STOKER_CHECK_ARG(config.rank >= 0 && config.rank < config.world_size,
                   "sampler: rank {} is outside [0, world_size = {})", config.rank,
                   config.world_size);
  STOKER_CHECK_ARG(epoch >= 0, "sampler: epoch must be non-negative, got {}", epoch);
  STOKER_CHECK_ARG(consumed >= 0 && consumed <= n,
                   "sampler: consumed {} is outside [0, dataset_size = {}]", consumed, n);
  switch (config.mode) {
    case SamplerMode::kExact:
    case SamplerMode::kShort:
    case SamplerMode::kPad:
    case SamplerMode::kEven:
    case SamplerMode::kDrop:
      break;
    default:
      STOKER_THROW("sampler: invalid mode {}", static_cast<int>(config.mode));
  }

  remaining_ = n - consumed;
  per_rank_ = config.mode == SamplerMode::kEven ? remaining_ / config.world_size
                                                : ceil_div(remaining_, config.world_size);
  num_batches_ = count_batches(config, consumed);
  // Without shuffle P is the identity: no N-sized table needed.
  if (config.shuffle && config.shard_window > 0) {
    STOKER_CHECK_ARG(
        config.shard_ends && !config.shard_ends->empty() && config.shard_ends->back() == n,
        "sampler: shard windows need shard ends covering the {} samples", n);
    windows_.emplace(config.seed, static_cast<uint64_t>(epoch), *config.shard_ends,
                     config.shard_window, config.shard_lanes);
  } else if (config.shuffle) {
    perm_.emplace(config.seed, static_cast<uint64_t>(epoch), n, config.permutation);
  }
}

int64_t EpochPlan::batch(int64_t j, std::span<int64_t> indices, std::span<uint8_t> valid) const {
  STOKER_CHECK(j >= 0 && j < num_batches_, "sampler: batch {} is outside [0, {})", j, num_batches_);
  const int64_t b = config_.batch_size;
  STOKER_CHECK(
      indices.size() >= static_cast<std::size_t>(b) && valid.size() >= static_cast<std::size_t>(b),
      "sampler: batch buffers hold {} indices and {} flags, need {}", indices.size(), valid.size(),
      b);
  return rank_batch(j, config_.rank, indices, valid);
}

int64_t EpochPlan::rank_batch(int64_t j, int64_t r, std::span<int64_t> indices,
                              std::span<uint8_t> valid) const {
  const int64_t b = config_.batch_size;
  const int64_t w = config_.world_size;
  const int64_t n = config_.dataset_size;
  // Short mode: the batch holds this rank's samples [start, end) (rank-local k).
  const bool is_short = config_.mode == SamplerMode::kShort;
  const int64_t start = is_short ? short_start(j, r) : j * b;
  const int64_t end = is_short ? short_start(j + 1, r) : (j + 1) * b;
  for (int64_t i = 0; i < b; ++i) {
    const int64_t k = start + i;  // this rank's k-th sample of the remaining sequence
    const int64_t q = k * w + r;  // its position in Q
    // Padding wraps through P from the start, as DistributedSampler does, so padded slots
    // hold real images.
    const int64_t p = (consumed_ + q) % n;
    indices[i] = windows_ ? (*windows_)(p) : perm_ ? (*perm_)(p) : p;
    bool ok = false;
    switch (config_.mode) {
      case SamplerMode::kExact:
        ok = q < remaining_;
        break;
      case SamplerMode::kShort:
        ok = k < end;
        break;
      case SamplerMode::kPad:
      case SamplerMode::kEven:
        ok = k < per_rank_;
        break;
      case SamplerMode::kDrop:
        ok = true;
        break;
    }
    valid[i] = ok ? 1 : 0;
  }

  switch (config_.mode) {
    case SamplerMode::kExact:
      return std::min(b * w, remaining_ - j * b * w);
    case SamplerMode::kShort:
      return short_prefix(j + 1) - short_prefix(j);
    case SamplerMode::kPad:
    case SamplerMode::kEven:
      return w * std::min(b, per_rank_ - j * b);
    case SamplerMode::kDrop:
      return b * w;
  }
  return 0;
}

int EpochPlan::slots(int64_t j) const {
  STOKER_CHECK(j >= 0 && j < num_batches_, "sampler: batch {} is outside [0, {})", j, num_batches_);
  const int64_t b = config_.batch_size;
  const int64_t r = config_.rank;
  int64_t valid = b;
  switch (config_.mode) {
    case SamplerMode::kExact:
    case SamplerMode::kDrop:
      break;
    case SamplerMode::kShort:
      valid = short_start(j + 1, r) - short_start(j, r);
      break;
    case SamplerMode::kPad:
    case SamplerMode::kEven:
      valid = per_rank_ - j * b;
      break;
  }
  return static_cast<int>(std::clamp<int64_t>(valid, 0, b));
}

int64_t EpochPlan::consumed_after(int64_t batches) const {
  STOKER_CHECK(batches >= 0 && batches <= num_batches_,
               "sampler: consumed_after({}) is outside [0, num_batches = {}]", batches,
               num_batches_);
  if (config_.mode == SamplerMode::kShort) return consumed_ + short_prefix(batches);
  const int64_t step = static_cast<int64_t>(config_.batch_size) * config_.world_size;
  return std::min(config_.dataset_size, consumed_ + batches * step);
}

int64_t EpochPlan::short_start(int64_t j, int64_t r) const {
  const int64_t w = config_.world_size;
  const int64_t k = num_batches_;
  // S_r: the remaining positions q = k*W + r < R are this rank's.
  const int64_t samples = remaining_ > r ? ceil_div(remaining_ - r, w) : 0;
  const int64_t full = std::min(j * int64_t{config_.batch_size}, samples);
  // With at least one sample per step, batch j starts early enough to leave one for each of
  // the K - j steps after it: only the last batches can shrink, and none is empty. Fewer
  // samples than steps (a rank without a sample for the last step: fewer samples left than
  // ranks, or batches of one) leave the last batch empty.
  return samples >= k ? std::min(full, samples - (k - j)) : full;
}

int64_t EpochPlan::short_prefix(int64_t j) const {
  // S_r is non-increasing in r and a step's starts differ by at most one over the ranks, so
  // the samples before step j on all ranks are a prefix of Q, this long.
  int64_t sum = 0;
  for (int64_t r = 0; r < config_.world_size; ++r) sum += short_start(j, r);
  return sum;
}

SampleDigest EpochPlan::group_digest(int64_t batches) const {
  STOKER_CHECK(batches >= 0 && batches <= num_batches_,
               "sampler: group_digest({}) is outside [0, num_batches = {}]", batches, num_batches_);
  const auto b = static_cast<std::size_t>(config_.batch_size);
  std::vector<int64_t> indices(b);
  std::vector<uint8_t> valid(b);
  SampleDigest digest;
  for (int64_t r = 0; r < config_.world_size; ++r) {
    for (int64_t j = 0; j < batches; ++j) {
      rank_batch(j, r, indices, valid);
      for (std::size_t i = 0; i < b; ++i) {
        if (valid[i]) digest.add(indices[i]);
      }
    }
  }
  return digest;
}

namespace {
// The key domain of the shard order ("shards01"), apart from the sample permutation's.
constexpr uint64_t kShardOrderDomain = 0x7368617264733031ull;
}  // namespace

ShardWindowOrder::ShardWindowOrder(uint64_t seed, uint64_t epoch,
                                   const std::vector<int64_t>& shard_ends, int64_t window,
                                   int lanes)
    : seed_(seed),
      epoch_(epoch),
      n_(shard_ends.empty() ? 0 : shard_ends.back()),
      window_(window),
      lanes_(lanes) {
  STOKER_CHECK_ARG(window >= 1 && lanes >= 1 && n_ >= 1,
                   "shard windows: window {} and lanes {} must be >= 1, samples {} too", window,
                   lanes, n_);
  const int64_t shards = static_cast<int64_t>(shard_ends.size());
  const EpochPermutation order(mix64(seed ^ kShardOrderDomain), epoch, shards);
  order_starts_.reserve(static_cast<size_t>(shards));
  order_first_.reserve(static_cast<size_t>(shards));
  int64_t at = 0;
  for (int64_t k = 0; k < shards; ++k) {
    const int64_t s = order(k);
    const int64_t first = s == 0 ? 0 : shard_ends[static_cast<size_t>(s - 1)];
    const int64_t end = shard_ends[static_cast<size_t>(s)];
    STOKER_CHECK_ARG(end >= first, "shard windows: shard ends must not decrease");
    if (end == first) continue;  // an empty shard holds no position
    order_starts_.push_back(at);
    order_first_.push_back(first);
    at += end - first;
  }
}

int64_t ShardWindowOrder::operator()(int64_t q) const {
  const int64_t w = q / window_;
  const int64_t base = w * window_;
  const int64_t m = std::min(window_, n_ - base);
  const int64_t t = q - base;
  const int64_t lanes = std::min<int64_t>(lanes_, m);
  const int64_t lane = t % lanes, k = t / lanes;
  // Lane l holds the positions t = l, l + L, ...: ceil((m - l) / L) of them, and its run of S
  // starts after the runs of the lanes before it.
  const int64_t lane_size = (m - lane + lanes - 1) / lanes;
  const int64_t lane_start = lane * (m / lanes) + std::min(lane, m % lanes);
  const EpochPermutation shuffle(stream_key(seed_, epoch_, static_cast<uint64_t>(w)),
                                 static_cast<uint64_t>(lane), lane_size, PermutationKind::kFeistel);
  const int64_t x = base + lane_start + shuffle(k);  // the position in S
  const auto it = std::upper_bound(order_starts_.begin(), order_starts_.end(), x);
  const size_t shard = static_cast<size_t>(it - order_starts_.begin()) - 1;
  return order_first_[shard] + (x - order_starts_[shard]);
}

void SampleDigest::add(int64_t index) {
  ++count;
  // A bijective mix of the index: distinct samples get unrelated 64-bit values.
  sum += mix64(static_cast<uint64_t>(index) ^ 0x5851F42D4C957F2Dull);
}

SampleDigest& SampleDigest::operator+=(const SampleDigest& other) {
  count += other.count;
  sum += other.sum;
  return *this;
}

}  // namespace stoker
