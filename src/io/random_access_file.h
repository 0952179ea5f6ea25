// Storage for random reads of one local file, apart from any format (private to src/io): it
// owns the descriptor, the memory mapping, the pread fallback and the SIGBUS guard, and hands
// out bytes. The packed format (packed_shard.h) reads its shards through it.
//
// Reads come from a mapping where the file is mapped (copied out of the page cache without a
// syscall; only the pages read count in RSS, as shared file pages) and with pread(v) elsewhere.
// A page of a mapping that cannot be read (the file shrank after it was opened, an I/O error)
// raises SIGBUS instead of failing a read(): every access to the mapping runs under a guard that
// turns that SIGBUS into an I/O Error naming the file. The guard's handler is process-wide and
// installed once; a SIGBUS that is not a fault inside a guarded access goes to the handler that
// was there before.
//
// Errors: a failed open, stat or read is ErrorKind::kIo (errno and the file named); a path that
// is not a regular file is kBadData.
// Thread-safety: the const methods may be called from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "io/file_util.h"

namespace stoker::io {

// A memory mapping, unmapped on destruction.
class Mapping {
 public:
  Mapping() = default;
  Mapping(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  Mapping(Mapping&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  Mapping& operator=(Mapping&& other) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { reset(); }

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  void reset();

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

class RandomAccessFile {
 public:
  // Opens `path` for reading (open_regular_file); `name` is how messages call it.
  static RandomAccessFile open(const std::string& path, const std::string& name);

  const std::string& name() const { return name_; }
  uint64_t size() const { return size_; }

  // Maps [from rounded down to a page, size()) (the whole file when `from` is 0), replacing an
  // earlier mapping. Returns false, leaving the earlier one, when the system refuses (an
  // address-space limit, a filesystem without mmap). A whole-file mapping closes the
  // descriptor (every read is then from the mapping; no later map_from).
  bool map_from(uint64_t from);
  // Whether [offset, offset + n) lies in the mapping.
  bool mapped(uint64_t offset, uint64_t n) const;
  // Asks the kernel to read [offset, size()) ahead, in one go rather than a fault per page.
  void will_need(uint64_t offset) const;

  // Reads [offset, offset + out.size()) into `out`, then [.. + out.size(), .. + more.size())
  // into `more` (one preadv where not mapped). `what` names the bytes in the message ("record 5
  // at byte offset 1234"): "NAME: WHAT: cannot be read (...)".
  void read(uint64_t offset, std::span<uint8_t> out, const std::string& what,
            std::span<uint8_t> more = {}) const;

  // XXH3-64 of [offset, offset + n), which must be mapped; the I/O Error of read() otherwise.
  uint64_t hash_mapped(uint64_t offset, uint64_t n, const std::string& what) const;
  // The same of any range: from the mapping where mapped, else read in 1 MiB preads.
  uint64_t hash_range(uint64_t offset, uint64_t n, const std::string& what) const;

 private:
  [[noreturn]] void unreadable(int error, const std::string& what) const;

  std::string name_;
  UniqueFd fd_;
  uint64_t size_ = 0;
  Mapping map_;
  uint64_t map_offset_ = 0;  // the file offset of map_.data()
};

}  // namespace stoker::io
