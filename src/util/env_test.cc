#include "stoker/env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "stoker/error.h"
#include "util/env_parse.h"
#include "util/test_util.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

constexpr const char* kVars[] = {"RANK",
                                 "WORLD_SIZE",
                                 "LOCAL_RANK",
                                 "LOCAL_WORLD_SIZE",
                                 "OMPI_COMM_WORLD_RANK",
                                 "OMPI_COMM_WORLD_SIZE",
                                 "OMPI_COMM_WORLD_LOCAL_RANK",
                                 "OMPI_COMM_WORLD_LOCAL_SIZE",
                                 "SLURM_PROCID",
                                 "SLURM_NTASKS",
                                 "SLURM_LOCALID",
                                 "SLURM_NTASKS_PER_NODE",
                                 "SLURM_TASKS_PER_NODE",
                                 "SLURM_NODEID"};

// Starts every test from an environment without launcher variables (the test may itself run
// under Slurm or torchrun) and puts the originals back afterwards.
class DiscoverRank : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVars)
      cleared_.push_back(std::make_unique<test::EnvGuard>(name, nullptr));
  }
  void TearDown() override { cleared_.clear(); }
  static void set(const char* name, const char* value) { setenv(name, value, 1); }

  static void expect_error_naming(const std::string& variable) {
    try {
      discover_rank();
      ADD_FAILURE() << "expected an error naming " << variable;
    } catch (const Error& e) {
      EXPECT_NE(e.message().find(variable), std::string::npos) << e.message();
    }
  }

 private:
  std::vector<std::unique_ptr<test::EnvGuard>> cleared_;
};

TEST_F(DiscoverRank, DefaultIsOneRank) {
  const RankInfo info = discover_rank();
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.world_size, 1);
  EXPECT_EQ(info.local_rank, 0);
  EXPECT_EQ(info.local_world_size, 1);
  EXPECT_EQ(info.source, "default");
}

TEST_F(DiscoverRank, Torchrun) {
  set("RANK", "5");
  set("WORLD_SIZE", "16");
  set("LOCAL_RANK", "1");
  set("LOCAL_WORLD_SIZE", "4");
  const RankInfo info = discover_rank();
  EXPECT_EQ(info.rank, 5);
  EXPECT_EQ(info.world_size, 16);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.local_world_size, 4);
  EXPECT_EQ(info.source, "torchrun");
}

TEST_F(DiscoverRank, TorchrunWithoutLocalVariables) {
  set("RANK", "0");
  set("WORLD_SIZE", "2");
  const RankInfo info = discover_rank();
  EXPECT_EQ(info.world_size, 2);
  EXPECT_EQ(info.local_rank, 0);
  EXPECT_EQ(info.local_world_size, 1);
}

TEST_F(DiscoverRank, OpenMpi) {
  set("OMPI_COMM_WORLD_RANK", "3");
  set("OMPI_COMM_WORLD_SIZE", "8");
  set("OMPI_COMM_WORLD_LOCAL_RANK", "3");
  set("OMPI_COMM_WORLD_LOCAL_SIZE", "8");
  const RankInfo info = discover_rank();
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.world_size, 8);
  EXPECT_EQ(info.local_rank, 3);
  EXPECT_EQ(info.local_world_size, 8);
  EXPECT_EQ(info.source, "openmpi");
}

TEST_F(DiscoverRank, SlurmWithNodeLayout) {
  set("SLURM_PROCID", "9");
  set("SLURM_NTASKS", "11");
  set("SLURM_LOCALID", "1");
  set("SLURM_TASKS_PER_NODE", "4(x2),3");
  set("SLURM_NODEID", "2");
  const RankInfo info = discover_rank();
  EXPECT_EQ(info.rank, 9);
  EXPECT_EQ(info.world_size, 11);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.local_world_size, 3);  // node 2 is the third node: the ",3" group
  EXPECT_EQ(info.source, "slurm");
}

TEST_F(DiscoverRank, SlurmNtasksPerNode) {
  set("SLURM_PROCID", "2");
  set("SLURM_NTASKS", "8");
  set("SLURM_LOCALID", "2");
  set("SLURM_NTASKS_PER_NODE", "4");
  EXPECT_EQ(discover_rank().local_world_size, 4);
}

TEST_F(DiscoverRank, SlurmTasksPerNodeWithoutNodeIdUsesFirstGroup) {
  set("SLURM_PROCID", "0");
  set("SLURM_NTASKS", "11");
  set("SLURM_TASKS_PER_NODE", "4(x2),3");
  EXPECT_EQ(discover_rank().local_world_size, 4);
}

TEST_F(DiscoverRank, SlurmBatchStepWithoutNtasksIsOneRank) {
  // sbatch sets SLURM_PROCID in the batch script even without --ntasks.
  set("SLURM_PROCID", "0");
  EXPECT_EQ(discover_rank().source, "default");
}

TEST_F(DiscoverRank, Precedence) {
  set("SLURM_PROCID", "1");
  set("SLURM_NTASKS", "2");
  set("OMPI_COMM_WORLD_RANK", "2");
  set("OMPI_COMM_WORLD_SIZE", "4");
  EXPECT_EQ(discover_rank().source, "openmpi");
  set("RANK", "3");
  set("WORLD_SIZE", "8");
  EXPECT_EQ(discover_rank().source, "torchrun");
  EXPECT_EQ(discover_rank().rank, 3);
  const RankInfo info = discover_rank(6, 7);
  EXPECT_EQ(info.source, "arguments");
  EXPECT_EQ(info.rank, 6);
  EXPECT_EQ(info.world_size, 7);
}

TEST_F(DiscoverRank, ArgumentsTakeNodeLayoutFromMatchingLauncher) {
  set("RANK", "1");
  set("WORLD_SIZE", "8");
  set("LOCAL_RANK", "1");
  set("LOCAL_WORLD_SIZE", "4");
  RankInfo info = discover_rank(5, 8);
  EXPECT_EQ(info.rank, 5);
  EXPECT_EQ(info.local_world_size, 4);
  // Another job shape: the launcher's layout does not describe it.
  info = discover_rank(0, 2);
  EXPECT_EQ(info.local_rank, 0);
  EXPECT_EQ(info.local_world_size, 1);
  // A broken launcher environment does not matter when the caller gave the rank.
  set("WORLD_SIZE", "oops");
  EXPECT_EQ(discover_rank(0, 2).source, "arguments");
}

TEST_F(DiscoverRank, ArgumentErrors) {
  EXPECT_THROW(discover_rank(0, std::nullopt), Error);
  EXPECT_THROW(discover_rank(std::nullopt, 4), Error);
  EXPECT_THROW(discover_rank(4, 4), Error);
  EXPECT_THROW(discover_rank(-1, 4), Error);
  EXPECT_THROW(discover_rank(0, 0), Error);
  EXPECT_NO_THROW(discover_rank(3, 4));
}

TEST_F(DiscoverRank, MalformedValuesNameTheVariable) {
  set("RANK", "1x");
  set("WORLD_SIZE", "4");
  expect_error_naming("RANK");
  set("RANK", "1");
  set("WORLD_SIZE", "99999999999");
  expect_error_naming("WORLD_SIZE");
  set("WORLD_SIZE", " 4");
  expect_error_naming("WORLD_SIZE");
  set("WORLD_SIZE", "4");
  set("LOCAL_WORLD_SIZE", "four");
  expect_error_naming("LOCAL_WORLD_SIZE");
}

TEST_F(DiscoverRank, InconsistentValues) {
  set("RANK", "4");
  set("WORLD_SIZE", "4");
  expect_error_naming("RANK");
  set("RANK", "0");
  set("WORLD_SIZE", "0");
  expect_error_naming("WORLD_SIZE");
  set("WORLD_SIZE", "4");
  set("LOCAL_WORLD_SIZE", "8");  // more ranks on this node than in the job
  expect_error_naming("LOCAL_WORLD_SIZE");
  set("LOCAL_WORLD_SIZE", "2");
  set("LOCAL_RANK", "2");
  expect_error_naming("LOCAL_RANK");
}

TEST_F(DiscoverRank, PartialLauncherEnvironment) {
  set("RANK", "0");
  expect_error_naming("WORLD_SIZE");
  unsetenv("RANK");
  set("OMPI_COMM_WORLD_SIZE", "2");
  expect_error_naming("OMPI_COMM_WORLD_RANK");
}

TEST_F(DiscoverRank, EmptyValueReadsAsUnset) {
  set("RANK", "");
  set("WORLD_SIZE", "");
  EXPECT_EQ(discover_rank().source, "default");
}

TEST(SlurmTasksPerNode, Parses) {
  using util::slurm_tasks_on_node;
  EXPECT_EQ(slurm_tasks_on_node("4", 0), 4);
  EXPECT_EQ(slurm_tasks_on_node("4(x2),3", 0), 4);
  EXPECT_EQ(slurm_tasks_on_node("4(x2),3", 1), 4);
  EXPECT_EQ(slurm_tasks_on_node("4(x2),3", 2), 3);
  EXPECT_EQ(slurm_tasks_on_node("4(x2),3", 7), 3);  // past the list: last group
  EXPECT_EQ(slurm_tasks_on_node("2,1(x3),8", 4), 8);
  for (const char* bad : {"", "x", "4(x)", "4(x2", "4(x0)", "0", "4,,3", "-1", "4(y2)"}) {
    EXPECT_THROW(slurm_tasks_on_node(bad, 0), Error) << bad;
  }
}

TEST(CgroupQuota, ParseCpuMax) {
  using util::parse_cpu_max;
  EXPECT_EQ(parse_cpu_max("max 100000\n"), std::nullopt);
  EXPECT_EQ(parse_cpu_max("200000 100000\n"), 2);
  EXPECT_EQ(parse_cpu_max("150000 100000"), 2);  // 1.5 CPUs: round up
  EXPECT_EQ(parse_cpu_max("50000 100000"), 1);   // at least 1
  EXPECT_EQ(parse_cpu_max("400000"), 4);         // default period
  EXPECT_EQ(parse_cpu_max(""), std::nullopt);
  EXPECT_EQ(parse_cpu_max("garbage"), std::nullopt);
}

TEST(CgroupQuota, ParseCfsQuota) {
  using util::parse_cfs_quota;
  EXPECT_EQ(parse_cfs_quota("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(parse_cfs_quota("300000\n", "100000\n"), 3);
  EXPECT_EQ(parse_cfs_quota("250000", "100000"), 3);
  EXPECT_EQ(parse_cfs_quota("", "100000"), std::nullopt);
  EXPECT_EQ(parse_cfs_quota("100000", "0"), std::nullopt);
}

class CgroupFiles : public ::testing::Test {
 protected:
  void write(const fs::path& rel, const std::string& contents) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << contents;
  }
  test::TempDir temp_{"stoker-env-test"};
  fs::path root_ = temp_.path();
};

TEST_F(CgroupFiles, V2Root) {
  write("cpu.max", "max 100000\n");
  EXPECT_EQ(util::cgroup_cpu_limit(root_, "0::/\n"), std::nullopt);
  write("cpu.max", "300000 100000\n");
  EXPECT_EQ(util::cgroup_cpu_limit(root_, "0::/\n"), 3);
  EXPECT_EQ(util::cgroup_cpu_limit(root_, ""), 3);  // no /proc/self/cgroup: the root
}

TEST_F(CgroupFiles, V2NestedTakesTightestAncestor) {
  write("cpu.max", "max 100000\n");
  write("user.slice/cpu.max", "200000 100000\n");
  write("user.slice/job/cpu.max", "600000 100000\n");
  EXPECT_EQ(util::cgroup_cpu_limit(root_, "0::/user.slice/job\n"), 2);
  write("user.slice/cpu.max", "max 100000\n");
  EXPECT_EQ(util::cgroup_cpu_limit(root_, "0::/user.slice/job\n"), 6);
}

TEST_F(CgroupFiles, V2ContainerWithHostPath) {
  // Without a cgroup namespace the path names the host's hierarchy, which is not mounted here.
  write("cpu.max", "100000 100000\n");
  EXPECT_EQ(util::cgroup_cpu_limit(root_, "0::/docker/abc123\n"), 1);
}

TEST_F(CgroupFiles, V1) {
  write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  const char* self = "12:memory:/\n4:cpu,cpuacct:/\n1:name=systemd:/\n";
  EXPECT_EQ(util::cgroup_cpu_limit(root_, self), std::nullopt);
  write("cpu,cpuacct/cpu.cfs_quota_us", "400000\n");
  EXPECT_EQ(util::cgroup_cpu_limit(root_, self), 4);
}

TEST_F(CgroupFiles, NoFiles) {
  EXPECT_EQ(util::cgroup_cpu_limit(root_, "0::/\n"), std::nullopt);
  EXPECT_EQ(util::cgroup_cpu_limit(root_ / "missing", "0::/\n"), std::nullopt);
}

TEST(AvailableCpus, WithinHardware) {
  const int cpus = available_cpus();
  EXPECT_GE(cpus, 1);
  const unsigned hw = std::thread::hardware_concurrency();
  if (hw > 0) {
    EXPECT_LE(cpus, static_cast<int>(hw));
  }
}

TEST(DefaultThreads, DividesByLocalWorldSize) {
  const int cpus = available_cpus();
  RankInfo info;
  EXPECT_EQ(default_threads(info), cpus);
  info.local_world_size = 2;
  EXPECT_EQ(default_threads(info), std::max(1, cpus / 2));
  info.local_world_size = 100000;
  EXPECT_EQ(default_threads(info), 1);
}

}  // namespace
}  // namespace stoker
