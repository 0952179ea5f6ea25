#include "pipeline/read.h"

#include <algorithm>
#include <chrono>

#include "stoker/clock.h"
#include "util/stop.h"

namespace stoker::pipeline {

ReadStage::ReadStage(std::shared_ptr<const Dataset> dataset, const LoaderSetup& setup)
    : dataset_(std::move(dataset)),
      setup_(setup),
      hint_indices_(static_cast<size_t>(setup.config.batch_size)),
      hint_valid_(static_cast<size_t>(setup.config.batch_size)) {}

namespace {

// The CPU and wall time of read(), under the stage's stop.
template <typename Read>
ReadCost timed(const Cancellation& stop, Read&& read) {
  const double cpu_start = thread_cpu_seconds();
  const auto wall_start = std::chrono::steady_clock::now();
  const util::StopScope stoppable(&stop, 0, "");
  read();
  ReadCost cost;
  cost.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  cost.cpu_seconds = thread_cpu_seconds() - cpu_start;
  return cost;
}

}  // namespace

ReadCost ReadStage::read(int64_t index, std::vector<uint8_t>& out) const {
  return timed(stop_,
               [&] { read_with_retries(*dataset_, index, out, setup_.config.read_retries); });
}

ReadCost ReadStage::read_field(int64_t index, const std::string& field, std::string& out) const {
  return timed(stop_, [&] {
    read_field_with_retries(*dataset_, index, field, out, setup_.config.read_retries);
  });
}

void ReadStage::next(const EpochPlan& plan, int64_t j) {
  const int64_t until =
      std::min<int64_t>(j + std::max(2, 2 * setup_.window_batches), plan.num_batches());
  for (int64_t b = std::max(j, hinted_until_); b < until; ++b) {
    plan.batch(b, hint_indices_, hint_valid_);
    dataset_->read_ahead(hint_indices_);
  }
  hinted_until_ = std::max(hinted_until_, until);
}

void ReadStage::stop() { stop_.cancel("stopped: the loader is closing"); }

void ReadStage::reset() {
  dataset_->cancel_read_ahead();
  hinted_until_ = 0;
}

}  // namespace stoker::pipeline
