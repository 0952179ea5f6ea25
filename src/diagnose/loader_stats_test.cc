// pipeline_window and the stats line (stoker/loader_stats.h): window arithmetic.
#include "stoker/loader_stats.h"

#include <gtest/gtest.h>

#include "diagnose/json.h"

namespace stoker {
namespace {

TEST(PipelineWindow, IsTheDifferenceOfTwoSnapshots) {
  LoaderStats a, b;
  a.wall_seconds = 10;
  b.wall_seconds = 14;
  a.images = 100;
  b.images = 900;
  b.threads = 4;
  b.cpus = 2;
  a.wait_seconds = 1;
  b.wait_seconds = 2;  // 1 s of 4
  a.busy_seconds = 10;
  b.busy_seconds = 22;  // 12 of 16 thread-seconds
  a.read_wall_seconds = 1;
  b.read_wall_seconds = 4;  // 3 of 12 busy seconds
  a.process_cpu_seconds = 5;
  b.process_cpu_seconds = 11;  // 6 of 8 core-seconds
  a.queue_ready_sum = 1;
  a.queue_checks = 2;
  b.queue_ready_sum = 2.5;
  b.queue_checks = 5;  // 1.5 over 3 checks
  const PipelineWindow w = pipeline_window(b, a);
  EXPECT_DOUBLE_EQ(w.seconds, 4);
  EXPECT_EQ(w.images, 800);
  EXPECT_DOUBLE_EQ(w.images_per_second(), 200);
  EXPECT_DOUBLE_EQ(w.wait_fraction, 0.25);
  EXPECT_DOUBLE_EQ(w.busy_fraction, 0.75);
  EXPECT_DOUBLE_EQ(w.read_fraction, 0.25);
  EXPECT_DOUBLE_EQ(w.cpu_utilisation, 0.75);
  EXPECT_DOUBLE_EQ(w.queue_occupancy, 0.5);

  const nlohmann::json j = stats_json(b, w, 1700000000.5);
  EXPECT_EQ(j["stoker_stats"], 1);
  EXPECT_EQ(j["time"], 1700000000.5);
  EXPECT_EQ(j["window"]["images_per_second"], 200.0);
  EXPECT_EQ(j["digest"]["sum"], "0000000000000000");
  EXPECT_EQ(j["images"], 900);
}

}  // namespace
}  // namespace stoker
