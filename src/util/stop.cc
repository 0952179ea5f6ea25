#include "util/stop.h"

#include <algorithm>
#include <thread>

#include "util/check.h"

namespace stoker {
namespace {

thread_local const util::StopLink* current_chain = nullptr;

}  // namespace

void Cancellation::cancel(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_.load(std::memory_order_relaxed)) return;
  why_ = why;
  cancelled_.store(true, std::memory_order_release);
}

std::string Cancellation::why() const {
  std::lock_guard<std::mutex> lock(mu_);
  return why_;
}

// A StopScope without a deadline.
CancellationScope::CancellationScope(const Cancellation& cancellation)
    : scope_(std::make_unique<util::StopScope>(&cancellation, 0, "")) {}
CancellationScope::~CancellationScope() = default;

namespace util {

StopScope::StopScope(const Cancellation* cancellation, double seconds, std::string deadline_reason)
    : previous_(current_chain) {
  link_.cancellation = cancellation;
  if (seconds > 0) {
    link_.deadline = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(seconds));
    link_.deadline_reason = std::move(deadline_reason);
  }
  link_.outer = previous_;
  current_chain = &link_;
}

StopScope::StopScope(const StopLink* chain) : previous_(current_chain) {
  link_.outer = chain;
  current_chain = &link_;
}

StopScope::~StopScope() { current_chain = previous_; }

const StopLink* StopScope::current() { return current_chain; }

std::optional<StopReason> stop_reason() {
  const auto now = std::chrono::steady_clock::now();
  for (const StopLink* link = current_chain; link != nullptr; link = link->outer) {
    if (link->cancellation != nullptr && link->cancellation->cancelled()) {
      return StopReason{link->cancellation->why(), ECANCELED};
    }
    if (link->deadline && now >= *link->deadline) {
      return StopReason{link->deadline_reason, ETIMEDOUT};
    }
  }
  return std::nullopt;
}

void throw_if_stopped(std::string_view subject) {
  if (const std::optional<StopReason> reason = stop_reason()) {
    STOKER_THROW_IO(reason->error, std::string(), "{}: {}", subject, reason->why);
  }
}

bool sleep_unless_stopped(double seconds) {
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(std::max(seconds, 0.0)));
  // Slices of 20 ms: a Cancellation has no condition variable to wake sleepers with, and a
  // wait between tries is rare enough that polling costs nothing.
  while (true) {
    if (stop_reason()) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(20)));
  }
}

std::optional<double> seconds_to_deadline() {
  std::optional<std::chrono::steady_clock::time_point> nearest;
  for (const StopLink* link = current_chain; link != nullptr; link = link->outer) {
    if (link->deadline && (!nearest || *link->deadline < *nearest)) nearest = link->deadline;
  }
  if (!nearest) return std::nullopt;
  return std::chrono::duration<double>(*nearest - std::chrono::steady_clock::now()).count();
}

}  // namespace util
}  // namespace stoker
