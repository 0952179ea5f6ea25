// Why the calling thread should stop what it waits for (private): the cancellations
// (stoker/cancel.h) and deadlines in force on it, as a chain of scopes. The remote layer checks
// it in every request and between tries; an open's deadline (IoConfig::open_timeout_s) is one.
// A pool's task working for another thread installs that thread's chain (StopScope(chain)),
// which must outlive the task (the thread waits for its tasks).
#pragma once

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "stoker/cancel.h"

namespace stoker::util {

struct StopLink {
  const Cancellation* cancellation = nullptr;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::string deadline_reason;  // what a passed deadline's error says
  const StopLink* outer = nullptr;
};

class StopScope {
 public:
  // A cancellation (may be null) and a deadline `seconds` from now (<= 0: none).
  StopScope(const Cancellation* cancellation, double seconds, std::string deadline_reason);
  // Another thread's chain.
  explicit StopScope(const StopLink* chain);
  ~StopScope();
  StopScope(const StopScope&) = delete;
  StopScope& operator=(const StopScope&) = delete;

  // The calling thread's chain (null when none).
  static const StopLink* current();

 private:
  StopLink link_;
  const StopLink* previous_;
};

struct StopReason {
  std::string why;
  int error = ECANCELED;  // ETIMEDOUT for a deadline
};
// The first reason in force on the calling thread, innermost first; nullopt when none.
std::optional<StopReason> stop_reason();
// Throws the I/O Error "SUBJECT: WHY" (errno ECANCELED or ETIMEDOUT) when there is a reason.
void throw_if_stopped(std::string_view subject);
// Sleeps `seconds`, waking early to return false when a reason comes up.
bool sleep_unless_stopped(double seconds);
// Seconds to the nearest deadline in force, or nullopt.
std::optional<double> seconds_to_deadline();

}  // namespace stoker::util
