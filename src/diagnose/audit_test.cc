// The straggler rule and the cross-rank audit's judgement (stoker/audit.h).
#include "stoker/audit.h"

#include <gtest/gtest.h>

#include "diagnose/json.h"
#include "stoker/error.h"

namespace stoker {
namespace {

std::vector<size_t> straggler_ranks(const std::vector<RankPace>& paces,
                                    const StragglerThresholds& t = {}) {
  std::vector<size_t> out;
  for (const Straggler& s : find_stragglers(paces, t)) out.push_back(s.rank);
  return out;
}

TEST(Stragglers, TwoRanksAreComparedWithEachOther) {
  // 600 against 1000: below 0.67 x the other rank's 1000 (a median over both, 800, would let
  // it pass; the example).
  const auto s = find_stragglers({{600, 0.05}, {1000, 0.05}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].rank, 0u);
  EXPECT_TRUE(s[0].slow);
  EXPECT_EQ(s[0].others_images_per_second, 1000);
  EXPECT_EQ(s[0].others_wait_fraction, 0.05);
  EXPECT_TRUE(straggler_ranks({{700, 0.05}, {1000, 0.05}}).empty());
}

TEST(Stragglers, OneFastRankDoesNotMakeTheOthersStragglers) {
  // Against the fastest (a cached rank at 3000) all seven others would be stragglers.
  std::vector<RankPace> paces(7, {1000, 0.05});
  paces.push_back({3000, 0.0});
  EXPECT_TRUE(straggler_ranks(paces).empty());
  paces[3].images_per_second = 600;
  EXPECT_EQ(straggler_ranks(paces), std::vector<size_t>{3});
}

TEST(Stragglers, TheRankWaitingUnderLockstep) {
  // DDP: equal rates; the rank whose input is late waits in next().
  const auto s = find_stragglers({{500, 0.05}, {500, 0.04}, {500, 0.55}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].rank, 2u);
  EXPECT_FALSE(s[0].slow);
  EXPECT_DOUBLE_EQ(s[0].others_wait_fraction, 0.045);
  // Waiting more while ahead of the others is not straggling.
  EXPECT_TRUE(straggler_ranks({{500, 0.05}, {500, 0.04}, {600, 0.55}}).empty());
  StragglerThresholds lenient;
  lenient.ahead = 1.3;
  EXPECT_EQ(straggler_ranks({{500, 0.05}, {500, 0.04}, {600, 0.55}}, lenient),
            std::vector<size_t>{2});
}

TEST(Stragglers, NoneWithoutTwoTimedRanks) {
  EXPECT_TRUE(straggler_ranks({{10, 0.9}}).empty());
  EXPECT_TRUE(straggler_ranks({{0, 0.0}, {0, 0.9}}).empty());  // nothing timed
  EXPECT_EQ(straggler_ranks({{0, 0.0}, {100, 0.0}}), std::vector<size_t>{0});
}

// A record of rank `rank` of a stoker loader over 20 samples, 3 per batch, on `world` ranks.
AuditRecord record(int rank, int world, SampleDigest digest, int64_t batches = 4) {
  return AuditRecord{.source = AuditSource::kStokerLoader,
                     .loader_rank = rank,
                     .loader_world_size = world,
                     .fingerprint = "f",
                     .dataset_size = 20,
                     .batch_size = 3,
                     .mode = "exact",
                     .shuffle = true,
                     .seed = 0,
                     .epoch = 0,
                     .epoch_start = 0,
                     .epoch_batches = batches,
                     .digest = digest,
                     .images_per_second = 100,
                     .wait_fraction = 0,
                     .busy_fraction = 0.5};
}

SampleDigest group(int world, int64_t batches) {
  const SamplerConfig config{.dataset_size = 20, .batch_size = 3, .world_size = world};
  return EpochPlan(config, 0).group_digest(batches);
}

// Two ranks' digests of 10 samples each that add up to `total` when `extra` is 0.
std::vector<AuditRecord> two_ranks(uint64_t extra = 0) {
  const SampleDigest total = group(2, 4);
  return {record(0, 2, {.count = 10, .sum = total.sum}), record(1, 2, {.count = 10, .sum = extra})};
}

TEST(Audit, CorrectShardsAreHealthy) {
  // The ranks' digests add up to the plan's.
  const AuditReport r = audit_ranks(two_ranks());
  EXPECT_EQ(r.verdict, Verdict::kHealthy) << r.summary;
  EXPECT_EQ(r.disjoint, true);
  EXPECT_EQ(r.complete, true);
  EXPECT_EQ(r.balanced, true);
  EXPECT_EQ(r.summary,
            "2 rank(s): shards disjoint, complete and balanced; 20 samples delivered this "
            "epoch; median wait 0 %");
}

TEST(Audit, UnshardedLoadersReadTheSameSamples) {
  SampleDigest all;
  for (int i = 0; i < 20; ++i) all.add(i);
  const AuditReport r = audit_ranks({record(0, 1, all, 7), record(0, 1, all, 7)});
  EXPECT_EQ(r.verdict, Verdict::kRankImbalance);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].pattern, AuditPattern::kNoSharding);
  EXPECT_EQ(r.findings[0].message,
            "the loaders are not split over the 2 ranks of the group (loader rank/world size "
            "per rank: 0/1, 0/1): build them with the group's rank and world size "
            "(stoker.Loader does when given none)");
  EXPECT_EQ(r.findings[1].pattern, AuditPattern::kDuplicated);
  EXPECT_EQ(r.disjoint, false);
  EXPECT_EQ(r.complete, std::nullopt);
  EXPECT_EQ(r.balanced, std::nullopt);
}

TEST(Audit, OneRankDoingTheWorkAndUnequalBatches) {
  const AuditReport r = audit_ranks({record(0, 2, group(2, 4)), record(1, 2, {}, 0)});
  EXPECT_EQ(r.verdict, Verdict::kRankImbalance);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].pattern, AuditPattern::kSingleRankWork);
  EXPECT_EQ(r.findings[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.findings[0].message,
            "rank 0 delivered 20 of 20 samples (100 %) while rank(s) [1] delivered none: one "
            "rank does the work, the others idle");
  EXPECT_EQ(r.findings[1].message,
            "ranks are at different points (epochs [0], batches [4, 0]): collectives hang or "
            "ranks train on unequal shares");
  EXPECT_EQ(r.balanced, false);
}

TEST(Audit, ADigestThatDoesNotAddUp) {
  const AuditReport r = audit_ranks(two_ranks(1));
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].pattern, AuditPattern::kOverlap);
  EXPECT_EQ(r.disjoint, false);
  EXPECT_EQ(r.complete, false);
  EXPECT_EQ(r.balanced, true);
}

TEST(Audit, DataLoadersThatPadOrMissSamples) {
  // 23 samples over 2 DataLoader ranks: a DistributedSampler gives both 12 (one repeat).
  const auto dataloader = [](int rank, int64_t first, int64_t last) {
    AuditRecord r = record(rank, 2, {}, 3);
    r.source = AuditSource::kDataLoader;
    r.mode = std::string("dataloader");
    r.dataset_size = 23;
    for (int64_t i = first; i < last; ++i) r.digest.add(i % 23);
    return r;
  };
  AuditReport r = audit_ranks({dataloader(0, 0, 12), dataloader(1, 12, 24)});
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].message,
            "the ranks read 24 samples of a 23-sample data set this epoch: 1 are read twice (a "
            "DistributedSampler pads its last round with repeats unless drop_last)");
  EXPECT_EQ(r.disjoint, false);
  EXPECT_EQ(r.complete, false);
  r = audit_ranks({dataloader(0, 0, 11), dataloader(1, 11, 22)});
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].pattern, AuditPattern::kIncomplete);
  EXPECT_EQ(r.disjoint, true);
  EXPECT_EQ(r.complete, false);
  r = audit_ranks({dataloader(0, 0, 12), dataloader(1, 12, 23)});
  EXPECT_EQ(r.verdict, Verdict::kHealthy) << r.summary;
}

TEST(Audit, StragglersByTheSharedRule) {
  std::vector<AuditRecord> ranks = two_ranks();
  ranks[0].images_per_second = 600;
  ranks[1].images_per_second = 1000;
  const AuditReport r = audit_ranks(ranks);
  EXPECT_EQ(r.verdict, Verdict::kRankImbalance);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].pattern, AuditPattern::kStraggler);
  EXPECT_EQ(r.findings[0].ranks, std::vector<int>{0});
  EXPECT_EQ(r.findings[0].message,
            "rank 0 is a straggler: 600 images/s against a median of 1000 on the other ranks, "
            "waited 0 % of its time (their median 0 %)");
  // The thresholds are the audit's.
  AuditThresholds loose;
  loose.straggler.rate = 0.5;
  EXPECT_EQ(audit_ranks(ranks, loose).verdict, Verdict::kHealthy);
}

TEST(Audit, InputBoundWhenEveryRankWaitsOnASaturatedPool) {
  std::vector<AuditRecord> ranks = two_ranks();
  for (AuditRecord& r : ranks) r.wait_fraction = 0.6, r.busy_fraction = 0.95;
  const AuditReport r = audit_ranks(ranks);
  EXPECT_EQ(r.verdict, Verdict::kInputBoundCpu) << r.summary;
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["verdict"], "input-bound-cpu");
  EXPECT_EQ(j["checks"]["complete"], true);
  EXPECT_TRUE(j["findings"].empty());
}

TEST(Audit, JsonAndBadInput) {
  const nlohmann::json j = to_json(audit_ranks({record(0, 1, {}, 0), record(0, 1, {}, 0)}));
  EXPECT_EQ(j["findings"][0]["pattern"], "no-sharding");
  EXPECT_EQ(j["findings"][0]["ranks"], nlohmann::json::array());
  EXPECT_TRUE(j["checks"]["disjoint"].is_null());
  EXPECT_THROW(audit_ranks({}), Error);
  EXPECT_EQ(parse_audit_source("stoker-sampler"), AuditSource::kStokerSampler);
  EXPECT_STREQ(to_string(AuditSource::kDataLoader), "dataloader");
  EXPECT_THROW(parse_audit_source("torch"), Error);
}

}  // namespace
}  // namespace stoker
