// Index cache file format, version 1: a frame (io/cache_file.h) with magic "STKIDX01" around
// this payload. All integers are little-endian.
//
//                   str  canonical absolute root folder (must equal the folder being opened)
//                   u64  class count C, then C x str class name (strictly increasing bytes)
//                   u64  folder count D, then D x { str path relative to the root ("" = root),
//                                                   u64 inode, i64 mtime in ns }
//                   u64  sample count N
//                   u64  path bytes B, then B bytes: the N relative paths concatenated
//                   N x u64  end offset of each path in those bytes (increasing, last = B)
//                   N x i64  file size in bytes (-1: could not stat, e.g. a dangling link)
//                   N x u32  label (< C, non-decreasing)
//   str = u32 length + that many bytes, no terminator.
//
// Every path is relative ("a/b.jpg": no leading or trailing '/', no empty, "." or ".."
// component, no NUL) and a sample's path starts with its class name and '/', so a forged cache
// cannot point a sample outside the root. The sample columns are stored apart so that loading
// is a few bulk copies rather than a parse per sample.
#include "io/index_cache.h"

#include <sys/stat.h>
#include <xxhash.h>

#include <cerrno>

#include "io/cache_file.h"
#include "io/file_util.h"
#include "stoker/error.h"
#include "stoker/log.h"
#include "util/env_vars.h"
#include "util/logging.h"

namespace stoker::io {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'K', 'I', 'D', 'X', '0', '1'};
constexpr uint32_t kVersion = 1;
// Bytes per sample in the three columns (end offset, size, label).
constexpr uint64_t kSampleColumnBytes = 8 + 8 + 4;

bool valid_relative_path(std::string_view path) {
  if (path.empty() || path.find('\0') != std::string_view::npos) return false;
  size_t begin = 0;
  while (true) {
    const size_t end = std::min(path.find('/', begin), path.size());
    const std::string_view part = path.substr(begin, end - begin);
    if (part.empty() || part == "." || part == "..") return false;
    if (end == path.size()) return true;
    begin = end + 1;
  }
}

FolderIndex decode_payload(std::string_view payload, std::string_view canonical_root) {
  Reader in(payload);
  if (in.str("truncated root") != canonical_root) throw Malformed{"written for another folder"};

  FolderIndex index;
  const uint64_t num_classes = in.count(4, "class");
  index.classes.reserve(num_classes);
  for (uint64_t i = 0; i < num_classes; ++i) {
    const std::string_view name = in.str("truncated class name");
    if (!valid_relative_path(name) || name.find('/') != std::string_view::npos) {
      throw Malformed{"bad class name"};
    }
    if (i > 0 && !(index.classes.back() < name)) throw Malformed{"classes not sorted"};
    index.classes.emplace_back(name);
  }

  const uint64_t num_dirs = in.count(4 + 8 + 8, "folder");
  index.dirs.reserve(num_dirs);
  for (uint64_t i = 0; i < num_dirs; ++i) {
    DirStamp stamp;
    stamp.path = in.str("truncated folder path");
    if (!stamp.path.empty() && !valid_relative_path(stamp.path)) throw Malformed{"bad folder"};
    stamp.inode = in.get<uint64_t>();
    stamp.mtime_ns = in.get<int64_t>();
    index.dirs.push_back(std::move(stamp));
  }

  SampleTable& table = index.samples;
  const uint64_t num_samples = in.count(kSampleColumnBytes, "sample");
  const uint64_t path_bytes = in.get<uint64_t>();
  if (path_bytes > in.left()) throw Malformed{"truncated paths"};
  table.paths.assign(in.take(path_bytes, "truncated paths"), path_bytes);
  if (in.left() != num_samples * kSampleColumnBytes) throw Malformed{"bad sample columns size"};
  const char* ends = in.take(num_samples * 8, "truncated");
  const char* sizes = in.take(num_samples * 8, "truncated");
  const char* labels = in.take(num_samples * 4, "truncated");
  table.ends.resize(num_samples);
  table.sizes.resize(num_samples);
  table.labels.resize(num_samples);
  uint64_t previous_end = 0;
  int64_t previous_label = 0;
  for (uint64_t i = 0; i < num_samples; ++i) {
    const uint64_t end = get_le<uint64_t>(ends + 8 * i);
    const uint32_t label = get_le<uint32_t>(labels + 4 * i);
    if (end <= previous_end || end > path_bytes) throw Malformed{"bad path offsets"};
    if (label >= num_classes || label < previous_label) throw Malformed{"bad labels"};
    table.ends[i] = end;
    table.sizes[i] = get_le<int64_t>(sizes + 8 * i);
    table.labels[i] = label;
    previous_end = end;
    previous_label = label;
  }
  if (previous_end != path_bytes) throw Malformed{"bad path offsets"};
  for (uint64_t i = 0; i < num_samples; ++i) {
    const std::string_view path = table.path(static_cast<int64_t>(i));
    const std::string& cls = index.classes[table.labels[i]];
    if (!valid_relative_path(path) || path.size() <= cls.size() || path[cls.size()] != '/' ||
        path.compare(0, cls.size(), cls) != 0) {
      throw Malformed{"bad sample path"};
    }
  }
  return index;
}

std::string join(std::string_view root, std::string_view relative) {
  std::string path(root);
  if (!relative.empty()) {
    if (path.empty() || path.back() != '/') path.push_back('/');
    path.append(relative);
  }
  return path;
}

}  // namespace

std::filesystem::path cache_dir_from_option(const std::string& option) {
  if (option == "off") return {};
  if (!option.empty()) return option;
  const std::string dir = util::env_string(util::kCacheDir);
  if (dir == "off") return {};
  if (!dir.empty()) return dir;
  // XDG says a relative XDG_CACHE_HOME is invalid and must be ignored.
  const std::string xdg = util::env_string("XDG_CACHE_HOME");
  if (!xdg.empty() && xdg.front() == '/') return std::filesystem::path(xdg) / "stoker";
  const std::string home = util::env_string("HOME");
  if (!home.empty()) return std::filesystem::path(home) / ".cache" / "stoker";
  log(LogLevel::kDebug, "index cache disabled: no STOKER_CACHE_DIR, XDG_CACHE_HOME or HOME");
  return {};
}

std::filesystem::path cache_file_path(const std::filesystem::path& cache_dir,
                                      std::string_view canonical_root) {
  return cache_dir / fmt::format("folder-{:016x}.stkidx",
                                 XXH3_64bits(canonical_root.data(), canonical_root.size()));
}

std::string encode_index(std::string_view canonical_root, const FolderIndex& index) {
  const SampleTable& table = index.samples;
  std::string payload;
  payload.reserve(canonical_root.size() + table.paths.size() +
                  table.ends.size() * kSampleColumnBytes + index.dirs.size() * 64 + 64);
  put_str(payload, canonical_root);
  put<uint64_t>(payload, index.classes.size());
  for (const std::string& name : index.classes) put_str(payload, name);
  put<uint64_t>(payload, index.dirs.size());
  for (const DirStamp& dir : index.dirs) {
    put_str(payload, dir.path);
    put<uint64_t>(payload, dir.inode);
    put<int64_t>(payload, dir.mtime_ns);
  }
  put<uint64_t>(payload, table.ends.size());
  put<uint64_t>(payload, table.paths.size());
  payload.append(table.paths);
  for (uint64_t end : table.ends) put<uint64_t>(payload, end);
  for (int64_t size : table.sizes) put<int64_t>(payload, size);
  for (int64_t label : table.labels) put<uint32_t>(payload, static_cast<uint32_t>(label));

  return frame_cache(kMagic, kVersion, payload);
}

std::optional<FolderIndex> decode_index(std::string_view bytes, std::string_view canonical_root,
                                        std::string& why) {
  const std::optional<std::string_view> payload = unframe_cache(bytes, kMagic, kVersion, why);
  if (!payload) return std::nullopt;
  try {
    return decode_payload(*payload, canonical_root);
  } catch (const Malformed& e) {
    why = e.why;
    return std::nullopt;
  }
}

bool index_is_current(std::string_view canonical_root, const FolderIndex& index, std::string& why) {
  for (const DirStamp& dir : index.dirs) {
    const std::string path = join(canonical_root, dir.path);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      why = fmt::format("{}: {}", path, errno_message(errno));
      return false;
    }
    if (!S_ISDIR(st.st_mode) || st.st_ino != dir.inode || mtime_ns(st) != dir.mtime_ns) {
      why = fmt::format("{} changed", path);
      return false;
    }
  }
  return true;
}

std::optional<FolderIndex> load_index(const std::filesystem::path& file,
                                      std::string_view canonical_root) {
  const std::optional<std::string> bytes = read_cache_file(file);
  if (!bytes) return std::nullopt;
  std::string why;
  std::optional<FolderIndex> index = decode_index(*bytes, canonical_root, why);
  if (!index) {
    log(LogLevel::kDebug, "ignoring index cache {}: {}", file.string(), why);
    return std::nullopt;
  }
  if (!index_is_current(canonical_root, *index, why)) {
    log(LogLevel::kDebug, "index cache {} is stale: {}", file.string(), why);
    return std::nullopt;
  }
  return index;
}

bool store_index(const std::filesystem::path& file, std::string_view canonical_root,
                 const FolderIndex& index) {
  return write_cache_file(file, encode_index(canonical_root, index), "index cache",
                          "the folder will be walked again");
}

}  // namespace stoker::io
