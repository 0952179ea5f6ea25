#include "io/open_all.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

#include "stoker/cancel.h"
#include "stoker/error.h"
#include "util/stop.h"

namespace stoker::io {

void open_all(size_t count, const std::function<void(size_t index)>& open_one) {
  Cancellation failed;
  const util::StopLink* const caller = util::StopScope::current();
  std::vector<std::exception_ptr> errors(count);
  std::atomic<size_t> next{0};
  const auto work = [&] {
    const util::StopScope inherited(caller);
    const util::StopScope stop_on_failure(&failed, 0, "");
    for (size_t i = next++; i < count && !failed.cancelled(); i = next++) {
      try {
        open_one(i);
      } catch (const Error& e) {
        // Stopped because another failed: that one's error is the one to report.
        if (failed.cancelled() && e.kind() == ErrorKind::kIo && e.sys_errno() == ECANCELED) {
          continue;
        }
        errors[i] = std::current_exception();
        failed.cancel("stopped: another part of the dataset failed to open");
      } catch (...) {
        errors[i] = std::current_exception();
        failed.cancel("stopped: another part of the dataset failed to open");
      }
    }
  };
  const size_t threads = std::min<size_t>(count, 16);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // fewer threads: slower, the same result
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace stoker::io
