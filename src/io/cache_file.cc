#include "io/cache_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>
#include <vector>

#include "io/file_util.h"
#include "stoker/log.h"
#include "util/logging.h"

namespace stoker::io {
namespace {

constexpr size_t kHeaderBytes = 32;

}  // namespace

std::string temporary_suffix() {
  static std::atomic<uint64_t> counter{0};
  const uint64_t parts[4] = {
      static_cast<uint64_t>(::getpid()),
      static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()),
      counter.fetch_add(1), reinterpret_cast<uintptr_t>(&counter)};
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::string seed(reinterpret_cast<const char*>(parts), sizeof(parts));
  seed.append(host);
  return fmt::format(".tmp-{}-{:016x}", ::getpid(), XXH3_64bits(seed.data(), seed.size()));
}

std::string frame_cache(const char (&magic)[8], uint32_t version, std::string_view payload) {
  std::string file(magic, sizeof(magic));
  put<uint32_t>(file, version);
  put<uint32_t>(file, 0);
  put<uint64_t>(file, payload.size());
  put<uint64_t>(file, XXH3_64bits(payload.data(), payload.size()));
  file.append(payload);
  return file;
}

std::optional<std::string_view> unframe_cache(std::string_view bytes, const char (&magic)[8],
                                              uint32_t version, std::string& why) {
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), magic, sizeof(magic)) != 0) {
    why = "not an index cache file";
    return std::nullopt;
  }
  const uint32_t found = get_le<uint32_t>(bytes.data() + 8);
  if (found != version || get_le<uint32_t>(bytes.data() + 12) != 0) {
    why = fmt::format("unsupported version {}", found);
    return std::nullopt;
  }
  const std::string_view payload = bytes.substr(kHeaderBytes);
  if (get_le<uint64_t>(bytes.data() + 16) != payload.size()) {
    why = "truncated or padded";
    return std::nullopt;
  }
  if (get_le<uint64_t>(bytes.data() + 24) != XXH3_64bits(payload.data(), payload.size())) {
    why = "checksum mismatch";
    return std::nullopt;
  }
  return payload;
}

std::optional<std::string> read_cache_file(const std::filesystem::path& file) {
  std::vector<uint8_t> bytes;
  try {
    // A cache is at most a few hundred bytes per sample; the cap only stops absurd files.
    read_file(file.string(), bytes, int64_t{1} << 40);
  } catch (const Error& e) {
    log(LogLevel::kDebug, "no usable index cache: {}", e.message());
    return std::nullopt;
  }
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

bool write_cache_file(const std::filesystem::path& file, std::string_view bytes,
                      std::string_view what, std::string_view consequence) {
  const std::string final_path = file.string();
  auto fail = [&](const std::string& why) {
    log(LogLevel::kWarning, "cannot write the {} {}: {} ({})", what, final_path, why, consequence);
    return false;
  };
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) return fail(ec.message());

  // Same folder as the final name, so that rename() is atomic.
  const std::string temporary = final_path + temporary_suffix();
  int raw;
  do {
    raw = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) return fail(errno_message(errno));
  UniqueFd fd(raw);

  if (const int error = write_fully(fd.get(), bytes); error != 0) {
    ::unlink(temporary.c_str());
    return fail(errno_message(error));
  }
  // close() reports deferred write errors on network file systems.
  if (::close(fd.release()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return fail(errno_message(error));
  }
  if (::rename(temporary.c_str(), final_path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return fail(errno_message(error));
  }
  return true;
}

}  // namespace stoker::io
