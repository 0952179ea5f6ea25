// The process environment, read here and nowhere else (private to src/; docs/environment.md
// lists every STOKER_* variable with its meaning, its default and the config field it sets).
//
// A STOKER_* variable is only ever the default of a config field: it is read when a config is
// built (IoConfig, LoaderConfig, StatsFileConfig: their defaults call these readers), never
// cached, so that a program may set it and build another config. An unset and an empty
// variable read alike (scripts clear one with `export NAME=`). The typed readers throw an
// ArgumentError "NAME=VALUE: expected ..." for a value that does not parse or lies outside the
// field's bounds; the same bounds are the configs' validate() checks (EnvNumber below).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::util {

// The raw value of `name`; nullopt when unset or empty.
std::optional<std::string> env_text(const char* name);

// The value of `name`, or `fallback` when unset or empty.
std::string env_string(const char* name, std::string_view fallback = "");

// A numeric variable and the config field it is the default of: the field's default and its
// bounds, for both the environment reader and the field's validate().
template <typename T>
struct EnvNumber {
  const char* name;
  T fallback;
  T low, high;
};

// Strict decimal integer (the whole value, an optional '-') in [low, high].
int64_t env_int(const EnvNumber<int64_t>& var);
// A decimal number (as strtod reads it, the whole value) in [low, high]: seconds.
double env_number(const EnvNumber<double>& var);
// One of `choices`, by position; `fallback` when unset or empty. The error lists the choices.
size_t env_choice(const char* name, size_t fallback, const std::vector<std::string_view>& choices);

// ---------------------------------------------------------------------------------------------
// Every STOKER_* variable (docs/environment.md is the same table in prose).

// IoRetryPolicy::attempts: tries in all of a read that fails with an I/O error.
inline constexpr EnvNumber<int64_t> kIoAttempts{"STOKER_IO_ATTEMPTS", 3, 1, 100};
// IoConfig::stall_timeout_s: a remote transfer slower than 1 KiB/s for this long fails.
inline constexpr EnvNumber<double> kRemoteTimeout{"STOKER_REMOTE_TIMEOUT", 30, 1, 3600};
// IoConfig::open_timeout_s: the deadline of a whole open of remote data (0: none).
inline constexpr EnvNumber<double> kOpenTimeout{"STOKER_OPEN_TIMEOUT", 600, 0, 86400};
// IoConfig::read_ahead_connections (0: no read-ahead).
inline constexpr EnvNumber<int64_t> kReadAheadConnections{"STOKER_READAHEAD_CONNECTIONS", 32, 0,
                                                          1024};
// IoConfig::read_ahead_bytes, in MiB.
inline constexpr EnvNumber<int64_t> kReadAheadMib{"STOKER_READAHEAD_MIB", 256, 1, 1 << 20};
// IoConfig::remote_cache_dir ("": no node-local object cache).
inline constexpr const char* kRemoteCache = "STOKER_REMOTE_CACHE";
// IoConfig::remote_cache_bytes, in MiB.
inline constexpr EnvNumber<int64_t> kRemoteCacheMib{"STOKER_REMOTE_CACHE_MIB", 10240, 1, 1 << 30};
// IoConfig::packed_io: mmap | pread.
inline constexpr const char* kPackedIo = "STOKER_PACKED_IO";
// IoConfig::s3_addressing: auto | path | virtual.
inline constexpr const char* kS3AddressingStyle = "STOKER_S3_ADDRESSING_STYLE";
// ImageFolderConfig::cache when it is "" (the index cache folder; "off" disables it).
inline constexpr const char* kCacheDir = "STOKER_CACHE_DIR";
// LoaderConfig::close_timeout_seconds.
inline constexpr EnvNumber<double> kCloseTimeout{"STOKER_CLOSE_TIMEOUT", 10, 0, 86400};
// StatsFileConfig::path (`stoker monitor` sets it for the command it runs).
inline constexpr const char* kStatsFile = "STOKER_STATS_FILE";
// StatsFileConfig::interval_seconds.
inline constexpr EnvNumber<double> kStatsInterval{"STOKER_STATS_INTERVAL", 1, 0, 3600};
// The log threshold: debug | info | warning | error (stoker/log.h).
inline constexpr const char* kLogLevel = "STOKER_LOG_LEVEL";
// The tests' temporary folders (test_tmp.h); CTest sets it to the build's test-tmp.
inline constexpr const char* kTestTmp = "STOKER_TEST_TMP";
// The GPU tests fail instead of skipping without a usable GPU when it is "1" (tests/gpu).
inline constexpr const char* kRequireGpu = "STOKER_REQUIRE_GPU";

}  // namespace stoker::util
