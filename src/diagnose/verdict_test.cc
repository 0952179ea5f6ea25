// Verdict names (stoker/diagnose.h), and the capacity plan's arithmetic (stoker/capacity.h).
#include <gtest/gtest.h>

#include "stoker/capacity.h"
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

// The capacity test's plan for stoker.ray: CPU-only nodes for what this machine cannot deliver.
TEST(Capacity, CpuNodesMakeUpTheMissingRate) {
  EXPECT_EQ(cpu_nodes_needed(4000, 5000, 500, 16), 0);   // this machine suffices
  EXPECT_EQ(cpu_nodes_needed(20000, 1000, 500, 16), 3);  // 19000 / 8000 per node
  EXPECT_EQ(cpu_nodes_needed(17000, 1000, 500, 16), 2);  // exactly two nodes' worth
  EXPECT_EQ(cpu_nodes_needed(17000.5, 1000, 500, 16), 3);
  EXPECT_THROW(cpu_nodes_needed(1, 0, 0, 16), Error);
}

}  // namespace
}  // namespace stoker
