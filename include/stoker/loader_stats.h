// Live stats of a loader as the doctor reads them: windows between two LoaderStats snapshots,
// and the stats JSON line (schema in docs/doctor.md, parsed back by stoker/telemetry.h).
//
//   stoker::StatsSampler sampler(loader);
//   ... train for a while ...
//   nlohmann::json line = sampler.sample();     // cumulative counters + the window since last
//   auto verdict = stoker::diagnose_pipeline(sampler.last_window());
//
// Thread-safety: StatsSampler is not thread-safe (one caller); Loader::stats() is.
#pragma once

#include <nlohmann/json.hpp>

#include "stoker/diagnose.h"
#include "stoker/loader.h"

namespace stoker {

// {"read", "decode", "augment", "collate"}: CPU seconds per stage.
nlohmann::json to_json(const StageSeconds& cpu);

// The window between two snapshots of the same loader (before earlier than now).
PipelineWindow pipeline_window(const LoaderStats& now, const LoaderStats& before);

// One stats JSON line: `now`'s counters, `window`, and `unix_time` as "time".
nlohmann::json stats_json(const LoaderStats& now, const PipelineWindow& window, double unix_time);

class StatsSampler {
 public:
  explicit StatsSampler(const Loader& loader) : loader_(loader) {}
  // The stats line for now, with the window since the previous sample (or the loader's start).
  nlohmann::json sample();
  const PipelineWindow& last_window() const { return window_; }
  const LoaderStats& last_stats() const { return previous_; }

 private:
  const Loader& loader_;
  LoaderStats previous_;
  PipelineWindow window_;
};

}  // namespace stoker
