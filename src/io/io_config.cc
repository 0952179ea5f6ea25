#include "stoker/io_config.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "stoker/error.h"
#include "util/check.h"
#include "util/env_vars.h"

namespace stoker {
namespace {

constexpr double kMaxBackoffSeconds = 5;
constexpr double kMaxFirstBackoffSeconds = 60;
constexpr uint64_t kMiB = uint64_t{1} << 20;

const std::vector<std::string_view> kPackedIoNames = {"mmap", "pread"};
const std::vector<std::string_view> kS3AddressingNames = {"auto", "path", "virtual"};

template <typename T, typename U>
bool in(const util::EnvNumber<T>& var, U value) {
  return value >= var.low && value <= var.high;
}

size_t choice(const char* what, const std::string& name,
              const std::vector<std::string_view>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return i;
  }
  STOKER_THROW_ARG("{} must be {} (got \"{}\")", what,
                   names.size() == 2 ? fmt::format("{} or {}", names[0], names[1])
                                     : fmt::format("{}, {} or {}", names[0], names[1], names[2]),
                   name);
}

}  // namespace

PackedIo parse_packed_io(const std::string& name) {
  return static_cast<PackedIo>(choice("packed I/O", name, kPackedIoNames));
}
const char* to_string(PackedIo mode) { return kPackedIoNames[static_cast<size_t>(mode)].data(); }

S3Addressing parse_s3_addressing(const std::string& name) {
  return static_cast<S3Addressing>(choice("S3 addressing", name, kS3AddressingNames));
}
const char* to_string(S3Addressing style) {
  return kS3AddressingNames[static_cast<size_t>(style)].data();
}

namespace detail {

int default_io_attempts() { return static_cast<int>(util::env_int(util::kIoAttempts)); }
double default_stall_timeout_s() { return util::env_number(util::kRemoteTimeout); }
double default_open_timeout_s() { return util::env_number(util::kOpenTimeout); }
int default_read_ahead_connections() {
  return static_cast<int>(util::env_int(util::kReadAheadConnections));
}
uint64_t default_read_ahead_bytes() {
  return static_cast<uint64_t>(util::env_int(util::kReadAheadMib)) * kMiB;
}
std::string default_remote_cache_dir() { return util::env_string(util::kRemoteCache); }
uint64_t default_remote_cache_bytes() {
  return static_cast<uint64_t>(util::env_int(util::kRemoteCacheMib)) * kMiB;
}
PackedIo default_packed_io() {
  return static_cast<PackedIo>(util::env_choice(util::kPackedIo, 0, kPackedIoNames));
}
S3Addressing default_s3_addressing() {
  return static_cast<S3Addressing>(
      util::env_choice(util::kS3AddressingStyle, 0, kS3AddressingNames));
}

}  // namespace detail

double IoRetryPolicy::wait_before(int attempt) const {
  double wait = first_backoff_s;
  for (int k = 2; k < attempt && wait < kMaxBackoffSeconds; ++k) wait *= 4;
  return std::min(wait, kMaxBackoffSeconds);
}

void IoRetryPolicy::validate() const {
  STOKER_CHECK_ARG(in(util::kIoAttempts, attempts),
                   "io retries: attempts must be in [{}, {}] (got {})", util::kIoAttempts.low,
                   util::kIoAttempts.high, attempts);
  STOKER_CHECK_ARG(std::isfinite(first_backoff_s) && first_backoff_s >= 0 &&
                       first_backoff_s <= kMaxFirstBackoffSeconds,
                   "io retries: first_backoff_s must be in [0, {}] (got {})",
                   kMaxFirstBackoffSeconds, first_backoff_s);
}

void IoConfig::validate() const {
  retries.validate();
  STOKER_CHECK_ARG(
      std::isfinite(connect_timeout_s) && connect_timeout_s >= 0.001 && connect_timeout_s <= 3600,
      "io: connect_timeout_s must be in [0.001, 3600] (got {})", connect_timeout_s);
  STOKER_CHECK_ARG(in(util::kRemoteTimeout, stall_timeout_s),
                   "io: stall_timeout_s must be in [{}, {}] (got {})", util::kRemoteTimeout.low,
                   util::kRemoteTimeout.high, stall_timeout_s);
  STOKER_CHECK_ARG(in(util::kOpenTimeout, open_timeout_s),
                   "io: open_timeout_s must be in [{}, {}] (got {})", util::kOpenTimeout.low,
                   util::kOpenTimeout.high, open_timeout_s);
  STOKER_CHECK_ARG(in(util::kReadAheadConnections, read_ahead_connections),
                   "io: read_ahead_connections must be in [{}, {}] (got {})",
                   util::kReadAheadConnections.low, util::kReadAheadConnections.high,
                   read_ahead_connections);
  STOKER_CHECK_ARG(read_ahead_bytes >= util::kReadAheadMib.low * kMiB &&
                       read_ahead_bytes <= util::kReadAheadMib.high * kMiB,
                   "io: read_ahead_bytes must be in [{} MiB, {} MiB] (got {})",
                   util::kReadAheadMib.low, util::kReadAheadMib.high, read_ahead_bytes);
  STOKER_CHECK_ARG(remote_cache_bytes >= util::kRemoteCacheMib.low * kMiB &&
                       remote_cache_bytes <= util::kRemoteCacheMib.high * kMiB,
                   "io: remote_cache_bytes must be in [{} MiB, {} MiB] (got {})",
                   util::kRemoteCacheMib.low, util::kRemoteCacheMib.high, remote_cache_bytes);
  STOKER_CHECK_ARG(packed_io == PackedIo::kMmap || packed_io == PackedIo::kPread,
                   "io: packed_io out of range");
  STOKER_CHECK_ARG(s3_addressing == S3Addressing::kAuto || s3_addressing == S3Addressing::kPath ||
                       s3_addressing == S3Addressing::kVirtual,
                   "io: s3_addressing out of range");
}

}  // namespace stoker
