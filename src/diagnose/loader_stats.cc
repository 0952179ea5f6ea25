#include "stoker/loader_stats.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "diagnose/json.h"
#include "stoker/capacity.h"
#include "stoker/error.h"
#include "util/check.h"
#include "util/env_vars.h"

namespace stoker {

nlohmann::json to_json(const StageSeconds& cpu) {
  return {{"read", cpu.read},
          {"decode", cpu.decode},
          {"augment", cpu.augment},
          {"collate", cpu.collate}};
}

PipelineWindow pipeline_window(const LoaderStats& now, const LoaderStats& before) {
  PipelineWindow w;
  w.seconds = std::max(0.0, now.wall_seconds - before.wall_seconds);
  w.images = now.images - before.images;
  w.threads = now.threads;
  w.cpus = now.cpus;
  if (w.seconds <= 0) return w;
  const auto clamp01 = [](double x) { return std::clamp(x, 0.0, 1.0); };
  w.wait_fraction = clamp01((now.wait_seconds - before.wait_seconds) / w.seconds);
  const double busy = now.busy_seconds - before.busy_seconds;
  w.busy_fraction = clamp01(busy / (w.seconds * std::max(1, now.threads)));
  w.read_fraction =
      busy > 0 ? clamp01((now.read_wall_seconds - before.read_wall_seconds) / busy) : 0.0;
  w.cpu_utilisation = clamp01((now.process_cpu_seconds - before.process_cpu_seconds) /
                              (w.seconds * std::max(1, now.cpus)));
  w.queue_occupancy = now.queue_checks > before.queue_checks
                          ? (now.queue_ready_sum - before.queue_ready_sum) /
                                static_cast<double>(now.queue_checks - before.queue_checks)
                          : 0.0;
  return w;
}

nlohmann::json stats_json(const LoaderStats& s, const PipelineWindow& w, double unix_time) {
  return {
      {"stoker_stats", 1},
      {"time", unix_time},
      {"rank", s.rank},
      {"world_size", s.world_size},
      {"threads", s.threads},
      {"prefetch", s.prefetch},
      {"cpus", s.cpus},
      {"wall_seconds", s.wall_seconds},
      {"images", s.images},
      {"batches", s.batches},
      {"skipped", s.skipped},
      {"pool_buffers", s.pool_buffers},
      {"pool_grown", s.pool_grown},
      {"window",
       {{"seconds", w.seconds},
        {"images", w.images},
        {"images_per_second", w.images_per_second()},
        {"wait_fraction", w.wait_fraction},
        {"busy_fraction", w.busy_fraction},
        {"read_fraction", w.read_fraction},
        {"cpu_utilisation", w.cpu_utilisation},
        {"queue_occupancy", w.queue_occupancy}}},
      {"cpu_seconds", to_json(s.cpu)},
      {"wait_seconds", s.wait_seconds},
      {"busy_seconds", s.busy_seconds},
      {"read_wall_seconds", s.read_wall_seconds},
      {"process_cpu_seconds", s.process_cpu_seconds},
      {"epoch", s.epoch},
      {"epoch_start", s.epoch_start},
      {"epoch_batches", s.epoch_batches},
      {"digest",
       {{"count", s.epoch_digest.count}, {"sum", fmt::format("{:016x}", s.epoch_digest.sum)}}},
  };
}

std::string StatsSampler::sample(bool advance) {
  const LoaderStats now = loader_.stats();
  PipelineWindow window;
  {
    std::lock_guard lock(mu_);
    window = pipeline_window(now, previous_);
    if (advance) {
      previous_ = now;
      window_ = window;
    }
  }
  const double unix_time =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return stats_json(now, window, unix_time).dump();
}

PipelineWindow StatsSampler::last_window() const {
  std::lock_guard lock(mu_);
  return window_;
}

LoaderStats StatsSampler::last_stats() const {
  std::lock_guard lock(mu_);
  return previous_;
}

namespace detail {
std::string default_stats_file() { return util::env_string(util::kStatsFile); }
double default_stats_interval_seconds() { return util::env_number(util::kStatsInterval); }
}  // namespace detail

void StatsFileConfig::validate() const {
  STOKER_CHECK_ARG(std::isfinite(interval_seconds) &&
                       interval_seconds >= util::kStatsInterval.low &&
                       interval_seconds <= util::kStatsInterval.high,
                   "stats interval_seconds must be in [{}, {}] (got {})", util::kStatsInterval.low,
                   util::kStatsInterval.high, interval_seconds);
}

StatsFileWriter::StatsFileWriter(const Loader& loader, const StatsFileConfig& config)
    : sampler_(loader), config_(config), last_(std::chrono::steady_clock::now()) {
  config_.validate();
  if (config_.path.empty()) return;
  if (config_.path == "-") {
    fd_ = STDERR_FILENO;
    return;
  }
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (config_.truncate ? O_TRUNC : O_APPEND);
  fd_ = ::open(config_.path.c_str(), flags, 0644);
  if (fd_ < 0) {
    const int error = errno;
    STOKER_THROW_IO(error, config_.path, "{}: cannot write the stats file: {}", config_.path,
                    std::strerror(error));
  }
}

StatsFileWriter::~StatsFileWriter() {
  if (fd_ >= 0 && fd_ != STDERR_FILENO) ::close(fd_);
}

void StatsFileWriter::tick() {
  if (!enabled()) return;
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_).count() < config_.interval_seconds) return;
  write_line();
}

void StatsFileWriter::write_now() {
  if (!enabled()) return;
  std::lock_guard lock(mu_);
  write_line();
}

void StatsFileWriter::write_line() {
  last_ = std::chrono::steady_clock::now();
  const std::string line = sampler_.sample() + "\n";
  // One write: with O_APPEND the line lands whole after the other writers' lines.
  ssize_t n;
  do {
    n = ::write(fd_, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size())) {
    const int error = n < 0 ? errno : EIO;
    STOKER_THROW_IO(error, config_.path, "{}: cannot write the stats file: {}", config_.path,
                    std::strerror(error));
  }
}

Diagnosis diagnose_loader(const Loader& loader, bool measure, int sample) {
  Diagnosis d = diagnose_pipeline(pipeline_window(loader.stats(), LoaderStats{}));
  if (measure && d.verdict == Verdict::kInputBoundCpu) {
    measure_fixes(d, loader.dataset(), loader.config(), sample);
  }
  return d;
}

}  // namespace stoker
