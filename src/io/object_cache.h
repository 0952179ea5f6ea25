// A node-local, bounded cache of whole remote objects (private to src/io), shared by the
// processes of a node: with STOKER_REMOTE_CACHE=DIR, the first read of a remote shard or pack
// shard downloads the whole object into DIR (one process of the node at a time; the others
// wait for it and then read the copy), and every later read, by any rank of the node and in
// every later epoch, is a local pread. The cache holds at most STOKER_REMOTE_CACHE_MIB MiB
// (default 10240): before an object is added the least recently used ones are deleted.
//
// Files, all in DIR (docs/format.md, "Remote object cache"):
//   <XXH3 of location, ETag and size>.obj        a complete copy (renamed into place, fsynced)
//   <same>.lock                                   flock'ed while the object is being fetched
//   <same>.obj.tmp-<pid>-<n>                      a download in progress
//   .lru.lock                                     flock'ed while objects are evicted
// Crash-safe: a copy appears only by rename after its bytes are synced, so a killed download
// leaves a temporary file (removed by the next eviction once its process is gone) and never a
// short copy; a copy whose size is not the object's is ignored and replaced. An object's
// version is its ETag (and size): a replaced object is a new key, the old copy ages out.
//
// The cache is never a source of errors: a cache that cannot be written, or an object larger
// than the budget, is read remotely as without a cache (a warning, once per process).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "io/file_util.h"

namespace stoker::io {

struct ObjectCacheSettings {
  std::filesystem::path dir;  // empty: no cache
  uint64_t max_bytes = 0;
};

// STOKER_REMOTE_CACHE and STOKER_REMOTE_CACHE_MIB (an invalid value is an ArgumentError).
ObjectCacheSettings object_cache_settings();

// A descriptor of the local copy of the remote object `location` (version `etag`, `size`
// bytes), from the cache or downloaded into it; nullopt when the object is not to be cached
// (no cache, larger than the budget, the cache cannot be written, the download failed: then
// the caller reads the object remotely, with its own retries and errors).
std::optional<UniqueFd> cached_object(const ObjectCacheSettings& settings,
                                      const std::string& location, const std::string& etag,
                                      uint64_t size);

}  // namespace stoker::io
