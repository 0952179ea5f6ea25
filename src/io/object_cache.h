// A node-local, bounded cache of whole remote objects (private to src/io), shared by the
// processes of a node: with IoConfig::remote_cache_dir = DIR (STOKER_REMOTE_CACHE), the first
// read of a remote shard or pack shard downloads the whole object into DIR (one process of the
// node at a time; the others wait for it and then read the copy), and every later read, by any
// rank of the node and in every later epoch, is a local pread. The cache holds at most
// IoConfig::remote_cache_bytes (STOKER_REMOTE_CACHE_MIB, default 10 GiB): before an object is
// added the least recently used ones are deleted.
//
// Files, all in DIR (docs/format.md, "Remote object cache"):
//   <XXH3 of location, ETag and size>.obj        a complete copy (renamed into place, fsynced)
//   <same>.obj.xxh3                               the copy's XXH3-64, written before the rename
//   <same>.lock                                   flock'ed while the object is being fetched
//   <same>.obj.tmp-<pid>-<n>                      a download in progress, flock'ed by its writer
//   .lru.lock                                     flock'ed while objects are evicted
// Crash-safe: a copy appears only by rename after its bytes are synced, so a killed download
// leaves a temporary file (removed by the next eviction: no writer holds its lock) and never
// a short copy; a copy whose size is not the object's is ignored and replaced. An object's
// version is its ETag (and size): a replaced object is a new key, the old copy ages out.
// Objects without an ETag are not cached. Readers open the copy for each read (no descriptor
// held per object), so an evicted copy's space is freed at once.
//
// Nothing in DIR is trusted that was not checked (the key of a copy is computable from public
// data, so whoever can write DIR could plant one): DIR must be a folder owned by this user and
// writable by no one else (made 0700 when missing; otherwise the cache is refused with an
// ArgumentError naming the fix), every file in it is opened without following symbolic links,
// and each process checks a copy against its XXH3 before its first read of it (a copy that
// does not match, or has no checksum, is deleted and fetched again). The check reads the whole
// copy once per process (docs/perf.md, "Remote object cache").
//
// Apart from a refused folder the cache is never a source of errors: a cache that cannot be
// written, or an object larger than the budget, is read remotely as without a cache (a
// warning, once per process).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "io/remote.h"
#include "stoker/io_config.h"

namespace stoker::io {

struct ObjectCacheSettings {
  std::filesystem::path dir;  // empty: no cache
  uint64_t max_bytes = 0;
};

// IoConfig's remote_cache_dir and remote_cache_bytes, the folder made (0700) when missing and
// checked: an ArgumentError when it is not a folder owned by this user and writable by no one
// else ("chmod go-w DIR", or another folder).
ObjectCacheSettings object_cache_settings(const IoConfig& io);

// Where the copy of the remote object `location` (version `etag`, `size` bytes) lives in the
// cache; empty when it is not to be cached (no cache, no ETag, empty, larger than the budget).
std::filesystem::path object_copy_path(const ObjectCacheSettings& settings,
                                       const std::string& location, const std::string& etag,
                                       uint64_t size);

// Whether `copy` is a complete copy (a regular file of `size` bytes, not a symbolic link).
bool copy_is_complete(const std::filesystem::path& copy, uint64_t size);

// Whether the copy's bytes are the ones downloaded: its XXH3-64 equals the one stored beside
// it. A copy that fails (or has no checksum) is deleted, so that it is fetched again.
bool verify_copy(const std::filesystem::path& copy, uint64_t size);

// Makes `copy` (object_copy_path) a complete copy of the object, downloading it unless another
// process of the node has; false when it could not (no room while other downloads run, the
// cache cannot be written, the download failed: then the caller reads the object remotely,
// with its own retries and errors). The download's requests are retried as `io` and the
// calling thread say (remote.h: under a sample's read, once each).
bool fetch_object(const ObjectCacheSettings& settings, const std::filesystem::path& copy,
                  const std::string& location, const RemoteStat& version, const IoConfig& io);

}  // namespace stoker::io
