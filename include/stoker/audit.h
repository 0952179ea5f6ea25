// The cross-rank audit's judgement (stoker.torch.audit, docs/doctor.md): each rank's record of
// its loader over the current epoch -> whether the shards are disjoint, complete and balanced,
// the second scaling failure's patterns, stragglers (find_stragglers, stoker/diagnose.h) and
// one verdict. Gathering the records is the caller's (Python: torch.distributed); the judgement
// is the same on every rank given the same records.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stoker/diagnose.h"
#include "stoker/sampler.h"

namespace stoker {

// What made a record, and so what its shard is checked against.
enum class AuditSource {
  kStokerLoader,   // a stoker Loader: its digest against stoker's epoch plan for the group
  kStokerSampler,  // a DataLoader over stoker.torch.DistributedSampler: the same plan
  kDataLoader,     // any other DataLoader: the ranks together should read each index once
};
const char* to_string(AuditSource source);  // "stoker-loader", "stoker-sampler", "dataloader"
AuditSource parse_audit_source(const std::string& name);  // throws an argument error

// One rank's loader over the current epoch (index in the vector = rank in the group).
struct AuditRecord {
  AuditSource source = AuditSource::kStokerLoader;
  int loader_rank = 0;  // the rank and world size the loader was built with
  int loader_world_size = 1;
  std::string fingerprint;  // the data set's listing (ranks must agree)
  int64_t dataset_size = 0;
  int batch_size = 1;
  std::string mode;  // sampler mode ("exact", "pad", "drop"; "dataloader")
  bool shuffle = false;
  uint64_t seed = 0;
  int64_t epoch = 0;             // < 0: no epoch started (the plan is not checked)
  int64_t epoch_start = 0;       // samples of the epoch consumed before it (a resume)
  int64_t epoch_batches = 0;     // batches delivered in the epoch
  SampleDigest digest;           // of the sample indices delivered in the epoch
  double images_per_second = 0;  // 0: not timed
  double wait_fraction = 0;      // of the wall time, the consumer waited for a batch
  double busy_fraction = 0;      // of threads x wall time, the workers worked
};

// Thresholds of the audit (docs/doctor.md).
struct AuditThresholds {
  StragglerThresholds straggler;
  double single_rank_share = 0.9;  // one rank delivered this share or more, others none
  // input-bound-cpu: the ranks' median wait at or above wait_healthy on pools whose median
  // busy fraction is at or above busy_saturated (the live verdict's thresholds).
  PipelineThresholds pipeline;
};

enum class AuditPattern {
  kNoSharding,          // loaders built for a world of one on a group of several ranks
  kMisconfiguredRanks,  // loader ranks / world sizes that are not the group's
  kDuplicated,          // every rank delivered the same samples
  kSingleRankWork,      // one rank delivered nearly everything, others nothing
  kUnbalanced,          // ranks at different epochs or batch counts
  kOverlap,             // digests that do not add up: shards overlap (or miss samples)
  kIncomplete,          // a DataLoader split that never reads some samples
  kStraggler,           // find_stragglers
};
const char* to_string(AuditPattern pattern);  // "no-sharding", "misconfigured-ranks", ...

struct AuditFinding {
  AuditPattern pattern = AuditPattern::kOverlap;
  std::string message;     // with the numbers
  std::vector<int> ranks;  // the ranks it names (may be empty)
};

struct AuditReport {
  Verdict verdict = Verdict::kHealthy;  // rank-imbalance (any finding), input-bound-cpu, healthy
  std::string summary;
  std::vector<AuditFinding> findings;
  // Unknown (nullopt) when the records cannot say, e.g. unsharded loaders.
  std::optional<bool> disjoint, complete, balanced;
};

// The judgement over the ranks' records. Throws an argument error for no records or a record
// whose mode is not a sampler mode where the plan is checked; O(dataset size) for DataLoader
// records and O(batches x batch size x ranks) for stoker's.
AuditReport audit_ranks(const std::vector<AuditRecord>& records, const AuditThresholds& t = {});

// {"verdict", "summary", "findings": [{"pattern", "message", "ranks"}], "checks": {"disjoint",
// "complete", "balanced"}} (null for an unknown check).
std::string to_json_text(const AuditReport& report);

}  // namespace stoker
