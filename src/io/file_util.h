// Small POSIX helpers shared by the io sources (private to src/io).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stoker::io {

// Owns one file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// The text of an errno value ("No such file or directory"), thread-safe.
std::string errno_message(int error);

// Reads out.size() bytes at `offset` (retrying EINTR and short reads): 0 when all were read,
// -1 when the file ends before them, else the errno of the failed pread.
int pread_fully(int fd, uint64_t offset, std::span<uint8_t> out);

// Writes all of `bytes` (retrying EINTR and short writes) at the file position, or at `offset`
// when it is not negative: 0 when all were written, else an errno (ENOSPC for a write of 0).
int write_fully(int fd, std::string_view bytes, int64_t offset = -1);

// The largest sample read() accepts. Training data is untrusted: a huge file must become an
// Error naming it (which the bad-sample policy can handle), not a std::bad_alloc.
inline constexpr int64_t kMaxSampleBytes = int64_t{1} << 30;

// Opens the regular file at `path` for reading, never blocking on a FIFO; `name` is how
// messages call it. Returns the descriptor and stores the file's size in `size`. Throws a
// bad-data Error "NAME: dangling symbolic link", "NAME: is a directory" or "NAME: not a regular
// file" (the entry's own fault), an I/O Error "NAME: <strerror>" otherwise (the storage's).
UniqueFd open_regular_file(const std::string& path, const std::string& name, uint64_t& size);

// Reads the whole regular file at `path` into `out` (resized to fit; its capacity is reused).
// Throws Error "PATH: is a directory", "PATH: not a regular file", "PATH: <strerror>", or
// "PATH: file too large" when it holds more than `max_bytes`. Never blocks on a FIFO.
void read_file(const std::string& path, std::vector<uint8_t>& out,
               int64_t max_bytes = kMaxSampleBytes);

}  // namespace stoker::io
