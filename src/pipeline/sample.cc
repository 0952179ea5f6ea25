#include "pipeline/sample.h"

#include <chrono>
#include <cstring>
#include <unordered_map>

#include "stoker/clock.h"
#include "stoker/log.h"
#include "stoker/rng.h"
#include "util/logging.h"

namespace stoker::pipeline {

SkipPolicy::SkipPolicy(const LoaderConfig& config)
    : policy_(config.bad_samples), max_bad_in_a_row_(config.max_bad_in_a_row) {}

bool SkipPolicy::skips(const Error& e) const {
  return policy_ == BadSamplePolicy::kSkip && e.kind() == ErrorKind::kBadData;
}

void SkipPolicy::warn(int64_t index, const std::string& why) {
  constexpr int64_t kSkipWarnings = 100;
  const int64_t n = warnings_.fetch_add(1, std::memory_order_relaxed);
  if (n < kSkipWarnings) {
    log(LogLevel::kWarning, "skipping bad sample {}: {}", index, why);
  } else if (n == kSkipWarnings) {
    log(LogLevel::kWarning,
        "more bad samples are skipped: not listed one by one any more (the stats count them)");
  }
}

void SkipPolicy::good() { in_a_row_.store(0, std::memory_order_relaxed); }

void SkipPolicy::bad(const Error& e) {
  const int64_t in_a_row = in_a_row_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (max_bad_in_a_row_ > 0 && in_a_row >= max_bad_in_a_row_) {
    throw Error(ErrorKind::kBadData,
                fmt::format("{} bad samples in a row, none read well in between (the last: "
                            "{}): the source is broken, not a few of its samples; stopping "
                            "(LoaderConfig::max_bad_in_a_row)",
                            in_a_row, e.message()));
  }
}

SampleStage::SampleStage(std::shared_ptr<const Dataset> dataset, const LoaderSetup& setup,
                         const ReadStage& read, SkipPolicy& skip)
    : dataset_(std::move(dataset)),
      setup_(setup),
      read_(read),
      skip_(skip),
      scratch_(static_cast<size_t>(setup.threads)) {}

SampleOutcome SampleStage::run(Batch& batch, Staging* staging, int slot, int thread) {
  const LoaderConfig& config = setup_.config;
  Scratch& scratch = scratch_[static_cast<size_t>(thread)];
  const int64_t index = batch.indices[static_cast<size_t>(slot)];
  uint8_t* out = staging != nullptr
                     ? nullptr
                     : batch.storage.get() + static_cast<size_t>(slot) * setup_.sample_bytes;
  SampleOutcome outcome;
  const auto busy_start = std::chrono::steady_clock::now();
  try {
    ReadCost read = read_.read(index, scratch.bytes);
    for (size_t k = 0; k < config.fields.size(); ++k) {
      const ReadCost field =
          read_.read_field(index, config.fields[k], batch.fields[k][static_cast<size_t>(slot)]);
      read.wall_seconds += field.wall_seconds;
      read.cpu_seconds += field.cpu_seconds;
    }
    outcome.cost.read_wall_seconds = read.wall_seconds;
    outcome.cost.cpu.read = read.cpu_seconds;
    Rng rng(
        stream_key(config.seed, static_cast<uint64_t>(batch.epoch), static_cast<uint64_t>(index)));
    TransformTimings timings;
    if (staging != nullptr) {
      stage_into(*staging, slot, dataset_->name(index), rng, scratch, timings);
    } else {
      transform_sample(out, scratch.bytes, dataset_->name(index), config.transform, rng,
                       scratch.transform, &timings);
    }
    outcome.cost.cpu.decode = timings.decode_seconds;
    outcome.cost.cpu.augment = timings.augment_seconds;
    skip_.good();
  } catch (const Error& e) {
    if (!skip_.skips(e)) throw;
    if (staging != nullptr) {
      staging->blank(slot);
    } else {
      std::memset(out, 0, setup_.sample_bytes);
    }
    outcome.blank = true;
    for (auto& field : batch.fields) field[static_cast<size_t>(slot)].clear();
    auto& valid = batch.valid[static_cast<size_t>(slot)];
    if (valid) {
      valid = 0;
      outcome.skipped = true;
      skip_.warn(index, e.message());
    }
    skip_.bad(e);
  }
  outcome.cost.busy_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - busy_start).count();
  return outcome;
}

void SampleStage::stage_into(Staging& staging, int slot, const std::string& name, Rng& rng,
                             Scratch& scratch, TransformTimings& timings) const {
  EncodedStage encoded;
  const StagedSample sample =
      stage_sample_or_encoded(scratch.bytes, name, setup_.config.transform, rng, scratch.transform,
                              setup_.config.stage_encoded_jpegs ? &encoded : nullptr, &timings);
  const double t0 = thread_cpu_seconds();
  if (encoded.encoded) {
    staging.put_encoded(slot, scratch.bytes, encoded, sample);
  } else {
    staging.put(slot, scratch.transform.region, sample);
  }
  timings.augment_seconds += thread_cpu_seconds() - t0;
}

Repeats find_repeats(const Batch& batch) {
  Repeats out;
  std::unordered_map<int64_t, int> first;
  const auto n = static_cast<size_t>(batch.batch_size);
  for (size_t i = 0; i < n; ++i) {
    if (batch.valid[i]) first.emplace(batch.indices[i], static_cast<int>(i));
  }
  for (size_t i = 0; i < n; ++i) {
    if (batch.valid[i]) continue;
    const auto [it, added] = first.emplace(batch.indices[i], static_cast<int>(i));
    if (added) continue;
    if (out.of.empty()) {
      out.of.assign(n, -1);
      out.by.resize(n);
    }
    out.of[i] = it->second;
    out.by[static_cast<size_t>(it->second)].push_back(static_cast<int>(i));
  }
  return out;
}

}  // namespace stoker::pipeline
