#include "io/object_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>
#include <span>
#include <vector>

#include "io/cache_file.h"
#include "io/file_util.h"
#include "io/remote.h"
#include "stoker/error.h"
#include "stoker/log.h"
#include "util/check.h"
#include "util/logging.h"
#include "util/stop.h"

namespace stoker::io {
namespace {

constexpr uint64_t kDownloadChunk = uint64_t{8} << 20;

// flock(2) held for the life of the object (LOCK_EX on `path`, created if missing; a symbolic
// link planted under its name is not followed: the lock is not held). Waiting for another
// process's download is polled, so that a cancellation or deadline (util/stop.h) ends it.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) {
    if (!fd_.valid()) return;
    while (true) {
      if (::flock(fd_.get(), LOCK_EX | LOCK_NB) == 0) {
        held_ = true;
        return;
      }
      // Not on file systems without flock (some NFS and FUSE mounts).
      if (errno != EWOULDBLOCK && errno != EINTR) return;
      if (!util::sleep_unless_stopped(0.05)) return;
    }
  }
  bool held() const { return held_; }

 private:
  UniqueFd fd_;  // closing it releases the lock
  bool held_ = false;
};

// Whether the download writing temporary file `name` has ended without renaming it: its
// writer holds an flock on it while it writes (a PID would not do: containers sharing the
// folder have their own PID spaces, and PIDs are reused).
bool writer_gone(int dir_fd, const std::string& name) {
  UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  return fd.valid() && ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0;
}

// Deletes the least recently used copies (their mtime: touched on each use) until `incoming`
// more bytes fit under the budget, and the temporary files of writers that died; downloads in
// progress count at their full size (reserved when they start). Called with .lru.lock held.
// A reader that has a copy open keeps reading it: only its name goes. False when the bytes do
// not fit even so (downloads in progress hold the room).
bool make_room(const ObjectCacheSettings& s, uint64_t incoming) {
  struct Entry {
    std::string name;
    uint64_t bytes;
    int64_t used_ns;
  };
  std::vector<Entry> objects;
  uint64_t total = 0;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(s.dir.c_str()), ::closedir);
  if (!dir) return false;
  while (const dirent* e = ::readdir(dir.get())) {
    const std::string name = e->d_name;
    struct stat st {};
    if (::fstatat(::dirfd(dir.get()), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode)) {
      continue;
    }
    if (name.ends_with(".obj")) {
      objects.push_back({name, static_cast<uint64_t>(st.st_size), mtime_ns(st)});
      total += static_cast<uint64_t>(st.st_size);
    } else if (name.find(".obj.tmp-") != std::string::npos && name.ends_with(".xxh3")) {
      // A download's checksum being written: its writer's own to delete while the download's
      // temporary file lives (the checksum goes in place just before the copy).
      const std::string download = name.substr(0, name.size() - 5);
      struct stat ds {};
      if (::fstatat(::dirfd(dir.get()), download.c_str(), &ds, AT_SYMLINK_NOFOLLOW) != 0 ||
          writer_gone(::dirfd(dir.get()), download)) {
        ::unlinkat(::dirfd(dir.get()), name.c_str(), 0);
      }
    } else if (name.ends_with(".obj.xxh3")) {
      // Deleted with its copy (below), or on its own when the copy is gone for good: not while
      // a fetch of that object holds its lock (the checksum is in place before the copy).
      const std::string key = name.substr(0, name.size() - 9);
      UniqueFd key_lock(::openat(::dirfd(dir.get()), (key + ".lock").c_str(),
                                 O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
      const bool fetching = key_lock.valid() && ::flock(key_lock.get(), LOCK_EX | LOCK_NB) != 0;
      struct stat cs {};
      if (!fetching &&
          ::fstatat(::dirfd(dir.get()), (key + ".obj").c_str(), &cs, AT_SYMLINK_NOFOLLOW) != 0) {
        ::unlinkat(::dirfd(dir.get()), name.c_str(), 0);
      }
    } else if (name.find(".obj.tmp-") != std::string::npos) {
      if (writer_gone(::dirfd(dir.get()), name)) {
        ::unlinkat(::dirfd(dir.get()), name.c_str(), 0);
      } else {
        total += static_cast<uint64_t>(st.st_size);  // a download in progress, reserved
      }
    }
  }
  std::sort(objects.begin(), objects.end(),
            [](const Entry& a, const Entry& b) { return a.used_ns < b.used_ns; });
  for (const Entry& e : objects) {
    if (total + incoming <= s.max_bytes) break;
    if (::unlinkat(::dirfd(dir.get()), e.name.c_str(), 0) == 0) {
      ::unlinkat(::dirfd(dir.get()), (e.name + ".xxh3").c_str(), 0);
      total -= e.bytes;
      log(LogLevel::kDebug, "remote cache: evicted {} ({} bytes)", e.name, e.bytes);
    }
  }
  return total + incoming <= s.max_bytes;
}

void warn_once(const std::string& what) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) {
    log(LogLevel::kWarning, "remote cache: {} (reading remotely instead)", what);
  }
}

}  // namespace

ObjectCacheSettings object_cache_settings(const IoConfig& io) {
  ObjectCacheSettings s;
  if (io.remote_cache_dir.empty()) return s;
  s.dir = io.remote_cache_dir;
  s.max_bytes = io.remote_cache_bytes;
  // Whoever can write the folder decides what is trained on (a copy's name is computable from
  // the URL, ETag and size): only this user may.
  const std::string dir = s.dir.string();
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    std::error_code ec;
    std::filesystem::create_directories(s.dir, ec);  // missing parents: made as usual
    ::mkdir(dir.c_str(), 0700);
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    const int error = errno;
    STOKER_THROW_IO(error, dir, "remote cache {}: {}", dir, errno_message(error));
  }
  STOKER_CHECK_ARG(S_ISDIR(st.st_mode),
                   "remote cache {}: not a folder (a symbolic link or a file): name a folder of "
                   "your own (remote_cache_dir, STOKER_REMOTE_CACHE)",
                   dir);
  STOKER_CHECK_ARG(st.st_uid == ::geteuid(),
                   "remote cache {}: owned by user {}, not by this user ({}): anyone who can "
                   "write it controls the training data; use a folder of your own "
                   "(remote_cache_dir, STOKER_REMOTE_CACHE)",
                   dir, st.st_uid, ::geteuid());
  STOKER_CHECK_ARG((st.st_mode & (S_IWGRP | S_IWOTH)) == 0,
                   "remote cache {}: writable by other users (mode {:04o}): anyone who can "
                   "write it controls the training data; run chmod go-w {} (or use another "
                   "folder)",
                   dir, st.st_mode & 07777, dir);
  return s;
}

std::filesystem::path object_copy_path(const ObjectCacheSettings& s, const std::string& location,
                                       const std::string& etag, uint64_t size) {
  // Without an ETag a replaced object of the same size could not be told from the copy; an
  // empty object has nothing to cache; one larger than the budget does not fit.
  if (s.dir.empty() || etag.empty() || size == 0) return {};
  if (size > s.max_bytes) {
    warn_once(
        fmt::format("{} ({} bytes) is larger than the cache ({} bytes: remote_cache_bytes, "
                    "STOKER_REMOTE_CACHE_MIB)",
                    location, size, s.max_bytes));
    return {};
  }
  const std::string key = fmt::format("{}\n{}\n{}", location, etag, size);
  return s.dir / fmt::format("{:016x}.obj", XXH3_64bits(key.data(), key.size()));
}

bool copy_is_complete(const std::filesystem::path& copy, uint64_t size) {
  struct stat st {};
  return ::lstat(copy.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         static_cast<uint64_t>(st.st_size) == size;
}

namespace {

std::filesystem::path sum_path(const std::filesystem::path& copy) {
  return copy.string() + ".xxh3";
}

std::string hex64(uint64_t v) { return fmt::format("{:016x}", v); }

}  // namespace

bool verify_copy(const std::filesystem::path& copy, uint64_t size) {
  const auto fail = [&](const std::string& why) {
    log(LogLevel::kWarning, "remote cache: {} {}: deleted, to be fetched again", copy.string(),
        why);
    ::unlink(copy.c_str());
    ::unlink(sum_path(copy).c_str());
    return false;
  };
  UniqueFd sum(::open(sum_path(copy).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  char stored[17] = {};
  if (!sum.valid() ||
      pread_fully(sum.get(), 0, std::span(reinterpret_cast<uint8_t*>(stored), 16)) != 0) {
    return fail("has no checksum beside it");
  }
  UniqueFd fd(::open(copy.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) != size) {
    return false;
  }
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) return false;
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> owned(state, XXH3_freeState);
  XXH3_64bits_reset(state);
  std::vector<uint8_t> chunk(std::min<uint64_t>(kDownloadChunk, size));
  for (uint64_t at = 0; at < size; at += chunk.size()) {
    chunk.resize(std::min<uint64_t>(kDownloadChunk, size - at));
    if (pread_fully(fd.get(), at, chunk) != 0) return false;
    XXH3_64bits_update(state, chunk.data(), chunk.size());
  }
  if (hex64(XXH3_64bits_digest(state)) != std::string_view(stored, 16)) {
    return fail("does not match its checksum (changed on disk since it was fetched)");
  }
  return true;
}

bool fetch_object(const ObjectCacheSettings& s, const std::filesystem::path& copy,
                  const std::string& location, const RemoteStat& version, const IoConfig& io) {
  const uint64_t size = version.size;
  if (copy_is_complete(copy, size)) return true;
  // One fetch per node: the others wait here, then find the copy.
  FileLock lock(std::filesystem::path(copy).replace_extension(".lock"));
  if (!lock.held()) {
    const int error = errno;
    if (!util::stop_reason()) {
      warn_once(fmt::format("cannot lock in {}: {}", s.dir.string(), errno_message(error)));
    }
    return false;
  }
  if (copy_is_complete(copy, size)) return true;
  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path tmp =
      copy.string() + fmt::format(".tmp-{}-{}", ::getpid(), counter.fetch_add(1));
  UniqueFd out;
  {
    // Room is made and the download's bytes reserved in one step, so that fetches running at
    // once (other objects, other processes) cannot all fit in the same free space.
    FileLock lru(s.dir / ".lru.lock");
    if (!lru.held()) {
      warn_once(fmt::format("cannot lock in {}: {}", s.dir.string(), errno_message(errno)));
      return false;
    }
    if (!make_room(s, size)) {
      log(LogLevel::kDebug, "remote cache: no room for {} now (downloads in progress)", location);
      return false;
    }
    out.reset(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    // Held while it is written: make_room tells a live download from a dead one by it.
    if (!out.valid() || ::flock(out.get(), LOCK_EX | LOCK_NB) != 0) {
      warn_once(fmt::format("cannot write to {}: {}", s.dir.string(), errno_message(errno)));
      if (out.valid()) ::unlink(tmp.c_str());
      return false;
    }
    const int reserved = ::posix_fallocate(out.get(), 0, static_cast<off_t>(size));
    if (reserved != 0 &&
        (reserved != EOPNOTSUPP || ::ftruncate(out.get(), static_cast<off_t>(size)) != 0)) {
      ::unlink(tmp.c_str());
      warn_once(fmt::format("cannot reserve {} bytes in {}: {}", size, s.dir.string(),
                            errno_message(reserved != EOPNOTSUPP ? reserved : errno)));
      return false;
    }
  }
  const std::filesystem::path sum = sum_path(copy);
  const std::filesystem::path sum_tmp = tmp.string() + ".xxh3";
  try {
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                   XXH3_freeState);
    if (!state) throw std::runtime_error("out of memory");
    XXH3_64bits_reset(state.get());
    std::vector<uint8_t> chunk;
    for (uint64_t at = 0; at < size; at += chunk.size()) {
      chunk.resize(std::min(kDownloadChunk, size - at));
      read_remote(location, version, at, chunk, fmt::format("bytes from {}", at), io);
      XXH3_64bits_update(state.get(), chunk.data(), chunk.size());
      const std::string_view bytes(reinterpret_cast<const char*>(chunk.data()), chunk.size());
      if (const int error = write_fully(out.get(), bytes, static_cast<int64_t>(at)); error != 0) {
        throw std::runtime_error(fmt::format("writing {}: {}", tmp.string(), errno_message(error)));
      }
    }
    // The checksum goes in place first: a copy is never there without it.
    const std::string digest = hex64(XXH3_64bits_digest(state.get())) + "\n";
    UniqueFd sum_out(
        ::open(sum_tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    int error = sum_out.valid() ? write_fully(sum_out.get(), digest, 0) : errno;
    if (error == 0 && ::fsync(sum_out.get()) != 0) error = errno;
    if (error == 0 && ::rename(sum_tmp.c_str(), sum.c_str()) != 0) error = errno;
    if (error != 0) {
      throw std::runtime_error(fmt::format("{}: {}", sum.string(), errno_message(error)));
    }
    if (::fsync(out.get()) != 0 || ::rename(tmp.c_str(), copy.c_str()) != 0) {
      throw std::runtime_error(fmt::format("{}: {}", copy.string(), errno_message(errno)));
    }
  } catch (const std::exception& e) {
    ::unlink(tmp.c_str());
    ::unlink(sum_tmp.c_str());
    warn_once(fmt::format("{} not cached: {}", location, e.what()));
    return false;
  }
  log(LogLevel::kDebug, "remote cache: {} -> {}", location, copy.string());
  return true;
}

}  // namespace stoker::io
