// Cancellations and deadlines (util/stop.h, stoker/cancel.h): what a stopped thread is told,
// scopes nesting and carried to another thread, waits ended by a cancellation.
#include "util/stop.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <thread>

#include "stoker/cancel.h"
#include "stoker/error.h"

namespace stoker::util {
namespace {

TEST(Stop, NothingStopsAThreadWithoutAScope) {
  EXPECT_FALSE(stop_reason().has_value());
  EXPECT_FALSE(seconds_to_deadline().has_value());
  EXPECT_NO_THROW(throw_if_stopped("x"));
  EXPECT_TRUE(sleep_unless_stopped(0));
}

TEST(Stop, ACancellationKeepsItsFirstReasonAndStopsOnlyTheThreadsThatNameIt) {
  Cancellation c;
  EXPECT_FALSE(c.cancelled());
  c.cancel("first");
  c.cancel("second");
  EXPECT_TRUE(c.cancelled());
  EXPECT_EQ(c.why(), "first");
  EXPECT_FALSE(stop_reason().has_value());  // no scope names it here
  const CancellationScope scope(c);
  ASSERT_TRUE(stop_reason().has_value());
  EXPECT_EQ(stop_reason()->why, "first");
  EXPECT_EQ(stop_reason()->error, ECANCELED);
  try {
    throw_if_stopped("s3://b/k.tar: member 7.jpg");
    ADD_FAILURE() << "not thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_EQ(e.sys_errno(), ECANCELED);
    EXPECT_EQ(e.message(), "s3://b/k.tar: member 7.jpg: first");
  }
}

TEST(Stop, ScopesNestAndEndWithTheirBlock) {
  Cancellation outer;
  {
    const StopScope a(&outer, 0, "");
    {
      const StopScope deadline(nullptr, 1e-9, "the open's deadline passed");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ASSERT_TRUE(stop_reason().has_value());
      EXPECT_EQ(stop_reason()->why, "the open's deadline passed");
      EXPECT_EQ(stop_reason()->error, ETIMEDOUT);
      EXPECT_LE(*seconds_to_deadline(), 0);
      outer.cancel("closing");
      EXPECT_EQ(stop_reason()->why, "the open's deadline passed");  // innermost first
    }
    EXPECT_EQ(stop_reason()->why, "closing");
    EXPECT_FALSE(seconds_to_deadline().has_value());
  }
  EXPECT_FALSE(stop_reason().has_value());
}

TEST(Stop, AnotherThreadCarriesTheCallersChain) {
  Cancellation c;
  const StopScope scope(&c, 3600, "late");
  const StopLink* chain = StopScope::current();
  bool stopped_before = true, stopped_after = false;
  double left = 0;
  std::thread worker([&] {
    const StopScope inherited(chain);
    stopped_before = stop_reason().has_value();
    left = seconds_to_deadline().value_or(0);
    // An hour's wait, ended by the caller's cancellation.
    stopped_after = !sleep_unless_stopped(3600);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  c.cancel("interrupted");
  worker.join();
  EXPECT_FALSE(stopped_before);
  EXPECT_GT(left, 3000);
  EXPECT_TRUE(stopped_after);
}

}  // namespace
}  // namespace stoker::util
