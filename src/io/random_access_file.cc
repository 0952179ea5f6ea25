#include "io/random_access_file.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "stoker/error.h"
#include "util/check.h"

namespace stoker::io {
namespace {

// The guarded thread's jump buffer is found through a pthread key, not a thread_local: in a
// dlopen'ed library (the Python module) a thread_local may be allocated on first access, which
// a signal handler must not do, and initial-exec TLS may not fit in the static TLS block.
// pthread_getspecific only reads the thread's key table.
pthread_key_t g_touch_key;
bool g_touch_guard = false;  // set once, before the handler is installed
struct sigaction g_previous_sigbus;

void on_sigbus(int signal, siginfo_t* info, void* context) {
  const bool fault = info != nullptr && info->si_code > 0;  // <= 0: sent by a process
  if (fault) {
    auto* jump = static_cast<sigjmp_buf*>(pthread_getspecific(g_touch_key));
    if (jump != nullptr) siglongjmp(*jump, 1);
  }
  const struct sigaction& previous = g_previous_sigbus;
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    if (previous.sa_sigaction != nullptr) previous.sa_sigaction(signal, info, context);
    return;
  }
  if (previous.sa_handler == SIG_IGN) {
    // A fault cannot be ignored: with the default action back, it recurs and ends the process.
    if (fault) ::sigaction(SIGBUS, &previous, nullptr);
    return;
  }
  if (previous.sa_handler != SIG_DFL) {
    previous.sa_handler(signal);
    return;
  }
  // Default action: restore it; a fault recurs when the instruction runs again, a sent signal
  // is raised again (SA_NODEFER: delivered at once).
  ::sigaction(SIGBUS, &previous, nullptr);
  if (!fault) ::raise(SIGBUS);
}

void install_sigbus_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Without a key (all taken) the mapping is still read, unguarded: SIGBUS then ends the
    // process, as it would without this handler.
    if (pthread_key_create(&g_touch_key, nullptr) != 0) return;
    g_touch_guard = true;
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_sigaction = on_sigbus;
    // SA_NODEFER: siglongjmp leaves the handler without restoring the signal mask (sigsetjmp
    // with savemask 0, no syscall per read), so SIGBUS must not be blocked while it runs.
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &g_previous_sigbus);
  });
}

using TouchFn = void (*)(void*) noexcept;

// Calls touch(arg), which only reads or copies memory (noexcept, no destructors to skip, no
// locks held); false if that raised SIGBUS.
bool touch_guarded(TouchFn touch, void* arg) {
  if (!g_touch_guard) {
    touch(arg);
    return true;
  }
  // A fault on a thread that blocks SIGBUS kills the process whatever the handler: unblock it
  // (once per thread; blocking a fault signal has no use). Threads inherit their creator's mask.
  thread_local bool unblocked = false;
  if (!unblocked) {
    sigset_t bus;
    sigemptyset(&bus);
    sigaddset(&bus, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &bus, nullptr);
    unblocked = true;
  }
  // Nested guards put the outer jump buffer back on the way out.
  void* const outer = pthread_getspecific(g_touch_key);
  sigjmp_buf jump;
  if (sigsetjmp(jump, 0) != 0) {
    pthread_setspecific(g_touch_key, outer);
    return false;
  }
  if (pthread_setspecific(g_touch_key, &jump) != 0) {  // no memory for the key: unguarded
    touch(arg);
    return true;
  }
  touch(arg);
  pthread_setspecific(g_touch_key, outer);
  return true;
}

// memcpy from a mapping under the guard (size 0 copies nothing); false if a page could not be
// read.
bool copy_guarded(void* to, const uint8_t* from, size_t size) {
  struct Copy {
    void* to;
    const uint8_t* from;
    size_t size;
  } c{to, from, size};
  return touch_guarded(
      [](void* a) noexcept {
        auto* c = static_cast<Copy*>(a);
        if (c->size > 0) std::memcpy(c->to, c->from, c->size);
      },
      &c);
}

}  // namespace

Mapping& Mapping::operator=(Mapping&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void Mapping::reset() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

RandomAccessFile RandomAccessFile::open(const std::string& path, const std::string& name) {
  RandomAccessFile f;
  f.name_ = name;
  f.fd_ = open_regular_file(path, name, f.size_);
  return f;
}

bool RandomAccessFile::map_from(uint64_t from) {
  install_sigbus_handler();
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = std::min(from, size_) / page * page;
  if (start >= size_) return false;  // nothing to map (mmap refuses length 0)
  void* addr =
      ::mmap(nullptr, size_ - start, PROT_READ, MAP_SHARED, fd_.get(), static_cast<off_t>(start));
  if (addr == MAP_FAILED) return false;
  map_ = Mapping(static_cast<const uint8_t*>(addr), size_ - start);
  map_offset_ = start;
  // The whole file mapped: the mapping needs no descriptor, and a dataset of thousands of
  // shards must not hold thousands of them (a "Too many open files" under ulimit -n).
  if (start == 0) fd_.reset();
  return true;
}

bool RandomAccessFile::mapped(uint64_t offset, uint64_t n) const {
  return map_.data() != nullptr && offset >= map_offset_ && offset <= size_ && n <= size_ - offset;
}

void RandomAccessFile::will_need(uint64_t offset) const {
  if (!mapped(offset, 0)) return;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page;
  const uint64_t from = std::max(start, map_offset_);
  ::madvise(const_cast<uint8_t*>(map_.data()) + (from - map_offset_), size_ - from, MADV_WILLNEED);
}

void RandomAccessFile::unreadable(int error, const std::string& what) const {
  if (error > 0) {
    STOKER_THROW_IO(error, name_, "{}: {}: cannot be read ({})", name_, what, errno_message(error));
  }
  STOKER_THROW_IO(error < 0 ? EIO : 0, name_,
                  "{}: {}: cannot be read (the file shrank after it was "
                  "opened{})",
                  name_, what, error < 0 ? ", or an I/O error" : "");
}

void RandomAccessFile::read(uint64_t offset, std::span<uint8_t> out, const std::string& what,
                            std::span<uint8_t> more) const {
  const uint64_t total = uint64_t{out.size()} + more.size();
  if (mapped(offset, total)) {
    const uint8_t* at = map_.data() + (offset - map_offset_);
    if (!copy_guarded(out.data(), at, out.size()) ||
        !copy_guarded(more.data(), at + out.size(), more.size())) {
      unreadable(-1, what);  // a SIGBUS: the page is gone or the device failed
    }
    return;
  }
  // One syscall for both buffers, straight into the caller's memory.
  uint64_t done = 0;
  while (done < total) {
    iovec iov[2];
    int count = 0;
    if (done < out.size()) {
      iov[count++] = iovec{out.data() + done, out.size() - done};
      if (!more.empty()) iov[count++] = iovec{more.data(), more.size()};
    } else {
      const size_t m = done - out.size();
      iov[count++] = iovec{more.data() + m, more.size() - m};
    }
    const ssize_t n = ::preadv(fd_.get(), iov, count, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      unreadable(errno, what);
    }
    if (n == 0) unreadable(0, what);
    done += static_cast<uint64_t>(n);
  }
}

uint64_t RandomAccessFile::hash_range(uint64_t offset, uint64_t n, const std::string& what) const {
  if (mapped(offset, n)) return hash_mapped(offset, n, what);
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                 &XXH3_freeState);
  STOKER_CHECK(state != nullptr, "{}: out of memory", name_);
  XXH3_64bits_reset(state.get());
  std::vector<uint8_t> chunk(static_cast<size_t>(std::min<uint64_t>(n, uint64_t{1} << 20)));
  for (uint64_t done = 0; done < n;) {
    const uint64_t take = std::min<uint64_t>(chunk.size(), n - done);
    read(offset + done, std::span<uint8_t>(chunk.data(), take), what);
    XXH3_64bits_update(state.get(), chunk.data(), take);
    done += take;
  }
  return XXH3_64bits_digest(state.get());
}

uint64_t RandomAccessFile::hash_mapped(uint64_t offset, uint64_t n, const std::string& what) const {
  STOKER_CHECK(mapped(offset, n), "{}: {}: [{}, +{}) is not mapped", name_, what, offset, n);
  struct Hash {
    const uint8_t* at;
    uint64_t size;
    uint64_t hash;
  } h{map_.data() + (offset - map_offset_), n, 0};
  if (!touch_guarded(
          [](void* a) noexcept {
            auto* t = static_cast<Hash*>(a);
            t->hash = XXH3_64bits(t->at, t->size);
          },
          &h)) {
    unreadable(-1, what);
  }
  return h.hash;
}

}  // namespace stoker::io
