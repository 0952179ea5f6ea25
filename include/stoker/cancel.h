// Stopping slow work from another thread: an open of remote data, a stalled request, the waits
// between tries. A Cancellation is shared by the thread that asks (cancel()) and the work that
// honours it; work honours it while a CancellationScope on its thread names it.
//
// What stops, and how soon: a remote request in flight within 0.1 s (its transfer wakes that
// often to look), a wait between tries within 20 ms, an open's remaining shards before they
// start, a reader waiting for a read-ahead within 50 ms. The stopped call throws an I/O Error
// (ErrorKind::kIo, errno ECANCELED) "<what>: <why>", which is never tried again. A read of local
// storage in the kernel (a hung mount) is not stopped.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace stoker {
namespace util {
class StopScope;
}

class Cancellation {
 public:
  // Asks the work to stop; `why` ends its error message. Later calls keep the first reason.
  void cancel(const std::string& why = "interrupted");
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  std::string why() const;

 private:
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mu_;
  std::string why_;
};

// While one lives, the calling thread's remote requests, retries and opens stop once
// `cancellation` (which must outlive it) is cancelled. Scopes nest: every one applies.
class CancellationScope {
 public:
  explicit CancellationScope(const Cancellation& cancellation);
  ~CancellationScope();
  CancellationScope(const CancellationScope&) = delete;
  CancellationScope& operator=(const CancellationScope&) = delete;

 private:
  std::unique_ptr<util::StopScope> scope_;
};

}  // namespace stoker
