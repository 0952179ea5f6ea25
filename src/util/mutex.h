// A mutex, its scoped lock and a condition variable that clang's thread-safety analysis
// understands (private to the library). Members a mutex guards are declared
// STOKER_GUARDED_BY(mu_); functions that expect it held, STOKER_REQUIRES(mu_). A clang build with
// -Wthread-safety (./run.sh test's thread-safety stage) then checks every access at compile time;
// other compilers see plain std::mutex code.
//
// The analysis does not look into lambdas that run under a lock, so a wait is a loop in the
// annotated function: `while (!ready_) cv_.wait(mu_);`.
#pragma once

#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define STOKER_TSA(x) __attribute__((x))
#else
#define STOKER_TSA(x)
#endif

#define STOKER_CAPABILITY(name) STOKER_TSA(capability(name))
#define STOKER_SCOPED_CAPABILITY STOKER_TSA(scoped_lockable)
#define STOKER_GUARDED_BY(mu) STOKER_TSA(guarded_by(mu))
#define STOKER_PT_GUARDED_BY(mu) STOKER_TSA(pt_guarded_by(mu))
#define STOKER_REQUIRES(...) STOKER_TSA(requires_capability(__VA_ARGS__))
#define STOKER_ACQUIRE(...) STOKER_TSA(acquire_capability(__VA_ARGS__))
#define STOKER_RELEASE(...) STOKER_TSA(release_capability(__VA_ARGS__))
#define STOKER_EXCLUDES(...) STOKER_TSA(locks_excluded(__VA_ARGS__))
#define STOKER_NO_TSA STOKER_TSA(no_thread_safety_analysis)

namespace stoker::util {

class STOKER_CAPABILITY("mutex") Mutex {
 public:
  void lock() STOKER_ACQUIRE() { mu_.lock(); }
  void unlock() STOKER_RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for its scope; unlock()/lock() let a scope give it up for a while.
class STOKER_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) STOKER_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() STOKER_RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void unlock() STOKER_RELEASE() {
    mu_.unlock();
    held_ = false;
  }
  void lock() STOKER_ACQUIRE() {
    mu_.lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

class CondVar {
 public:
  // Releases `mu`, blocks until notified (or spuriously), holds `mu` again.
  void wait(Mutex& mu) STOKER_REQUIRES(mu) {
    std::unique_lock lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's lock owns it
  }
  // The same, returning false after `timeout` without a notification.
  template <typename Duration>
  bool wait_for(Mutex& mu, Duration timeout) STOKER_REQUIRES(mu) {
    std::unique_lock lock(mu.mu_, std::adopt_lock);
    const bool notified = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace stoker::util
