#include "pipeline/plan.h"

#include <algorithm>
#include <vector>

#include "stoker/error.h"
#include "util/check.h"

namespace stoker::pipeline {

PlanStage::PlanStage(std::shared_ptr<const Dataset> dataset, const LoaderSetup& setup)
    : dataset_(std::move(dataset)), setup_(setup), sampler_(setup.sampler) {}

int64_t PlanStage::default_window() const {
  return int64_t{setup_.window_batches} * setup_.config.batch_size * setup_.rank.world_size;
}

void PlanStage::reset(const ResumeState& s) {
  const LoaderConfig& config = setup_.config;
  const std::string fingerprint = dataset_->fingerprint();
  STOKER_CHECK_ARG(s.fingerprint == fingerprint,
                   "resume state is for another dataset (fingerprint {} here, {} in the state)",
                   fingerprint, s.fingerprint);
  STOKER_CHECK_ARG(s.dataset_size == dataset_->size(),
                   "resume state is for {} samples, the dataset has {}", s.dataset_size,
                   dataset_->size());
  STOKER_CHECK_ARG(s.mode == config.mode, "resume state has mode {}, the loader {}",
                   to_string(s.mode), to_string(config.mode));
  STOKER_CHECK_ARG(s.shuffle == config.shuffle, "resume state has shuffle={}, the loader {}",
                   s.shuffle, config.shuffle);
  STOKER_CHECK_ARG(s.seed == config.seed, "resume state has seed {}, the loader {}", s.seed,
                   config.seed);
  STOKER_CHECK_ARG(s.epoch >= 0 && s.consumed >= 0 && s.consumed <= s.dataset_size,
                   "resume state out of range (epoch {}, consumed {})", s.epoch, s.consumed);
  STOKER_CHECK_ARG(
      s.shard_window == 0 || !s.shuffle || sampler_.shard_ends || !dataset_->shard_ends().empty(),
      "resume state shuffles in shard windows, but {} is not stored in shards",
      dataset_->describe());
  if (s.shard_window > 0 && !sampler_.shard_ends) {
    sampler_.shard_ends = std::make_shared<std::vector<int64_t>>(dataset_->shard_ends());
  }
  plan_.reset();
  scheduled_ = 0;
  delivered_ = 0;
  pending_ = s;
  // A state keeps meaning the order it was taken in: a job resumed from a version 1 state
  // goes on with that permutation (and saves it so).
  sampler_.permutation = s.permutation;
  // The next pass continues the saved epoch.
  pass_epoch_ = s.epoch;
  pass_fresh_ = true;
  ++pass_id_;
}

ResumeState PlanStage::state() const {
  if (pending_) return *pending_;
  const LoaderConfig& config = setup_.config;
  ResumeState s;
  s.fingerprint = dataset_->fingerprint();
  s.dataset_size = dataset_->size();
  s.mode = config.mode;
  s.shuffle = config.shuffle;
  s.seed = config.seed;
  s.permutation = sampler_.permutation;
  s.epoch = plan_ ? plan_->epoch() : 0;
  s.shard_window = plan_ ? plan_->config().shard_window : default_window();
  s.shard_lanes = plan_ ? plan_->config().shard_lanes : setup_.rank.world_size;
  // Only batches handed to the consumer count: after a failed batch, the samples from it on
  // are still to be delivered by a resumed job.
  s.consumed = plan_ ? plan_->consumed_after(std::min(step(delivered_), plan_->num_batches())) : 0;
  return s;
}

const EpochPlan& PlanStage::start(int64_t epoch) {
  STOKER_CHECK_ARG(epoch >= 0, "epoch must be >= 0 (got {})", epoch);
  // set_epoch for the epoch a resume state was loaded for keeps its offset (until a batch of
  // it is delivered); any other start begins the epoch from its beginning.
  if (pending_ && pending_->epoch != epoch) pending_.reset();
  const int64_t consumed = pending_ ? pending_->consumed : 0;
  // A resumed epoch keeps the shard windows it was taken with; a new one gets this world's.
  sampler_.shard_window = pending_ ? pending_->shard_window : default_window();
  sampler_.shard_lanes =
      pending_ && pending_->shard_window > 0 ? pending_->shard_lanes : setup_.rank.world_size;
  plan_.emplace(sampler_, epoch, consumed);
  first_step_ = next_first_step_;
  step_stride_ = next_step_stride_;
  scheduled_ = 0;
  delivered_ = 0;
  failed_ = false;
  return *plan_;
}

int64_t PlanStage::implicit_epoch() const { return pending_ ? pending_->epoch : 0; }

void PlanStage::select_steps(int64_t first, int64_t stride) {
  STOKER_CHECK_ARG(first >= 0 && stride >= 1,
                   "select_steps: first must be >= 0 and stride >= 1 (got {}, {})", first, stride);
  next_first_step_ = first;
  next_step_stride_ = stride;
}

int64_t PlanStage::selected_batches() const {
  const int64_t k = plan_->num_batches();
  return k <= first_step_ ? 0 : (k - first_step_ + step_stride_ - 1) / step_stride_;
}

void PlanStage::next(Batch& batch) {
  const int64_t j = step(scheduled_);
  batch.epoch = plan_->epoch();
  batch.index = j;
  batch.global_valid = plan_->batch(j, batch.indices, batch.valid);
  // Short, pad and even modes deliver a batch with its valid slots only (its first ones).
  const int slots = plan_->slots(j);
  if (slots < batch.batch_size) {
    batch.batch_size = slots;
    batch.indices.resize(static_cast<size_t>(slots));
    batch.valid.resize(static_cast<size_t>(slots));
    batch.labels.resize(static_cast<size_t>(slots));
    if (setup_.config.augment == AugmentMode::kCpu) {
      batch.images = batch.images.first(static_cast<size_t>(slots) * setup_.sample_bytes);
    }
  }
  ++scheduled_;
}

void PlanStage::delivered() {
  ++delivered_;
  pending_.reset();  // the resume state is now reflected in plan_ and delivered_
}

bool PlanStage::finished() const { return failed_ || delivered_ >= selected_batches(); }

int64_t PlanStage::num_batches() const {
  if (plan_) return plan_->num_batches();
  return EpochPlan::count_batches(sampler_, pending_ ? pending_->consumed : 0);
}

int64_t PlanStage::size() const { return EpochPlan::count_batches(sampler_, 0); }

PlanStage::Pass PlanStage::begin_pass() {
  Pass pass;
  // No set_epoch since the last pass: the next epoch, never a silent repeat.
  if (!pass_fresh_) pass.start_epoch = ++pass_epoch_;
  pass_fresh_ = false;
  pass.id = ++pass_id_;
  unstarted_pass_ = pass.id;
  return pass;
}

void PlanStage::epoch_set(int64_t epoch) {
  pass_epoch_ = epoch;
  if (unstarted_pass_ == pass_id_) {
    // The newest pass has not taken a batch yet: it runs this epoch (as a DataLoader iterator
    // whose sampler's set_epoch came after iter()).
    pass_fresh_ = false;
  } else {
    pass_fresh_ = true;
    ++pass_id_;
  }
}

bool PlanStage::take(uint64_t id) {
  if (unstarted_pass_ == id) unstarted_pass_.reset();  // from here set_epoch starts a new pass
  return id == pass_id_;
}

}  // namespace stoker::pipeline
