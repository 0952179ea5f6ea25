#include "util/env_vars.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "stoker/error.h"
#include "util/test_util.h"

namespace stoker::util {
namespace {

constexpr EnvNumber<int64_t> kCount{"STOKER_TEST_COUNT", 7, 1, 100};
constexpr EnvNumber<double> kSeconds{"STOKER_TEST_SECONDS", 2.5, 0, 60};

// The message of the ArgumentError `fn` throws, or "<no error>".
template <typename Fn>
std::string argument_error(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.message();
    return e.message();
  }
  return "<no error>";
}

TEST(EnvVars, UnsetAndEmptyReadAsTheDefault) {
  for (const char* value : {static_cast<const char*>(nullptr), ""}) {
    test::EnvGuard count(kCount.name, value), seconds(kSeconds.name, value);
    test::EnvGuard text("STOKER_TEST_TEXT", value);
    EXPECT_EQ(env_int(kCount), 7);
    EXPECT_EQ(env_number(kSeconds), 2.5);
    EXPECT_EQ(env_text("STOKER_TEST_TEXT"), std::nullopt);
    EXPECT_EQ(env_string("STOKER_TEST_TEXT", "fallback"), "fallback");
    EXPECT_EQ(env_choice("STOKER_TEST_TEXT", 1, {"a", "b", "c"}), 1u);
  }
}

TEST(EnvVars, WellFormedValuesAreRead) {
  test::EnvGuard count(kCount.name, "100"), seconds(kSeconds.name, "0.25");
  test::EnvGuard text("STOKER_TEST_TEXT", "c");
  EXPECT_EQ(env_int(kCount), 100);
  EXPECT_EQ(env_number(kSeconds), 0.25);
  EXPECT_EQ(env_string("STOKER_TEST_TEXT"), "c");
  EXPECT_EQ(env_choice("STOKER_TEST_TEXT", 0, {"a", "b", "c"}), 2u);
}

// Before: STOKER_CLOSE_TIMEOUT went through atof, so "1O" (a typo) was 1 s and "ten" was 0 s.
TEST(EnvVars, AMalformedValueIsAnArgumentErrorNamingTheVariableAndValue) {
  for (const char* bad : {"1O", "ten", "1e999", "nan", " 3", "3 ", "-1", "61"}) {
    test::EnvGuard seconds(kSeconds.name, bad);
    EXPECT_EQ(argument_error([] { env_number(kSeconds); }),
              fmt::format("STOKER_TEST_SECONDS={}: expected a number in [0, 60]", bad));
  }
  for (const char* bad : {"0", "101", "3.5", "0x10", "12abc"}) {
    test::EnvGuard count(kCount.name, bad);
    EXPECT_EQ(argument_error([] { env_int(kCount); }),
              fmt::format("STOKER_TEST_COUNT={}: expected an integer in [1, 100]", bad));
  }
  test::EnvGuard text("STOKER_TEST_TEXT", "mmap2");
  EXPECT_EQ(argument_error([] {
              env_choice("STOKER_TEST_TEXT", 0, {"mmap", "pread"});
            }),
            "STOKER_TEST_TEXT=mmap2: expected mmap or pread");
  EXPECT_EQ(argument_error([] {
              env_choice("STOKER_TEST_TEXT", 0, {"a", "b", "c"});
            }),
            "STOKER_TEST_TEXT=mmap2: expected a, b or c");
}

TEST(TempDir, IsAFreshFolderUnderTheTestTmpRemovedWithItsContents) {
  std::filesystem::path kept;
  {
    test::TempDir a("probe"), b("probe");
    EXPECT_NE(a.path(), b.path());
    EXPECT_TRUE(std::filesystem::is_directory(a.path()));
    EXPECT_TRUE(std::filesystem::is_empty(a.path()));
    EXPECT_EQ(a.path().parent_path(), env_string(kTestTmp, "/tmp"));
    EXPECT_EQ(a.path().filename().string().rfind("probe-", 0), 0u);
    std::filesystem::create_directories(a.path() / "x" / "y");
    kept = a.path();
  }
  EXPECT_FALSE(std::filesystem::exists(kept));
}

}  // namespace
}  // namespace stoker::util
