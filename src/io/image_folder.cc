// ImageFolder: torchvision 0.14's datasets.ImageFolder listing, walked with raw POSIX calls
// (d_type spares a stat per entry) and cached on disk (index_cache.h).
//
// torchvision's rules, mirrored exactly:
//   classes = sorted(e.name for e in os.scandir(root) if e.is_dir())   # follows symlinks
//   for each class c (label = its position):
//     for top, _, fnames in sorted(os.walk(root/c, followlinks=True)):
//       for f in sorted(fnames): keep top/f if f.lower() ends with an image extension
// - sorted(os.walk(...)) orders the folders by their whole path string, so "c/a b" comes
//   before "c/a/x" (' ' < '/'): it is not a depth-first order. Strings compare by code point,
//   which for UTF-8 names is the byte order std::string uses.
// - fnames holds every entry that is not a folder after following symlinks: regular files,
//   links to files, dangling links (read() later fails on those, naming them). A folder named
//   "x.jpg" is walked, not listed.
// - A folder os.walk cannot open is skipped silently by torchvision; we skip it with a
//   warning and do not cache the result.
// One deliberate difference: os.walk(followlinks=True) follows a symlink to an ancestor folder
// round and round until the kernel refuses the path (ELOOP), listing every file ~40 times; we
// do not enter a folder that is already on the current path, and warn.
#include "io/image_folder.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string_view>
#include <utility>

#include "io/cache_file.h"
#include "io/file_util.h"
#include "io/index_cache.h"
#include "io/sample_table.h"
#include "io/table_dataset.h"
#include "stoker/error.h"
#include "stoker/log.h"
#include "util/check.h"
#include "util/logging.h"

namespace stoker {
namespace io {
namespace {

// torchvision.datasets.folder.IMG_EXTENSIONS, in its order (the error message lists them).
constexpr std::string_view kExtensions[] = {".jpg", ".jpeg", ".png",  ".ppm", ".bmp",
                                            ".pgm", ".tif",  ".tiff", ".webp"};

bool has_image_extension(std::string_view name) {
  for (std::string_view ext : kExtensions) {
    if (name.size() < ext.size()) continue;
    const std::string_view tail = name.substr(name.size() - ext.size());
    // ASCII lowering is exact here: no non-ASCII character lowers to a letter of these.
    if (std::equal(tail.begin(), tail.end(), ext.begin(), [](char a, char b) {
          return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b;
        })) {
      return true;
    }
  }
  return false;
}

struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};
using DirHandle = std::unique_ptr<DIR, DirCloser>;

using FileEntry = std::pair<std::string, int64_t>;  // name, size (-1: could not stat)

// Walks the class folders of one root, opened once; paths are relative to it.
class FolderWalker {
 public:
  FolderWalker(std::string root, UniqueFd root_fd)
      : root_(std::move(root)), root_fd_(std::move(root_fd)) {}

  // The sorted names of the root's entries that are folders (following symlinks).
  std::vector<std::string> list_classes() {
    std::vector<std::string> classes;
    UniqueFd fd(::dup(root_fd_.get()));
    const int error = fd.valid() ? read_dir(std::move(fd), nullptr, &classes) : errno;
    if (error != 0) STOKER_THROW_IO(error, root_, "{}: {}", root_, errno_message(error));
    std::sort(classes.begin(), classes.end());
    return classes;
  }

  // Appends the image files under class folder `name` with `label`, in torchvision's order.
  void walk_class(const std::string& name, int64_t label, SampleTable& out) {
    struct Listing {
      std::string path;
      std::vector<FileEntry> files;
    };
    struct Node {  // a folder entered, for loop detection along the current path
      dev_t dev;
      ino_t ino;
      int parent;
    };
    std::vector<Listing> listings;
    std::vector<Node> nodes;
    std::vector<std::pair<std::string, int>> pending = {{name, -1}};  // path, parent node
    while (!pending.empty()) {
      auto [path, parent] = std::move(pending.back());
      pending.pop_back();
      // Opening by the whole path from the root follows symlinks on the way, like os.walk's
      // os.path.join, and holds no descriptor per level.
      UniqueFd fd(::openat(root_fd_.get(), path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      struct stat st;
      if (!fd.valid() || ::fstat(fd.get(), &st) != 0) {
        skip(path, errno_message(errno));
        continue;
      }
      bool loop = false;
      for (int n = parent; n >= 0 && !loop; n = nodes[n].parent) {
        loop = nodes[n].dev == st.st_dev && nodes[n].ino == st.st_ino;
      }
      if (loop) {
        log(LogLevel::kWarning, "{}/{}: not followed: a symlink back to a folder above it", root_,
            path);
        continue;
      }
      dirs.push_back({path, static_cast<uint64_t>(st.st_ino), mtime_ns(st)});
      Listing listing{path, {}};
      std::vector<std::string> subdirs;
      if (const int error = read_dir(std::move(fd), &listing.files, &subdirs); error != 0) {
        skip(path, errno_message(error));
        continue;
      }
      const int node = static_cast<int>(nodes.size());
      nodes.push_back({st.st_dev, st.st_ino, parent});
      for (const std::string& sub : subdirs) pending.emplace_back(path + "/" + sub, node);
      listings.push_back(std::move(listing));
    }
    std::sort(listings.begin(), listings.end(),
              [](const Listing& a, const Listing& b) { return a.path < b.path; });
    std::string full;
    for (Listing& listing : listings) {
      std::sort(listing.files.begin(), listing.files.end());
      for (const auto& [file, size] : listing.files) {
        full.assign(listing.path).append("/").append(file);
        out.add(full, size, label);
      }
    }
  }

  std::vector<DirStamp> dirs;  // every folder entered
  bool complete = true;        // false when a folder could not be read

 private:
  void skip(const std::string& path, const std::string& why) {
    log(LogLevel::kWarning, "{}/{}: skipped, cannot read the folder: {}", root_, path, why);
    complete = false;
  }

  // Reads the folder open on `fd`: image files (when `files` is given) with their sizes, and
  // the names of sub-folders. Returns 0, or the errno that stopped the reading.
  int read_dir(UniqueFd fd, std::vector<FileEntry>* files, std::vector<std::string>* subdirs) {
    DirHandle dir(::fdopendir(fd.get()));
    if (dir == nullptr) return errno;
    fd.release();  // now owned by `dir`
    const int dfd = ::dirfd(dir.get());
    while (true) {
      errno = 0;
      const dirent* entry = ::readdir(dir.get());
      if (entry == nullptr) return errno;
      const char* name = entry->d_name;
      if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
      const bool wanted = files != nullptr && has_image_extension(name);
      bool is_dir = false;
      int64_t size = -1;
      struct stat st;
      if (entry->d_type == DT_DIR) {
        is_dir = true;
      } else if (entry->d_type == DT_LNK || entry->d_type == DT_UNKNOWN) {
        // Like DirEntry.is_dir(): follow the link; any failure (dangling) means "not a folder".
        if (::fstatat(dfd, name, &st, 0) == 0) {
          is_dir = S_ISDIR(st.st_mode);
          size = st.st_size;
        }
      } else if (wanted && ::fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        size = st.st_size;
      }
      if (is_dir) {
        subdirs->emplace_back(name);
      } else if (wanted) {
        files->emplace_back(name, size);
      }
    }
  }

  std::string root_;
  UniqueFd root_fd_;
};

// Walks `root` by torchvision's rules. `cacheable` says whether the result may be cached.
FolderIndex walk_folder(const std::string& root, bool& cacheable) {
  const int64_t start_ns = now_ns();
  UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  struct stat st;
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) {
    STOKER_THROW_IO(errno, root, "{}: {}", root, errno_message(errno));
  }
  FolderWalker walker(root, std::move(fd));
  walker.dirs.push_back({"", static_cast<uint64_t>(st.st_ino), mtime_ns(st)});

  FolderIndex index;
  index.classes = walker.list_classes();
  STOKER_CHECK_ARG(!index.classes.empty(), "{}: no class folders", root);
  std::vector<std::string_view> empty;
  for (size_t label = 0; label < index.classes.size(); ++label) {
    const int64_t before = index.samples.size();
    walker.walk_class(index.classes[label], static_cast<int64_t>(label), index.samples);
    if (index.samples.size() == before) empty.push_back(index.classes[label]);
  }
  if (!empty.empty()) {
    STOKER_THROW_ARG("{}: Found no valid file for the classes {}. Supported extensions are: {}",
                     root, fmt::join(empty, ", "), fmt::join(kExtensions, ", "));
  }
  index.dirs = std::move(walker.dirs);

  int64_t newest_ns = 0;
  for (const DirStamp& dir : index.dirs) newest_ns = std::max(newest_ns, dir.mtime_ns);
  cacheable = walker.complete && newest_ns < start_ns - kRacyWindowNs;
  if (walker.complete && !cacheable) {
    log(LogLevel::kDebug, "{}: not caching the index: a folder changed less than 2 s ago", root);
  }
  return index;
}

// Relative sample paths hang off the root as the user named it.
std::shared_ptr<Dataset> make_image_folder(const std::string& root, FolderIndex index) {
  std::string prefix = root.empty() || root.back() == '/' ? root : root + "/";
  return std::make_shared<TableDataset>("image-folder", root, std::move(prefix),
                                        SampleView(std::move(index.samples)),
                                        std::move(index.classes));
}

}  // namespace

ImageFolderOpening open_image_folder_traced(const std::filesystem::path& root,
                                            const ImageFolderConfig& options) {
  const std::string root_name = root.string();
  STOKER_CHECK_ARG(!root_name.empty(), "image folder: empty path");
  ImageFolderOpening result;
  std::string canonical;
  if (const std::filesystem::path dir = cache_dir_from_option(options.cache); !dir.empty()) {
    std::error_code ec;
    canonical = std::filesystem::canonical(root, ec).string();
    // A root that cannot be resolved fails below, in the walk, with a proper message.
    if (!ec) result.cache_file = cache_file_path(dir, canonical);
  }
  if (!result.cache_file.empty()) {
    if (std::optional<FolderIndex> index = load_index(result.cache_file, canonical)) {
      log(LogLevel::kDebug, "{}: index loaded from {}", root_name, result.cache_file.string());
      result.dataset = make_image_folder(root_name, std::move(*index));
      result.from_cache = true;
      return result;
    }
  }
  bool cacheable = false;
  FolderIndex index = walk_folder(root_name, cacheable);
  if (!result.cache_file.empty() && cacheable) {
    result.cache_written = store_index(result.cache_file, canonical, index);
  }
  result.dataset = make_image_folder(root_name, std::move(index));
  return result;
}

}  // namespace io

std::shared_ptr<Dataset> open_image_folder(const std::filesystem::path& root,
                                           const ImageFolderConfig& options) {
  return io::open_image_folder_traced(root, options).dataset;
}

}  // namespace stoker
