// Where this process stands in a distributed job, and how many threads it may use.
//
// Rank discovery order: explicit arguments; then torchrun (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE); then Open MPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE);
// then Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, and the tasks on this node from
// SLURM_TASKS_PER_NODE with SLURM_NODEID, else SLURM_NTASKS_PER_NODE capped at the world size,
// else the first group of SLURM_TASKS_PER_NODE); else a single rank.
// A malformed or inconsistent value (rank >= world, non-numeric) throws stoker::Error naming
// the variable. Thread-safety: reads the environment; call from one thread at start-up.
#pragma once

#include <optional>
#include <string>

namespace stoker {

struct RankInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;        // ranks sharing this node
  std::string source = "default";  // "arguments", "torchrun", "openmpi", "slurm", "default"
};

// Explicit rank and world size win when both are given; giving one alone is an error.
RankInfo discover_rank(std::optional<int> rank = std::nullopt,
                       std::optional<int> world_size = std::nullopt);

// CPUs this process may run on: sched_getaffinity, lowered by the cgroup v2 cpu.max quota
// (or v1 cfs_quota_us / cfs_period_us) when one is set, rounded up, at least 1.
int available_cpus();

// The default worker count of one loader: available_cpus() / local_world_size, at least 1.
int default_threads(const RankInfo& rank);

}  // namespace stoker
