// The distributed sampler: which dataset index goes in slot i of batch j on rank r.
//
// Math. Epoch e has one global permutation P = EpochPermutation(seed, e, N) (stoker/rng.h;
// the identity without shuffle), evaluated per position: no N-sized table above 2^16 samples. A
// resumed epoch starts after C consumed samples: the remaining sequence is Q[q] = P[C + q], R = N -
// C entries. With W ranks and batch B, slot i of batch j on rank r reads position q = (j*B + i)*W +
// r of Q; positions q >= R are filled with P[(C + q) mod N] (wrapping, never blank). Modes:
//   exact: K = ceil(R / (W*B)); a slot is valid iff q < R; global_valid = min(B*W, R - j*B*W).
//          The valid slots of all ranks together are each remaining sample exactly once.
//   short: exact's K and each rank's samples (positions q = k*W + r < R, S_r of them), each
//          batch delivered with only its samples: DataLoader's shape, a short last batch, for
//          evaluation loops that count what they are given. Batch j of rank r holds its
//          samples [a_j, a_{j+1}), a_j = min(j*B, S_r - (K - j)) when S_r >= K (the last
//          batches shrink so that none is empty: usually exact's batches, only the last one
//          short), else min(j*B, S_r): a rank with fewer samples than steps (fewer samples
//          left than ranks, or B = 1) gets an empty last batch, so that every rank still
//          takes K steps. The samples of steps [0, j) on all ranks are a prefix of Q.
//   pad:   torch's DistributedSampler(drop_last=False) + DataLoader(drop_last=False): each
//          rank has S = ceil(R / W) samples (wrap-around duplicates count as valid, as torch
//          counts them), K = ceil(S / B); slot valid iff j*B + i < S; the last batch is short
//          (delivered with only those slots); global_valid = W * min(B, S - j*B).
//   even:  torch's DistributedSampler(drop_last=True) + DataLoader(drop_last=False): each
//          rank has S = floor(R / W) samples (the last R mod W positions are left out, as torch
//          leaves them), K = ceil(S / B); slot valid iff j*B + i < S; the last batch is short.
//   drop:  both drop_last: K = floor(R / (W*B)) full batches, every slot valid.
// Every rank computes the same K, so collectives never hang. slots(j) is how many slots
// batch j is delivered with: B, or (short, pad, even) its valid slots.
//
// Shard windows (storage read best in order: remote tar shards). With shard_window M > 0 and
// shuffle, P is a two-level order instead: the shards (shard_ends) in a keyed order, their
// samples in it one after another (the sequence S), cut into windows of M positions; in window
// w of m positions, position t = L*k + l (l < L = shard_lanes) holds the k-th entry of lane l,
// and lane l is the l-th contiguous run of S in the window, shuffled by its own keyed
// bijection. Set L = W and M = H*B*W: rank r's slots of the H batches of a window all come
// from lane r, one contiguous run of about H*B samples of S, so that a rank reads its shards
// in order, in a few large range reads, while each batch is still shuffled across that run
// (WebDataset's shard shuffle + shuffle buffer, with the guarantees above kept: P is still a
// permutation of [0, N), so exactly-once, lockstep and resume on another W or B hold). M and L
// are part of the epoch's order and of its resume state.
// Thread-safety: EpochPlan is immutable after construction; methods are const.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stoker/rng.h"

namespace stoker {

enum class SamplerMode { kExact, kPad, kDrop, kShort, kEven };

// "exact" | "short" | "pad" | "even" | "drop"
SamplerMode parse_sampler_mode(const std::string& name);
const char* to_string(SamplerMode mode);

struct SamplerConfig {
  int64_t dataset_size = 0;  // N
  int batch_size = 1;        // B per rank
  int rank = 0;              // r
  int world_size = 1;        // W
  SamplerMode mode = SamplerMode::kExact;
  bool shuffle = true;
  uint64_t seed = 0;
  PermutationKind permutation = PermutationKind::kKeyed;
  // Shard windows (above): 0 = off. shard_ends: the end index of each shard (increasing, the
  // last = dataset_size), shared so that copies of a config are cheap.
  int64_t shard_window = 0;
  int shard_lanes = 1;
  std::shared_ptr<const std::vector<int64_t>> shard_ends = nullptr;
};

// The two-level order of shard windows (above): P[q] for one (seed, epoch).
// Thread-safety: immutable after construction.
class ShardWindowOrder {
 public:
  // Requires window >= 1, lanes >= 1, shard_ends increasing with a last entry n >= 1.
  ShardWindowOrder(uint64_t seed, uint64_t epoch, const std::vector<int64_t>& shard_ends,
                   int64_t window, int lanes);
  int64_t operator()(int64_t q) const;  // requires 0 <= q < n
  int64_t size() const { return n_; }

 private:
  uint64_t seed_, epoch_;
  int64_t n_, window_;
  int lanes_;
  std::vector<int64_t> order_starts_;  // S position of each shard in the keyed shard order
  std::vector<int64_t> order_first_;   // that shard's first dataset index
};

// Where a job stands, the same on every rank; loads on another world size or batch size.
struct ResumeState {
  std::string fingerprint;  // Dataset::fingerprint()
  int64_t dataset_size = 0;
  SamplerMode mode = SamplerMode::kExact;
  bool shuffle = true;
  uint64_t seed = 0;
  int64_t epoch = 0;
  int64_t consumed = 0;  // samples of this epoch's permutation already delivered (all ranks)
  // How the permutation is computed. JSON format version 2 writes kKeyed; a version 1 state
  // (written before the keyed permutation existed) reads as kFisherYates, so that it resumes
  // the order it was taken in.
  PermutationKind permutation = PermutationKind::kKeyed;
  // The epoch's shard windows (0 = none), written as "shard_window"/"shard_lanes" only when
  // set: a resumed epoch goes on in the order it was taken in, whatever the new world size.
  int64_t shard_window = 0;
  int shard_lanes = 1;

  std::string to_json() const;
  // Throws stoker::Error on malformed JSON or missing fields.
  static ResumeState from_json(const std::string& json);
};

// An order-independent digest of a multiset of sample indices: how many, and the 64-bit sum
// (mod 2^64) of a hash of each. Two ranks that delivered the same samples have equal digests;
// the digests of disjoint sets add up to the digest of their union, so the cross-rank audit
// can check "disjoint and complete" from two numbers per rank.
struct SampleDigest {
  int64_t count = 0;
  uint64_t sum = 0;
  void add(int64_t index);
  SampleDigest& operator+=(const SampleDigest& other);
  bool operator==(const SampleDigest&) const = default;
};

class EpochPlan {
 public:
  // `consumed` in [0, N]; throws stoker::Error on an invalid config (B < 1, W < 1, r >= W,
  // N < 1, consumed out of range).
  EpochPlan(const SamplerConfig& config, int64_t epoch, int64_t consumed = 0);

  int64_t num_batches() const { return num_batches_; }  // K, the same on every rank
  // K for a plan starting after `consumed` samples, without building the permutation.
  // Requires a config and `consumed` the constructor would accept.
  static int64_t count_batches(const SamplerConfig& config, int64_t consumed);
  int64_t epoch() const { return epoch_; }
  int64_t consumed_at_start() const { return consumed_; }
  const SamplerConfig& config() const { return config_; }

  // Fills indices[B] and valid[B] (1 = valid, 0 = padding) for batch j of this rank and
  // returns its global_valid. Requires 0 <= j < num_batches().
  int64_t batch(int64_t j, std::span<int64_t> indices, std::span<uint8_t> valid) const;
  // How many slots batch j of this rank is delivered with (above): batch(j)'s first slots(j).
  int slots(int64_t j) const;

  // Samples of this epoch consumed by all ranks once every rank has taken batches [0, j):
  // min(N, C + j*B*W), in short mode C + the sum of a_j over the ranks (the prefix
  // P[C : that] is exactly what was delivered in the exact and short modes).
  int64_t consumed_after(int64_t batches) const;

  // The digest of the valid slots of batches [0, batches) of every rank 0..W-1 of this
  // epoch: what a correctly sharded job has delivered once each rank took that many batches.
  // Requires 0 <= batches <= num_batches(). O(batches * B * W).
  SampleDigest group_digest(int64_t batches) const;

 private:
  // batch() for any rank r of this plan's world.
  // Short mode: a_j of rank r (above), and the sum over the ranks of a_j.
  int64_t short_start(int64_t j, int64_t r) const;
  int64_t short_prefix(int64_t j) const;
  int64_t rank_batch(int64_t j, int64_t r, std::span<int64_t> indices,
                     std::span<uint8_t> valid) const;

  SamplerConfig config_;
  int64_t epoch_;
  int64_t consumed_;
  int64_t remaining_;
  int64_t per_rank_;  // pad and even modes: S
  int64_t num_batches_;
  std::optional<EpochPermutation> perm_;     // none when !shuffle (identity)
  std::optional<ShardWindowOrder> windows_;  // shard windows, instead of perm_
};

}  // namespace stoker
