#include "util/task_pool.h"

#include <chrono>
#include <system_error>
#include <utility>

#include "stoker/error.h"
#include "util/check.h"

namespace stoker::util {

TaskPool::TaskPool(int threads) {
  STOKER_CHECK_ARG(threads >= 1, "a task pool needs at least one thread (got {})", threads);
  threads_.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    try {
      threads_.emplace_back([this, t] { run(t); });
    } catch (const std::system_error& e) {
      // An exception out of a constructor skips the destructor: stop what was started here.
      {
        MutexLock lock(mu_);
        stopping_ = true;
      }
      work_cv_.notify_all();
      for (std::thread& started : threads_) started.join();
      STOKER_THROW_ARG("could not start thread {} of {} ({}): ask for fewer threads", t + 1,
                       threads, e.what());
    }
  }
}

TaskPool::~TaskPool() {
  std::vector<std::pair<std::shared_ptr<Job>, int>> dropped;
  {
    MutexLock lock(mu_);
    stopping_ = true;
    while (!queue_.empty()) {
      std::shared_ptr<Job> job = queue_.front().job;
      dropped.emplace_back(job, drop_locked(queue_.begin()));
    }
  }
  work_cv_.notify_all();
  for (auto& [job, n] : dropped) job->finish(n, -1, nullptr);
  for (std::thread& t : threads_) t.join();
}

std::shared_ptr<TaskPool::Job> TaskPool::submit(int count, Task task) {
  STOKER_CHECK(count >= 0, "TaskPool::submit: {} tasks", count);
  std::shared_ptr<Job> job(new Job(this, count, std::move(task)));
  if (count == 0) return job;
  {
    MutexLock lock(mu_);
    STOKER_CHECK(!stopping_, "TaskPool::submit on a pool being destroyed");
    queue_.push_back(Pending{job, 0});
  }
  if (count == 1) {
    work_cv_.notify_one();
  } else {
    work_cv_.notify_all();
  }
  return job;
}

void TaskPool::run(int thread) {
  for (;;) {
    std::shared_ptr<Job> job;  // held while its task runs: the queue lets go after the last start
    int index = 0;
    {
      MutexLock lock(mu_);
      while (!stopping_ && queue_.empty()) work_cv_.wait(mu_);
      if (stopping_) return;
      Pending& front = queue_.front();
      job = front.job;
      index = front.started++;
      if (front.started == job->count_) queue_.pop_front();
    }
    std::exception_ptr error;
    try {
      job->task_(index, thread);
    } catch (...) {
      error = std::current_exception();
    }
    job->finish(1, index, std::move(error));
  }
}

int TaskPool::drop_locked(std::deque<Pending>::iterator entry) {
  const int n = entry->job->count_ - entry->started;
  queue_.erase(entry);
  return n;
}

void TaskPool::cancel(const Job& job) {
  std::shared_ptr<Job> found;
  int n = 0;
  {
    MutexLock lock(mu_);
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (it->job.get() == &job) {
        found = it->job;
        n = drop_locked(it);
        break;
      }
    }
  }
  if (found) found->finish(n, -1, nullptr);
}

void TaskPool::Job::finish(int n, int index, std::exception_ptr error) {
  MutexLock lock(mu_);
  if (error && (error_index_ < 0 || index < error_index_)) {
    error_index_ = index;
    error_ = std::move(error);
  }
  finished_ += n;
  if (finished_ == count_) done_cv_.notify_all();
}

bool TaskPool::Job::done() const {
  MutexLock lock(mu_);
  return finished_ == count_;
}

bool TaskPool::Job::wait_for(double seconds) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, seconds));
  MutexLock lock(mu_);
  while (finished_ < count_) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return false;
    done_cv_.wait_for(mu_, left);
  }
  return true;
}

void TaskPool::Job::wait() {
  std::exception_ptr error = wait_error();
  if (error) std::rethrow_exception(error);
}

std::exception_ptr TaskPool::Job::wait_error(int* index) {
  MutexLock lock(mu_);
  while (finished_ < count_) done_cv_.wait(mu_);
  if (index != nullptr) *index = error_index_;
  return std::exchange(error_, nullptr);
}

void TaskPool::Job::cancel() { pool_->cancel(*this); }

}  // namespace stoker::util
