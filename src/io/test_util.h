// Helpers for the io tests: files, folder times and error texts (temporary folders and
// environment guards: util/test_util.h).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "stoker/error.h"
#include "util/test_util.h"

namespace stoker::test {

// Writes `content` to `path`, creating its parent folders.
inline void write_file(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// Sets the mtime of `root` and every real folder below it to about an hour ago, so that the
// index cache does not treat them as still changing (see kRacyWindowNs in image_folder.cc).
// Each call picks another time: restoring an older mtime would make an older cache valid again.
inline void backdate_folders(const std::filesystem::path& root) {
  // An hour before the first call, one second earlier at each call: every call's time is new.
  // (Counting back from each call's own time(nullptr) repeated an earlier call's time whenever
  // the clock had moved on by as many seconds as calls were made in between, and a cached
  // index stamped with that time then looked valid again.)
  static const time_t first = ::time(nullptr) - 3600;
  static int calls = 0;
  const struct timespec times[2] = {{0, UTIME_OMIT}, {first - ++calls, 0}};
  std::vector<std::filesystem::path> dirs = {root};
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.is_directory() && !entry.is_symlink()) dirs.push_back(entry.path());
  }
  for (const auto& dir : dirs) {
    if (::utimensat(AT_FDCWD, dir.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
      throw std::runtime_error("utimensat " + dir.string());
    }
  }
}

// The message of the stoker::Error `fn` throws, or "<no error>".
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.message();
  }
  return "<no error>";
}

}  // namespace stoker::test
