#include "stoker/loader.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <span>

#include "pipeline/batch_pool.h"
#include "pipeline/staging.h"
#include "stoker/clock.h"
#include "stoker/env.h"
#include "stoker/error.h"
#include "stoker/log.h"
#include "stoker/rng.h"
#include "util/env_vars.h"
#include "util/mutex.h"
#include "util/task_pool.h"

namespace stoker {
namespace {

using pipeline::BatchPool;
using pipeline::Staging;
using util::Mutex;
using util::MutexLock;
using util::TaskPool;

using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace

BadSamplePolicy parse_bad_sample_policy(const std::string& name) {
  if (name == "error") return BadSamplePolicy::kError;
  if (name == "skip") return BadSamplePolicy::kSkip;
  STOKER_THROW_ARG("unknown bad-sample policy '{}' (expected error or skip)", name);
}

// What a worker thread keeps between samples.
struct WorkerScratch {
  std::vector<uint8_t> bytes;
  TransformScratch transform;
};

// One batch being assembled by the workers: a job of one task a slot.
// A batch's MixUp / CutMix in flight: the draw, and per pair of slots (2k, 2k + 1) how many of
// its samples are finished; the worker that finishes the second mixes the pair.
struct PairMix {
  BatchMix draw;
  std::unique_ptr<std::atomic<int>[]> finished;  // per pair
  std::vector<uint8_t> blank;                    // per slot: zero-filled by the skip policy
  explicit PairMix(int batch_size)
      : finished(new std::atomic<int>[static_cast<size_t>(batch_size + 1) / 2]()),
        blank(static_cast<size_t>(batch_size), 0) {}
};

struct InFlight {
  std::unique_ptr<Batch> batch;
  std::shared_ptr<TaskPool::Job> job;
  // A label that failed while the batch was set up (its lowest slot): reported if no sample of a
  // lower slot failed, so the error reported does not depend on timing.
  int label_error_slot = -1;
  std::exception_ptr label_error;
  std::unique_ptr<Staging> staging;  // AugmentMode::kDeferred only
  // The planned valid samples (before the skip policy clears any): the audit checks sharding,
  // which a skipped bad file does not change.
  SampleDigest planned;
  std::unique_ptr<PairMix> mix;  // LoaderConfig::mix only
};

class Loader::Impl {
 public:
  Impl(std::shared_ptr<const Dataset> dataset, const LoaderConfig& config)
      : dataset_(std::move(dataset)), config_(config) {
    STOKER_CHECK_ARG(dataset_ != nullptr, "Loader: no dataset");
    STOKER_CHECK_ARG(config_.batch_size >= 1, "batch_size must be >= 1 (got {})",
                     config_.batch_size);
    STOKER_CHECK_ARG(config_.threads >= 0, "threads must be >= 0 (got {})", config_.threads);
    STOKER_CHECK_ARG(config_.prefetch >= 0, "prefetch must be >= 0 (got {})", config_.prefetch);
    STOKER_CHECK_ARG(dataset_->size() >= 1, "{}: the dataset is empty", dataset_->describe());
    config_.transform.validate();
    config_.mix.validate();
    config_.read_retries.validate();
    STOKER_CHECK_ARG(config_.close_timeout_seconds >= util::kCloseTimeout.low &&
                         config_.close_timeout_seconds <= util::kCloseTimeout.high,
                     "close_timeout_seconds must be in [{}, {}] (got {})", util::kCloseTimeout.low,
                     util::kCloseTimeout.high, config_.close_timeout_seconds);
    // Float labels: MixUp/CutMix's soft rows, or a multi-label dataset's multi-hot ones.
    if (config_.mix.enabled()) {
      STOKER_CHECK_ARG(!dataset_->classes().empty(), "MixUp/CutMix need labels: {} has none",
                       dataset_->describe());
      num_classes_ = config_.mix.num_classes;
    } else if (dataset_->multi_label()) {
      STOKER_CHECK_ARG(config_.augment == AugmentMode::kCpu,
                       "{}: multi-label batches (multi-hot rows) are on the CPU path only",
                       dataset_->describe());
      num_classes_ = static_cast<int>(dataset_->classes().size());
    }
    STOKER_CHECK_ARG(!config_.mix.enabled() || (config_.transform.output == OutputKind::kFloat32 &&
                                                config_.augment == AugmentMode::kCpu),
                     "MixUp/CutMix in the workers need float32 output on the CPU path (got {}{})",
                     to_string(config_.transform.output),
                     config_.augment == AugmentMode::kCpu ? "" : " with the GPU augmentation");
    STOKER_CHECK_ARG(
        config_.augment != AugmentMode::kDeferred || !config_.transform.has_cpu_only_steps(),
        "the GPU augmentation does square outputs with crop, resize, flip and "
        "normalisation only: augment ops, RandomErasing and non-square sizes run "
        "on the CPU path (device='cpu')");
    STOKER_CHECK_ARG(!config_.stage_encoded_jpegs || config_.augment == AugmentMode::kDeferred,
                     "JPEGs staged encoded (the GPU decode) need the GPU augmentation");
    if (config_.rank.has_value() != config_.world_size.has_value()) {
      STOKER_THROW_ARG("give both rank and world_size, or neither");
    }
    rank_ = discover_rank(config_.rank, config_.world_size);
    config_.rank = rank_.rank;
    config_.world_size = rank_.world_size;
    threads_ = config_.threads > 0 ? config_.threads : default_threads(rank_);
    cpus_ = available_cpus();
    // Enough batches in flight that every worker has a sample to work on while the consumer
    // holds the batch before: about four samples per thread, at least two batches.
    prefetch_ = config_.prefetch > 0
                    ? config_.prefetch
                    : std::max(2, (4 * threads_ + config_.batch_size - 1) / config_.batch_size);
    sampler_ = SamplerConfig{.dataset_size = dataset_->size(),
                             .batch_size = config_.batch_size,
                             .rank = rank_.rank,
                             .world_size = rank_.world_size,
                             .mode = config_.mode,
                             .shuffle = config_.shuffle,
                             .seed = config_.seed};
    STOKER_CHECK_ARG(config_.shard_window_batches >= -1,
                     "shard_window_batches must be >= -1 "
                     "(got {})",
                     config_.shard_window_batches);
    window_batches_ = config_.shard_window_batches >= 0 ? config_.shard_window_batches
                      : dataset_->prefers_shard_order() ? 4
                                                        : 0;
    if (window_batches_ > 0 && config_.shuffle) {
      auto ends = std::make_shared<std::vector<int64_t>>(dataset_->shard_ends());
      STOKER_CHECK_ARG(!ends->empty(), "shard_window_batches={}: {} is not stored in shards",
                       window_batches_, dataset_->describe());
      sampler_.shard_ends = std::move(ends);
    } else {
      window_batches_ = 0;
    }
    sample_bytes_ = config_.augment == AugmentMode::kDeferred ? staging_bytes_per_sample(config_)
                                                              : config_.transform.sample_bytes();
    pool_ = std::make_shared<BatchPool>(config_.batch_size, sample_bytes_, config_.memory);
    scratch_.resize(static_cast<size_t>(threads_));
    workers_ = std::make_unique<TaskPool>(threads_);
  }

  ~Impl() {
    workers_.reset();  // drops the queued samples, waits for the running ones
    MutexLock consumer(consumer_mu_);
    for (auto& flight : in_flight_) pool_->release(std::move(flight.batch));
  }

  // The consumer-side calls serialise on consumer_mu_: the contract is one consumer thread,
  // but Python may call from several (the GIL is released while they wait), and a set_epoch
  // racing a next() must wait, not pull the batch from under it.
  void set_epoch(int64_t epoch) {
    check_process();
    MutexLock consumer(consumer_mu_);
    set_epoch_unlocked(epoch);
  }

  std::shared_ptr<const Batch> next() {
    check_process();
    MutexLock consumer(consumer_mu_);
    return next_unlocked();
  }

  bool wait_ready(double seconds) {
    check_process();
    MutexLock consumer(consumer_mu_);
    if (!plan_) set_epoch_unlocked(pending_ ? pending_->epoch : 0);
    if (failed_ || delivered_ >= plan_->num_batches() || in_flight_.empty()) return true;
    return in_flight_.front().job->wait_for(seconds);
  }

  bool forked() const { return ::getpid() != owner_pid_; }

  // Cancels the batches in flight and waits up to `seconds` in all for their running samples;
  // returns how many batches still have samples running.
  int settle(double seconds) {
    MutexLock consumer(consumer_mu_);
    for (auto& flight : in_flight_) flight.job->cancel();
    const auto deadline = SteadyClock::now() + std::chrono::duration<double>(seconds);
    int stuck = 0;
    for (auto& flight : in_flight_) {
      const double left = std::chrono::duration<double>(deadline - SteadyClock::now()).count();
      if (!flight.job->wait_for(std::max(0.0, left))) ++stuck;
    }
    return stuck;
  }

  // A loader copied into a fork() child (a DataLoader worker process, multiprocessing's
  // "fork") has none of its worker threads there: waiting for them would hang for ever.
  void check_process() const {
    STOKER_CHECK_ARG(!forked(),
                     "this loader was built in process {} and is used in process {}, a fork() of "
                     "it (a DataLoader worker, multiprocessing with \"fork\"), where its worker "
                     "threads do not exist: build the loader in the process that iterates it (it "
                     "needs no DataLoader workers: it has its own threads)",
                     owner_pid_, ::getpid());
  }

  int64_t num_batches() const {
    MutexLock consumer(consumer_mu_);
    if (plan_) return plan_->num_batches();
    return EpochPlan::count_batches(sampler_, pending_ ? pending_->consumed : 0);
  }

  ResumeState state() const {
    MutexLock consumer(consumer_mu_);
    if (pending_) return *pending_;
    ResumeState s;
    s.fingerprint = dataset_->fingerprint();
    s.dataset_size = dataset_->size();
    s.mode = config_.mode;
    s.shuffle = config_.shuffle;
    s.seed = config_.seed;
    s.permutation = sampler_.permutation;
    s.epoch = plan_ ? plan_->epoch() : 0;
    s.shard_window = plan_ ? plan_->config().shard_window : default_window();
    s.shard_lanes = plan_ ? plan_->config().shard_lanes : rank_.world_size;
    // Only batches handed to the consumer count: after a failed batch, the samples from it on
    // are still to be delivered by a resumed job.
    s.consumed = plan_ ? plan_->consumed_after(delivered_) : 0;
    return s;
  }

  int64_t size() const { return EpochPlan::count_batches(sampler_, 0); }

  void load_state(const ResumeState& s) {
    check_process();
    MutexLock consumer(consumer_mu_);
    const std::string fingerprint = dataset_->fingerprint();
    STOKER_CHECK_ARG(s.fingerprint == fingerprint,
                     "resume state is for another dataset (fingerprint {} here, {} in the state)",
                     fingerprint, s.fingerprint);
    STOKER_CHECK_ARG(s.dataset_size == dataset_->size(),
                     "resume state is for {} samples, the dataset has {}", s.dataset_size,
                     dataset_->size());
    STOKER_CHECK_ARG(s.mode == config_.mode, "resume state has mode {}, the loader {}",
                     to_string(s.mode), to_string(config_.mode));
    STOKER_CHECK_ARG(s.shuffle == config_.shuffle, "resume state has shuffle={}, the loader {}",
                     s.shuffle, config_.shuffle);
    STOKER_CHECK_ARG(s.seed == config_.seed, "resume state has seed {}, the loader {}", s.seed,
                     config_.seed);
    STOKER_CHECK_ARG(s.epoch >= 0 && s.consumed >= 0 && s.consumed <= s.dataset_size,
                     "resume state out of range (epoch {}, consumed {})", s.epoch, s.consumed);
    STOKER_CHECK_ARG(
        s.shard_window == 0 || !s.shuffle || sampler_.shard_ends || !dataset_->shard_ends().empty(),
        "resume state shuffles in shard windows, but {} is not stored in shards",
        dataset_->describe());
    if (s.shard_window > 0 && !sampler_.shard_ends) {
      sampler_.shard_ends = std::make_shared<std::vector<int64_t>>(dataset_->shard_ends());
    }
    drain();
    plan_.reset();
    delivered_ = 0;
    pending_ = s;
    // A state keeps meaning the order it was taken in: a job resumed from a version 1 state
    // goes on with that permutation (and saves it so).
    sampler_.permutation = s.permutation;
  }

  LoaderStats stats() const {
    MutexLock lock(stats_mu_);
    LoaderStats s;
    s.threads = threads_;
    s.prefetch = prefetch_;
    s.batches = stats_batches_;
    s.images = stats_images_;
    s.skipped = stats_skipped_;
    s.pool_buffers = pool_->allocated();
    s.pool_grown = std::max<int64_t>(0, s.pool_buffers - (prefetch_ + 2));
    s.rank = rank_.rank;
    s.world_size = rank_.world_size;
    s.cpus = cpus_;
    s.wall_seconds = started_ ? seconds_since(start_time_) : 0.0;
    s.wait_seconds = wait_seconds_;
    s.busy_seconds = busy_seconds_;
    s.read_wall_seconds = read_wall_seconds_;
    s.process_cpu_seconds = started_ ? process_cpu_seconds() - start_process_cpu_ : 0.0;
    s.queue_ready_sum = queue_ready_sum_;
    s.queue_checks = queue_checks_;
    s.cpu = cpu_;
    s.epoch = stats_epoch_;
    s.epoch_start = stats_epoch_start_;
    s.epoch_batches = stats_epoch_batches_;
    s.epoch_digest = stats_epoch_digest_;
    return s;
  }

  const Dataset& dataset() const { return *dataset_; }
  const LoaderConfig& config() const { return config_; }
  const RankInfo& rank() const { return rank_; }

 private:
  void set_epoch_unlocked(int64_t epoch) STOKER_REQUIRES(consumer_mu_) {
    STOKER_CHECK_ARG(epoch >= 0, "epoch must be >= 0 (got {})", epoch);
    // DESIGN.md: set_epoch for the epoch a resume state was loaded for keeps its offset (until
    // a batch of it is delivered); any other call starts the epoch from its beginning.
    if (pending_ && pending_->epoch != epoch) pending_.reset();
    const int64_t consumed = pending_ ? pending_->consumed : 0;
    // A resumed epoch keeps the shard windows it was taken with; a new one gets this world's.
    sampler_.shard_window = pending_ ? pending_->shard_window : default_window();
    sampler_.shard_lanes =
        pending_ && pending_->shard_window > 0 ? pending_->shard_lanes : rank_.world_size;
    start(epoch, consumed);
  }

  std::shared_ptr<const Batch> next_unlocked() STOKER_REQUIRES(consumer_mu_) {
    if (!plan_) set_epoch_unlocked(pending_ ? pending_->epoch : 0);
    // After a failure the epoch is over for this loader; set_epoch starts afresh.
    if (failed_ || delivered_ >= plan_->num_batches()) return nullptr;
    InFlight& front = in_flight_.front();
    int ready = 0;
    for (const auto& flight : in_flight_) {
      if (!flight.job->done()) break;
      ++ready;
    }
    const auto wait_start = SteadyClock::now();
    int error_slot = -1;
    std::exception_ptr error = front.job->wait_error(&error_slot);
    const double waited = ready == 0 ? seconds_since(wait_start) : 0.0;
    if (front.label_error && (!error || front.label_error_slot < error_slot)) {
      error = front.label_error;
    }
    std::unique_ptr<Batch> batch = std::move(front.batch);
    std::unique_ptr<Staging> staging = std::move(front.staging);
    std::unique_ptr<PairMix> front_mix = std::move(front.mix);
    const SampleDigest planned = front.planned;
    in_flight_.pop_front();
    {
      MutexLock lock(stats_mu_);
      queue_ready_sum_ += static_cast<double>(ready) / prefetch_;
      ++queue_checks_;
      wait_seconds_ += waited;
    }
    if (staging && !error) staging->finish(*pool_);
    if (num_classes_ > 0 && !error) {
      try {
        fill_soft_labels(*batch, front_mix.get());
      } catch (...) {
        error = std::current_exception();
      }
    }
    if (!error) {
      try {
        schedule(delivered_ + 1 + static_cast<int64_t>(in_flight_.size()));
      } catch (...) {
        error = std::current_exception();
      }
    }
    if (error) {
      pool_->release(std::move(batch));
      fail();
      std::rethrow_exception(error);
    }
    ++delivered_;
    pending_.reset();  // the resume state is now reflected in plan_ and delivered_
    // A skipped sample leaves the step's global count; other ranks' skips are not known here
    // without a collective, so with several ranks global_valid stays the planned count.
    if (rank_.world_size == 1) batch->global_valid -= batch->skipped;
    int64_t valid = 0;
    for (uint8_t v : batch->valid) valid += v;
    {
      MutexLock lock(stats_mu_);
      ++stats_batches_;
      stats_images_ += valid;
      stats_skipped_ += batch->skipped;
      ++stats_epoch_batches_;
      stats_epoch_digest_ += planned;
    }
    return pool_->deliver(std::move(batch));
  }

  // Ends the epoch after an error: the workers do not start its other samples.
  void fail() STOKER_REQUIRES(consumer_mu_) {
    failed_ = true;
    for (auto& flight : in_flight_) flight.job->cancel();
  }

  // Waits for the workers to put down every sample they took, then drops the batches in
  // flight.
  void drain() STOKER_REQUIRES(consumer_mu_) {
    for (auto& flight : in_flight_) flight.job->cancel();
    for (auto& flight : in_flight_) {
      flight.job->wait_error();  // the epoch is abandoned: its errors no longer matter
      pool_->release(std::move(flight.batch));
    }
    in_flight_.clear();
    dataset_->cancel_read_ahead();
    hinted_until_ = 0;
  }

  // One warning per skipped sample, up to kSkipWarnings, then one saying the rest are only
  // counted: a broken source must not bury the terminal under millions of lines.
  void warn_skipped(int64_t index, const std::string& why) {
    constexpr int64_t kSkipWarnings = 100;
    const int64_t n = skip_warnings_.fetch_add(1, std::memory_order_relaxed);
    if (n < kSkipWarnings) {
      log(LogLevel::kWarning, "skipping bad sample {}: {}", index, why);
    } else if (n == kSkipWarnings) {
      log(LogLevel::kWarning,
          "more bad samples are skipped: not listed one by one any more (the stats count them)");
    }
  }

  // Windows of window_batches_ batches for this world (0: none).
  int64_t default_window() const {
    return int64_t{window_batches_} * config_.batch_size * rank_.world_size;
  }

  // Tells the dataset which samples the workers read next: batch j as it is scheduled and the
  // one after it (in shard windows: two windows' batches, the run of the rank's shards being
  // read and the next), so that remote reads are in flight before a worker asks (a no-op
  // locally).
  void hint_reads(int64_t j) STOKER_REQUIRES(consumer_mu_) {
    const int64_t until =
        std::min<int64_t>(j + std::max(2, 2 * window_batches_), plan_->num_batches());
    hint_indices_.resize(static_cast<size_t>(config_.batch_size));
    hint_valid_.resize(static_cast<size_t>(config_.batch_size));
    for (int64_t b = std::max(j, hinted_until_); b < until; ++b) {
      plan_->batch(b, hint_indices_, hint_valid_);
      dataset_->read_ahead(hint_indices_);
    }
    hinted_until_ = std::max(hinted_until_, until);
  }

  void start(int64_t epoch, int64_t consumed) STOKER_REQUIRES(consumer_mu_) {
    drain();
    plan_.emplace(sampler_, epoch, consumed);
    delivered_ = 0;
    failed_ = false;
    {
      MutexLock lock(stats_mu_);
      if (!started_) {
        started_ = true;
        start_time_ = SteadyClock::now();
        start_process_cpu_ = process_cpu_seconds();
      }
      stats_epoch_ = epoch;
      stats_epoch_start_ = consumed;
      stats_epoch_batches_ = 0;
      stats_epoch_digest_ = {};
    }
    try {
      const int64_t first = std::min<int64_t>(prefetch_, plan_->num_batches());
      for (int64_t j = 0; j < first; ++j) schedule(j);
    } catch (...) {
      // No half-started epoch: the next call starts it again.
      drain();
      plan_.reset();
      throw;
    }
  }

  // Sets up batch j (indices, labels, mask) and hands its samples to the workers.
  void schedule(int64_t j) STOKER_REQUIRES(consumer_mu_) {
    if (j >= plan_->num_batches()) return;
    const double cpu_start = thread_cpu_seconds();
    InFlight flight;
    flight.batch = pool_->acquire();
    Batch& batch = *flight.batch;
    batch.epoch = plan_->epoch();
    batch.index = j;
    batch.output = config_.transform.output;
    batch.channels = config_.transform.channels;
    batch.height = config_.transform.output_height();
    batch.width = config_.transform.output_width();
    batch.skipped = 0;
    batch.global_valid = plan_->batch(j, batch.indices, batch.valid);
    hint_reads(j);
    for (size_t i = 0; i < batch.valid.size(); ++i) {
      if (batch.valid[i]) flight.planned.add(batch.indices[i]);
    }
    // A label is data too (a packed shard's index may hold a bad one): the bad-sample policy
    // applies to it as to the pixels.
    for (size_t i = 0; i < batch.indices.size(); ++i) {
      try {
        batch.labels[i] = dataset_->label(batch.indices[i]);
      } catch (const Error& e) {
        batch.labels[i] = -1;
        if (config_.bad_samples == BadSamplePolicy::kError || e.kind() != ErrorKind::kBadData) {
          if (!flight.label_error) {
            flight.label_error = std::current_exception();
            flight.label_error_slot = static_cast<int>(i);
          }
        } else if (batch.valid[i]) {
          batch.valid[i] = 0;
          ++batch.skipped;
          warn_skipped(batch.indices[i], e.message());
        }
      }
    }
    if (config_.augment == AugmentMode::kDeferred)
      flight.staging = std::make_unique<Staging>(batch);
    if (config_.mix.enabled()) {
      flight.mix = std::make_unique<PairMix>(batch.batch_size);
      Rng rng(batch_mix_key(config_.seed, batch.epoch, j, rank_.rank, rank_.world_size));
      flight.mix->draw = draw_batch_mix(config_.mix, rng, batch.height, batch.width);
    }
    {
      MutexLock lock(stats_mu_);
      cpu_.collate += thread_cpu_seconds() - cpu_start;
    }
    Staging* staging = flight.staging.get();
    PairMix* mix = flight.mix.get();
    flight.job =
        workers_->submit(batch.batch_size, [this, &batch, staging, mix](int slot, int thread) {
          const bool blank =
              run_sample(batch, staging, slot, scratch_[static_cast<size_t>(thread)]);
          if (mix != nullptr) {
            mix->blank[static_cast<size_t>(slot)] = blank ? 1 : 0;
            finish_pair(batch, *mix, slot);
          }
        });
    in_flight_.push_back(std::move(flight));
  }

  // One slot of a batch, on a worker thread. staging: where the sample goes in
  // AugmentMode::kDeferred (nullptr in kCpu). Throws what ends the epoch.
  // Returns whether the slot was zero-filled by the skip policy.
  bool run_sample(Batch& batch, Staging* staging, int slot, WorkerScratch& scratch)
      STOKER_EXCLUDES(stats_mu_) {
    const int64_t index = batch.indices[static_cast<size_t>(slot)];
    uint8_t* out = staging != nullptr
                       ? nullptr
                       : batch.storage.get() + static_cast<size_t>(slot) * sample_bytes_;
    StageSeconds cpu;
    double read_wall = 0;
    bool skipped = false, blank = false;
    const auto busy_start = SteadyClock::now();
    try {
      const double t0 = thread_cpu_seconds();
      const auto read_start = SteadyClock::now();
      read_with_retries(*dataset_, index, scratch.bytes,
                        config_.read_retries);  // an I/O error is tried again, then fatal
      read_wall = seconds_since(read_start);
      cpu.read = thread_cpu_seconds() - t0;
      Rng rng(stream_key(config_.seed, static_cast<uint64_t>(batch.epoch),
                         static_cast<uint64_t>(index)));
      TransformTimings timings;
      if (staging != nullptr) {
        stage_sample_into(*staging, slot, scratch.bytes, dataset_->name(index), rng,
                          scratch.transform, timings);
      } else {
        transform_sample(out, scratch.bytes, dataset_->name(index), config_.transform, rng,
                         scratch.transform, &timings);
      }
      cpu.decode = timings.decode_seconds;
      cpu.augment = timings.augment_seconds;
      bad_in_a_row_.store(0, std::memory_order_relaxed);
    } catch (const Error& e) {
      // A bad sample: the policy decides whether it ends the epoch or is skipped. Any other
      // kind (the storage failed, a broken invariant) ends it whatever the policy: a dead
      // mount must not look like a corrupt image.
      if (config_.bad_samples != BadSamplePolicy::kSkip || e.kind() != ErrorKind::kBadData) throw;
      // A padding slot repeating a bad sample is already invalid: it is not counted twice.
      if (staging != nullptr) {
        staging->blank(slot);
      } else {
        std::memset(out, 0, sample_bytes_);
      }
      blank = true;
      auto& valid = batch.valid[static_cast<size_t>(slot)];
      if (valid) {
        valid = 0;
        skipped = true;
        warn_skipped(index, e.message());
      }
      const int64_t in_a_row = bad_in_a_row_.fetch_add(1, std::memory_order_relaxed) + 1;
      if (config_.max_bad_in_a_row > 0 && in_a_row >= config_.max_bad_in_a_row) {
        throw Error(ErrorKind::kBadData,
                    fmt::format("{} bad samples in a row, none read well in between (the last: "
                                "{}): the source is broken, not a few of its samples; stopping "
                                "(LoaderConfig::max_bad_in_a_row)",
                                in_a_row, e.message()));
      }
    }
    const double busy = seconds_since(busy_start);
    MutexLock lock(stats_mu_);
    busy_seconds_ += busy;
    read_wall_seconds_ += read_wall;
    cpu_.read += cpu.read;
    cpu_.decode += cpu.decode;
    cpu_.augment += cpu.augment;
    if (skipped) ++batch.skipped;  // the batch's other slots count too: under the lock
    return blank;
  }

  // After slot `slot` is written: the second finished sample of its pair mixes the pair.
  // acq_rel: the partner's pixels (written before its increment) are visible here.
  void finish_pair(Batch& batch, PairMix& mix, int slot) {
    const int partner = slot ^ 1;
    if (partner >= batch.batch_size) return;  // an odd batch's last slot stays as it is
    if (mix.finished[static_cast<size_t>(slot / 2)].fetch_add(1, std::memory_order_acq_rel) != 1) {
      return;
    }
    if (mix.blank[static_cast<size_t>(slot)] || mix.blank[static_cast<size_t>(partner)]) return;
    auto* a = reinterpret_cast<float*>(batch.storage.get() +
                                       static_cast<size_t>(slot & ~1) * sample_bytes_);
    auto* b = reinterpret_cast<float*>(batch.storage.get() +
                                       static_cast<size_t>(slot | 1) * sample_bytes_);
    mix_pair(a, b, batch.channels, batch.height, batch.width, mix.draw);
  }

  // The float labels of a batch (on the consumer, once every slot is done): one-hot or
  // multi-hot rows, mixed pairwise with MixUp/CutMix.
  void fill_soft_labels(Batch& batch, const PairMix* mix) const {
    const int c = num_classes_;
    const auto n = static_cast<size_t>(batch.batch_size);
    const auto width = static_cast<size_t>(c);
    batch.num_classes = c;
    batch.soft_labels.assign(n * width, 0.0f);
    // Slot i's own row: false for a slot without a label (a bad label the skip policy
    // skipped), whose row stays zero.
    const auto hot = [&](size_t i, std::span<float> row) {
      const auto check = [&](int64_t id) {
        STOKER_CHECK_ARG(id < c,
                         "{}: label {} is not below MixUp/CutMix's num_classes = {}: give the "
                         "data set's number of classes",
                         dataset_->name(batch.indices[i]), id, c);
      };
      if (dataset_->multi_label()) {
        for (const int32_t id : dataset_->label_set(batch.indices[i])) {
          check(id);
          row[static_cast<size_t>(id)] = 1.0f;
        }
        return true;
      }
      const int64_t own = batch.labels[i];
      if (own < 0) return false;
      check(own);
      row[static_cast<size_t>(own)] = 1.0f;
      return true;
    };
    std::vector<float> own(width), partner(width);
    for (size_t i = 0; i < n; ++i) {
      const std::span<float> row(batch.soft_labels.data() + i * width, width);
      const size_t p = i ^ 1;
      const bool pair = mix != nullptr && mix->draw.kind != BatchMix::Kind::kNone && p < n &&
                        !mix->blank[i] && !mix->blank[p];
      if (!pair) {
        hot(i, row);
        continue;
      }
      std::fill(own.begin(), own.end(), 0.0f);
      std::fill(partner.begin(), partner.end(), 0.0f);
      const bool labelled = hot(i, own);
      if (!labelled) continue;
      if (!hot(p, partner)) partner = own;  // a partner without a label: keep one's own
      mix_label_rows(row, own, partner, mix->draw.label_lam);
    }
  }

  // AugmentMode::kDeferred: decode into scratch, then copy into the batch's staging area (the
  // copy counts as augment time: it is all the CPU does of the augmentation).
  void stage_sample_into(Staging& staging, int slot, std::span<const uint8_t> bytes,
                         const std::string& name, Rng& rng, TransformScratch& scratch,
                         TransformTimings& timings) {
    EncodedStage encoded;
    const StagedSample sample =
        stage_sample_or_encoded(bytes, name, config_.transform, rng, scratch,
                                config_.stage_encoded_jpegs ? &encoded : nullptr, &timings);
    const double t0 = thread_cpu_seconds();
    if (encoded.encoded) {
      staging.put_encoded(slot, bytes, encoded, sample);
    } else {
      staging.put(slot, scratch.region, sample);
    }
    timings.augment_seconds += thread_cpu_seconds() - t0;
  }

  static size_t staging_bytes_per_sample(const LoaderConfig& c) {
    if (c.staging_bytes_per_sample > 0) return (c.staging_bytes_per_sample + 63) / 64 * 64;
    const auto side = static_cast<size_t>(c.transform.size);
    return (side * side * static_cast<size_t>(c.transform.channels) * 9 / 4 + 63) / 64 * 64;
  }

  std::shared_ptr<const Dataset> dataset_;
  LoaderConfig config_;
  RankInfo rank_;
  SamplerConfig sampler_;
  int threads_ = 1;
  int prefetch_ = 2;
  int window_batches_ = 0;                // shard windows of this many batches; 0: a global shuffle
  const pid_t owner_pid_ = ::getpid();    // the process whose threads these are
  std::atomic<int64_t> bad_in_a_row_{0};  // samples skipped since one read well
  std::atomic<int64_t> skip_warnings_{0};                     // "skipping bad sample" lines so far
  int64_t hinted_until_ STOKER_GUARDED_BY(consumer_mu_) = 0;  // batches [0, this) hinted
  std::vector<int64_t> hint_indices_ STOKER_GUARDED_BY(consumer_mu_);
  std::vector<uint8_t> hint_valid_ STOKER_GUARDED_BY(consumer_mu_);
  int cpus_ = 1;
  size_t sample_bytes_ = 0;
  int num_classes_ = 0;  // > 0: batches carry float label rows (Batch::soft_labels)
  std::shared_ptr<BatchPool> pool_;
  std::vector<WorkerScratch> scratch_;  // one a worker thread, by the pool's thread index

  // Consumer-side state.
  mutable Mutex consumer_mu_;
  bool failed_ STOKER_GUARDED_BY(consumer_mu_) = false;
  std::optional<EpochPlan> plan_ STOKER_GUARDED_BY(consumer_mu_);
  std::optional<ResumeState> pending_ STOKER_GUARDED_BY(consumer_mu_);
  int64_t delivered_ STOKER_GUARDED_BY(consumer_mu_) = 0;
  std::deque<InFlight> in_flight_ STOKER_GUARDED_BY(consumer_mu_);

  // Statistics, written by the workers and the consumer.
  mutable Mutex stats_mu_;
  bool started_ STOKER_GUARDED_BY(stats_mu_) = false;
  SteadyClock::time_point start_time_ STOKER_GUARDED_BY(stats_mu_);
  double start_process_cpu_ STOKER_GUARDED_BY(stats_mu_) = 0;
  StageSeconds cpu_ STOKER_GUARDED_BY(stats_mu_);
  double wait_seconds_ STOKER_GUARDED_BY(stats_mu_) = 0;
  int64_t stats_batches_ STOKER_GUARDED_BY(stats_mu_) = 0;
  int64_t stats_images_ STOKER_GUARDED_BY(stats_mu_) = 0;
  int64_t stats_skipped_ STOKER_GUARDED_BY(stats_mu_) = 0;
  double busy_seconds_ STOKER_GUARDED_BY(stats_mu_) = 0;
  double read_wall_seconds_ STOKER_GUARDED_BY(stats_mu_) = 0;
  double queue_ready_sum_ STOKER_GUARDED_BY(stats_mu_) = 0;
  int64_t queue_checks_ STOKER_GUARDED_BY(stats_mu_) = 0;
  int64_t stats_epoch_ STOKER_GUARDED_BY(stats_mu_) = -1;
  int64_t stats_epoch_start_ STOKER_GUARDED_BY(stats_mu_) = 0;
  int64_t stats_epoch_batches_ STOKER_GUARDED_BY(stats_mu_) = 0;
  SampleDigest stats_epoch_digest_ STOKER_GUARDED_BY(stats_mu_);

  // Last: its tasks use the members above (and ~Impl resets it first).
  std::unique_ptr<TaskPool> workers_;
};

Loader::Loader(std::shared_ptr<const Dataset> dataset, const LoaderConfig& config)
    : impl_(std::make_unique<Impl>(std::move(dataset), config)) {}
Loader::~Loader() {
  // In a fork() child the workers are the parent's threads and a mutex may be held by one of
  // them for good: the Impl is left as it is (its memory goes with the child).
  if (!impl_) return;
  if (impl_->forked()) {
    (void)impl_.release();
    return;
  }
  // A worker stuck in a read (a hung mount, a stalled server) would hold the destructor for
  // ever: after close_timeout_seconds its threads are abandoned with the Impl they use, never
  // joined, and the warning says so.
  const double timeout = impl_->config().close_timeout_seconds;
  const int stuck = impl_->settle(timeout);
  if (stuck > 0) {
    log(LogLevel::kWarning,
        "closing the loader: {} batch(es) still had samples being read after {:.1f} s (a read "
        "stuck in storage?); their worker threads are abandoned, not joined",
        stuck, timeout);
    (void)impl_.release();
  }
}
void Loader::set_epoch(int64_t epoch) { impl_->set_epoch(epoch); }
std::shared_ptr<const Batch> Loader::next() { return impl_->next(); }
bool Loader::wait_ready(double seconds) { return impl_->wait_ready(seconds); }
int64_t Loader::num_batches() const { return impl_->num_batches(); }
int64_t Loader::size() const { return impl_->size(); }
int Loader::rank() const { return impl_->rank().rank; }
int Loader::world_size() const { return impl_->rank().world_size; }
const LoaderConfig& Loader::config() const { return impl_->config(); }
const Dataset& Loader::dataset() const { return impl_->dataset(); }
ResumeState Loader::state() const { return impl_->state(); }
void Loader::load_state(const ResumeState& state) { impl_->load_state(state); }
LoaderStats Loader::stats() const { return impl_->stats(); }

}  // namespace stoker
