// What stoker's on-disk index caches share (private to src/io): little-endian encoding,
// bounds-checked decoding, a checksummed frame, and atomic writes.
//
// A cache file is one frame:
//
//   offset  size  field
//        0     8  magic (8 bytes naming the kind of cache, e.g. "STKIDX01")
//        8     4  u32 format version
//       12     4  u32 reserved, 0
//       16     8  u64 payload size P (the file is exactly 32 + P bytes)
//       24     8  u64 XXH3-64 of the payload
//       32     P  payload (the kind's own layout)
//
// A cache is never trusted: a bad frame is a miss, and a payload's decoder checks every count
// against the bytes left before it allocates.
#pragma once

#include <fmt/format.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "stoker/error.h"

namespace stoker::io {

template <typename T>
void put(std::string& out, T value) {
  using U = std::make_unsigned_t<T>;
  const U bits = static_cast<U>(value);
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
}

inline void put_str(std::string& out, std::string_view s) {
  put<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

template <typename T>
T get_le(const char* p) {
  // Byte-wise so that it is right on any host; compilers turn it into one load.
  using U = std::make_unsigned_t<T>;
  U bits = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    bits |= static_cast<U>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return static_cast<T>(bits);
}

// A file or folder modified this close to the start of a listing (or later) may change again
// within the file system's timestamp granularity (up to 2 s on FAT, a jiffy on ext4) without
// its mtime moving, so its contents cannot be vouched for by the mtime: it is not cached.
inline constexpr int64_t kRacyWindowNs = 2'000'000'000;

inline int64_t mtime_ns(const struct stat& st) {
  return int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
}

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Thrown by Reader (and payload decoders) on bytes that are not a valid payload.
struct Malformed {
  std::string why;
};

// Bounds-checked reading of a payload; every short read throws Malformed.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  template <typename T>
  T get() {
    const char* p = take(sizeof(T), "truncated");
    return get_le<T>(p);
  }
  std::string_view str(const char* what) {
    const uint32_t size = get<uint32_t>();
    return std::string_view(take(size, what), size);
  }
  // A count of records of at least `record_bytes` each, checked against the bytes left so
  // that a forged count cannot make us allocate gigabytes.
  uint64_t count(uint64_t record_bytes, const char* what) {
    const uint64_t n = get<uint64_t>();
    if (n > rest_.size() / record_bytes)
      throw Malformed{fmt::format("{} count {} too large", what, n)};
    return n;
  }
  const char* take(uint64_t size, const char* what) {
    if (size > rest_.size()) throw Malformed{what};
    const char* p = rest_.data();
    rest_.remove_prefix(size);
    return p;
  }
  size_t left() const { return rest_.size(); }

 private:
  std::string_view rest_;
};

// The frame above around `payload`.
std::string frame_cache(const char (&magic)[8], uint32_t version, std::string_view payload);

// The payload of a frame with this magic and version; nullopt, with the reason in `why`,
// otherwise.
std::optional<std::string_view> unframe_cache(std::string_view bytes, const char (&magic)[8],
                                              uint32_t version, std::string& why);

// Reads a whole cache file (a debug log and nullopt when it cannot be read).
std::optional<std::string> read_cache_file(const std::filesystem::path& file);

// ".tmp-<pid>-<hash>": a suffix no other writer (thread, process, host) picks for its
// temporary file.
std::string temporary_suffix();

// Writes `bytes` to `file` atomically: a temporary file in the same folder, unique per writer
// (thread, process, host), renamed into place, so that ranks writing at once each leave a
// whole file. Creates the folder. Returns false after a warning "cannot write the WHAT FILE:
// REASON (CONSEQUENCE)" when it could not.
bool write_cache_file(const std::filesystem::path& file, std::string_view bytes,
                      std::string_view what, std::string_view consequence);

}  // namespace stoker::io
