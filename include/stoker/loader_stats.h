// Live stats of a loader as the doctor reads them: windows between two LoaderStats snapshots,
// and the stats JSON line (schema in docs/doctor.md, parsed back by stoker/telemetry.h).
//
//   stoker::StatsSampler sampler(loader);
//   ... train for a while ...
//   nlohmann::json line = sampler.sample();     // cumulative counters + the window since last
//   auto verdict = stoker::diagnose_pipeline(sampler.last_window());
//
// Thread-safety: StatsSampler's members may be called from any thread; so may Loader::stats().
#pragma once

#include <mutex>
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

// Samples one loader's stats (which must outlive the sampler).
class StatsSampler {
 public:
  explicit StatsSampler(const Loader& loader) : loader_(loader) {}
  // The stats line for now, with the window since the previous advancing sample (or the
  // loader's start). advance = false leaves that start where it is (a peek).
  nlohmann::json sample(bool advance = true);
  PipelineWindow last_window() const;  // the window of the last advancing sample
  LoaderStats last_stats() const;      // the stats of the last advancing sample

 private:
  const Loader& loader_;
  mutable std::mutex mu_;  // guards previous_ and window_
  LoaderStats previous_;
  PipelineWindow window_;
};

// The live verdict over a loader's whole run so far; when that says input-bound on CPU and
// `measure` is set, the fixes measured on `sample` samples of its dataset (measure_fixes).
Diagnosis diagnose_loader(const Loader& loader, bool measure = true, int sample = 200);

}  // namespace stoker
