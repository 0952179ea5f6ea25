// The loader composes its stages (src/pipeline: setup, plan, read, sample, finish, stats) on
// one worker pool. This file holds only what joins them: the queue of batches in flight, in
// order, and what happens at each delivery and at each error.
#include "stoker/loader.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <exception>

#include "pipeline/batch_pool.h"
#include "pipeline/finish.h"
#include "pipeline/plan.h"
#include "pipeline/read.h"
#include "pipeline/sample.h"
#include "pipeline/setup.h"
#include "pipeline/staging.h"
#include "pipeline/stats.h"
#include "stoker/clock.h"
#include "stoker/error.h"
#include "stoker/log.h"
#include "util/check.h"
#include "util/logging.h"
#include "util/mutex.h"
#include "util/task_pool.h"

namespace stoker {
namespace {

using pipeline::BatchPool;
using pipeline::FinishStage;
using pipeline::LabelError;
using pipeline::LoaderSetup;
using pipeline::PairMix;
using pipeline::PlanStage;
using pipeline::ReadStage;
using pipeline::SampleStage;
using pipeline::SkipPolicy;
using pipeline::Staging;
using pipeline::StatsStage;
using util::Mutex;
using util::MutexLock;
using util::TaskPool;

using SteadyClock = std::chrono::steady_clock;

// One batch being assembled by the workers: a job of one task a slot.
struct InFlight {
  std::unique_ptr<Batch> batch;
  std::shared_ptr<TaskPool::Job> job;
  LabelError label_error;
  std::unique_ptr<Staging> staging;  // AugmentMode::kDeferred only
  // The planned valid samples (before the skip policy clears any): the audit checks sharding,
  // which a skipped bad file does not change.
  SampleDigest planned;
  std::unique_ptr<PairMix> mix;  // LoaderConfig::mix only
  // Per slot: skipped by the policy on a worker (written by that slot's task only).
  std::vector<uint8_t> skipped;
  pipeline::Repeats repeats;  // padding repeating a sample of the batch (kCpu only)
};

// The stages and the skip policy they share, built in dependency order from one setup.
struct Stages {
  Stages(const std::shared_ptr<const Dataset>& dataset, const LoaderSetup& setup)
      : skip(setup.config),
        plan(dataset, setup),
        read(dataset, setup),
        sample(dataset, setup, read, skip),
        finish(dataset, setup, skip),
        stats(setup) {}
  SkipPolicy skip;
  PlanStage plan;  // consumer only (under the loader's consumer lock)
  ReadStage read;
  SampleStage sample;
  FinishStage finish;
  StatsStage stats;
};

}  // namespace

BadSamplePolicy parse_bad_sample_policy(const std::string& name) {
  if (name == "error") return BadSamplePolicy::kError;
  if (name == "skip") return BadSamplePolicy::kSkip;
  STOKER_THROW_ARG("unknown bad-sample policy '{}' (expected error or skip)", name);
}

class Loader::Impl {
 public:
  Impl(std::shared_ptr<const Dataset> dataset, const LoaderConfig& config)
      : dataset_(checked(std::move(dataset))),
        setup_(pipeline::resolve_setup(*dataset_, config)),
        stages_(dataset_, setup_),
        pool_(std::make_shared<BatchPool>(setup_.config.batch_size, setup_.sample_bytes,
                                          setup_.config.memory)),
        workers_(std::make_unique<TaskPool>(setup_.threads)) {}

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
    start(epoch);
    plan().epoch_set(epoch);
  }

  uint64_t begin_pass() {
    check_process();
    MutexLock consumer(consumer_mu_);
    const PlanStage::Pass pass = plan().begin_pass();
    if (pass.start_epoch) start(*pass.start_epoch);
    return pass.id;
  }

  void check_pass(uint64_t id) {
    MutexLock consumer(consumer_mu_);
    STOKER_CHECK(plan().take(id),
                 "this iterator was superseded by a newer iter() or set_epoch(); only the "
                 "newest one is live");
  }

  int64_t pass_epoch() const {
    MutexLock consumer(consumer_mu_);
    return plan().pass_epoch();
  }

  std::shared_ptr<const Batch> next() {
    check_process();
    MutexLock consumer(consumer_mu_);
    return next_unlocked();
  }

  bool wait_ready(double seconds) {
    check_process();
    MutexLock consumer(consumer_mu_);
    if (!plan().started()) start(plan().implicit_epoch());
    if (plan().finished() || in_flight_.empty()) return true;
    return in_flight_.front().job->wait_for(seconds);
  }

  bool forked() const { return ::getpid() != setup_.owner_pid; }

  // Cancels the batches in flight and waits up to `seconds` in all for their running samples;
  // returns how many batches still have samples running.
  int settle(double seconds) {
    MutexLock consumer(consumer_mu_);
    for (auto& flight : in_flight_) flight.job->cancel();
    stages_.read.stop();  // a read waiting on a stalled server or between tries ends now
    const auto deadline = SteadyClock::now() + std::chrono::duration<double>(seconds);
    int stuck = 0;
    for (auto& flight : in_flight_) {
      const double left = std::chrono::duration<double>(deadline - SteadyClock::now()).count();
      if (!flight.job->wait_for(std::max(0.0, left))) ++stuck;
    }
    return stuck;
  }

  int64_t num_batches() const {
    MutexLock consumer(consumer_mu_);
    return plan().num_batches();
  }
  int64_t size() const {
    MutexLock consumer(consumer_mu_);
    return plan().size();
  }
  ResumeState state() const {
    MutexLock consumer(consumer_mu_);
    return plan().state();
  }

  void load_state(const ResumeState& s) {
    check_process();
    MutexLock consumer(consumer_mu_);
    plan().reset(s);
    drain();
  }

  void select_steps(int64_t first, int64_t stride) {
    MutexLock consumer(consumer_mu_);
    plan().select_steps(first, stride);
  }

  LoaderStats stats() const { return stages_.stats.snapshot(pool_->allocated()); }

  const Dataset& dataset() const { return *dataset_; }
  const LoaderConfig& config() const { return setup_.config; }
  const RankInfo& rank() const { return setup_.rank; }

 private:
  static std::shared_ptr<const Dataset> checked(std::shared_ptr<const Dataset> dataset) {
    STOKER_CHECK_ARG(dataset != nullptr, "Loader: no dataset");
    return dataset;
  }

  // The plan stage is the consumer's: every use is under consumer_mu_.
  PlanStage& plan() STOKER_REQUIRES(consumer_mu_) { return stages_.plan; }
  const PlanStage& plan() const STOKER_REQUIRES(consumer_mu_) { return stages_.plan; }

  // A loader copied into a fork() child (a DataLoader worker process, multiprocessing's
  // "fork") has none of its worker threads there: waiting for them would hang for ever.
  void check_process() const {
    STOKER_CHECK_ARG(!forked(),
                     "this loader was built in process {} and is used in process {}, a fork() of "
                     "it (a DataLoader worker, multiprocessing with \"fork\"), where its worker "
                     "threads do not exist: build the loader in the process that iterates it (it "
                     "needs no DataLoader workers: it has its own threads)",
                     setup_.owner_pid, ::getpid());
  }

  // Starts `epoch` (plan stage: from its beginning, or a loaded state's position), dropping
  // the batches in flight, and schedules the first prefetch batches.
  void start(int64_t epoch) STOKER_REQUIRES(consumer_mu_) {
    drain();
    const EpochPlan& started = plan().start(epoch);
    stages_.stats.reset(epoch, started.consumed_at_start());
    try {
      for (int j = 0; j < setup_.prefetch && schedule(); ++j) {
      }
    } catch (...) {
      // No half-started epoch: the next call starts it again.
      drain();
      plan().abandon();
      throw;
    }
  }

  std::shared_ptr<const Batch> next_unlocked() STOKER_REQUIRES(consumer_mu_) {
    if (!plan().started()) start(plan().implicit_epoch());
    // After a failure the epoch is over for this loader; set_epoch starts afresh.
    if (plan().finished()) return nullptr;
    InFlight& front = in_flight_.front();
    int ready = 0;
    for (const auto& flight : in_flight_) {
      if (!flight.job->done()) break;
      ++ready;
    }
    const auto wait_start = SteadyClock::now();
    int error_slot = -1;
    std::exception_ptr error = front.job->wait_error(&error_slot);
    const double waited =
        ready == 0 ? std::chrono::duration<double>(SteadyClock::now() - wait_start).count() : 0.0;
    if (front.label_error.error && (!error || front.label_error.slot < error_slot)) {
      error = front.label_error.error;
    }
    InFlight flight = std::move(front);
    in_flight_.pop_front();
    stages_.stats.add_wait(ready, waited);
    Batch& batch = *flight.batch;
    if (flight.staging && !error) flight.staging->finish(*pool_);
    if (!error) {
      try {
        stages_.finish.finish(batch, flight.mix.get());
        schedule();
      } catch (...) {
        error = std::current_exception();
      }
    }
    if (error) {
      pool_->release(std::move(flight.batch));
      fail();
      std::rethrow_exception(error);
    }
    for (const uint8_t s : flight.skipped) batch.skipped += s;
    plan().delivered();
    // A skipped sample leaves the step's global count; other ranks' skips are not known here
    // without a collective, so with several ranks global_valid stays the planned count.
    if (setup_.rank.world_size == 1) batch.global_valid -= batch.skipped;
    int64_t valid = 0;
    for (uint8_t v : batch.valid) valid += v;
    stages_.stats.next(valid, batch.skipped, flight.planned);
    return pool_->deliver(std::move(flight.batch));
  }

  // Ends the epoch after an error: the workers do not start its other samples.
  void fail() STOKER_REQUIRES(consumer_mu_) {
    plan().fail();
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
    stages_.read.reset();
  }

  // Sets up the plan's next batch (indices, labels, mask, mix draw) and hands its samples to
  // the workers; false when every batch of the epoch is scheduled.
  bool schedule() STOKER_REQUIRES(consumer_mu_) {
    if (plan().all_scheduled()) return false;
    const double cpu_start = thread_cpu_seconds();
    InFlight flight;
    flight.batch = pool_->acquire();
    Batch& batch = *flight.batch;
    plan().next(batch);
    const TransformConfig& transform = setup_.config.transform;
    batch.output = transform.output;
    batch.channels_last = transform.channels_last;
    batch.channels = transform.channels;
    batch.height = transform.output_height();
    batch.width = transform.output_width();
    batch.skipped = 0;
    batch.fields.resize(setup_.config.fields.size());
    for (auto& field : batch.fields) field.assign(static_cast<size_t>(batch.batch_size), {});
    stages_.read.next(plan().plan(), batch.index);
    for (size_t i = 0; i < batch.valid.size(); ++i) {
      if (batch.valid[i]) flight.planned.add(batch.indices[i]);
    }
    flight.label_error = stages_.finish.label(batch);
    if (setup_.config.augment == AugmentMode::kDeferred)
      flight.staging = std::make_unique<Staging>(batch);
    flight.mix = stages_.finish.draw(batch);
    flight.skipped.assign(static_cast<size_t>(batch.batch_size), 0);
    if (flight.staging == nullptr) flight.repeats = pipeline::find_repeats(batch);
    stages_.stats.add_setup(thread_cpu_seconds() - cpu_start);
    Staging* staging = flight.staging.get();
    PairMix* mix = flight.mix.get();
    uint8_t* skipped = flight.skipped.data();
    // The vectors' buffers, which outlive the move of `flight` into in_flight_.
    const int* repeat_of = flight.repeats.empty() ? nullptr : flight.repeats.of.data();
    const std::vector<int>* repeated_by = flight.repeats.by.data();
    flight.job = workers_->submit(batch.batch_size, [this, &batch, staging, mix, skipped, repeat_of,
                                                     repeated_by](int slot, int thread) {
      // A repeat is written by the slot it repeats (below), before either is mixed.
      if (repeat_of != nullptr && repeat_of[slot] >= 0) return;
      const pipeline::SampleOutcome outcome = stages_.sample.run(batch, staging, slot, thread);
      stages_.stats.add_sample(thread, outcome.cost);
      skipped[slot] = outcome.skipped ? 1 : 0;
      if (repeat_of != nullptr) {
        const size_t bytes = setup_.sample_bytes;
        const uint8_t* from = batch.storage.get() + static_cast<size_t>(slot) * bytes;
        for (const int r : repeated_by[slot]) {
          std::memcpy(batch.storage.get() + static_cast<size_t>(r) * bytes, from, bytes);
          for (auto& field : batch.fields) {
            field[static_cast<size_t>(r)] = field[static_cast<size_t>(slot)];
          }
          if (mix != nullptr) stages_.finish.slot_done(batch, *mix, r, outcome.blank);
        }
      }
      if (mix != nullptr) stages_.finish.slot_done(batch, *mix, slot, outcome.blank);
    });
    in_flight_.push_back(std::move(flight));
    return true;
  }

  const std::shared_ptr<const Dataset> dataset_;
  const LoaderSetup setup_;
  Stages stages_;
  const std::shared_ptr<BatchPool> pool_;
  mutable Mutex consumer_mu_;
  std::deque<InFlight> in_flight_ STOKER_GUARDED_BY(consumer_mu_);
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
uint64_t Loader::begin_pass() { return impl_->begin_pass(); }
void Loader::check_pass(uint64_t pass) { impl_->check_pass(pass); }
int64_t Loader::pass_epoch() const { return impl_->pass_epoch(); }
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
void Loader::select_steps(int64_t first, int64_t stride) { impl_->select_steps(first, stride); }
LoaderStats Loader::stats() const { return impl_->stats(); }

}  // namespace stoker
