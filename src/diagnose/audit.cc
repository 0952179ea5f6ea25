// The cross-rank rules: the straggler rule (stoker/diagnose.h), shared by the audit and the
// telemetry verdict, and the audit's judgement (stoker/audit.h).
#include "stoker/audit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "diagnose/json.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker {
namespace {

// statistics.median: the middle value, or the mean of the two middle ones.
double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

constexpr std::pair<AuditSource, const char*> kSourceNames[] = {
    {AuditSource::kStokerLoader, "stoker-loader"},
    {AuditSource::kStokerSampler, "stoker-sampler"},
    {AuditSource::kDataLoader, "dataloader"},
};

constexpr std::pair<AuditPattern, const char*> kPatternNames[] = {
    {AuditPattern::kNoSharding, "no-sharding"},
    {AuditPattern::kMisconfiguredRanks, "misconfigured-ranks"},
    {AuditPattern::kDuplicated, "duplicated"},
    {AuditPattern::kSingleRankWork, "single-rank-work"},
    {AuditPattern::kUnbalanced, "unbalanced"},
    {AuditPattern::kOverlap, "overlap"},
    {AuditPattern::kIncomplete, "incomplete"},
    {AuditPattern::kStraggler, "straggler"},
};

// The digest of every index of a data set: what DataLoader ranks read together, once each.
SampleDigest whole_dataset_digest(int64_t dataset_size) {
  SampleDigest d;
  for (int64_t i = 0; i < dataset_size; ++i) d.add(i);
  return d;
}

// The disjoint/complete checks of ranks whose loaders are split over the group and at the same
// point: their digests added up against what a correct split delivers.
void check_digests(const std::vector<AuditRecord>& records, AuditReport& report,
                   std::vector<AuditFinding>& findings) {
  const AuditRecord& r0 = records.front();
  const auto settings = [](const AuditRecord& r) {
    return std::tie(r.fingerprint, r.dataset_size, r.batch_size, r.mode, r.shuffle, r.seed,
                    r.epoch_start);
  };
  const bool same_settings = std::all_of(
      records.begin(), records.end(), [&](const auto& r) { return settings(r) == settings(r0); });
  if (!same_settings) {
    findings.push_back({AuditPattern::kOverlap,
                        "the ranks' loaders differ in data set, batch size, mode, shuffle, seed "
                        "or resume point: their shards cannot line up",
                        {}});
    report.disjoint = report.complete = false;
    return;
  }
  SampleDigest got;
  for (const AuditRecord& r : records) got += r.digest;
  const int64_t total = got.count;
  if (r0.source == AuditSource::kDataLoader) {
    // A DataLoader's split is the sampler's: together the ranks should read each index of the
    // data set once (DistributedSampler pads the last round with repeats).
    const SampleDigest want = whole_dataset_digest(r0.dataset_size);
    const bool ok = got == want;
    report.disjoint = total <= want.count && (ok || total < want.count);
    report.complete = ok;
    if (total > want.count) {
      findings.push_back(
          {AuditPattern::kOverlap,
           fmt::format("the ranks read {} samples of a {}-sample data set this epoch: {} are "
                       "read twice (a DistributedSampler pads its last round with repeats "
                       "unless drop_last)",
                       total, want.count, total - want.count),
           {}});
      report.disjoint = false;
    } else if (!ok && total == want.count) {
      findings.push_back(
          {AuditPattern::kOverlap,
           fmt::format("the ranks read {} samples whose digest does not match the {} of the "
                       "data set: shards overlap or miss samples",
                       total, want.count),
           {}});
    } else if (!ok) {
      findings.push_back(
          {AuditPattern::kIncomplete,
           fmt::format("the ranks read {} of {} samples this epoch: {} are never read "
                       "(drop_last, or a sampler that does not cover the data set)",
                       total, want.count, want.count - total),
           {}});
    }
    return;
  }
  if (r0.epoch < 0) return;
  const SamplerConfig config{.dataset_size = r0.dataset_size,
                             .batch_size = r0.batch_size,
                             .rank = 0,
                             .world_size = static_cast<int>(records.size()),
                             .mode = parse_sampler_mode(r0.mode),
                             .shuffle = r0.shuffle,
                             .seed = r0.seed};
  const SampleDigest want =
      EpochPlan(config, r0.epoch, r0.epoch_start).group_digest(r0.epoch_batches);
  const bool ok = got == want;
  report.disjoint = report.complete = ok;
  if (!ok) {
    findings.push_back(
        {AuditPattern::kOverlap,
         fmt::format("the ranks delivered {} samples whose digest does not match the {} a "
                     "correct split of this epoch delivers: shards overlap or miss samples",
                     total, want.count),
         {}});
  }
}

}  // namespace

std::vector<Straggler> find_stragglers(const std::vector<RankPace>& ranks,
                                       const StragglerThresholds& t) {
  std::vector<Straggler> stragglers;
  const bool timed = std::any_of(ranks.begin(), ranks.end(),
                                 [](const RankPace& r) { return r.images_per_second > 0; });
  if (ranks.size() < 2 || !timed) return stragglers;
  for (size_t i = 0; i < ranks.size(); ++i) {
    std::vector<double> rates, waits;
    for (size_t j = 0; j < ranks.size(); ++j) {
      if (j == i) continue;
      rates.push_back(ranks[j].images_per_second);
      waits.push_back(ranks[j].wait_fraction);
    }
    const double others_rate = median(std::move(rates));
    const double others_wait = median(std::move(waits));
    const RankPace& r = ranks[i];
    const bool slow = r.images_per_second < t.rate * others_rate;
    // Waiting more matters when the rank is not also ahead: under DDP every rank runs at the
    // pace of the slowest, and the one whose input is late waits in next().
    const bool waits_more =
        r.wait_fraction - others_wait >= t.wait && r.images_per_second <= t.ahead * others_rate;
    if (slow || waits_more) {
      stragglers.push_back(Straggler{.rank = i,
                                     .slow = slow,
                                     .others_images_per_second = others_rate,
                                     .others_wait_fraction = others_wait});
    }
  }
  return stragglers;
}

const char* to_string(AuditSource source) {
  for (const auto& [s, name] : kSourceNames) {
    if (s == source) return name;
  }
  return "stoker-loader";
}

AuditSource parse_audit_source(const std::string& name) {
  for (const auto& [s, n] : kSourceNames) {
    if (name == n) return s;
  }
  STOKER_THROW_ARG("unknown audit record kind '{}' (stoker-loader, stoker-sampler, dataloader)",
                   name);
}

const char* to_string(AuditPattern pattern) {
  for (const auto& [p, name] : kPatternNames) {
    if (p == pattern) return name;
  }
  return "overlap";
}

AuditReport audit_ranks(const std::vector<AuditRecord>& records, const AuditThresholds& t) {
  STOKER_CHECK_ARG(!records.empty(), "the audit needs one record per rank (got none)");
  const int g = static_cast<int>(records.size());
  AuditReport report;
  std::vector<AuditFinding>& findings = report.findings;
  std::vector<int64_t> counts;
  std::vector<int> loader_ranks;
  int64_t total = 0;
  for (const AuditRecord& r : records) {
    counts.push_back(r.digest.count);
    total += r.digest.count;
    loader_ranks.push_back(r.loader_rank);
  }
  std::sort(loader_ranks.begin(), loader_ranks.end());
  bool sharded = true;
  for (int i = 0; i < g; ++i) {
    sharded = sharded && records[static_cast<size_t>(i)].loader_world_size == g &&
              loader_ranks[static_cast<size_t>(i)] == i;
  }
  const bool dataloaders = records.front().source == AuditSource::kDataLoader;
  if (g > 1 && !sharded) {
    const bool all_alone = std::all_of(records.begin(), records.end(), [](const AuditRecord& r) {
      return r.loader_world_size == 1;
    });
    std::vector<std::string> split;
    for (const AuditRecord& r : records) {
      split.push_back(fmt::format("{}/{}", r.loader_rank, r.loader_world_size));
    }
    findings.push_back(
        {all_alone ? AuditPattern::kNoSharding : AuditPattern::kMisconfiguredRanks,
         fmt::format("the loaders are not split over the {} ranks of the group (loader "
                     "rank/world size per rank: {}): {}",
                     g, fmt::join(split, ", "),
                     dataloaders ? "give each rank's DataLoader a DistributedSampler, or use "
                                   "stoker.Loader, which shards by itself"
                                 : "build them with the group's rank and world size "
                                   "(stoker.Loader does when given none)"),
         {}});
  }
  if (g > 1 && total > 0 && std::all_of(records.begin(), records.end(), [&](const AuditRecord& r) {
        return r.digest == records.front().digest;
      })) {
    findings.push_back({AuditPattern::kDuplicated,
                        fmt::format("every rank delivered the same {} samples this epoch: each "
                                    "sample is trained on {} times and the epoch takes {}x "
                                    "longer than it should",
                                    counts.front(), g, g),
                        {}});
    report.disjoint = false;
  }
  if (g > 1 && total > 0) {
    const int top =
        static_cast<int>(std::max_element(counts.begin(), counts.end()) - counts.begin());
    std::vector<int> idle;
    for (int i = 0; i < g; ++i) {
      if (counts[static_cast<size_t>(i)] == 0) idle.push_back(i);
    }
    const int64_t most = counts[static_cast<size_t>(top)];
    if (static_cast<double>(most) >= t.single_rank_share * static_cast<double>(total) &&
        !idle.empty()) {
      std::vector<int> named = {top};
      named.insert(named.end(), idle.begin(), idle.end());
      findings.push_back(
          {AuditPattern::kSingleRankWork,
           fmt::format("rank {} delivered {} of {} samples ({:.0f} %) while rank(s) [{}] "
                       "delivered none: one rank does the work, the others idle",
                       top, most, total,
                       100.0 * static_cast<double>(most) / static_cast<double>(total),
                       fmt::join(idle, ", ")),
           std::move(named)});
    }
  }
  std::vector<int64_t> batches;
  std::set<int64_t> epochs;
  for (const AuditRecord& r : records) {
    batches.push_back(r.epoch_batches);
    epochs.insert(r.epoch);
  }
  const bool same_batches =
      std::all_of(batches.begin(), batches.end(), [&](int64_t b) { return b == batches.front(); });
  if (!same_batches || epochs.size() > 1) {
    findings.push_back(
        {AuditPattern::kUnbalanced,
         fmt::format("ranks are at different points (epochs [{}], batches [{}]): collectives "
                     "hang or ranks train on unequal shares",
                     fmt::join(epochs, ", "), fmt::join(batches, ", ")),
         {}});
    report.balanced = false;
  } else if (sharded) {
    report.balanced = true;
  }
  if (sharded && report.balanced == true) check_digests(records, report, findings);

  std::vector<RankPace> paces;
  std::vector<double> waits, busy;
  for (const AuditRecord& r : records) {
    paces.push_back({.images_per_second = r.images_per_second, .wait_fraction = r.wait_fraction});
    waits.push_back(r.wait_fraction);
    busy.push_back(r.busy_fraction);
  }
  for (const Straggler& s : find_stragglers(paces, t.straggler)) {
    const RankPace& p = paces[s.rank];
    findings.push_back(
        {AuditPattern::kStraggler,
         fmt::format("rank {} is a straggler: {:.0f} images/s against a median of {:.0f} on the "
                     "other ranks, waited {:.0f} % of its time (their median {:.0f} %)",
                     s.rank, p.images_per_second, s.others_images_per_second, 100 * p.wait_fraction,
                     100 * s.others_wait_fraction),
         {static_cast<int>(s.rank)}});
  }
  const double median_wait = median(waits);
  if (!findings.empty()) {
    report.verdict = Verdict::kRankImbalance;
    std::vector<std::string> messages;
    for (const AuditFinding& f : findings) messages.push_back(f.message);
    report.summary = fmt::format("{}", fmt::join(messages, "; "));
  } else if (median_wait >= t.pipeline.wait.healthy_below &&
             median(busy) >= t.pipeline.busy_saturated) {
    report.verdict = Verdict::kInputBoundCpu;
    report.summary = fmt::format(
        "shards are disjoint, complete and balanced, but the consumers wait {:.0f} % of the "
        "time on saturated pools",
        100 * median_wait);
  } else {
    report.verdict = Verdict::kHealthy;
    report.summary = fmt::format(
        "{} rank(s): shards disjoint, complete and balanced; {} samples delivered this epoch; "
        "median wait {:.0f} %",
        g, total, 100 * median_wait);
  }
  return report;
}

nlohmann::json to_json(const AuditReport& report) {
  const auto check = [](const std::optional<bool>& c) {
    return c ? nlohmann::json(*c) : nlohmann::json(nullptr);
  };
  nlohmann::json findings = nlohmann::json::array();
  for (const AuditFinding& f : report.findings) {
    findings.push_back(
        {{"pattern", to_string(f.pattern)}, {"message", f.message}, {"ranks", f.ranks}});
  }
  return {{"verdict", to_string(report.verdict)},
          {"summary", report.summary},
          {"findings", std::move(findings)},
          {"checks",
           {{"disjoint", check(report.disjoint)},
            {"complete", check(report.complete)},
            {"balanced", check(report.balanced)}}}};
}

std::string to_json_text(const AuditReport& report) { return json_text(to_json(report)); }

}  // namespace stoker
