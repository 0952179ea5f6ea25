// The on-disk cache of an image folder's index (private to src/io).
//
// Walking a million-file folder takes minutes on a network file system, once per rank. After
// a walk the index is written to CACHE_DIR/folder-<XXH3 of the canonical root>.stkidx; the next
// open (any rank, any process) loads it instead, provided every folder the walk read still has
// the inode and modification time it had then. Adding, removing or renaming an entry changes
// its folder's mtime, so the cache cannot hide a changed listing. What it cannot see: a file
// rewritten in place (same name, new size) keeps its old size in the cached index — and hence
// in the fingerprint — until some folder changes.
//
// A cache file is never trusted: a bad magic, version, length, checksum or listing makes the
// cache a miss (debug log), never an error. Writes go to a temporary file in the same folder
// and are renamed into place, so ranks writing at the same time each leave a whole file. A
// failed write (read-only file system, no space) is a warning.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/sample_table.h"

namespace stoker::io {

// A folder read by the walk, relative to the root ("" is the root itself).
struct DirStamp {
  std::string path;
  uint64_t inode = 0;
  int64_t mtime_ns = 0;
};

struct FolderIndex {
  std::vector<std::string> classes;  // sorted, label = position
  SampleTable samples;               // paths relative to the root
  std::vector<DirStamp> dirs;
};

// The cache folder ImageFolderConfig::cache names: "off" (or, for "", STOKER_CACHE_DIR=off)
// disables it (empty path); "" means $STOKER_CACHE_DIR, else $XDG_CACHE_HOME/stoker, else
// $HOME/.cache/stoker.
std::filesystem::path cache_dir_from_option(const std::string& option);

// The cache file of the folder whose canonical absolute path is `canonical_root`.
std::filesystem::path cache_file_path(const std::filesystem::path& cache_dir,
                                      std::string_view canonical_root);

// Serializes `index` of `canonical_root` into the format described in index_cache.cc.
std::string encode_index(std::string_view canonical_root, const FolderIndex& index);

// Parses a cache file's bytes. Returns nullopt, with the reason in `why`, unless the bytes are
// a complete, consistent index of `canonical_root`.
std::optional<FolderIndex> decode_index(std::string_view bytes, std::string_view canonical_root,
                                        std::string& why);

// True when every folder in `index.dirs` still has its recorded inode and mtime.
bool index_is_current(std::string_view canonical_root, const FolderIndex& index, std::string& why);

// Reads, decodes and validates a cache file; nullopt (and a debug log saying why) on a miss.
std::optional<FolderIndex> load_index(const std::filesystem::path& file,
                                      std::string_view canonical_root);

// Writes the cache file atomically. Returns false (after a warning) when it could not.
bool store_index(const std::filesystem::path& file, std::string_view canonical_root,
                 const FolderIndex& index);

}  // namespace stoker::io
