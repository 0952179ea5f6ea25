// Live stats of a loader as the doctor reads them: windows between two LoaderStats snapshots,
// and the stats JSON line (schema in docs/doctor.md, parsed back by stoker/telemetry.h).
//
//   stoker::StatsSampler sampler(loader);
//   ... train for a while ...
//   std::string line = sampler.sample();     // JSON: cumulative counters + the window since last
//   auto verdict = stoker::diagnose_pipeline(sampler.last_window());
//
//   stoker::StatsFileWriter lines(loader, {});   // under `stoker monitor`: its stats file
//   ... lines.tick() now and then, lines.write_now() at the end ...
//
// Thread-safety: StatsSampler's members may be called from any thread; so may Loader::stats().
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "stoker/diagnose.h"
#include "stoker/loader.h"

namespace stoker {

// The window between two snapshots of the same loader (before earlier than now).
PipelineWindow pipeline_window(const LoaderStats& now, const LoaderStats& before);

// Samples one loader's stats (which must outlive the sampler).
class StatsSampler {
 public:
  explicit StatsSampler(const Loader& loader) : loader_(loader) {}
  // The stats line for now (compact JSON, docs/doctor.md), with the window since the previous
  // advancing sample (or the loader's start). advance = false leaves that start where it is
  // (a peek).
  std::string sample(bool advance = true);
  PipelineWindow last_window() const;  // the window of the last advancing sample
  LoaderStats last_stats() const;      // the stats of the last advancing sample

 private:
  const Loader& loader_;
  mutable std::mutex mu_;  // guards previous_ and window_
  LoaderStats previous_;
  PipelineWindow window_;
};

namespace detail {
// The environment's defaults of StatsFileConfig (docs/environment.md); an ArgumentError naming
// the variable when it is malformed.
std::string default_stats_file();         // STOKER_STATS_FILE, else ""
double default_stats_interval_seconds();  // STOKER_STATS_INTERVAL, else 1
}  // namespace detail

// Where a loader's stats lines go, and how often. The defaults are `stoker monitor`'s: it sets
// STOKER_STATS_FILE for the command it runs, so that every loader inside appends its lines
// there, beside the other ranks' (docs/doctor.md, "The monitor").
struct StatsFileConfig {
  std::string path = detail::default_stats_file();  // "": no lines; "-": standard error
  double interval_seconds = detail::default_stats_interval_seconds();  // in [0, 3600]
  bool truncate = false;  // start the file afresh rather than append to it
  void validate() const;  // ArgumentError naming the field
};

// The one writer of stats lines (stoker bench, Python's stoker.Loader): one loader's lines, its
// own windows (a StatsSampler of its own), to StatsFileConfig::path. tick() writes a line when
// interval_seconds have passed since the last one (the first an interval after construction,
// so that it has a window to judge); write_now() writes one at once (the last window, when the
// loader closes). Each line is one write() to a file opened with O_APPEND, so that the lines
// of processes sharing the file stay whole. Throws an I/O Error naming the file when it cannot
// be opened or written. The loader must outlive the writer.
// Thread-safety: tick and write_now may be called from any thread (they serialise).
class StatsFileWriter {
 public:
  StatsFileWriter(const Loader& loader, const StatsFileConfig& config);
  ~StatsFileWriter();
  StatsFileWriter(const StatsFileWriter&) = delete;
  StatsFileWriter& operator=(const StatsFileWriter&) = delete;

  bool enabled() const { return !config_.path.empty(); }
  void tick();
  void write_now();

 private:
  void write_line();  // with mu_ held

  StatsSampler sampler_;
  StatsFileConfig config_;
  int fd_ = -1;
  std::mutex mu_;  // guards last_ and the writes
  std::chrono::steady_clock::time_point last_;
};

// The live verdict over a loader's whole run so far; when that says input-bound on CPU and
// `measure` is set, the fixes measured on `sample` samples of its dataset (measure_fixes).
Diagnosis diagnose_loader(const Loader& loader, bool measure = true, int sample = 200);

}  // namespace stoker
