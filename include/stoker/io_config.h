// How datasets talk to their storage: retries, remote timeouts, read-ahead, the node-local
// object cache and the packed reader's I/O mode. Given to open_dataset (stoker/dataset.h);
// the loader's read retries are LoaderConfig::read_retries (stoker/loader.h).
//
// Defaults: each field's default is its environment variable when that is set (the table in
// docs/environment.md), else the value given below. They are read each time a config is
// built, so that a malformed variable fails there: an ArgumentError naming the variable and
// its value ("STOKER_IO_ATTEMPTS=three: expected an integer in [1, 100]"). validate() checks
// the same bounds on values set in code.
//
// Retries are counted once per sample, end to end: while read_with_retries runs a read (the
// loader's workers), the storage below it sends each request once, so that a sample costs at
// most `attempts` requests; what no caller retries (opening a dataset: a HEAD, an index or a
// manifest read) is tried `attempts` times by the remote layer itself.
#pragma once

#include <cstdint>
#include <string>

namespace stoker {

enum class PackedIo {
  kMmap,   // map each shard and copy records out of the page cache (fallback: pread)
  kPread,  // never map: read records with preadv (file systems that police mmap)
};
PackedIo parse_packed_io(const std::string& name);  // "mmap" | "pread"
const char* to_string(PackedIo mode);

enum class S3Addressing {
  kAuto,     // path style for a custom endpoint, virtual-host style for AWS
  kPath,     // ENDPOINT/BUCKET/KEY
  kVirtual,  // BUCKET.ENDPOINT/KEY
};
S3Addressing parse_s3_addressing(const std::string& name);  // "auto" | "path" | "virtual"
const char* to_string(S3Addressing style);

namespace detail {
// The environment's defaults of the fields below (docs/environment.md); each throws an
// ArgumentError naming its variable when that is malformed.
int default_io_attempts();               // STOKER_IO_ATTEMPTS, else 3
double default_stall_timeout_s();        // STOKER_REMOTE_TIMEOUT, else 30
double default_open_timeout_s();         // STOKER_OPEN_TIMEOUT, else 600
int default_read_ahead_connections();    // STOKER_READAHEAD_CONNECTIONS, else 32
uint64_t default_read_ahead_bytes();     // STOKER_READAHEAD_MIB MiB, else 256 MiB
std::string default_remote_cache_dir();  // STOKER_REMOTE_CACHE, else ""
uint64_t default_remote_cache_bytes();   // STOKER_REMOTE_CACHE_MIB MiB, else 10 GiB
PackedIo default_packed_io();            // STOKER_PACKED_IO, else mmap
S3Addressing default_s3_addressing();    // STOKER_S3_ADDRESSING_STYLE, else auto
}  // namespace detail

// How often a read that failed with an I/O error (ErrorKind::kIo) is tried: a flaky network
// mount, a storage server restarting, a connection reset, HTTP 5xx.
struct IoRetryPolicy {
  int attempts = detail::default_io_attempts();  // tries in all, in [1, 100]
  // The wait before the second try, in [0, 60] s; x4 before each later one, at most 5 s each.
  double first_backoff_s = 0.05;

  // Seconds to wait before try `attempt` (2, 3, ...).
  double wait_before(int attempt) const;
  void validate() const;  // ArgumentError naming the field
};

struct IoConfig {
  IoRetryPolicy retries;
  // Remote (http(s)://, s3://): seconds to connect, in [0.001, 3600]; and a transfer slower
  // than 1 KiB/s for `stall_timeout_s` seconds (in [1, 3600], whole seconds: rounded up)
  // fails as a timeout, which is retried.
  double connect_timeout_s = 10;
  double stall_timeout_s = detail::default_stall_timeout_s();
  // The deadline of a whole open_dataset (in [0, 86400] s; 0: none): its requests, retries
  // and waits, for every shard (they open in parallel, and the first shard that fails stops
  // the others). Past it the open fails with an I/O Error (errno ETIMEDOUT) naming it, rather
  // than taking shards x tries x stall_timeout_s against stalled servers.
  double open_timeout_s = detail::default_open_timeout_s();
  // Remote samples are fetched ahead of the workers by this many connection threads (in
  // [0, 1024]; 0 turns read-ahead off), holding at most `read_ahead_bytes` (in [1 MiB, 1 TiB]).
  int read_ahead_connections = detail::default_read_ahead_connections();
  uint64_t read_ahead_bytes = detail::default_read_ahead_bytes();
  // The node-local cache of whole remote objects (docs/format.md, "Remote object cache"): a
  // folder ("" : none) holding at most `remote_cache_bytes` (in [1 MiB, 1 PiB]).
  std::string remote_cache_dir = detail::default_remote_cache_dir();
  uint64_t remote_cache_bytes = detail::default_remote_cache_bytes();
  // How a packed dataset's local shards are read (docs/format.md, "Reading").
  PackedIo packed_io = detail::default_packed_io();
  // How s3:// locations become URLs (credentials and endpoint: the AWS_* variables, ~/.aws).
  S3Addressing s3_addressing = detail::default_s3_addressing();

  void validate() const;  // ArgumentError naming the field
};

}  // namespace stoker
