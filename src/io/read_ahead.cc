#include "io/read_ahead.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <system_error>
#include <utility>

#include "io/remote.h"
#include "stoker/error.h"
#include "stoker/log.h"
#include "util/check.h"
#include "util/logging.h"
#include "util/stop.h"

namespace stoker::io {

std::vector<std::vector<int64_t>> group_into_runs(std::vector<int64_t> indices,
                                                  const std::function<StoredRange(int64_t)>& where,
                                                  uint64_t max_gap, uint64_t max_bytes) {
  std::unordered_map<int64_t, size_t> first_hint;
  std::unordered_map<int64_t, StoredRange> at;
  for (size_t k = 0; k < indices.size(); ++k) {
    first_hint.emplace(indices[k], k);
    at.emplace(indices[k], where(indices[k]));
  }
  std::sort(indices.begin(), indices.end(), [&](int64_t a, int64_t b) {
    const StoredRange &x = at[a], &y = at[b];
    return std::pair(x.object, x.begin) < std::pair(y.object, y.begin);
  });
  std::vector<std::vector<int64_t>> runs;
  std::vector<size_t> firsts;
  uint64_t run_begin = 0, run_end = 0;
  for (const int64_t i : indices) {
    const StoredRange& r = at[i];
    if (!runs.empty() && at[runs.back().back()].object == r.object && r.begin >= run_end &&
        r.begin - run_end <= max_gap && r.end - run_begin <= max_bytes) {
      runs.back().push_back(i);
      firsts.back() = std::min(firsts.back(), first_hint[i]);
      run_end = r.end;
      continue;
    }
    runs.push_back({i});
    firsts.push_back(first_hint[i]);
    run_begin = r.begin;
    run_end = r.end;
  }
  std::vector<size_t> order(runs.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return firsts[a] < firsts[b]; });
  std::vector<std::vector<int64_t>> out;
  out.reserve(runs.size());
  for (const size_t k : order) out.push_back(std::move(runs[k]));
  return out;
}

ReadAhead::ReadAhead(Fetch fetch, SizeOf size_of, Group group, int connections, uint64_t max_bytes)
    : fetch_(std::move(fetch)),
      size_of_(std::move(size_of)),
      group_(std::move(group)),
      connections_(connections),
      max_bytes_(max_bytes),
      owner_pid_(::getpid()) {}

ReadAhead::~ReadAhead() {
  if (::getpid() != owner_pid_) {
    // A fork() child: the threads are the parent's. Their std::thread objects are leaked
    // rather than destroyed (which would terminate) or joined (which would wait forever).
    (void)new std::vector<std::thread>(std::move(threads_));
    return;
  }
  std::vector<std::thread> threads;
  stop_.cancel("stopped: the dataset is closing");  // a fetch in flight ends within 0.1 s
  {
    util::MutexLock lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  work_cv_.notify_all();
  for (std::thread& t : threads) t.join();
}

void ReadAhead::hint(std::span<const int64_t> indices) {
  bool added = false;
  {
    util::MutexLock lock(mu_);
    std::vector<int64_t> fresh;
    for (const int64_t index : indices) {
      Entry& entry = entries_[index];
      if (entry.refs++ == 0 && entry.unit == 0) fresh.push_back(index);
    }
    if (!fresh.empty()) {
      added = true;
      for (std::vector<int64_t>& members : group_(std::move(fresh))) {
        const uint64_t id = next_unit_++;
        for (const int64_t index : members) {
          Entry& entry = entries_[index];
          entry.unit = id;
          entry.size = size_of_(index);
        }
        units_[id].indices = std::move(members);
        queue_.push_back(id);
      }
    }
    // Threads start with the first hint: a dataset that is never read ahead costs none. One
    // that cannot be started leaves the reads to the workers (slower, never wrong).
    while (static_cast<int>(threads_.size()) < connections_) {
      try {
        threads_.emplace_back([this] { run(); });
      } catch (const std::system_error& e) {
        log(LogLevel::kWarning, "read-ahead: cannot start a connection thread ({}); {} running",
            e.what(), threads_.size());
        break;
      }
    }
  }
  if (added) work_cv_.notify_all();
}

void ReadAhead::run() {
  const RetriedByCaller retried;  // by the loader's reads of the samples (read_ahead.h)
  const util::StopScope stoppable(&stop_, 0, "");
  util::MutexLock lock(mu_);
  while (true) {
    uint64_t id = 0;
    while (!stopping_ && id == 0) {
      while (!queue_.empty()) {
        const auto it = units_.find(queue_.front());
        if (it == units_.end() || it->second.state != State::kQueued) {
          queue_.pop_front();
          continue;
        }
        uint64_t bytes = 0;
        for (const int64_t index : it->second.indices) bytes += entries_[index].size;
        if (held_bytes_ > 0 && held_bytes_ + bytes > max_bytes_) {
          budget_blocked_ = true;
          break;
        }
        id = queue_.front();
        queue_.pop_front();
        break;
      }
      if (id == 0 && !stopping_) work_cv_.wait(mu_);
    }
    if (stopping_) return;
    fetch_unit(id);
  }
}

void ReadAhead::fetch_unit(uint64_t id) {
  Unit& unit = units_[id];
  unit.state = State::kFetching;
  for (const int64_t index : unit.indices) held_bytes_ += entries_[index].size;
  const std::vector<int64_t> indices = unit.indices;
  mu_.unlock();  // the caller's lock: held again below, before it is used
  std::vector<std::vector<uint8_t>> bytes;
  std::exception_ptr error;
  try {
    fetch_(indices, bytes);
    STOKER_CHECK(bytes.size() == indices.size(), "read-ahead: {} results for {} samples",
                 bytes.size(), indices.size());
  } catch (...) {
    error = std::current_exception();
  }
  mu_.lock();
  const auto it = units_.find(id);
  if (it == units_.end()) return;  // cleared meanwhile; clear() gave its bytes back already
  for (size_t i = 0; i < indices.size(); ++i) {
    Entry& entry = entries_[indices[i]];
    entry.done = true;
    entry.error = error;
    if (!error) entry.bytes = std::move(bytes[i]);
  }
  units_.erase(it);
  done_cv_.notify_all();
}

void ReadAhead::drop(std::unordered_map<int64_t, Entry>::iterator it) {
  held_bytes_ -= it->second.size;
  entries_.erase(it);
  // Wake a connection thread only when the budget was what held them back: a wake-up per
  // taken sample for 32 idle threads costs more than the reads (a futex storm).
  if (budget_blocked_) {
    budget_blocked_ = false;
    work_cv_.notify_all();
  }
}

bool ReadAhead::take(int64_t index, std::vector<uint8_t>& out) {
  util::MutexLock lock(mu_);
  auto it = entries_.find(index);
  if (it == entries_.end() || it->second.unit == 0) return false;
  const auto unit = units_.find(it->second.unit);
  if (unit != units_.end() && unit->second.state == State::kQueued) {
    // Not started: this worker fetches it rather than wait behind the queue or the budget.
    fetch_unit(it->second.unit);
  }
  while (true) {
    it = entries_.find(index);
    if (it == entries_.end()) return false;  // cleared while we waited
    if (it->second.done) break;
    // Woken at least every 50 ms: a reader told to stop (a closing loader, util/stop.h) does
    // not wait for a fetch stalled on the server.
    if (!done_cv_.wait_for(mu_, std::chrono::milliseconds(50))) {
      util::throw_if_stopped(fmt::format("sample {} (read ahead)", index));
    }
  }
  Entry& entry = it->second;
  if (entry.error) {
    const std::exception_ptr error = entry.error;
    drop(it);
    std::rethrow_exception(error);
  }
  if (--entry.refs == 0) {
    out = std::move(entry.bytes);
    drop(it);
  } else {
    out = entry.bytes;
  }
  return true;
}

void ReadAhead::clear() {
  util::MutexLock lock(mu_);
  queue_.clear();
  units_.clear();
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = entries_.erase(it);
  }
  held_bytes_ = 0;
  work_cv_.notify_all();
  done_cv_.notify_all();
}

}  // namespace stoker::io
