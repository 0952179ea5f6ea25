#include "stoker/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "stoker/error.h"
#include "stoker/rng.h"

namespace stoker {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Case {
  int64_t n;
  int w;
  int b;
  uint64_t seed;
  int64_t epoch;
  int64_t consumed;
  bool shuffle;
};

std::string describe(const Case& c, SamplerMode mode) {
  return "N=" + std::to_string(c.n) + " W=" + std::to_string(c.w) + " B=" + std::to_string(c.b) +
         " seed=" + std::to_string(c.seed) + " epoch=" + std::to_string(c.epoch) +
         " C=" + std::to_string(c.consumed) + " shuffle=" + std::to_string(c.shuffle) +
         " mode=" + to_string(mode);
}

SamplerConfig config_for(const Case& c, int rank, SamplerMode mode) {
  return SamplerConfig{.dataset_size = c.n,
                       .batch_size = c.b,
                       .rank = rank,
                       .world_size = c.w,
                       .mode = mode,
                       .shuffle = c.shuffle,
                       .seed = c.seed};
}

// The global permutation as the tests see it, computed independently of EpochPlan.
std::vector<int64_t> global_perm(const Case& c) {
  if (c.shuffle) return permutation(c.seed, static_cast<uint64_t>(c.epoch), c.n);
  std::vector<int64_t> p(static_cast<size_t>(c.n));
  std::iota(p.begin(), p.end(), int64_t{0});
  return p;
}

struct RankBatches {
  int64_t num_batches = 0;
  std::vector<std::vector<int64_t>> indices;  // [j][i]
  std::vector<std::vector<uint8_t>> valid;    // [j][i]
  std::vector<int64_t> global_valid;          // [j]
};

std::vector<RankBatches> run_epoch(const Case& c, SamplerMode mode) {
  std::vector<RankBatches> ranks(static_cast<size_t>(c.w));
  for (int r = 0; r < c.w; ++r) {
    const EpochPlan plan(config_for(c, r, mode), c.epoch, c.consumed);
    RankBatches& out = ranks[static_cast<size_t>(r)];
    out.num_batches = plan.num_batches();
    for (int64_t j = 0; j < plan.num_batches(); ++j) {
      std::vector<int64_t> idx(static_cast<size_t>(c.b), -1);
      std::vector<uint8_t> val(static_cast<size_t>(c.b), 2);
      out.global_valid.push_back(plan.batch(j, idx, val));
      out.indices.push_back(std::move(idx));
      out.valid.push_back(std::move(val));
    }
  }
  return ranks;
}

// Deterministic pseudo-random cases: N in 1..300 with boundary values of C.
std::vector<Case> make_cases(int count, uint64_t key) {
  Rng rng(stream_key(key));
  std::vector<Case> cases;
  for (int k = 0; k < count; ++k) {
    Case c;
    c.n = 1 + static_cast<int64_t>(rng.bounded(300));
    c.w = 1 + static_cast<int>(rng.bounded(9));
    c.b = 1 + static_cast<int>(rng.bounded(17));
    c.seed = rng.next();
    c.epoch = static_cast<int64_t>(rng.bounded(6));
    c.shuffle = rng.bounded(8) != 0;
    const int64_t step = static_cast<int64_t>(c.w) * c.b;
    switch (k % 6) {
      case 0:
        c.consumed = 0;
        break;
      case 1:
        c.consumed = c.n;
        break;
      case 2:
        c.consumed = c.n - 1;
        break;
      case 3:  // a batch boundary of the current shape
        c.consumed = std::min(c.n, step * static_cast<int64_t>(rng.bounded(4)));
        break;
      default:
        c.consumed = static_cast<int64_t>(rng.bounded(static_cast<uint64_t>(c.n) + 1));
    }
    cases.push_back(c);
  }
  // Small N against wide jobs, where padding exceeds the dataset.
  for (int64_t n : {1, 2, 3}) {
    cases.push_back({n, 9, 17, 1, 0, 0, true});
    cases.push_back({n, 8, 1, 2, 1, 0, true});
  }
  return cases;
}

// Checks every slot against the header's formula: slot i of batch j on rank r holds
// P[(C + q) mod N] with q = (j*B + i)*W + r.
void check_formula(const Case& c, const std::vector<RankBatches>& ranks,
                   const std::vector<int64_t>& p, SamplerMode mode) {
  for (int r = 0; r < c.w; ++r) {
    const RankBatches& rb = ranks[static_cast<size_t>(r)];
    for (int64_t j = 0; j < rb.num_batches; ++j) {
      for (int i = 0; i < c.b; ++i) {
        const int64_t q = (j * c.b + i) * c.w + r;
        const int64_t idx = rb.indices[static_cast<size_t>(j)][static_cast<size_t>(i)];
        ASSERT_GE(idx, 0) << describe(c, mode);
        ASSERT_LT(idx, c.n) << describe(c, mode);
        ASSERT_EQ(idx, p[static_cast<size_t>((c.consumed + q) % c.n)]) << describe(c, mode);
        ASSERT_LE(rb.valid[static_cast<size_t>(j)][static_cast<size_t>(i)], 1);
      }
    }
  }
}

TEST(SamplerMode, ParseAndName) {
  for (SamplerMode m : {SamplerMode::kExact, SamplerMode::kShort, SamplerMode::kPad,
                        SamplerMode::kEven, SamplerMode::kDrop}) {
    EXPECT_EQ(parse_sampler_mode(to_string(m)), m);
  }
  try {
    parse_sampler_mode("padded");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("padded"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("exact, short, pad, even, drop"), std::string::npos) << e.message();
  }
}

TEST(EpochPlan, ExactModeProperties) {
  for (const Case& c : make_cases(10000, 1)) {
    SCOPED_TRACE(describe(c, SamplerMode::kExact));
    const auto p = global_perm(c);
    const auto ranks = run_epoch(c, SamplerMode::kExact);
    const int64_t remaining = c.n - c.consumed;
    const int64_t step = static_cast<int64_t>(c.w) * c.b;
    const int64_t k = ceil_div(remaining, step);
    for (const RankBatches& rb : ranks) ASSERT_EQ(rb.num_batches, k);
    check_formula(c, ranks, p, SamplerMode::kExact);
    if (HasFatalFailure()) return;

    std::vector<int> seen(static_cast<size_t>(c.n), 0);
    for (int64_t j = 0; j < k; ++j) {
      int64_t valid_in_step = 0;
      for (const RankBatches& rb : ranks) {
        ASSERT_EQ(rb.global_valid[static_cast<size_t>(j)], ranks[0].global_valid[j]);
        for (int i = 0; i < c.b; ++i) {
          if (rb.valid[static_cast<size_t>(j)][static_cast<size_t>(i)] != 0) {
            ++valid_in_step;
            ++seen[static_cast<size_t>(rb.indices[static_cast<size_t>(j)][static_cast<size_t>(i)])];
          }
        }
      }
      ASSERT_EQ(ranks[0].global_valid[static_cast<size_t>(j)], valid_in_step);
      ASSERT_GE(valid_in_step, 1);
    }
    // Exactly once for the remaining suffix P[C:N], never for the consumed prefix.
    for (int64_t pos = 0; pos < c.n; ++pos) {
      ASSERT_EQ(seen[static_cast<size_t>(p[static_cast<size_t>(pos)])], pos >= c.consumed ? 1 : 0)
          << "position " << pos;
    }
    const EpochPlan plan(config_for(c, 0, SamplerMode::kExact), c.epoch, c.consumed);
    for (int64_t j = 0; j <= k; ++j) {
      ASSERT_EQ(plan.consumed_after(j), std::min(c.n, c.consumed + j * step));
    }
  }
}

// torch.utils.data.DistributedSampler(drop_last=False) index logic on a given index list,
// followed by DataLoader(batch_size=B, drop_last=False) batching, for one rank:
//   total_size = W * ceil(len / W)
//   indices += (indices * ceil(padding / len))[:padding]    (padding = total_size - len)
//   indices = indices[rank:total_size:W]
//   batches = consecutive chunks of B, the last one possibly short.
std::vector<std::vector<int64_t>> torch_distributed_batches(const std::vector<int64_t>& indices,
                                                            int w, int rank, int b,
                                                            bool drop_last = false) {
  const int64_t len = static_cast<int64_t>(indices.size());
  // drop_last: the tail that does not divide evenly is left out (indices[:total]).
  const int64_t total = drop_last ? w * (len / w) : w * ceil_div(len, w);
  std::vector<int64_t> padded = indices;
  const int64_t padding = total - len;
  if (padding <= 0) {
    padded.resize(static_cast<size_t>(total));
  } else if (padding <= len) {
    padded.insert(padded.end(), indices.begin(), indices.begin() + padding);
  } else {
    std::vector<int64_t> repeated;
    for (int64_t t = 0; t < ceil_div(padding, len); ++t) {
      repeated.insert(repeated.end(), indices.begin(), indices.end());
    }
    padded.insert(padded.end(), repeated.begin(), repeated.begin() + padding);
  }
  std::vector<int64_t> mine;
  for (int64_t pos = rank; pos < total; pos += w) mine.push_back(padded[static_cast<size_t>(pos)]);
  std::vector<std::vector<int64_t>> batches;
  for (size_t start = 0; start < mine.size(); start += static_cast<size_t>(b)) {
    const size_t end = std::min(mine.size(), start + static_cast<size_t>(b));
    batches.emplace_back(mine.begin() + static_cast<std::ptrdiff_t>(start),
                         mine.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return batches;
}

// Each rank's batches are torch's DistributedSampler + DataLoader batches (`drop_last` the
// sampler's): the valid slots, a prefix of each batch, hold them in order, and global_valid is
// W times the batch's size (every rank's batch j has the same size in these modes).
void expect_torch_batches(const Case& c, const std::vector<RankBatches>& ranks,
                          const std::vector<int64_t>& p, bool drop_last) {
  for (int r = 0; r < c.w; ++r) {
    const RankBatches& rb = ranks[static_cast<size_t>(r)];
    const auto reference = torch_distributed_batches(p, c.w, r, c.b, drop_last);
    ASSERT_EQ(rb.num_batches, static_cast<int64_t>(reference.size()));
    for (int64_t j = 0; j < rb.num_batches; ++j) {
      const auto& ref = reference[static_cast<size_t>(j)];
      std::vector<int64_t> delivered;
      for (int i = 0; i < c.b; ++i) {
        const bool v = rb.valid[static_cast<size_t>(j)][static_cast<size_t>(i)] != 0;
        ASSERT_EQ(v, i < static_cast<int>(ref.size())) << "j=" << j << " i=" << i;
        if (v) delivered.push_back(rb.indices[static_cast<size_t>(j)][static_cast<size_t>(i)]);
      }
      ASSERT_EQ(delivered, ref) << "rank " << r << " batch " << j;
      ASSERT_EQ(rb.global_valid[static_cast<size_t>(j)],
                static_cast<int64_t>(c.w) * static_cast<int64_t>(ref.size()));
    }
  }
}

TEST(EpochPlan, PadModeMatchesDistributedSampler) {
  for (Case c : make_cases(5000, 2)) {
    c.consumed = 0;  // torch has no mid-epoch resume; compare fresh epochs
    SCOPED_TRACE(describe(c, SamplerMode::kPad));
    const auto p = global_perm(c);
    const auto ranks = run_epoch(c, SamplerMode::kPad);
    check_formula(c, ranks, p, SamplerMode::kPad);
    if (HasFatalFailure()) return;
    ASSERT_EQ(ranks[0].num_batches, ceil_div(ceil_div(c.n, c.w), c.b));
    expect_torch_batches(c, ranks, p, /*drop_last=*/false);
    if (HasFatalFailure()) return;
  }
}

// DistributedSampler(drop_last=True) + DataLoader(drop_last=False), as pytorch/examples'
// imagenet validation builds it: even mode, batch for batch.
TEST(EpochPlan, EvenModeMatchesDistributedSamplerWithDropLast) {
  for (Case c : make_cases(5000, 2)) {
    c.consumed = 0;
    SCOPED_TRACE(describe(c, SamplerMode::kEven));
    const auto p = global_perm(c);
    const auto ranks = run_epoch(c, SamplerMode::kEven);
    check_formula(c, ranks, p, SamplerMode::kEven);
    if (HasFatalFailure()) return;
    expect_torch_batches(c, ranks, p, /*drop_last=*/true);
    if (HasFatalFailure()) return;
  }
}

TEST(EpochPlan, PadModeAfterResume) {
  for (const Case& c : make_cases(3000, 3)) {
    SCOPED_TRACE(describe(c, SamplerMode::kPad));
    const auto p = global_perm(c);
    const auto ranks = run_epoch(c, SamplerMode::kPad);
    check_formula(c, ranks, p, SamplerMode::kPad);
    if (HasFatalFailure()) return;
    const int64_t per_rank = ceil_div(c.n - c.consumed, c.w);
    std::vector<int> seen(static_cast<size_t>(c.n), 0);
    for (const RankBatches& rb : ranks) {
      ASSERT_EQ(rb.num_batches, ceil_div(per_rank, c.b));
      int64_t valid = 0;
      for (int64_t j = 0; j < rb.num_batches; ++j) {
        for (int i = 0; i < c.b; ++i) {
          if (rb.valid[static_cast<size_t>(j)][static_cast<size_t>(i)] != 0) {
            ++valid;
            seen[static_cast<size_t>(rb.indices[static_cast<size_t>(j)][static_cast<size_t>(i)])] =
                1;
          }
        }
      }
      ASSERT_EQ(valid, per_rank);  // every rank the same number of samples
    }
    // Every remaining sample is among them (duplicates allowed in pad mode).
    for (int64_t pos = c.consumed; pos < c.n; ++pos) {
      ASSERT_EQ(seen[static_cast<size_t>(p[static_cast<size_t>(pos)])], 1);
    }
  }
}

TEST(EpochPlan, DropMode) {
  for (const Case& c : make_cases(5000, 4)) {
    SCOPED_TRACE(describe(c, SamplerMode::kDrop));
    const auto p = global_perm(c);
    const auto ranks = run_epoch(c, SamplerMode::kDrop);
    check_formula(c, ranks, p, SamplerMode::kDrop);
    if (HasFatalFailure()) return;
    const int64_t step = static_cast<int64_t>(c.w) * c.b;
    const int64_t k = (c.n - c.consumed) / step;
    std::vector<int> seen(static_cast<size_t>(c.n), 0);
    for (const RankBatches& rb : ranks) {
      ASSERT_EQ(rb.num_batches, k);
      for (int64_t j = 0; j < k; ++j) {
        ASSERT_EQ(rb.global_valid[static_cast<size_t>(j)], step);
        for (int i = 0; i < c.b; ++i) {
          ASSERT_EQ(rb.valid[static_cast<size_t>(j)][static_cast<size_t>(i)], 1);
          ++seen[static_cast<size_t>(rb.indices[static_cast<size_t>(j)][static_cast<size_t>(i)])];
        }
      }
    }
    // Exactly the first K*W*B remaining samples, each once.
    for (int64_t pos = 0; pos < c.n; ++pos) {
      const bool taken = pos >= c.consumed && pos < c.consumed + k * step;
      ASSERT_EQ(seen[static_cast<size_t>(p[static_cast<size_t>(pos)])], taken ? 1 : 0);
    }
  }
}

TEST(EpochPlan, ResumeOnAnotherShapeDeliversTheRestExactlyOnce) {
  // An epoch run in hops: each hop takes some batches on one (W, B), saves consumed_after,
  // and the next hop resumes on another (W', B'). Every sample must come out exactly once.
  Rng rng(stream_key(5));
  for (int t = 0; t < 5000; ++t) {
    Case c{.n = 1 + static_cast<int64_t>(rng.bounded(300)),
           .w = 1,
           .b = 1,
           .seed = rng.next(),
           .epoch = static_cast<int64_t>(rng.bounded(4)),
           .consumed = 0,
           .shuffle = rng.bounded(6) != 0};
    const auto p = global_perm(c);
    std::vector<int> seen(static_cast<size_t>(c.n), 0);
    for (int hop = 0; c.consumed < c.n; ++hop) {
      ASSERT_LT(hop, 1000);
      c.w = 1 + static_cast<int>(rng.bounded(9));
      c.b = 1 + static_cast<int>(rng.bounded(17));
      SCOPED_TRACE(describe(c, SamplerMode::kExact));
      std::vector<EpochPlan> plans;
      for (int r = 0; r < c.w; ++r)
        plans.emplace_back(config_for(c, r, SamplerMode::kExact), c.epoch, c.consumed);
      const int64_t k = plans[0].num_batches();
      // Sometimes run to the end, otherwise stop after j batches (possibly 0).
      const int64_t j_stop =
          rng.bounded(4) == 0 ? k : static_cast<int64_t>(rng.bounded(static_cast<uint64_t>(k) + 1));
      std::vector<int64_t> idx(static_cast<size_t>(c.b));
      std::vector<uint8_t> val(static_cast<size_t>(c.b));
      for (int64_t j = 0; j < j_stop; ++j) {
        for (const EpochPlan& plan : plans) {
          plan.batch(j, idx, val);
          for (int i = 0; i < c.b; ++i) {
            if (val[static_cast<size_t>(i)] != 0)
              ++seen[static_cast<size_t>(idx[static_cast<size_t>(i)])];
          }
        }
      }
      const int64_t next = plans[0].consumed_after(j_stop);
      for (const EpochPlan& plan : plans) ASSERT_EQ(plan.consumed_after(j_stop), next);
      // What was delivered so far is exactly the prefix P[0:next].
      for (int64_t pos = 0; pos < c.n; ++pos) {
        ASSERT_EQ(seen[static_cast<size_t>(p[static_cast<size_t>(pos)])], pos < next ? 1 : 0)
            << "position " << pos << " after hop " << hop;
      }
      c.consumed = next;
    }
  }
}

TEST(EpochPlan, NoShuffleIsIdentityOrder) {
  const Case c{.n = 23, .w = 3, .b = 4, .seed = 99, .epoch = 2, .consumed = 5, .shuffle = false};
  for (SamplerMode mode : {SamplerMode::kExact, SamplerMode::kPad, SamplerMode::kDrop}) {
    const auto ranks = run_epoch(c, mode);
    for (int r = 0; r < c.w; ++r) {
      const RankBatches& rb = ranks[static_cast<size_t>(r)];
      for (int64_t j = 0; j < rb.num_batches; ++j) {
        for (int i = 0; i < c.b; ++i) {
          const int64_t q = (j * c.b + i) * c.w + r;
          ASSERT_EQ(rb.indices[static_cast<size_t>(j)][static_cast<size_t>(i)],
                    (c.consumed + q) % c.n);
        }
      }
    }
  }
  // And the first batches of a fresh epoch on one rank read 0, 1, 2, ...
  const EpochPlan plan({.dataset_size = 10, .batch_size = 4, .shuffle = false}, 0);
  std::vector<int64_t> idx(4);
  std::vector<uint8_t> val(4);
  plan.batch(0, idx, val);
  EXPECT_EQ(idx, (std::vector<int64_t>{0, 1, 2, 3}));
  plan.batch(2, idx, val);
  EXPECT_EQ(idx, (std::vector<int64_t>{8, 9, 0, 1}));  // wrapped padding
  EXPECT_EQ(val, (std::vector<uint8_t>{1, 1, 0, 0}));
}

TEST(EpochPlan, ShuffleDependsOnSeedAndEpoch) {
  SamplerConfig cfg{.dataset_size = 1000, .batch_size = 1000, .seed = 1};
  std::vector<int64_t> a(1000), b(1000), c(1000);
  std::vector<uint8_t> v(1000);
  EpochPlan(cfg, 0).batch(0, a, v);
  EpochPlan(cfg, 1).batch(0, b, v);
  cfg.seed = 2;
  EpochPlan(cfg, 0).batch(0, c, v);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a, permutation(1, 0, 1000));
}

TEST(EpochPlan, LargeDatasets) {
  // ImageNet-sized, on a few job shapes and all modes: coverage and lockstep at scale.
  const std::vector<Case> cases = {
      {1281167, 8, 256, 42, 3, 0, true},
      {1281167, 8, 256, 42, 3, 640000, true},
      {1281167, 7, 96, 0, 0, 1281166, true},
      {1000003, 6, 128, 7, 1, 12345, false},
  };
  for (const Case& c : cases) {
    for (SamplerMode mode : {SamplerMode::kExact, SamplerMode::kShort, SamplerMode::kPad,
                             SamplerMode::kEven, SamplerMode::kDrop}) {
      SCOPED_TRACE(describe(c, mode));
      const int64_t remaining = c.n - c.consumed;
      const int64_t step = static_cast<int64_t>(c.w) * c.b;
      std::vector<uint8_t> seen(static_cast<size_t>(c.n), 0);
      int64_t valid_total = 0;
      int64_t k0 = -1;
      std::vector<int64_t> idx(static_cast<size_t>(c.b));
      std::vector<uint8_t> val(static_cast<size_t>(c.b));
      for (int r = 0; r < c.w; ++r) {
        const EpochPlan plan(config_for(c, r, mode), c.epoch, c.consumed);
        if (k0 < 0) k0 = plan.num_batches();
        ASSERT_EQ(plan.num_batches(), k0);
        for (int64_t j = 0; j < plan.num_batches(); ++j) {
          plan.batch(j, idx, val);
          // The slots a batch is delivered with are its first ones and hold every valid one.
          const int slots = plan.slots(j);
          const bool trimmed = mode == SamplerMode::kShort || mode == SamplerMode::kPad ||
                               mode == SamplerMode::kEven;
          ASSERT_EQ(slots, trimmed ? std::count(val.begin(), val.end(), uint8_t{1}) : c.b);
          for (int i = 0; i < c.b; ++i) {
            if (trimmed) {
              ASSERT_EQ(val[static_cast<size_t>(i)], i < slots ? 1 : 0);
            }
            ASSERT_LT(idx[static_cast<size_t>(i)], c.n);
            if (val[static_cast<size_t>(i)] == 0) continue;
            ++valid_total;
            uint8_t& s = seen[static_cast<size_t>(idx[static_cast<size_t>(i)])];
            if (mode != SamplerMode::kPad) {
              ASSERT_EQ(s, 0);  // no duplicates
            }
            s = 1;
          }
        }
      }
      const int64_t covered = std::count(seen.begin(), seen.end(), uint8_t{1});
      switch (mode) {
        case SamplerMode::kExact:
        case SamplerMode::kShort:
          EXPECT_EQ(k0, ceil_div(remaining, step));
          EXPECT_EQ(valid_total, remaining);
          EXPECT_EQ(covered, remaining);
          break;
        case SamplerMode::kPad:
          EXPECT_EQ(valid_total, c.w * ceil_div(remaining, c.w));
          EXPECT_EQ(covered, std::min(c.n, valid_total));
          break;
        case SamplerMode::kEven:  // the last remaining % W positions left out, no repeat
          EXPECT_EQ(k0, ceil_div(remaining / c.w, c.b));
          EXPECT_EQ(valid_total, c.w * (remaining / c.w));
          EXPECT_EQ(covered, valid_total);
          break;
        case SamplerMode::kDrop:
          EXPECT_EQ(k0, remaining / step);
          EXPECT_EQ(valid_total, k0 * step);
          EXPECT_EQ(covered, valid_total);
          break;
      }
    }
  }
}

// Short mode on every small job shape: the samples of steps [0, j) on all ranks are the prefix
// of length consumed_after(j) - C of the epoch's order; a rank's batch is empty only when it has
// fewer samples than steps; resuming at any step delivers exactly the rest.
TEST(EpochPlan, ShortModeStepsArePrefixesAndResumeExactly) {
  for (int64_t n = 1; n <= 40; ++n) {
    for (int b = 1; b <= 6; ++b) {
      for (int w = 1; w <= 5; ++w) {
        for (int64_t consumed : {int64_t{0}, n / 3}) {
          SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(b) +
                       " w=" + std::to_string(w) + " consumed=" + std::to_string(consumed));
          auto config = [&](int r) {
            return SamplerConfig{.dataset_size = n,
                                 .batch_size = b,
                                 .rank = r,
                                 .world_size = w,
                                 .mode = SamplerMode::kShort,
                                 .seed = 9};
          };
          const EpochPlan first(config(0), 2, consumed);
          const EpochPlan order({.dataset_size = n, .batch_size = 1, .seed = 9}, 2, 0);
          std::vector<int64_t> idx(static_cast<size_t>(b)), one(1);
          std::vector<uint8_t> val(static_cast<size_t>(b)), ok(1);
          std::set<int64_t> delivered;
          for (int64_t j = 0; j <= first.num_batches(); ++j) {
            // What steps [0, j) delivered is P[C : consumed_after(j)].
            std::set<int64_t> prefix;
            for (int64_t p = consumed; p < first.consumed_after(j); ++p) {
              order.batch(p, one, ok);
              prefix.insert(one[0]);
            }
            ASSERT_EQ(delivered, prefix) << "after step " << j;
            if (j == first.num_batches()) break;
            int64_t step_valid = 0;
            for (int r = 0; r < w; ++r) {
              const EpochPlan plan(config(r), 2, consumed);
              const int64_t global = plan.batch(j, idx, val);
              const int slots = plan.slots(j);
              const int64_t samples = n - consumed > r ? (n - consumed - r + w - 1) / w : 0;
              if (slots == 0) ASSERT_LT(samples, plan.num_batches());
              for (int i = 0; i < slots; ++i) {
                ASSERT_EQ(val[static_cast<size_t>(i)], 1);
                ASSERT_TRUE(delivered.insert(idx[static_cast<size_t>(i)]).second);
              }
              step_valid += slots;
              if (r == w - 1) ASSERT_EQ(global, step_valid);
            }
          }
          ASSERT_EQ(static_cast<int64_t>(delivered.size()), n - consumed);
        }
      }
    }
  }
}

TEST(EpochPlan, FullyConsumedEpochHasNoBatches) {
  for (SamplerMode mode : {SamplerMode::kExact, SamplerMode::kShort, SamplerMode::kPad,
                           SamplerMode::kEven, SamplerMode::kDrop}) {
    const EpochPlan plan({.dataset_size = 10, .batch_size = 3, .world_size = 2, .mode = mode}, 4,
                         10);
    EXPECT_EQ(plan.num_batches(), 0);
    EXPECT_EQ(plan.consumed_after(0), 10);
  }
}

// 86 samples in batches of 32 (the issue's validation set): short gives DataLoader's shapes,
// and with more ranks than the last step has samples, the ranks left without one get an empty
// last batch rather than fewer steps.
TEST(EpochPlan, ShortBatchesAreDataLoadersShapesAndEveryRankTakesTheSameSteps) {
  const auto shapes = [](int64_t n, int b, int w, SamplerMode mode) {
    std::vector<std::vector<int>> out(static_cast<size_t>(w));
    for (int r = 0; r < w; ++r) {
      const EpochPlan plan(
          {.dataset_size = n, .batch_size = b, .rank = r, .world_size = w, .mode = mode}, 0);
      for (int64_t j = 0; j < plan.num_batches(); ++j)
        out[static_cast<size_t>(r)].push_back(plan.slots(j));
    }
    return out;
  };
  using V = std::vector<std::vector<int>>;
  EXPECT_EQ(shapes(86, 32, 1, SamplerMode::kShort), (V{{32, 32, 22}}));
  EXPECT_EQ(shapes(86, 32, 2, SamplerMode::kShort), (V{{32, 11}, {32, 11}}));
  EXPECT_EQ(shapes(86, 32, 1, SamplerMode::kExact), (V{{32, 32, 32}}));
  // 3 samples for 4 ranks in the last step: rank 3 takes its second sample a step later
  // rather than leave its last batch empty (torchmetrics cannot update on an empty batch).
  EXPECT_EQ(shapes(11, 2, 4, SamplerMode::kShort), (V{{2, 1}, {2, 1}, {2, 1}, {1, 1}}));
  EXPECT_EQ(shapes(81, 8, 2, SamplerMode::kShort), (V{{8, 8, 8, 8, 8, 1}, {8, 8, 8, 8, 7, 1}}));
  // Empty only where no layout avoids it: fewer samples than ranks, or batches of one.
  EXPECT_EQ(shapes(3, 2, 4, SamplerMode::kShort), (V{{1}, {1}, {1}, {0}}));
  EXPECT_EQ(shapes(5, 1, 2, SamplerMode::kShort), (V{{1, 1, 1}, {1, 1, 0}}));
  // DistributedSampler(drop_last=False / True) + DataLoader: 43 each; 43 each, 86 = 2 x 43.
  EXPECT_EQ(shapes(86, 32, 2, SamplerMode::kPad), (V{{32, 11}, {32, 11}}));
  EXPECT_EQ(shapes(87, 32, 2, SamplerMode::kPad), (V{{32, 12}, {32, 12}}));
  EXPECT_EQ(shapes(87, 32, 2, SamplerMode::kEven), (V{{32, 11}, {32, 11}}));
  EXPECT_EQ(shapes(86, 32, 2, SamplerMode::kDrop), (V{{32}, {32}}));
  EXPECT_EQ(parse_sampler_mode("short"), SamplerMode::kShort);
  EXPECT_EQ(parse_sampler_mode("even"), SamplerMode::kEven);
  EXPECT_STREQ(to_string(SamplerMode::kEven), "even");
}

TEST(EpochPlan, Accessors) {
  const SamplerConfig cfg{.dataset_size = 50, .batch_size = 4, .rank = 1, .world_size = 3};
  const EpochPlan plan(cfg, 7, 11);
  EXPECT_EQ(plan.epoch(), 7);
  EXPECT_EQ(plan.consumed_at_start(), 11);
  EXPECT_EQ(plan.config().rank, 1);
  EXPECT_EQ(plan.num_batches(), ceil_div(39, 12));
}

TEST(EpochPlan, InvalidConfigs) {
  const SamplerConfig good{.dataset_size = 10, .batch_size = 2, .rank = 1, .world_size = 2};
  EXPECT_NO_THROW(EpochPlan(good, 0));
  auto with = [&](auto change) {
    SamplerConfig c = good;
    change(c);
    return c;
  };
  EXPECT_THROW(EpochPlan(with([](SamplerConfig& c) { c.dataset_size = 0; }), 0), Error);
  EXPECT_THROW(EpochPlan(with([](SamplerConfig& c) { c.batch_size = 0; }), 0), Error);
  EXPECT_THROW(EpochPlan(with([](SamplerConfig& c) { c.world_size = 0; }), 0), Error);
  EXPECT_THROW(EpochPlan(with([](SamplerConfig& c) { c.rank = 2; }), 0), Error);
  EXPECT_THROW(EpochPlan(with([](SamplerConfig& c) { c.rank = -1; }), 0), Error);
  EXPECT_THROW(EpochPlan(with([](SamplerConfig& c) { c.mode = static_cast<SamplerMode>(7); }), 0),
               Error);
  EXPECT_THROW(EpochPlan(good, -1), Error);
  EXPECT_THROW(EpochPlan(good, 0, -1), Error);
  EXPECT_THROW(EpochPlan(good, 0, 11), Error);
  EXPECT_NO_THROW(EpochPlan(good, 0, 10));

  try {
    EpochPlan(with([](SamplerConfig& c) { c.rank = 5; }), 0);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("rank 5"), std::string::npos) << e.message();
  }

  const EpochPlan plan(good, 0);  // K = ceil(10 / 4) = 3
  std::vector<int64_t> idx(2);
  std::vector<uint8_t> val(2);
  EXPECT_THROW(plan.batch(-1, idx, val), Error);
  EXPECT_THROW(plan.batch(3, idx, val), Error);
  std::vector<int64_t> small(1);
  EXPECT_THROW(plan.batch(0, small, val), Error);
  EXPECT_THROW(plan.consumed_after(-1), Error);
  EXPECT_THROW(plan.consumed_after(4), Error);
  EXPECT_EQ(plan.consumed_after(3), 10);
}

TEST(ResumeState, JsonRoundTrip) {
  for (uint64_t seed :
       {uint64_t{0}, uint64_t{42}, (uint64_t{1} << 53) + 1, std::numeric_limits<uint64_t>::max()}) {
    ResumeState s;
    s.fingerprint = "xxh64:0123456789abcdef \"quoted\"";
    s.dataset_size = 1281167;
    s.mode = SamplerMode::kPad;
    s.shuffle = false;
    s.seed = seed;
    s.epoch = 12;
    s.consumed = 640000;
    const ResumeState t = ResumeState::from_json(s.to_json());
    EXPECT_EQ(t.fingerprint, s.fingerprint);
    EXPECT_EQ(t.dataset_size, s.dataset_size);
    EXPECT_EQ(t.mode, s.mode);
    EXPECT_EQ(t.shuffle, s.shuffle);
    EXPECT_EQ(t.seed, seed);
    EXPECT_EQ(t.epoch, s.epoch);
    EXPECT_EQ(t.consumed, s.consumed);
  }
  // The seed is written as a decimal string so no JSON reader rounds it through a double.
  ResumeState s;
  s.seed = std::numeric_limits<uint64_t>::max();
  EXPECT_NE(s.to_json().find("\"seed\":\"18446744073709551615\""), std::string::npos)
      << s.to_json();
  EXPECT_NE(s.to_json().find("\"version\":2"), std::string::npos) << s.to_json();
  // A state of the Fisher-Yates permutation at every size keeps format version 1 both ways.
  s.permutation = PermutationKind::kFisherYates;
  EXPECT_NE(s.to_json().find("\"version\":1"), std::string::npos) << s.to_json();
  EXPECT_EQ(ResumeState::from_json(s.to_json()).permutation, PermutationKind::kFisherYates);
  s.permutation = PermutationKind::kKeyed;
  EXPECT_EQ(ResumeState::from_json(s.to_json()).permutation, PermutationKind::kKeyed);
}

// A job saved by a build before the keyed permutation (a version 1 state) resumes the order it
// was taken in: past 2^16 samples, version 1 means Fisher-Yates, and the plan follows it.
TEST(ResumeState, VersionOneStatesResumeTheirFisherYatesOrder) {
  const int64_t n = kFisherYatesMax + 5000;
  SamplerConfig c{.dataset_size = n, .batch_size = 64, .rank = 0, .world_size = 1};
  c.permutation = PermutationKind::kFisherYates;
  const EpochPlan legacy(c, 3, 1000);
  const auto fisher_yates = permutation(c.seed, 3, n, PermutationKind::kFisherYates);
  std::vector<int64_t> idx(64);
  std::vector<uint8_t> valid(64);
  legacy.batch(0, idx, valid);
  EXPECT_EQ(idx[0], fisher_yates[1000]);
  EXPECT_EQ(idx[63], fisher_yates[1063]);
  c.permutation = PermutationKind::kKeyed;
  EpochPlan(c, 3, 1000).batch(0, idx, valid);
  EXPECT_EQ(idx[0], EpochPermutation(c.seed, 3, n)(1000));
  EXPECT_NE(idx[0], fisher_yates[1000]);
}

TEST(ResumeState, AcceptsSeedAsNumber) {
  const ResumeState s = ResumeState::from_json(
      R"({"version":1,"fingerprint":"f","dataset_size":10,"mode":"exact","shuffle":true,)"
      R"("seed":18446744073709551615,"epoch":0,"consumed":3})");
  EXPECT_EQ(s.seed, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(s.consumed, 3);
}

TEST(ResumeState, MalformedInputs) {
  const std::string good =
      R"({"version":1,"fingerprint":"f","dataset_size":10,"mode":"drop","shuffle":true,)"
      R"("seed":"7","epoch":2,"consumed":3})";
  ASSERT_NO_THROW(ResumeState::from_json(good));
  // Replaces `"key":value` in the good document.
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  struct Bad {
    std::string json;
    std::string mentions;
  };
  const std::vector<Bad> bad = {
      {"", "malformed"},
      {"{", "malformed"},
      {"[1,2]", "object"},
      {"null", "object"},
      {replace("\"version\":1,", ""), "version"},
      {replace("\"version\":1", "\"version\":3"), "version"},
      {replace("\"fingerprint\":\"f\",", ""), "fingerprint"},
      {replace("\"fingerprint\":\"f\"", "\"fingerprint\":5"), "fingerprint"},
      {replace("\"dataset_size\":10,", ""), "dataset_size"},
      {replace("\"dataset_size\":10", "\"dataset_size\":\"10\""), "dataset_size"},
      {replace("\"dataset_size\":10", "\"dataset_size\":10.5"), "dataset_size"},
      {replace("\"dataset_size\":10", "\"dataset_size\":-1"), "dataset_size"},
      {replace("\"dataset_size\":10", "\"dataset_size\":18446744073709551615"), "dataset_size"},
      {replace("\"mode\":\"drop\",", ""), "mode"},
      {replace("\"mode\":\"drop\"", "\"mode\":\"bogus\""), "exact, short, pad, even, drop"},
      {replace("\"mode\":\"drop\"", "\"mode\":1"), "mode"},
      {replace("\"shuffle\":true,", ""), "shuffle"},
      {replace("\"shuffle\":true", "\"shuffle\":1"), "shuffle"},
      {replace("\"seed\":\"7\",", ""), "seed"},
      {replace("\"seed\":\"7\"", "\"seed\":\"-1\""), "seed"},
      {replace("\"seed\":\"7\"", "\"seed\":\"18446744073709551616\""), "seed"},
      {replace("\"seed\":\"7\"", "\"seed\":\"7a\""), "seed"},
      {replace("\"seed\":\"7\"", "\"seed\":\"\""), "seed"},
      {replace("\"seed\":\"7\"", "\"seed\":-7"), "seed"},
      {replace("\"seed\":\"7\"", "\"seed\":7.0"), "seed"},
      {replace("\"epoch\":2,", ""), "epoch"},
      {replace("\"epoch\":2", "\"epoch\":-2"), "epoch"},
      {replace(",\"consumed\":3", ""), "consumed"},
      {replace("\"consumed\":3", "\"consumed\":11"), "consumed"},
      {replace("\"consumed\":3", "\"consumed\":null"), "consumed"},
  };
  for (const Bad& b : bad) {
    try {
      ResumeState::from_json(b.json);
      ADD_FAILURE() << "accepted: " << b.json;
    } catch (const Error& e) {
      EXPECT_NE(e.message().find(b.mentions), std::string::npos) << b.json << " -> " << e.message();
    }
  }
}

// The audit's arithmetic: the group digest after j batches equals the sum of what each rank's
// own plan delivered (valid slots), and in exact mode the digest of the prefix P[C, C + jBW).
TEST(SampleDigest, GroupDigestIsTheSumOfTheRanks) {
  for (SamplerMode mode : {SamplerMode::kExact, SamplerMode::kPad, SamplerMode::kDrop}) {
    for (int world : {1, 2, 3}) {
      for (int64_t consumed : {int64_t{0}, int64_t{7}}) {
        SamplerConfig config{.dataset_size = 53,
                             .batch_size = 4,
                             .rank = 0,
                             .world_size = world,
                             .mode = mode,
                             .shuffle = true,
                             .seed = 9};
        const EpochPlan plan0(config, 2, consumed);
        for (int64_t batches = 0; batches <= plan0.num_batches(); ++batches) {
          SampleDigest ranks;
          for (int r = 0; r < world; ++r) {
            config.rank = r;
            const EpochPlan plan(config, 2, consumed);
            std::vector<int64_t> idx(4);
            std::vector<uint8_t> valid(4);
            for (int64_t j = 0; j < batches; ++j) {
              plan.batch(j, idx, valid);
              for (int i = 0; i < 4; ++i) {
                if (valid[i]) ranks.add(idx[i]);
              }
            }
          }
          EXPECT_EQ(plan0.group_digest(batches), ranks) << to_string(mode) << " W=" << world;
          if (mode == SamplerMode::kExact) {
            const auto perm = permutation(9, 2, 53);
            SampleDigest prefix;
            for (int64_t p = consumed; p < plan0.consumed_after(batches); ++p) prefix.add(perm[p]);
            EXPECT_EQ(plan0.group_digest(batches), prefix);
          }
        }
      }
    }
  }
}

TEST(SampleDigest, SeparatesSetsAndIsOrderFree) {
  SampleDigest a, b, c;
  for (int64_t i : {1, 2, 3}) a.add(i);
  for (int64_t i : {3, 1, 2}) b.add(i);
  for (int64_t i : {1, 2, 4}) c.add(i);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  SampleDigest twice = a;
  twice += a;
  EXPECT_EQ(twice.count, 6);
  EXPECT_NE(twice, a);
  EXPECT_THROW(EpochPlan({.dataset_size = 5}, 0).group_digest(6), Error);
}

}  // namespace
}  // namespace stoker

namespace stoker {
namespace {

// A billion-sample epoch plan holds no permutation table (the keyed bijection is evaluated per
// position): every rank's batches are computed in O(B) and the ranks still take disjoint
// samples.
TEST(EpochPlan, ABillionSamplesInConstantMemory) {
  const SamplerConfig c{
      .dataset_size = 1000000000, .batch_size = 256, .rank = 0, .world_size = 8, .seed = 5};
  std::set<int64_t> seen;
  std::vector<int64_t> idx(256);
  std::vector<uint8_t> valid(256);
  for (int r = 0; r < 8; ++r) {
    SamplerConfig rc = c;
    rc.rank = r;
    const EpochPlan plan(rc, 2, 123456789);
    EXPECT_EQ(plan.num_batches(), (1000000000 - 123456789 + 2047) / 2048);
    for (const int64_t j : {int64_t{0}, int64_t{1}, plan.num_batches() - 1}) {
      plan.batch(j, idx, valid);
      for (int i = 0; i < 256; ++i) {
        if (valid[i]) {
          EXPECT_TRUE(seen.insert(idx[i]).second) << idx[i];
        }
      }
    }
  }
  EXPECT_GT(seen.size(), 5000u);
  EXPECT_TRUE(EpochPermutation(5, 2, 1000000000).keyed());
}

}  // namespace
}  // namespace stoker

namespace stoker {
namespace {

// Shards of random sizes (some empty) covering n samples.
std::vector<int64_t> random_shard_ends(Rng& rng, int64_t n) {
  std::vector<int64_t> ends;
  int64_t at = 0;
  while (at < n) {
    at = std::min(n, at + static_cast<int64_t>(rng.bounded(40)));  // 0: an empty shard
    ends.push_back(at);
  }
  return ends;
}

TEST(ShardWindows, ArePermutationsWhateverTheShapes) {
  Rng rng(stream_key(21));
  for (int t = 0; t < 2000; ++t) {
    const int64_t n = 1 + static_cast<int64_t>(rng.bounded(500));
    const auto ends = random_shard_ends(rng, n);
    const int64_t window = 1 + static_cast<int64_t>(rng.bounded(200));
    const int lanes = 1 + static_cast<int>(rng.bounded(9));
    const ShardWindowOrder order(rng.next(), rng.bounded(5), ends, window, lanes);
    std::vector<int> seen(static_cast<size_t>(n), 0);
    for (int64_t q = 0; q < n; ++q) {
      const int64_t i = order(q);
      ASSERT_GE(i, 0);
      ASSERT_LT(i, n);
      ++seen[static_cast<size_t>(i)];
    }
    ASSERT_EQ(std::count(seen.begin(), seen.end(), 1), n) << "n " << n << " window " << window;
  }
}

TEST(ShardWindows, EachRankReadsOneContiguousRunOfItsShardsPerWindow) {
  // 8 shards of 100, W = 2, B = 16, H = 4: windows of 128 positions, a run of 64 per rank.
  std::vector<int64_t> ends;
  for (int s = 1; s <= 8; ++s) ends.push_back(100 * s);
  const int w = 2, b = 16, h = 4;
  SamplerConfig config{.dataset_size = 800, .batch_size = b, .world_size = w, .seed = 9};
  config.shard_window = int64_t{h} * b * w;
  config.shard_lanes = w;
  config.shard_ends = std::make_shared<std::vector<int64_t>>(ends);
  std::vector<int64_t> idx(b);
  std::vector<uint8_t> val(b);
  std::set<int64_t> all;
  int crossings = 0;
  for (int r = 0; r < w; ++r) {
    config.rank = r;
    const EpochPlan plan(config, 3);
    for (int64_t j0 = 0; j0 < plan.num_batches(); j0 += h) {
      std::vector<int64_t> window;
      for (int64_t j = j0; j < std::min(j0 + h, plan.num_batches()); ++j) {
        plan.batch(j, idx, val);
        for (int i = 0; i < b; ++i) {
          if (val[i]) window.push_back(idx[i]);
        }
      }
      // The rank's samples of a window are one run of S: within a shard they are consecutive
      // indices, and at most one shard boundary is crossed.
      std::sort(window.begin(), window.end());
      std::set<int64_t> shards;
      for (const int64_t i : window) shards.insert(i / 100);
      ASSERT_LE(shards.size(), 2u);
      crossings += shards.size() == 2;
      for (const int64_t s : shards) {
        std::vector<int64_t> in;
        for (const int64_t i : window) {
          if (i / 100 == s) in.push_back(i);
        }
        EXPECT_EQ(in.back() - in.front() + 1, static_cast<int64_t>(in.size()));
      }
      all.insert(window.begin(), window.end());
      // Shuffled within the run: not in index order.
      plan.batch(j0, idx, val);
      EXPECT_FALSE(std::is_sorted(idx.begin(), idx.end()));
    }
  }
  EXPECT_EQ(all.size(), 800u);  // each sample once over the ranks
  EXPECT_GT(crossings, 0);      // runs do cross shard boundaries (S is one sequence)
}

TEST(ShardWindows, ResumeOnAnotherWorldKeepsTheEpochsOrder) {
  Rng rng(stream_key(22));
  for (int t = 0; t < 300; ++t) {
    const int64_t n = 1 + static_cast<int64_t>(rng.bounded(400));
    SamplerConfig config{.dataset_size = n, .seed = rng.next()};
    config.shard_ends = std::make_shared<std::vector<int64_t>>(random_shard_ends(rng, n));
    config.world_size = 1 + static_cast<int>(rng.bounded(4));
    config.batch_size = 1 + static_cast<int>(rng.bounded(9));
    config.shard_lanes = config.world_size;
    config.shard_window = 4 * config.batch_size * config.world_size;
    std::vector<int> seen(static_cast<size_t>(n), 0);
    int64_t consumed = 0;
    while (consumed < n) {
      std::vector<EpochPlan> plans;
      for (int r = 0; r < config.world_size; ++r) {
        config.rank = r;
        plans.emplace_back(config, 1, consumed);
      }
      const int64_t stop =
          static_cast<int64_t>(rng.bounded(static_cast<uint64_t>(plans[0].num_batches()) + 1));
      std::vector<int64_t> idx(static_cast<size_t>(config.batch_size));
      std::vector<uint8_t> val(idx.size());
      for (int64_t j = 0; j < stop; ++j) {
        for (const EpochPlan& plan : plans) {
          plan.batch(j, idx, val);
          for (size_t i = 0; i < idx.size(); ++i) seen[static_cast<size_t>(idx[i])] += val[i];
        }
      }
      consumed = plans[0].consumed_after(stop);
      // The new world keeps the window and lanes of the epoch (they are in the resume state).
      config.world_size = 1 + static_cast<int>(rng.bounded(5));
      config.batch_size = 1 + static_cast<int>(rng.bounded(9));
    }
    ASSERT_EQ(std::count(seen.begin(), seen.end(), 1), n);
  }
  ResumeState s;
  s.shard_window = 512;
  s.shard_lanes = 4;
  const ResumeState back = ResumeState::from_json(s.to_json());
  EXPECT_EQ(back.shard_window, 512);
  EXPECT_EQ(back.shard_lanes, 4);
  EXPECT_EQ(ResumeState::from_json(ResumeState().to_json()).shard_window, 0);
  EXPECT_EQ(ResumeState().to_json().find("shard"), std::string::npos);
}

}  // namespace
}  // namespace stoker
