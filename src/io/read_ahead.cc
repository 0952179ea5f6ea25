#include "io/read_ahead.h"

#include <system_error>
#include <utility>

#include "stoker/error.h"
#include "stoker/log.h"

namespace stoker::io {

ReadAhead::ReadAhead(Fetch fetch, SizeOf size_of, int connections, uint64_t max_bytes)
    : fetch_(std::move(fetch)),
      size_of_(std::move(size_of)),
      connections_(connections),
      max_bytes_(max_bytes) {}

ReadAhead::~ReadAhead() {
  std::vector<std::thread> threads;
  {
    util::MutexLock lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  work_cv_.notify_all();
  for (std::thread& t : threads) t.join();
}

void ReadAhead::hint(std::span<const int64_t> indices) {
  {
    util::MutexLock lock(mu_);
    for (const int64_t index : indices) {
      Entry& entry = entries_[index];
      if (entry.refs++ == 0 && entry.state == State::kQueued) {
        entry.generation = generation_;
        queue_.push_back(index);
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
  work_cv_.notify_all();
}

void ReadAhead::run() {
  util::MutexLock lock(mu_);
  while (true) {
    // The first queued entry that is still queued (takers may have claimed some), if the budget
    // has room for it (always when nothing is held, so that one huge sample cannot stall).
    int64_t index = -1;
    uint64_t size = 0;
    while (!stopping_ && index < 0) {
      while (!queue_.empty()) {
        const auto it = entries_.find(queue_.front());
        if (it == entries_.end() || it->second.state != State::kQueued) {
          queue_.pop_front();
          continue;
        }
        size = size_of_(queue_.front());
        if (held_bytes_ > 0 && held_bytes_ + size > max_bytes_) break;
        index = queue_.front();
        queue_.pop_front();
        it->second.state = State::kFetching;
        it->second.reserved = size;
        held_bytes_ += size;
        break;
      }
      if (index < 0 && !stopping_) work_cv_.wait(mu_);
    }
    if (stopping_) return;
    const uint64_t generation = entries_[index].generation;
    lock.unlock();
    std::vector<uint8_t> bytes;
    std::exception_ptr error;
    try {
      fetch_(index, bytes);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    finish(index, generation, std::move(bytes), error);
  }
}

void ReadAhead::finish(int64_t index, uint64_t generation, std::vector<uint8_t>&& bytes,
                       std::exception_ptr error) {
  const auto it = entries_.find(index);
  if (it == entries_.end() || it->second.generation != generation ||
      it->second.state != State::kFetching) {
    return;  // cleared meanwhile; clear() gave its bytes back already
  }
  it->second.state = error ? State::kFailed : State::kDone;
  it->second.bytes = std::move(bytes);
  it->second.error = error;
  done_cv_.notify_all();
}

void ReadAhead::release(Entry& entry) {
  held_bytes_ -= entry.reserved;
  entry.reserved = 0;
  work_cv_.notify_all();
}

bool ReadAhead::take(int64_t index, std::vector<uint8_t>& out) {
  util::MutexLock lock(mu_);
  auto it = entries_.find(index);
  if (it == entries_.end()) return false;
  if (it->second.state == State::kQueued) {
    // Not started: this worker fetches it rather than wait behind the queue or the budget.
    Entry& entry = it->second;
    entry.state = State::kFetching;
    entry.reserved = size_of_(index);
    held_bytes_ += entry.reserved;
    const uint64_t generation = entry.generation;
    lock.unlock();
    std::vector<uint8_t> bytes;
    std::exception_ptr error;
    try {
      fetch_(index, bytes);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    finish(index, generation, std::move(bytes), error);
  }
  while (true) {
    it = entries_.find(index);
    if (it == entries_.end()) return false;  // cleared while we waited
    if (it->second.state == State::kDone || it->second.state == State::kFailed) break;
    done_cv_.wait(mu_);
  }
  Entry& entry = it->second;
  if (entry.state == State::kFailed) {
    const std::exception_ptr error = entry.error;
    release(entry);
    entries_.erase(it);
    std::rethrow_exception(error);
  }
  if (--entry.refs == 0) {
    out = std::move(entry.bytes);
    release(entry);
    entries_.erase(it);
  } else {
    out = entry.bytes;
  }
  return true;
}

void ReadAhead::clear() {
  util::MutexLock lock(mu_);
  ++generation_;
  queue_.clear();
  for (auto it = entries_.begin(); it != entries_.end();) {
    release(it->second);
    it = entries_.erase(it);
  }
  done_cv_.notify_all();
}

}  // namespace stoker::io
