// IoConfig's defaults: the documented environment variables, read when a config is built, and
// an ArgumentError naming a malformed one (stoker/io_config.h, docs/environment.md).
#include "stoker/io_config.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "io/test_util.h"
#include "stoker/dataset.h"
#include "stoker/error.h"

namespace stoker {
namespace {

const char* const kVariables[] = {
    "STOKER_IO_ATTEMPTS",           "STOKER_REMOTE_TIMEOUT", "STOKER_OPEN_TIMEOUT",
    "STOKER_READAHEAD_CONNECTIONS", "STOKER_READAHEAD_MIB",  "STOKER_REMOTE_CACHE",
    "STOKER_REMOTE_CACHE_MIB",      "STOKER_PACKED_IO",      "STOKER_S3_ADDRESSING_STYLE"};

// Runs each test without any of the variables (the caller's shell may set them).
class IoConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) {
      cleared_.push_back(std::make_unique<test::EnvGuard>(name, nullptr));
    }
  }
  std::vector<std::unique_ptr<test::EnvGuard>> cleared_;
};

TEST_F(IoConfigTest, WithoutTheEnvironmentTheDefaultsAreTheDocumentedOnes) {
  const IoConfig io;
  EXPECT_EQ(io.retries.attempts, 3);
  EXPECT_EQ(io.retries.first_backoff_s, 0.05);
  EXPECT_EQ(io.connect_timeout_s, 10);
  EXPECT_EQ(io.stall_timeout_s, 30);
  EXPECT_EQ(io.open_timeout_s, 600);
  EXPECT_EQ(io.read_ahead_connections, 32);
  EXPECT_EQ(io.read_ahead_bytes, uint64_t{256} << 20);
  EXPECT_EQ(io.remote_cache_dir, "");
  EXPECT_EQ(io.remote_cache_bytes, uint64_t{10240} << 20);
  EXPECT_EQ(io.packed_io, PackedIo::kMmap);
  EXPECT_EQ(io.s3_addressing, S3Addressing::kAuto);
  io.validate();
}

TEST_F(IoConfigTest, EachVariableIsItsFieldsDefaultWhenAConfigIsBuilt) {
  const IoConfig before;
  test::EnvGuard a("STOKER_IO_ATTEMPTS", "7"), b("STOKER_REMOTE_TIMEOUT", "2.5"),
      c("STOKER_READAHEAD_CONNECTIONS", "0"), d("STOKER_READAHEAD_MIB", "3"),
      e("STOKER_REMOTE_CACHE", "/node/cache"), f("STOKER_REMOTE_CACHE_MIB", "5"),
      g("STOKER_PACKED_IO", "pread"), h("STOKER_S3_ADDRESSING_STYLE", "virtual"),
      i("STOKER_OPEN_TIMEOUT", "0");
  const IoConfig io;
  EXPECT_EQ(io.retries.attempts, 7);
  EXPECT_EQ(io.stall_timeout_s, 2.5);
  EXPECT_EQ(io.open_timeout_s, 0);
  EXPECT_EQ(io.read_ahead_connections, 0);
  EXPECT_EQ(io.read_ahead_bytes, uint64_t{3} << 20);
  EXPECT_EQ(io.remote_cache_dir, "/node/cache");
  EXPECT_EQ(io.remote_cache_bytes, uint64_t{5} << 20);
  EXPECT_EQ(io.packed_io, PackedIo::kPread);
  EXPECT_EQ(io.s3_addressing, S3Addressing::kVirtual);
  EXPECT_EQ(IoRetryPolicy{}.attempts, 7);
  // Read when built, not cached: the config built before keeps its values.
  EXPECT_EQ(before.retries.attempts, 3);
  EXPECT_EQ(before.packed_io, PackedIo::kMmap);
}

TEST_F(IoConfigTest, AMalformedVariableFailsNamingItAndItsValue) {
  const struct {
    const char* name;
    const char* value;
    const char* message;
  } cases[] = {
      {"STOKER_IO_ATTEMPTS", "three", "STOKER_IO_ATTEMPTS=three: expected an integer in [1, 100]"},
      {"STOKER_IO_ATTEMPTS", "0", "STOKER_IO_ATTEMPTS=0: expected an integer in [1, 100]"},
      {"STOKER_REMOTE_TIMEOUT", "30s", "STOKER_REMOTE_TIMEOUT=30s: expected a number in [1, 3600]"},
      {"STOKER_OPEN_TIMEOUT", "-1", "STOKER_OPEN_TIMEOUT=-1: expected a number in [0, 86400]"},
      {"STOKER_READAHEAD_CONNECTIONS", "-1",
       "STOKER_READAHEAD_CONNECTIONS=-1: expected an integer in [0, 1024]"},
      {"STOKER_READAHEAD_MIB", "1G",
       "STOKER_READAHEAD_MIB=1G: expected an integer in [1, 1048576]"},
      {"STOKER_REMOTE_CACHE_MIB", "0",
       "STOKER_REMOTE_CACHE_MIB=0: expected an integer in [1, 1073741824]"},
      {"STOKER_PACKED_IO", "mmap2", "STOKER_PACKED_IO=mmap2: expected mmap or pread"},
      {"STOKER_S3_ADDRESSING_STYLE", "host",
       "STOKER_S3_ADDRESSING_STYLE=host: expected auto, path or virtual"},
  };
  for (const auto& c : cases) {
    test::EnvGuard env(c.name, c.value);
    EXPECT_EQ(test::error_of([] { IoConfig io; }), c.message);
    // Where users meet it: opening a dataset with the default IoConfig.
    EXPECT_EQ(test::error_of([] { open_dataset("/nonexistent"); }), c.message);
  }
}

TEST_F(IoConfigTest, ValidateNamesTheField) {
  const auto invalid = [](auto edit) {
    IoConfig io;
    edit(io);
    return test::error_of([&] { io.validate(); });
  };
  EXPECT_EQ(invalid([](IoConfig& io) { io.retries.attempts = 0; }),
            "io retries: attempts must be in [1, 100] (got 0)");
  EXPECT_EQ(invalid([](IoConfig& io) { io.retries.first_backoff_s = -1; }),
            "io retries: first_backoff_s must be in [0, 60] (got -1)");
  EXPECT_EQ(invalid([](IoConfig& io) { io.stall_timeout_s = 0; }),
            "io: stall_timeout_s must be in [1, 3600] (got 0)");
  EXPECT_EQ(invalid([](IoConfig& io) { io.open_timeout_s = 1e9; }),
            "io: open_timeout_s must be in [0, 86400] (got 1000000000)");
  EXPECT_EQ(invalid([](IoConfig& io) { io.connect_timeout_s = 0; }),
            "io: connect_timeout_s must be in [0.001, 3600] (got 0)");
  EXPECT_EQ(invalid([](IoConfig& io) { io.read_ahead_connections = 2000; }),
            "io: read_ahead_connections must be in [0, 1024] (got 2000)");
  EXPECT_EQ(invalid([](IoConfig& io) { io.read_ahead_bytes = 1000; }),
            "io: read_ahead_bytes must be in [1 MiB, 1048576 MiB] (got 1000)");
  EXPECT_EQ(invalid([](IoConfig& io) { io.remote_cache_bytes = 0; }),
            "io: remote_cache_bytes must be in [1 MiB, 1073741824 MiB] (got 0)");
  IoConfig bad;
  bad.read_ahead_connections = -1;
  EXPECT_EQ(test::error_of([&] { open_dataset("/nonexistent", {}, bad); }),
            "io: read_ahead_connections must be in [0, 1024] (got -1)");
}

TEST(IoRetryPolicy, WaitsGrowFourfoldUpToFiveSeconds) {
  IoRetryPolicy p;
  p.first_backoff_s = 0.05;
  EXPECT_DOUBLE_EQ(p.wait_before(2), 0.05);
  EXPECT_DOUBLE_EQ(p.wait_before(3), 0.2);
  EXPECT_DOUBLE_EQ(p.wait_before(4), 0.8);
  EXPECT_DOUBLE_EQ(p.wait_before(5), 3.2);
  EXPECT_DOUBLE_EQ(p.wait_before(6), 5);
  EXPECT_DOUBLE_EQ(p.wait_before(100), 5);
  p.first_backoff_s = 0;
  EXPECT_DOUBLE_EQ(p.wait_before(9), 0);
}

TEST(IoEnums, NamesRoundTrip) {
  for (const PackedIo m : {PackedIo::kMmap, PackedIo::kPread}) {
    EXPECT_EQ(parse_packed_io(to_string(m)), m);
  }
  for (const S3Addressing s : {S3Addressing::kAuto, S3Addressing::kPath, S3Addressing::kVirtual}) {
    EXPECT_EQ(parse_s3_addressing(to_string(s)), s);
  }
  EXPECT_EQ(test::error_of([] { parse_packed_io("map"); }),
            "packed I/O must be mmap or pread (got \"map\")");
}

}  // namespace
}  // namespace stoker
