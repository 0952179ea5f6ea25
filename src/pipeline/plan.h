// The loader's plan stage: which samples each batch of this rank holds (the sampler's
// EpochPlan), where the job stands (resume state), and which epoch each pass over the loader
// runs. Stage contract (torchdata.nodes'): reset(state) loads a resume state that takes effect
// at the next epoch start, next() hands out the next batch to schedule, state() says where the
// job stands after the batches delivered.
//
// The epoch of a pass (a Python iter(), DataLoader's semantics; the rule lives here, not in
// Python): each pass runs the next epoch (0, 1, 2, ...), unless set_epoch(e) was called since
// the last pass began: then it runs e (so calling it before every epoch, as with
// DistributedSampler, gives the same epochs). set_epoch(e) after a pass began but before its
// first batch applies to that pass (Lightning calls it in that order). After reset(state) the
// next pass continues the saved epoch. Only the newest pass is live.
//
// Thread-safety: none; the loader calls it under its consumer lock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "pipeline/setup.h"
#include "stoker/dataset.h"
#include "stoker/loader.h"
#include "stoker/sampler.h"

namespace stoker::pipeline {

class PlanStage {
 public:
  PlanStage(std::shared_ptr<const Dataset> dataset, const LoaderSetup& setup);

  // Loads a resume state (checked against the dataset and the configuration: a clear
  // ArgumentError otherwise). It takes effect at the next start of its epoch.
  void reset(const ResumeState& state);
  // Where the job stands after the batches delivered (the same on every rank).
  ResumeState state() const;

  // Plans epoch `epoch` from its beginning, or, when it is the epoch of a loaded state and no
  // batch has been delivered since, after the state's consumed samples.
  const EpochPlan& start(int64_t epoch);
  // The epoch an implicit start runs (a next() before any set_epoch): a loaded state's, or 0.
  int64_t implicit_epoch() const;
  bool started() const { return plan_.has_value(); }
  const EpochPlan& plan() const { return *plan_; }
  // Forgets the plan (a start that failed half-way): the next call starts again.
  void abandon() { plan_.reset(); }

  // From the next start on, only batches first, first + stride, ... of each plan are made,
  // each keeping its place in the plan as its index (Loader::select_steps).
  void select_steps(int64_t first, int64_t stride);

  // Whether every batch of the epoch (of the selected ones) has been handed out by next().
  bool all_scheduled() const { return step(scheduled_) >= plan_->num_batches(); }
  // The next batch of the epoch to schedule: fills its epoch, index, indices, valid mask and
  // global_valid, and cuts it to the slots it is delivered with (EpochPlan::slots: a short
  // batch keeps its first batch_size slots of images, labels, indices and mask). Requires
  // !all_scheduled() and a batch of the loader's full size.
  void next(Batch& batch);
  // The batch at the front was delivered.
  void delivered();
  // An error ended the epoch: nothing more is delivered until the next start.
  void fail() { failed_ = true; }
  // Nothing more to deliver: every batch delivered, or a failure.
  bool finished() const;

  int64_t num_batches() const;  // K of the current plan (or of the one the next start makes)
  int64_t size() const;         // batches per rank of a full epoch

  // Passes (above). begin_pass returns the pass's id, and the epoch to start when the pass
  // must start one (nullopt: the epoch already started or loaded is the pass's).
  struct Pass {
    uint64_t id = 0;
    std::optional<int64_t> start_epoch;
  };
  Pass begin_pass();
  // set_epoch(e) was called (after start(e)).
  void epoch_set(int64_t epoch);
  // A batch is asked of pass `id`: false when a newer pass (or set_epoch) superseded it.
  bool take(uint64_t id);
  // The epoch of the current (or last) pass, or the one set_epoch chose for the next.
  int64_t pass_epoch() const { return pass_epoch_; }

 private:
  int64_t default_window() const;
  // The place in the plan of the j-th batch this loader makes.
  int64_t step(int64_t j) const { return first_step_ + j * step_stride_; }
  // How many batches of the current plan this loader makes.
  int64_t selected_batches() const;

  std::shared_ptr<const Dataset> dataset_;
  const LoaderSetup& setup_;
  SamplerConfig sampler_;
  std::optional<EpochPlan> plan_;
  std::optional<ResumeState> pending_;  // a loaded state not yet reflected in plan_/delivered_
  int64_t scheduled_ = 0;               // batches of the plan handed out by next()
  int64_t delivered_ = 0;
  bool failed_ = false;
  // The selection (select_steps) the next start takes, and the current plan's.
  int64_t next_first_step_ = 0, next_step_stride_ = 1;
  int64_t first_step_ = 0, step_stride_ = 1;
  // Passes.
  int64_t pass_epoch_ = 0;
  bool pass_fresh_ = true;  // the next pass runs pass_epoch_ itself (else pass_epoch_ + 1)
  uint64_t pass_id_ = 0;    // the live pass
  std::optional<uint64_t> unstarted_pass_;  // a pass begun whose first batch is not yet asked
};

}  // namespace stoker::pipeline
