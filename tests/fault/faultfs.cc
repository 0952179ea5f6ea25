// faultfs: a read-only FUSE passthrough of a folder that fails or stalls chosen calls, for the
// fault-injection tests (issue 18). Storage that returns EIO, refuses a file, loses it or hangs
// in a read is what a real network mount does; these tests need the kernel's own error paths
// (open, pread, mmap page faults), which no in-process mock reaches.
//
//   faultfs SOURCE MOUNTPOINT --rules=FILE [--log=FILE] [--direct-io] [-f] [-o OPT,...]
//
// RULES is re-read whenever it changes (its mtime, size or inode), so a test turns faults on
// and off while a job runs. One rule per line, `#` starts a comment:
//
//   OP GLOB ACTION [TIMES]
//
//   OP      open | read | any          which call the rule applies to
//   GLOB    an fnmatch(3) pattern on the path below the root ("/cat/1.jpg"); `*` crosses `/`
//   ACTION  EIO | EACCES | ENOENT      the call fails with that errno
//           stall                      the call waits until no stall rule matches it any more
//                                      (the test rewrites RULES), or the caller is interrupted
//   TIMES   only the first TIMES matching calls fail (counted from the last reload); default all
//
// The first matching rule that is not spent decides. Every injected fault is appended to LOG as
// "ACTION OP PATH" (one write per line), so a test can assert that its fault was really hit.
//
// --direct-io opens every file with FOPEN_DIRECT_IO: reads bypass the page cache (every epoch
// reaches the rules) and the kernel refuses shared mappings (mmap fails with ENODEV), like
// file systems that cannot map.
#define FUSE_USE_VERSION 31

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <fuse.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

enum class Op { kOpen, kRead, kAny };

struct Rule {
  Op op;
  std::string glob;
  int error;   // 0: stall
  long times;  // -1: every matching call
  long used = 0;
  std::string text;
};

struct Options {
  char* rules = nullptr;
  char* log = nullptr;
  int direct_io = 0;
};

Options options;
std::string source;  // absolute path of the folder passed through

const fuse_opt kOptionSpec[] = {
    {"--rules=%s", offsetof(Options, rules), 0},
    {"--log=%s", offsetof(Options, log), 0},
    {"--direct-io", offsetof(Options, direct_io), 1},
    FUSE_OPT_END,
};

class Rules {
 public:
  // The action for OP on PATH: 0 (pass), an errno, or -1 (stall). Counts a use of the rule.
  int decide(Op op, const char* path) {
    std::lock_guard<std::mutex> lock(mutex_);
    reload_if_changed();
    for (Rule& rule : rules_) {
      if (rule.op != Op::kAny && rule.op != op) continue;
      if (::fnmatch(rule.glob.c_str(), path, 0) != 0) continue;
      if (rule.times >= 0 && rule.used >= rule.times) continue;
      ++rule.used;
      return rule.error == 0 ? -1 : rule.error;
    }
    return 0;
  }

  // Whether a stall rule still holds OP on PATH (without counting a use).
  bool still_stalled(Op op, const char* path) {
    std::lock_guard<std::mutex> lock(mutex_);
    reload_if_changed();
    for (const Rule& rule : rules_) {
      if (rule.error != 0 || (rule.op != Op::kAny && rule.op != op)) continue;
      if (::fnmatch(rule.glob.c_str(), path, 0) == 0) return true;
    }
    return false;
  }

 private:
  void reload_if_changed() {
    struct stat st {};
    if (options.rules == nullptr || ::stat(options.rules, &st) != 0) {
      rules_.clear();
      return;
    }
    if (loaded_ && st.st_mtim.tv_sec == stamp_.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == stamp_.st_mtim.tv_nsec && st.st_size == stamp_.st_size &&
        st.st_ino == stamp_.st_ino) {
      return;
    }
    stamp_ = st;
    loaded_ = true;
    rules_.clear();
    std::ifstream in(options.rules);
    std::string line;
    while (std::getline(in, line)) {
      const size_t hash = line.find('#');
      if (hash != std::string::npos) line.resize(hash);
      std::istringstream words(line);
      std::string op, glob, action;
      if (!(words >> op >> glob >> action)) continue;
      Rule rule{};
      rule.text = line;
      rule.op = op == "open" ? Op::kOpen : op == "read" ? Op::kRead : Op::kAny;
      rule.glob = glob;
      rule.error = action == "EIO"      ? EIO
                   : action == "EACCES" ? EACCES
                   : action == "ENOENT" ? ENOENT
                                        : 0;
      if (rule.error == 0 && action != "stall") {
        std::fprintf(stderr, "faultfs: %s: unknown action '%s' (ignored)\n", options.rules,
                     action.c_str());
        continue;
      }
      if (!(words >> rule.times)) rule.times = -1;
      rules_.push_back(rule);
    }
  }

  std::mutex mutex_;
  bool loaded_ = false;
  struct stat stamp_ {};
  std::vector<Rule> rules_;
};

Rules rules;

const char* op_name(Op op) { return op == Op::kOpen ? "open" : "read"; }

const char* error_name(int error) {
  return error == EIO ? "EIO" : error == EACCES ? "EACCES" : "ENOENT";
}

void log_fault(const char* action, Op op, const char* path) {
  if (options.log == nullptr) return;
  const std::string line = std::string(action) + " " + op_name(op) + " " + path + "\n";
  const int fd = ::open(options.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  // One write per line with O_APPEND: lines from concurrent calls never interleave.
  [[maybe_unused]] ssize_t n = ::write(fd, line.data(), line.size());
  ::close(fd);
}

// 0 to go on, else the negative errno the call returns.
int inject(Op op, const char* path) {
  const int action = rules.decide(op, path);
  if (action == 0) return 0;
  if (action > 0) {
    log_fault(error_name(action), op, path);
    return -action;
  }
  log_fault("stall", op, path);
  while (rules.still_stalled(op, path)) {
    // A stalled call ends when the caller is interrupted (a signal on a read the kernel lets
    // be interrupted), as a hung NFS read does on an `intr` mount.
    if (fuse_interrupted()) return -EINTR;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  log_fault("resumed", op, path);
  return 0;
}

std::string real(const char* path) { return source + path; }

int fs_getattr(const char* path, struct stat* st, fuse_file_info*) {
  return ::lstat(real(path).c_str(), st) == 0 ? 0 : -errno;
}

int fs_readlink(const char* path, char* buf, size_t size) {
  const ssize_t n = ::readlink(real(path).c_str(), buf, size - 1);
  if (n < 0) return -errno;
  buf[n] = '\0';
  return 0;
}

int fs_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t, fuse_file_info*,
               fuse_readdir_flags) {
  DIR* dir = ::opendir(real(path).c_str());
  if (dir == nullptr) return -errno;
  while (const dirent* entry = ::readdir(dir)) {
    struct stat st {};
    st.st_ino = entry->d_ino;
    st.st_mode = static_cast<mode_t>(DTTOIF(entry->d_type));
    if (fill(buf, entry->d_name, &st, 0, static_cast<fuse_fill_dir_flags>(0)) != 0) break;
  }
  ::closedir(dir);
  return 0;
}

int fs_open(const char* path, fuse_file_info* fi) {
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return -EROFS;
  if (const int error = inject(Op::kOpen, path); error != 0) return error;
  const int fd = ::open(real(path).c_str(), fi->flags & ~O_CREAT);
  if (fd < 0) return -errno;
  fi->fh = static_cast<uint64_t>(fd);
  fi->direct_io = options.direct_io;
  return 0;
}

int fs_read(const char* path, char* buf, size_t size, off_t offset, fuse_file_info* fi) {
  if (const int error = inject(Op::kRead, path); error != 0) return error;
  const ssize_t n = ::pread(static_cast<int>(fi->fh), buf, size, offset);
  return n < 0 ? -errno : static_cast<int>(n);
}

int fs_release(const char*, fuse_file_info* fi) {
  ::close(static_cast<int>(fi->fh));
  return 0;
}

int fs_statfs(const char* path, struct statvfs* st) {
  return ::statvfs(real(path).c_str(), st) == 0 ? 0 : -errno;
}

void* fs_init(fuse_conn_info*, fuse_config* config) {
  // No attribute or entry caching: a rule on `open` or a vanished file is seen at once.
  config->entry_timeout = 0;
  config->attr_timeout = 0;
  config->negative_timeout = 0;
  config->use_ino = 1;
  return nullptr;
}

int parse_arg(void*, const char* arg, int key, fuse_args*) {
  if (key == FUSE_OPT_KEY_NONOPT && source.empty()) {
    char* resolved = ::realpath(arg, nullptr);
    if (resolved == nullptr) {
      std::fprintf(stderr, "faultfs: %s: %s\n", arg, std::strerror(errno));
      std::exit(2);
    }
    source = resolved;
    std::free(resolved);
    return 0;  // consumed: libfuse sees only the mount point
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  fuse_args args = FUSE_ARGS_INIT(argc, argv);
  if (fuse_opt_parse(&args, &options, kOptionSpec, parse_arg) != 0) return 2;
  if (source.empty()) {
    std::fprintf(stderr,
                 "usage: faultfs SOURCE MOUNTPOINT --rules=FILE [--log=FILE] [--direct-io] "
                 "[-f] [-o OPT,...]\n");
    return 2;
  }
  fuse_operations ops{};
  ops.getattr = fs_getattr;
  ops.readlink = fs_readlink;
  ops.readdir = fs_readdir;
  ops.open = fs_open;
  ops.read = fs_read;
  ops.release = fs_release;
  ops.statfs = fs_statfs;
  ops.init = fs_init;
  const int rc = fuse_main(args.argc, args.argv, &ops, nullptr);
  fuse_opt_free_args(&args);
  return rc;
}
