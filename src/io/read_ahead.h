// Read-ahead for remote samples (private to src/io): the loader says which samples it will read
// next, in order (Dataset::read_ahead); a fixed set of connection threads fetches them
// concurrently, so that a worker's read() finds its bytes already there instead of waiting a
// round trip each. Samples that lie close together in storage are fetched together, as one
// unit (one range read for a run of members of a shard): the dataset's `group` says which.
//
// Contract:
// - hint(indices) queues the samples not already queued or fetched, grouped into units, in
//   the order of their first sample (a repeated index is fetched once and handed out as often
//   as hinted). Fetching pauses while the bytes fetched-but-not-taken plus those in flight
//   exceed `max_bytes` (the demand bound: the loader hints only the batches it has in flight)
//   and goes on as workers take them; a unit larger than the budget is fetched when nothing
//   else is held.
// - take(index, out) gives a hinted sample's bytes: waits for its unit in flight, takes a
//   finished one, or fetches a unit not started yet itself (so a worker never waits behind the
//   budget). A caller told to stop (stoker/cancel.h) stops waiting within 50 ms. A failed unit's
//   error is rethrown by take() for each of its samples, which are dropped, so that a retry reads
//   again. Returns false for a sample not hinted (the caller reads it itself).
// - clear() drops what is queued or fetched and not taken (a loader starting over).
// - A connection thread's fetch sends each request once (remote.h, RetriedByCaller): a failed
//   unit is tried again by the loader's reads of its samples, whose retries count this fetch
//   as their first try.
// The settings (connections, max_bytes) are IoConfig's read_ahead_connections and
// read_ahead_bytes.
// Threads start with the first hint; the destructor stops them, their fetches in flight
// cancelled (stoker/cancel.h: within 0.1 s). In
// a fork() child (which has none of the threads, and maybe a mutex a parent thread held) the
// destructor leaves everything as it is.
// Thread-safety: every member may be called from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "stoker/cancel.h"
#include "util/mutex.h"

namespace stoker::io {

// Where a sample's bytes lie: in which object (a shard) and at which bytes.
struct StoredRange {
  uint64_t object = 0;
  uint64_t begin = 0, end = 0;
};

// The usual ReadAhead::Group: samples of one object whose bytes lie within `max_gap` of each
// other form a run of at most `max_bytes` (one range read); runs come in the order of their
// first sample in `indices`.
std::vector<std::vector<int64_t>> group_into_runs(std::vector<int64_t> indices,
                                                  const std::function<StoredRange(int64_t)>& where,
                                                  uint64_t max_gap = uint64_t{256} << 10,
                                                  uint64_t max_bytes = uint64_t{1} << 20);

class ReadAhead {
 public:
  // fetch(unit, out): reads the samples of a unit, out[i] for unit[i] (thread-safe).
  // size_of(index): a sample's size, for the budget. group(indices): the new samples (unique,
  // in hint order) as units, each a list of them; every sample in exactly one unit.
  using Fetch =
      std::function<void(std::span<const int64_t> unit, std::vector<std::vector<uint8_t>>& out)>;
  using SizeOf = std::function<uint64_t(int64_t index)>;
  using Group = std::function<std::vector<std::vector<int64_t>>(std::vector<int64_t> indices)>;
  ReadAhead(Fetch fetch, SizeOf size_of, Group group, int connections, uint64_t max_bytes);
  ~ReadAhead() STOKER_NO_TSA;
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  void hint(std::span<const int64_t> indices) STOKER_EXCLUDES(mu_);
  bool take(int64_t index, std::vector<uint8_t>& out) STOKER_EXCLUDES(mu_);
  void clear() STOKER_EXCLUDES(mu_);

 private:
  enum class State { kQueued, kFetching, kDone };
  struct Unit {
    std::vector<int64_t> indices;
    State state = State::kQueued;
  };
  struct Entry {
    uint64_t unit = 0;
    int refs = 0;  // takes still to come
    uint64_t size = 0;
    bool done = false;
    std::vector<uint8_t> bytes;
    std::exception_ptr error;
  };

  void run() STOKER_EXCLUDES(mu_);
  // Fetches unit `id` with mu_ released meanwhile (held again on return), then files its
  // results.
  void fetch_unit(uint64_t id) STOKER_REQUIRES(mu_);
  void drop(std::unordered_map<int64_t, Entry>::iterator it) STOKER_REQUIRES(mu_);

  const Fetch fetch_;
  const SizeOf size_of_;
  const Group group_;
  const int connections_;
  const uint64_t max_bytes_;
  const pid_t owner_pid_;
  Cancellation stop_;  // the destructor's: connection threads give up their fetch in flight

  util::Mutex mu_;
  util::CondVar work_cv_;  // connection threads: something queued, budget freed, or stopping
  util::CondVar done_cv_;  // takers: a unit finished
  std::unordered_map<int64_t, Entry> entries_ STOKER_GUARDED_BY(mu_);
  std::unordered_map<uint64_t, Unit> units_ STOKER_GUARDED_BY(mu_);
  std::deque<uint64_t> queue_ STOKER_GUARDED_BY(mu_);
  uint64_t next_unit_ STOKER_GUARDED_BY(mu_) = 1;
  uint64_t held_bytes_ STOKER_GUARDED_BY(mu_) = 0;      // of the entries of started units
  bool budget_blocked_ STOKER_GUARDED_BY(mu_) = false;  // a thread waits for budget
  bool stopping_ STOKER_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ STOKER_GUARDED_BY(mu_);
};

}  // namespace stoker::io
