#include "stoker/loader.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "pipeline/batch_pool.h"
#include "pipeline/staging.h"
#include "stoker/clock.h"
#include "stoker/env.h"
#include "stoker/error.h"
#include "stoker/log.h"
#include "stoker/rng.h"

namespace stoker {
namespace {

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

// One batch being assembled by the workers.
struct InFlight {
  std::unique_ptr<Batch> batch;
  int taken = 0;     // slots handed to workers
  int finished = 0;  // slots done (successfully, skipped or failed)
  // The failure of the lowest failing slot, so the error reported does not depend on timing.
  int error_slot = -1;
  std::exception_ptr error;
  std::unique_ptr<Staging> staging;  // AugmentMode::kDeferred only
  // The planned valid samples (before the skip policy clears any): the audit checks sharding,
  // which a skipped bad file does not change.
  SampleDigest planned;
};

class Loader::Impl {
 public:
  Impl(std::shared_ptr<const Dataset> dataset, const LoaderConfig& config)
      : dataset_(std::move(dataset)), config_(config) {
    STOKER_CHECK_ARG(dataset_ != nullptr, "Loader: no dataset");
    STOKER_CHECK_ARG(config_.batch_size >= 1, "batch size must be >= 1 (got {})",
                     config_.batch_size);
    STOKER_CHECK_ARG(config_.threads >= 0, "threads must be >= 0 (got {})", config_.threads);
    STOKER_CHECK_ARG(config_.prefetch >= 0, "prefetch must be >= 0 (got {})", config_.prefetch);
    STOKER_CHECK_ARG(dataset_->size() >= 1, "{}: the dataset is empty", dataset_->describe());
    config_.transform.validate();
    if (config_.rank.has_value() != config_.world_size.has_value()) {
      STOKER_THROW_ARG("give both rank and world size, or neither");
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
    sample_bytes_ = config_.augment == AugmentMode::kDeferred ? staging_bytes_per_sample(config_)
                                                              : config_.transform.sample_bytes();
    pool_ = std::make_shared<BatchPool>(config_.batch_size, sample_bytes_, config_.memory);
    workers_.reserve(static_cast<size_t>(threads_));
    for (int t = 0; t < threads_; ++t) workers_.emplace_back([this] { worker_loop(); });
  }

  ~Impl() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    work_cv_.notify_all();
    for (auto& worker : workers_) worker.join();
    for (auto& flight : in_flight_) pool_->release(std::move(flight.batch));
  }

  // The consumer-side calls serialise on consumer_mu_: the contract is one consumer thread,
  // but Python may call from several (the GIL is released while they wait), and a set_epoch
  // racing a next() must wait, not pull the batch from under it.
  void set_epoch(int64_t epoch) {
    std::lock_guard consumer(consumer_mu_);
    set_epoch_unlocked(epoch);
  }

  std::shared_ptr<const Batch> next() {
    std::lock_guard consumer(consumer_mu_);
    return next_unlocked();
  }

  int64_t num_batches() const {
    std::lock_guard consumer(consumer_mu_);
    if (plan_) return plan_->num_batches();
    return EpochPlan::count_batches(sampler_, pending_ ? pending_->consumed : 0);
  }

  ResumeState state() const {
    std::lock_guard consumer(consumer_mu_);
    if (pending_) return *pending_;
    ResumeState s;
    s.fingerprint = dataset_->fingerprint();
    s.dataset_size = dataset_->size();
    s.mode = config_.mode;
    s.shuffle = config_.shuffle;
    s.seed = config_.seed;
    s.epoch = plan_ ? plan_->epoch() : 0;
    // Only batches handed to the consumer count: after a failed batch, the samples from it on
    // are still to be delivered by a resumed job.
    s.consumed = plan_ ? plan_->consumed_after(delivered_) : 0;
    return s;
  }

  int64_t size() const { return EpochPlan::count_batches(sampler_, 0); }

  void load_state(const ResumeState& s) {
    std::lock_guard consumer(consumer_mu_);
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
    drain();
    plan_.reset();
    delivered_ = 0;
    pending_ = s;
  }

  LoaderStats stats() const {
    std::lock_guard lock(mu_);
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
  void set_epoch_unlocked(int64_t epoch) {
    STOKER_CHECK_ARG(epoch >= 0, "epoch must be >= 0 (got {})", epoch);
    // DESIGN.md: set_epoch for the epoch a resume state was loaded for keeps its offset (until
    // a batch of it is delivered); any other call starts the epoch from its beginning.
    if (pending_ && pending_->epoch != epoch) pending_.reset();
    const int64_t consumed = pending_ ? pending_->consumed : 0;
    start(epoch, consumed);
  }

  std::shared_ptr<const Batch> next_unlocked() {
    if (!plan_) set_epoch_unlocked(pending_ ? pending_->epoch : 0);
    // After a failure the epoch is over for this loader; set_epoch starts afresh.
    if (failed_ || delivered_ >= plan_->num_batches()) return nullptr;
    std::unique_ptr<Batch> batch;
    std::unique_ptr<Staging> staging;
    std::exception_ptr error;
    SampleDigest planned;
    {
      std::unique_lock lock(mu_);
      InFlight& front = in_flight_.front();
      int ready = 0;
      for (const auto& flight : in_flight_) {
        if (flight.finished < flight.batch->batch_size) break;
        ++ready;
      }
      queue_ready_sum_ += static_cast<double>(ready) / prefetch_;
      ++queue_checks_;
      if (front.finished < front.batch->batch_size) {
        const auto wait_start = SteadyClock::now();
        done_cv_.wait(lock, [&] { return front.finished == front.batch->batch_size; });
        wait_seconds_ += seconds_since(wait_start);
      }
      batch = std::move(front.batch);
      error = front.error;
      planned = front.planned;
      staging = std::move(front.staging);
      in_flight_.pop_front();
    }
    if (staging && !error) staging->finish(*pool_);
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
      std::lock_guard lock(mu_);
      ++stats_batches_;
      stats_images_ += valid;
      stats_skipped_ += batch->skipped;
      ++stats_epoch_batches_;
      stats_epoch_digest_ += planned;
    }
    return pool_->deliver(std::move(batch));
  }

  // Ends the epoch after an error: workers stop taking its samples.
  void fail() {
    failed_ = true;
    std::lock_guard lock(mu_);
    paused_ = true;
  }

  // Waits for the workers to put down every sample they took, then drops the batches in
  // flight. Called by the consumer thread only.
  void drain() {
    std::unique_lock lock(mu_);
    paused_ = true;
    idle_cv_.wait(lock, [&] { return active_ == 0; });
    for (auto& flight : in_flight_) pool_->release(std::move(flight.batch));
    in_flight_.clear();
  }

  void start(int64_t epoch, int64_t consumed) {
    drain();
    plan_.emplace(sampler_, epoch, consumed);
    delivered_ = 0;
    failed_ = false;
    try {
      const int64_t first = std::min<int64_t>(prefetch_, plan_->num_batches());
      for (int64_t j = 0; j < first; ++j) schedule(j);
    } catch (...) {
      // No half-started epoch: the next call starts it again.
      drain();
      plan_.reset();
      throw;
    }
    {
      std::lock_guard lock(mu_);
      if (!started_) {
        started_ = true;
        start_time_ = SteadyClock::now();
        start_process_cpu_ = process_cpu_seconds();
      }
      stats_epoch_ = epoch;
      stats_epoch_start_ = consumed;
      stats_epoch_batches_ = 0;
      stats_epoch_digest_ = {};
      paused_ = false;
    }
    work_cv_.notify_all();
  }

  // Sets up batch j (indices, labels, mask) and queues its samples for the workers.
  void schedule(int64_t j) {
    if (j >= plan_->num_batches()) return;
    const double cpu_start = thread_cpu_seconds();
    std::unique_ptr<Batch> batch = pool_->acquire();
    batch->epoch = plan_->epoch();
    batch->index = j;
    batch->output = config_.transform.output;
    batch->channels = config_.transform.channels;
    batch->height = batch->width = config_.transform.size;
    batch->skipped = 0;
    batch->global_valid = plan_->batch(j, batch->indices, batch->valid);
    SampleDigest planned;
    for (size_t i = 0; i < batch->valid.size(); ++i) {
      if (batch->valid[i]) planned.add(batch->indices[i]);
    }
    // A label is data too (a packed shard's index may hold a bad one): the bad-sample policy
    // applies to it as to the pixels.
    std::exception_ptr label_error;
    int label_error_slot = -1;
    for (size_t i = 0; i < batch->indices.size(); ++i) {
      try {
        batch->labels[i] = dataset_->label(batch->indices[i]);
      } catch (const Error& e) {
        batch->labels[i] = -1;
        if (config_.bad_samples == BadSamplePolicy::kError || e.kind() != ErrorKind::kBadData) {
          if (!label_error) {
            label_error = std::current_exception();
            label_error_slot = static_cast<int>(i);
          }
        } else if (batch->valid[i]) {
          batch->valid[i] = 0;
          ++batch->skipped;
          log(LogLevel::kWarning, "skipping bad sample {}: {}", batch->indices[i], e.message());
        }
      }
    }
    const double collate = thread_cpu_seconds() - cpu_start;
    {
      std::lock_guard lock(mu_);
      cpu_.collate += collate;
      in_flight_.emplace_back();
      in_flight_.back().batch = std::move(batch);
      in_flight_.back().error = label_error;
      in_flight_.back().error_slot = label_error_slot;
      in_flight_.back().planned = planned;
      if (config_.augment == AugmentMode::kDeferred) {
        in_flight_.back().staging = std::make_unique<Staging>(*in_flight_.back().batch);
      }
    }
    work_cv_.notify_all();
  }

  void worker_loop() {
    std::vector<uint8_t> bytes;
    TransformScratch scratch;
    std::unique_lock lock(mu_);
    while (true) {
      InFlight* flight = nullptr;
      work_cv_.wait(lock, [&] { return stopping_ || (!paused_ && (flight = find_work())); });
      if (stopping_) return;
      const int slot = flight->taken++;
      ++active_;
      Batch* batch = flight->batch.get();
      Staging* staging = flight->staging.get();
      lock.unlock();

      StageSeconds cpu;
      double read_wall = 0;
      std::exception_ptr error;
      bool skipped = false;
      const auto busy_start = SteadyClock::now();
      run_sample(*batch, staging, slot, bytes, scratch, cpu, read_wall, error, skipped);
      const double busy = seconds_since(busy_start);

      lock.lock();
      busy_seconds_ += busy;
      read_wall_seconds_ += read_wall;
      cpu_.read += cpu.read;
      cpu_.decode += cpu.decode;
      cpu_.augment += cpu.augment;
      if (skipped) ++batch->skipped;
      if (error && (flight->error_slot < 0 || slot < flight->error_slot)) {
        flight->error_slot = slot;
        flight->error = error;
      }
      ++flight->finished;
      --active_;
      if (flight->finished == batch->batch_size) done_cv_.notify_one();
      if (active_ == 0) idle_cv_.notify_all();
    }
  }

  // The earliest batch with a slot left to take; in-order delivery wants the front first.
  // Called with mu_ held; deque elements stay put while only the consumer pushes/pops under mu_.
  InFlight* find_work() {
    for (auto& flight : in_flight_) {
      if (flight.batch && flight.taken < flight.batch->batch_size) return &flight;
    }
    return nullptr;
  }

  // staging: where the sample goes in AugmentMode::kDeferred (nullptr in kCpu).
  void run_sample(Batch& batch, Staging* staging, int slot, std::vector<uint8_t>& bytes,
                  TransformScratch& scratch, StageSeconds& cpu, double& read_wall,
                  std::exception_ptr& error, bool& skipped) {
    const int64_t index = batch.indices[static_cast<size_t>(slot)];
    uint8_t* out = staging != nullptr
                       ? nullptr
                       : batch.storage.get() + static_cast<size_t>(slot) * sample_bytes_;
    try {
      const double t0 = thread_cpu_seconds();
      const auto read_start = SteadyClock::now();
      read_with_retries(*dataset_, index, bytes);  // an I/O error is tried again, then fatal
      read_wall += seconds_since(read_start);
      cpu.read += thread_cpu_seconds() - t0;
      Rng rng(stream_key(config_.seed, static_cast<uint64_t>(batch.epoch),
                         static_cast<uint64_t>(index)));
      TransformTimings timings;
      if (staging != nullptr) {
        stage_sample_into(*staging, slot, bytes, dataset_->name(index), rng, scratch, timings);
      } else {
        transform_sample(out, bytes, dataset_->name(index), config_.transform, rng, scratch,
                         &timings);
      }
      cpu.decode += timings.decode_seconds;
      cpu.augment += timings.augment_seconds;
    } catch (const Error& e) {
      // A bad sample: the policy decides whether it ends the epoch or is skipped. Any other
      // kind (the storage failed, a broken invariant) ends it whatever the policy: a dead
      // mount must not look like a corrupt image.
      if (config_.bad_samples == BadSamplePolicy::kSkip && e.kind() == ErrorKind::kBadData) {
        // A padding slot repeating a bad sample is already invalid: it is not counted twice.
        if (staging != nullptr) {
          staging->blank(slot);
        } else {
          std::memset(out, 0, sample_bytes_);
        }
        auto& valid = batch.valid[static_cast<size_t>(slot)];
        if (valid) {
          valid = 0;
          skipped = true;
          log(LogLevel::kWarning, "skipping bad sample {}: {}", index, e.message());
        }
      } else {
        error = std::current_exception();
      }
    } catch (...) {
      error = std::current_exception();
    }
  }

  // AugmentMode::kDeferred: decode into scratch, then copy into the batch's staging area (the
  // copy counts as augment time: it is all the CPU does of the augmentation).
  void stage_sample_into(Staging& staging, int slot, std::span<const uint8_t> bytes,
                         const std::string& name, Rng& rng, TransformScratch& scratch,
                         TransformTimings& timings) {
    const StagedSample sample =
        stage_sample(bytes, name, config_.transform, rng, scratch, &timings);
    const double t0 = thread_cpu_seconds();
    staging.put(slot, scratch.region, sample);
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
  size_t sample_bytes_ = 0;
  std::shared_ptr<BatchPool> pool_;

  // Consumer-side state, guarded by consumer_mu_.
  mutable std::mutex consumer_mu_;
  bool failed_ = false;
  std::optional<EpochPlan> plan_;
  std::optional<ResumeState> pending_;
  int64_t delivered_ = 0;
  bool started_ = false;
  SteadyClock::time_point start_time_;
  double start_process_cpu_ = 0;
  int cpus_ = 1;

  // Shared with workers, guarded by mu_.
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // workers: work queued or stopping
  std::condition_variable done_cv_;  // consumer: a batch finished
  std::condition_variable idle_cv_;  // consumer: no sample in progress
  std::deque<InFlight> in_flight_;
  int active_ = 0;
  bool paused_ = true;
  bool stopping_ = false;
  StageSeconds cpu_;
  double wait_seconds_ = 0;
  int64_t stats_batches_ = 0;
  int64_t stats_images_ = 0;
  int64_t stats_skipped_ = 0;
  double busy_seconds_ = 0;
  double read_wall_seconds_ = 0;
  double queue_ready_sum_ = 0;
  int64_t queue_checks_ = 0;
  int64_t stats_epoch_ = -1;
  int64_t stats_epoch_start_ = 0;
  int64_t stats_epoch_batches_ = 0;
  SampleDigest stats_epoch_digest_;

  std::vector<std::thread> workers_;
};

Loader::Loader(std::shared_ptr<const Dataset> dataset, const LoaderConfig& config)
    : impl_(std::make_unique<Impl>(std::move(dataset), config)) {}
Loader::~Loader() = default;
void Loader::set_epoch(int64_t epoch) { impl_->set_epoch(epoch); }
std::shared_ptr<const Batch> Loader::next() { return impl_->next(); }
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
