// The live verdicts on real loaders: a slow consumer is healthy, a fast consumer of an
// undersized pool is input-bound-cpu, a slow store is io-bound; and the stats arithmetic.
#include "stoker/diagnose.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "pipeline/test_util.h"
#include "stoker/error.h"
#include "stoker/image.h"
#include "stoker/loader_stats.h"
#include "stoker/report.h"
#include "stoker/rng.h"

namespace stoker {
namespace {

using test::MemoryDataset;
using test::MemoryImages;
using test::one_rank_config;

// Square noise JPEGs held in memory; reads can be made slow to stand in for a slow store.
std::shared_ptr<MemoryDataset> memory_images(int images, int side,
                                             std::chrono::microseconds read_delay = {},
                                             int bad_index = -1) {
  return std::make_shared<MemoryDataset>(MemoryImages{
      .images = images, .side = side, .seed = 5, .read_delay = read_delay, .bad_index = bad_index});
}

// Runs epochs for at least `seconds`, sleeping `step` per batch like a training step would.
Diagnosis run_and_diagnose(Loader& loader, double seconds, std::chrono::milliseconds step) {
  StatsSampler sampler(loader);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t epoch = 0;; ++epoch) {
    loader.set_epoch(epoch);
    while (auto batch = loader.next()) {
      if (step.count() > 0) std::this_thread::sleep_for(step);
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= seconds)
      break;
  }
  sampler.sample();
  return diagnose_pipeline(sampler.last_window());
}

TEST(LiveVerdict, SlowConsumerIsHealthy) {
  Loader loader(memory_images(32, 32), one_rank_config(2, 4, 16));
  const Diagnosis d = run_and_diagnose(loader, 0.8, std::chrono::milliseconds(20));
  EXPECT_EQ(d.verdict, Verdict::kHealthy) << format_diagnosis(d);
  EXPECT_LT(d.numbers.pipeline->wait_fraction, 0.1);
  EXPECT_TRUE(d.fixes.empty());
}

TEST(LiveVerdict, FastConsumerOfOneThreadIsInputBoundCpu) {
  Loader loader(memory_images(16, 384), one_rank_config(1, 4, 64));
  const Diagnosis d = run_and_diagnose(loader, 0.8, std::chrono::milliseconds(0));
  EXPECT_EQ(d.verdict, Verdict::kInputBoundCpu) << format_diagnosis(d);
  EXPECT_GT(d.numbers.pipeline->wait_fraction, 0.5);
  EXPECT_GT(d.numbers.pipeline->busy_fraction, 0.8);
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_NE(d.fixes[0].action.find("pack"), std::string::npos);
}

TEST(LiveVerdict, SlowStoreIsIoBound) {
  Loader loader(memory_images(16, 16, std::chrono::microseconds(4000)), one_rank_config(2, 4, 16));
  const Diagnosis d = run_and_diagnose(loader, 0.8, std::chrono::milliseconds(0));
  EXPECT_EQ(d.verdict, Verdict::kIoBound) << format_diagnosis(d);
  EXPECT_GT(d.numbers.pipeline->read_fraction, 0.5);
  // Sleeping in read() is not CPU work: the process is far from its cores' capacity.
  EXPECT_LT(d.numbers.pipeline->cpu_utilisation, 0.5);
}

TEST(LiveVerdict, ShortWindowIsUnknown) {
  PipelineWindow w;
  w.seconds = 0.1;
  w.images = 10;
  EXPECT_EQ(diagnose_pipeline(w).verdict, Verdict::kUnknown);
  w.seconds = 2;
  w.images = 0;
  EXPECT_EQ(diagnose_pipeline(w).verdict, Verdict::kUnknown);
  // Waiting with idle workers is not the pool's fault: unknown, with a hint.
  w.images = 100;
  w.wait_fraction = 0.5;
  w.busy_fraction = 0.3;
  const Diagnosis d = diagnose_pipeline(w);
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  ASSERT_EQ(d.fixes.size(), 1u);
  EXPECT_NE(d.fixes[0].action.find("prefetch"), std::string::npos);
}

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

// The digest each rank's loader keeps adds up to the sampler's group digest: what the audit
// compares across ranks.
TEST(LoaderStats, EpochDigestsOfTheRanksAddUpToTheGroupDigest) {
  auto data = memory_images(37, 8);
  for (int64_t consumed : {int64_t{0}, int64_t{10}}) {
    SampleDigest total;
    int64_t batches = 0;
    for (int rank = 0; rank < 3; ++rank) {
      LoaderConfig c = one_rank_config(2, 4, 8);
      c.rank = rank;
      c.world_size = 3;
      Loader loader(data, c);
      if (consumed > 0) {
        ResumeState state = loader.state();
        state.epoch = 1;
        state.consumed = consumed;
        loader.load_state(state);
      }
      loader.set_epoch(1);
      while (loader.next()) {
      }
      const LoaderStats s = loader.stats();
      EXPECT_EQ(s.epoch, 1);
      EXPECT_EQ(s.epoch_start, consumed);
      total += s.epoch_digest;
      batches = s.epoch_batches;
    }
    EXPECT_EQ(total.count, 37 - consumed);
    const EpochPlan plan({.dataset_size = 37, .batch_size = 4, .rank = 0, .world_size = 3}, 1,
                         consumed);
    EXPECT_EQ(batches, plan.num_batches());
    EXPECT_EQ(total, plan.group_digest(batches));
  }
}

// A skipped bad file does not change which samples a rank was given: the digest still adds up
// (the audit must not call a correctly sharded job with one corrupt image "overlapping").
TEST(LoaderStats, SkippedBadSamplesStayInTheDigest) {
  auto data = memory_images(20, 8, std::chrono::microseconds(0), 7);
  SampleDigest total;
  int64_t skipped = 0, batches = 0;
  for (int rank = 0; rank < 2; ++rank) {
    LoaderConfig c = one_rank_config(2, 3, 8);
    c.rank = rank;
    c.world_size = 2;
    c.bad_samples = BadSamplePolicy::kSkip;
    Loader loader(data, c);
    loader.set_epoch(0);
    while (loader.next()) {
    }
    total += loader.stats().epoch_digest;
    skipped += loader.stats().skipped;
    batches = loader.stats().epoch_batches;
  }
  EXPECT_EQ(skipped, 1);
  const EpochPlan plan({.dataset_size = 20, .batch_size = 3, .rank = 0, .world_size = 2}, 0);
  EXPECT_EQ(total, plan.group_digest(batches));
}

TEST(Report, DataCannotEndOrCommentOutTheScripts) {
  Report page;
  page.title = "t";
  page.diagnosis.summary = "s";
  page.diagnosis.evidence = {"/data/</script><!--<script>x.jpg & more"};
  page.charts.push_back(
      {{"kind", "lines"}, {"title", "</script><!--<script>"}, {"series", nlohmann::json::array()}});
  const std::string html = render_html(page);
  // Exactly the two closers of our own script elements.
  size_t closers = 0;
  for (size_t at = html.find("</script>"); at != std::string::npos;
       at = html.find("</script>", at + 1)) {
    ++closers;
  }
  EXPECT_EQ(closers, 2u);
  EXPECT_EQ(html.find("<!--"), std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;!--&lt;script&gt;x.jpg &amp; more"), std::string::npos);
}

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
