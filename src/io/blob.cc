#include "io/blob.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>

#include "io/file_util.h"
#include "io/object_cache.h"
#include "io/remote.h"
#include "stoker/error.h"
#include "util/check.h"

namespace stoker::io {
namespace {

// A local file, opened for each read rather than held open: a WebDataset of thousands of
// shards must not hold a descriptor per shard ("Too many open files" under ulimit -n 1024),
// and an open + fstat costs microseconds against a decode's hundreds. Each open checks that
// the file is still the one that was indexed (inode and size).
class LocalBlob final : public Blob {
 public:
  explicit LocalBlob(const std::string& path) : Blob(path) {
    uint64_t size = 0;
    const UniqueFd fd = open_regular_file(path, path, size);
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) {
      const int error = errno;
      STOKER_THROW_IO(error, path, "{}: {}", path, errno_message(error));
    }
    size_ = size;
    inode_ = st.st_ino;
    stamp_ =
        fmt::format("{}:{}.{:09}:{}", st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ino);
  }
  bool remote() const override { return false; }
  uint64_t size() const override { return size_; }
  std::string stamp() const override { return stamp_; }
  void read(uint64_t offset, std::span<uint8_t> out, const std::string& what) const override {
    uint64_t size = 0;
    const UniqueFd fd = open_regular_file(location(), location(), size);
    struct stat st;
    if (::fstat(fd.get(), &st) != 0 || st.st_ino != inode_ || size != size_) {
      STOKER_THROW_IO(ESTALE, location(),
                      "{}: {}: the file was replaced since it was opened (another inode or "
                      "size); open the dataset again",
                      location(), what);
    }
    if (const int error = pread_fully(fd.get(), offset, out); error != 0) {
      STOKER_THROW_IO(error > 0 ? error : EIO, location(), "{}: {}: cannot be read ({})",
                      location(), what,
                      error > 0 ? errno_message(error) : "the file ends before these bytes");
    }
  }

 private:
  uint64_t size_ = 0;
  ino_t inode_ = 0;
  std::string stamp_;
};

class RemoteBlob final : public Blob {
 public:
  RemoteBlob(const std::string& location, const IoConfig& io)
      : Blob(location),
        io_(io),
        stat_(stat_remote(location, io_)),
        cache_(object_cache_settings(io_)) {
    copy_ = object_copy_path(cache_, location, stat_.etag, stat_.size);
  }
  bool remote() const override { return true; }
  uint64_t size() const override { return stat_.size; }
  std::string stamp() const override { return stat_.version(); }
  void read(uint64_t offset, std::span<uint8_t> out, const std::string& what) const override {
    // With a node-local cache (object_cache.h) the first read fetches the whole object, and
    // the reads after it are local.
    if (!copy_.empty() && (read_copy(offset, out) || (fetch_copy() && read_copy(offset, out)))) {
      return;
    }
    read_remote(location(), stat_, offset, out, what, io_);
  }

 private:
  // One thread of the process fetches; the others wait for the copy rather than fetch the same
  // bytes again. An object that could not be cached (no room while other downloads run, a
  // failed download) is read remotely and tried again 30 s later.
  bool fetch_copy() const {
    std::lock_guard<std::mutex> lock(fetch_mu_);
    if (copy_is_complete(copy_, stat_.size)) return true;
    if (std::chrono::steady_clock::now() < retry_at_) return false;
    if (fetch_object(cache_, copy_, location(), stat_, io_)) return true;
    retry_at_ = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    return false;
  }

  // Reads from the copy, opened for this read (as LocalBlob does: no descriptor per object,
  // and an evicted copy frees its space). False when there is no complete copy, or when the
  // copy does not pass its checksum, checked before this process first reads it (and again
  // when another file takes its name).
  bool read_copy(uint64_t offset, std::span<uint8_t> out) const {
    UniqueFd fd(::open(copy_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<uint64_t>(st.st_size) != stat_.size) {
      return false;
    }
    if (verified_inode_.load() != st.st_ino) {
      std::lock_guard<std::mutex> lock(fetch_mu_);
      if (verified_inode_.load() != st.st_ino) {
        if (!verify_copy(copy_, stat_.size)) return false;
        verified_inode_.store(st.st_ino);
      }
    }
    if (!touched_.exchange(true)) ::futimens(fd.get(), nullptr);  // the LRU order: now
    // A failed local copy is not an error: the remote object still answers.
    return pread_fully(fd.get(), offset, out) == 0;
  }

  IoConfig io_;
  RemoteStat stat_;
  ObjectCacheSettings cache_;
  std::filesystem::path copy_;  // empty: not cached
  mutable std::atomic<bool> touched_{false};
  mutable std::atomic<ino_t> verified_inode_{0};            // the copy this process has checked
  mutable std::mutex fetch_mu_;                             // held by the thread fetching
  mutable std::chrono::steady_clock::time_point retry_at_;  // under fetch_mu_
};

}  // namespace

std::unique_ptr<Blob> Blob::open(const std::string& location, const IoConfig& io) {
  if (is_remote_location(location)) return std::make_unique<RemoteBlob>(location, io);
  return std::make_unique<LocalBlob>(location);
}

size_t BlobStream::read(std::span<uint8_t> out) {
  const uint64_t size = blob_.size();
  if (position_ >= size || out.empty()) return 0;
  if (position_ < buffer_offset_ || position_ >= buffer_offset_ + buffer_.size()) {
    buffer_offset_ = position_;
    buffer_.resize(std::min<uint64_t>(chunk_, size - position_));
    blob_.read(buffer_offset_, buffer_, fmt::format("bytes from {}", buffer_offset_));
  }
  const uint64_t in_buffer = buffer_offset_ + buffer_.size() - position_;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), in_buffer));
  std::memcpy(out.data(), buffer_.data() + (position_ - buffer_offset_), n);
  position_ += n;
  return n;
}

uint64_t BlobStream::skip(uint64_t n) {
  const uint64_t skipped = std::min<uint64_t>(n, blob_.size() - std::min(position_, blob_.size()));
  position_ += skipped;
  return skipped;
}

}  // namespace stoker::io
