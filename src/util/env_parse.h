// Pieces of env.cc exposed for tests: parsers of Slurm and cgroup values, and the cgroup lookup
// with an overridable root so tests can feed fake cpu.max files. Not public API.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace stoker::util {

// Tasks on node `node_id` from a SLURM_TASKS_PER_NODE value such as "4(x2),3" (nodes 0 and 1
// run 4 tasks, node 2 runs 3). A node_id past the list gets the last group's count.
// Throws stoker::Error naming SLURM_TASKS_PER_NODE when the value is malformed.
int slurm_tasks_on_node(std::string_view value, int node_id);

// CPUs allowed by a cgroup v2 cpu.max ("max 100000" -> nullopt, "150000 100000" -> 2):
// ceil(quota / period), at least 1. nullopt when unlimited or unparsable.
std::optional<int> parse_cpu_max(std::string_view contents);

// The same for cgroup v1: cpu.cfs_quota_us ("-1" = unlimited) and cpu.cfs_period_us.
std::optional<int> parse_cfs_quota(std::string_view quota, std::string_view period);

// The tightest CPU quota that applies to a process whose /proc/self/cgroup reads
// `self_cgroup`, with the cgroup file systems mounted at `root` (normally /sys/fs/cgroup).
// Looks at the process's own cgroup and every ancestor up to `root` (a parent's quota binds
// its children too), for v2 (cpu.max) and v1 (cpu/, cpu,cpuacct/ mounts). Directories that do
// not exist are skipped, which covers containers whose /proc/self/cgroup names a host path
// while `root` is already the container's cgroup. nullopt when no quota is set.
std::optional<int> cgroup_cpu_limit(const std::filesystem::path& root,
                                    std::string_view self_cgroup);

}  // namespace stoker::util
