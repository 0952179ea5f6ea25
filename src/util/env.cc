#include "stoker/env.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "stoker/error.h"
#include "util/check.h"
#include "util/env_parse.h"
#include "util/env_vars.h"
#include "util/text.h"

namespace stoker {
namespace {

// Strict decimal: the whole string, optional leading '-', nothing else. nullopt otherwise.
std::optional<int64_t> parse_int(std::string_view s) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, 10);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// An integer environment variable; unset or empty reads as nullopt (scripts clear variables
// with `export RANK=`). A value that is not an int throws, naming the variable.
std::optional<int> env_int(const char* name) {
  const std::optional<std::string> value = util::env_text(name);
  if (!value) return std::nullopt;
  const auto parsed = parse_int(*value);
  STOKER_CHECK_ARG(parsed && *parsed >= std::numeric_limits<int>::min() &&
                       *parsed <= std::numeric_limits<int>::max(),
                   "environment variable {}=\"{}\" is not an integer", name, *value);
  return static_cast<int>(*parsed);
}

// Names of one launcher's variables, for error messages.
struct Names {
  const char* source;
  const char* rank;
  const char* world;
  const char* local_rank;
  const char* local_world;  // nullptr: computed by the caller (Slurm)
};

constexpr Names kTorchrun = {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"};
constexpr Names kOpenMpi = {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                            "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"};
constexpr Names kSlurm = {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr};

void check_rank(int rank, int world, const char* rank_name, const char* world_name) {
  STOKER_CHECK_ARG(world >= 1, "{} = {} must be at least 1", world_name, world);
  STOKER_CHECK_ARG(rank >= 0 && rank < world, "{} = {} is outside [0, {} = {})", rank_name, rank,
                   world_name, world);
}

// Local rank and local world size: optional (default 0 of 1), but when given they must fit.
void set_local(RankInfo& info, std::optional<int> local_rank, std::optional<int> local_world,
               const char* local_rank_name, const char* local_world_name) {
  if (local_world) {
    STOKER_CHECK_ARG(*local_world >= 1 && *local_world <= info.world_size,
                     "{} = {} is outside [1, world size = {}]", local_world_name, *local_world,
                     info.world_size);
    info.local_world_size = *local_world;
  }
  if (local_rank) {
    STOKER_CHECK_ARG(*local_rank >= 0 && *local_rank < info.world_size,
                     "{} = {} is outside [0, world size = {})", local_rank_name, *local_rank,
                     info.world_size);
    STOKER_CHECK_ARG(!local_world || *local_rank < *local_world, "{} = {} is not below {} = {}",
                     local_rank_name, *local_rank, local_world_name, *local_world);
    info.local_rank = *local_rank;
  }
}

// torchrun or Open MPI: both of rank and world size, or neither.
std::optional<RankInfo> from_launcher(const Names& n) {
  const auto rank = env_int(n.rank);
  const auto world = env_int(n.world);
  if (!rank && !world) return std::nullopt;
  STOKER_CHECK_ARG(rank && world, "{} is set but {} is not (a partial {} environment)",
                   rank ? n.rank : n.world, rank ? n.world : n.rank, n.source);
  check_rank(*rank, *world, n.rank, n.world);
  RankInfo info;
  info.rank = *rank;
  info.world_size = *world;
  info.source = n.source;
  set_local(info, env_int(n.local_rank), env_int(n.local_world), n.local_rank, n.local_world);
  return info;
}

// Slurm sets SLURM_PROCID even in a batch script without --ntasks, where SLURM_NTASKS is
// absent: that is one process, not a broken environment, so Slurm needs both to count.
std::optional<RankInfo> from_slurm() {
  const auto rank = env_int(kSlurm.rank);
  const auto world = env_int(kSlurm.world);
  if (!rank || !world) return std::nullopt;
  check_rank(*rank, *world, kSlurm.rank, kSlurm.world);
  RankInfo info;
  info.rank = *rank;
  info.world_size = *world;
  info.source = kSlurm.source;

  // Tasks on this node: SLURM_TASKS_PER_NODE lists every node's count, exact with
  // SLURM_NODEID; SLURM_NTASKS_PER_NODE is only the requested (maximum) count; without a
  // node id, the first group of SLURM_TASKS_PER_NODE is the best guess.
  std::optional<int> local_world;
  const char* local_world_name = "SLURM_TASKS_PER_NODE";
  const std::string tasks_per_node = util::env_string("SLURM_TASKS_PER_NODE");
  const auto node_id = env_int("SLURM_NODEID");
  const auto ntasks_per_node = env_int("SLURM_NTASKS_PER_NODE");
  if (!tasks_per_node.empty() && node_id) {
    STOKER_CHECK_ARG(*node_id >= 0, "SLURM_NODEID = {} is negative", *node_id);
    local_world = util::slurm_tasks_on_node(tasks_per_node, *node_id);
  } else if (ntasks_per_node) {
    local_world = std::min(*ntasks_per_node, *world);
    local_world_name = "SLURM_NTASKS_PER_NODE";
  } else if (!tasks_per_node.empty()) {
    local_world = util::slurm_tasks_on_node(tasks_per_node, 0);
  }
  set_local(info, env_int(kSlurm.local_rank), local_world, kSlurm.local_rank, local_world_name);
  return info;
}

std::optional<RankInfo> from_environment() {
  if (auto info = from_launcher(kTorchrun)) return info;
  if (auto info = from_launcher(kOpenMpi)) return info;
  return from_slurm();
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return {};
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::optional<int> quota_cpus(int64_t quota, int64_t period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  const int64_t cpus = quota / period + (quota % period != 0 ? 1 : 0);
  return static_cast<int>(std::clamp<int64_t>(cpus, 1, std::numeric_limits<int>::max()));
}

std::optional<int> min_limit(std::optional<int> a, std::optional<int> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// `base` and every directory from it down to base/rel, deepest first, that exists.
std::vector<std::filesystem::path> cgroup_dirs(const std::filesystem::path& base,
                                               std::string_view rel) {
  std::vector<std::filesystem::path> dirs{base};
  std::filesystem::path dir = base;
  for (const auto& part : std::filesystem::path(std::string(rel)).relative_path()) {
    // The kernel never writes "..", but a path must not climb out of the mount regardless.
    if (part == ".." || part == "." || part.empty()) break;
    dir /= part;
    dirs.push_back(dir);
  }
  std::vector<std::filesystem::path> existing;
  std::error_code ec;
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    if (std::filesystem::is_directory(*it, ec)) existing.push_back(*it);
  }
  return existing;
}

int affinity_cpus() {
  // CPU_SETSIZE (1024) is too small on some machines; grow the set until the kernel accepts it.
  for (int ncpus = 1024; ncpus <= (1 << 20); ncpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(ncpus);
    if (set == nullptr) break;
    const size_t size = CPU_ALLOC_SIZE(ncpus);
    CPU_ZERO_S(size, set);
    const int rc = sched_getaffinity(0, size, set);
    const int err = rc == 0 ? 0 : errno;
    const int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
    CPU_FREE(set);
    if (rc == 0) return count;
    if (err != EINVAL) break;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

}  // namespace

namespace util {

int slurm_tasks_on_node(std::string_view value, int node_id) {
  // Grammar: group ("," group)*, group = count | count "(x" repeat ")".
  const std::string text(value);
  auto malformed = [&]() {
    STOKER_THROW_ARG("SLURM_TASKS_PER_NODE=\"{}\" is not of the form 4(x2),3", text);
  };
  int64_t node = 0;
  int last = 0;
  std::optional<int> found;
  std::string_view rest = value;
  while (true) {
    const size_t comma = rest.find(',');
    std::string_view group = rest.substr(0, comma);
    int64_t repeat = 1;
    const size_t paren = group.find("(x");
    if (paren != std::string_view::npos) {
      if (group.back() != ')') malformed();
      const auto r = parse_int(group.substr(paren + 2, group.size() - paren - 3));
      if (!r || *r < 1) malformed();
      repeat = *r;
      group = group.substr(0, paren);
    }
    const auto count = parse_int(group);
    if (!count || *count < 1 || *count > std::numeric_limits<int>::max()) malformed();
    last = static_cast<int>(*count);
    // Keep parsing past this node's group, so a malformed value fails on every node alike.
    if (!found && node_id < node + repeat) found = last;
    node += repeat;
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return found.value_or(last);
}

std::optional<int> parse_cpu_max(std::string_view contents) {
  std::istringstream in{std::string(trim(contents))};
  std::string quota, period;
  if (!(in >> quota)) return std::nullopt;
  if (!(in >> period)) period = "100000";  // the kernel's default period
  const auto q = parse_int(quota);         // "max" -> nullopt: unlimited
  const auto p = parse_int(period);
  if (!q || !p) return std::nullopt;
  return quota_cpus(*q, *p);
}

std::optional<int> parse_cfs_quota(std::string_view quota, std::string_view period) {
  const auto q = parse_int(trim(quota));  // -1: unlimited
  const auto p = parse_int(trim(period));
  if (!q || !p) return std::nullopt;
  return quota_cpus(*q, *p);
}

std::optional<int> cgroup_cpu_limit(const std::filesystem::path& root,
                                    std::string_view self_cgroup) {
  // /proc/self/cgroup lines: "hierarchy-id:controllers:path"; v2 is "0::path".
  std::string v2_path;
  std::string v1_path;
  std::istringstream lines{std::string(self_cgroup)};
  for (std::string line; std::getline(lines, line);) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      v2_path = path;
      continue;
    }
    std::istringstream list(controllers);
    for (std::string c; std::getline(list, c, ',');) {
      if (c == "cpu") v1_path = path;
    }
  }

  std::optional<int> limit;
  for (const auto& dir : cgroup_dirs(root, v2_path)) {
    std::error_code ec;
    if (std::filesystem::exists(dir / "cpu.max", ec)) {
      limit = min_limit(limit, parse_cpu_max(read_file(dir / "cpu.max")));
    }
  }
  for (const char* mount : {"cpu", "cpu,cpuacct", "cpuacct,cpu"}) {
    for (const auto& dir : cgroup_dirs(root / mount, v1_path)) {
      std::error_code ec;
      if (std::filesystem::exists(dir / "cpu.cfs_quota_us", ec)) {
        limit = min_limit(limit, parse_cfs_quota(read_file(dir / "cpu.cfs_quota_us"),
                                                 read_file(dir / "cpu.cfs_period_us")));
      }
    }
  }
  return limit;
}

}  // namespace util

RankInfo discover_rank(std::optional<int> rank, std::optional<int> world_size) {
  STOKER_CHECK_ARG(rank.has_value() == world_size.has_value(),
                   "rank and world_size must be given together (got only {})",
                   rank ? "rank" : "world_size");
  if (rank) {
    check_rank(*rank, *world_size, "rank", "world_size");
    RankInfo info;
    info.rank = *rank;
    info.world_size = *world_size;
    info.source = "arguments";
    // The node layout still comes from the launcher, when there is one describing the same
    // job, so default_threads() does not oversubscribe the node. A broken launcher
    // environment is not an error here: the caller chose not to rely on it.
    try {
      if (auto env = from_environment(); env && env->world_size == *world_size) {
        info.local_rank = env->local_rank;
        info.local_world_size = env->local_world_size;
      }
    } catch (const Error&) {
    }
    return info;
  }
  if (auto info = from_environment()) return *info;
  return RankInfo{};
}

int available_cpus() {
  int cpus = affinity_cpus();
  const auto limit = util::cgroup_cpu_limit("/sys/fs/cgroup", read_file("/proc/self/cgroup"));
  if (limit) cpus = std::min(cpus, *limit);
  return std::max(cpus, 1);
}

int default_threads(const RankInfo& rank) {
  return std::max(1, available_cpus() / std::max(1, rank.local_world_size));
}

}  // namespace stoker
