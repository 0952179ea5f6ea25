// The library's one worker pool (private): a fixed set of threads that run jobs, each job a
// numbered set of tasks. The loader runs a batch as a job (one task a sample) and the packer one
// record per job; both take results in order by waiting on the job at the front.
//
// Contract:
// - submit(count, fn) queues tasks fn(0, thread) ... fn(count - 1, thread); tasks start in
//   submission order (all of a job's tasks start before the next job's first), each on whichever
//   thread is free; `thread` in [0, threads()) names that thread, for per-thread scratch.
// - An exception a task throws never leaves its thread: the job keeps it, the one of the lowest
//   task index (so which error is reported does not depend on timing), and wait() rethrows it
//   to the waiter (as DALI's thread pool does).
// - cancel() drops the tasks not started yet; wait() then returns once the started ones finish.
// - The destructor cancels every job and joins the threads after their running tasks finish.
// Thread-safety: every member may be called from any thread. A task may not submit to or wait
// on its own pool. A job's members may be called only while its pool lives.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "util/mutex.h"

namespace stoker::util {

class TaskPool {
 public:
  using Task = std::function<void(int index, int thread)>;
  class Job;

  // Starts `threads` (>= 1) threads. Throws an invalid-argument Error when the system refuses
  // one (a thread limit, no memory for its stack), after joining those already started.
  explicit TaskPool(int threads);
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  int threads() const { return static_cast<int>(threads_.size()); }

  std::shared_ptr<Job> submit(int count, Task task) STOKER_EXCLUDES(mu_);

 private:
  // A job with tasks not started yet.
  struct Pending {
    std::shared_ptr<Job> job;
    int started = 0;
  };

  void run(int thread) STOKER_EXCLUDES(mu_);
  void cancel(const Job& job) STOKER_EXCLUDES(mu_);
  // Drops the front entry's tasks not started; returns how many.
  int drop_locked(std::deque<Pending>::iterator entry) STOKER_REQUIRES(mu_);

  Mutex mu_;
  CondVar work_cv_;  // workers: a task queued, or stopping
  std::deque<Pending> queue_ STOKER_GUARDED_BY(mu_);
  bool stopping_ STOKER_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

class TaskPool::Job {
 public:
  // True once every task ran or was cancelled.
  bool done() const STOKER_EXCLUDES(mu_);
  // Blocks until done() or for `seconds`, whichever comes first; returns done().
  bool wait_for(double seconds) STOKER_EXCLUDES(mu_);
  // Blocks until done(), then rethrows the lowest-index task's exception, if any.
  void wait() STOKER_EXCLUDES(mu_);
  // Blocks until done(); returns the lowest-index task's exception (null when none) and its
  // index (-1 when none) instead of throwing.
  // The exception is handed over to the first waiter (a later wait returns null, the same
  // index): the job, which a worker thread may be the last to let go of, never destroys an
  // exception the waiter's thread has seen, so it dies on the thread that handled it.
  std::exception_ptr wait_error(int* index = nullptr) STOKER_EXCLUDES(mu_);
  // Tasks not started yet will not run.
  void cancel() STOKER_EXCLUDES(mu_);

 private:
  friend class TaskPool;
  Job(TaskPool* pool, int count, Task task) : pool_(pool), task_(std::move(task)), count_(count) {}
  // `n` tasks finished (ran, or dropped by a cancel); `error` from task `index`, or null.
  void finish(int n, int index, std::exception_ptr error) STOKER_EXCLUDES(mu_);

  TaskPool* const pool_;
  const Task task_;
  const int count_;
  mutable Mutex mu_;  // never held together with the pool's
  CondVar done_cv_;
  int finished_ STOKER_GUARDED_BY(mu_) = 0;
  int error_index_ STOKER_GUARDED_BY(mu_) = -1;
  std::exception_ptr error_ STOKER_GUARDED_BY(mu_);
};

}  // namespace stoker::util
