#include "io/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <system_error>

#include "stoker/error.h"
#include "util/check.h"

namespace stoker::io {

std::string errno_message(int error) { return std::generic_category().message(error); }

UniqueFd open_regular_file(const std::string& path, const std::string& name, uint64_t& size) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever; it is
  // cleared again below once we know the file is regular.
  int raw;
  do {
    raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) {
    const int error = errno;
    // A symbolic link to nothing is this entry's own fault (bad data, skippable); a missing
    // file is the storage's (a file deleted under the job, an unmounted share): I/O.
    struct stat link;
    if (error == ENOENT && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      STOKER_BAD_DATA("{}: dangling symbolic link", name);
    }
    STOKER_THROW_IO(error, name, "{}: {}", name, errno_message(error));
  }
  UniqueFd fd(raw);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    STOKER_THROW_IO(errno, name, "{}: {}", name, errno_message(errno));
  }
  if (S_ISDIR(st.st_mode)) STOKER_BAD_DATA("{}: is a directory", name);
  if (!S_ISREG(st.st_mode)) STOKER_BAD_DATA("{}: not a regular file", name);
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  size = static_cast<uint64_t>(st.st_size);
  return fd;
}

int pread_fully(int fd, uint64_t offset, std::span<uint8_t> out) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return -1;
    done += static_cast<size_t>(n);
  }
  return 0;
}

int write_fully(int fd, std::string_view bytes, int64_t offset) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = offset < 0
                          ? ::write(fd, bytes.data() + done, bytes.size() - done)
                          : ::pwrite(fd, bytes.data() + done, bytes.size() - done,
                                     static_cast<off_t>(static_cast<uint64_t>(offset) + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return ENOSPC;
    done += static_cast<size_t>(n);
  }
  return 0;
}

void read_file(const std::string& path, std::vector<uint8_t>& out, int64_t max_bytes) {
  uint64_t file_size = 0;
  UniqueFd fd = open_regular_file(path, path, file_size);
  if (file_size > static_cast<uint64_t>(max_bytes)) {
    STOKER_BAD_DATA("{}: file too large ({} bytes; the limit is {})", path, file_size, max_bytes);
  }
  const size_t size = static_cast<size_t>(file_size);
  out.resize(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd.get(), out.data() + done, size - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      STOKER_THROW_IO(errno, path, "{}: {}", path, errno_message(errno));
    }
    if (n == 0) break;  // The file shrank since fstat: return what is there.
    done += static_cast<size_t>(n);
  }
  out.resize(done);
}

}  // namespace stoker::io
