// Verdict names (stoker/diagnose.h).
#include <gtest/gtest.h>

#include "stoker/diagnose.h"
#include "stoker/error.h"

namespace stoker {
namespace {

TEST(Verdict, NamesRoundTrip) {
  for (Verdict v : {Verdict::kInputBoundCpu, Verdict::kIoBound, Verdict::kRankImbalance,
                    Verdict::kCommunicationBound, Verdict::kHealthy, Verdict::kUnknown}) {
    EXPECT_EQ(parse_verdict(to_string(v)), v);
  }
  EXPECT_STREQ(to_string(Verdict::kInputBoundCpu), "input-bound-cpu");
  EXPECT_THROW(parse_verdict("slow"), Error);
}

}  // namespace
}  // namespace stoker
