#include "util/task_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "stoker/error.h"
#include "util/check.h"

namespace stoker::util {
namespace {

TEST(TaskPool, RunsEveryTaskOnceOnAThreadOfItsOwn) {
  TaskPool pool(3);
  std::vector<std::atomic<int>> runs(1000);
  std::atomic<bool> thread_in_range{true};
  auto job = pool.submit(1000, [&](int i, int thread) {
    ++runs[static_cast<size_t>(i)];
    if (thread < 0 || thread >= 3) thread_in_range = false;
  });
  job->wait();
  EXPECT_TRUE(job->done());
  EXPECT_TRUE(thread_in_range);
  for (const auto& r : runs) ASSERT_EQ(r, 1);
}

TEST(TaskPool, StartsTasksInSubmissionOrder) {
  TaskPool pool(1);
  std::vector<std::pair<char, int>> order;  // one thread: no lock needed
  auto a = pool.submit(3, [&](int i, int) { order.emplace_back('a', i); });
  auto b = pool.submit(2, [&](int i, int) { order.emplace_back('b', i); });
  b->wait();
  a->wait();
  EXPECT_EQ(order,
            (std::vector<std::pair<char, int>>{{'a', 0}, {'a', 1}, {'a', 2}, {'b', 0}, {'b', 1}}));
}

TEST(TaskPool, RethrowsTheLowestFailingTaskWhateverTheTiming) {
  TaskPool pool(4);
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> ran{0};
    auto job = pool.submit(50, [&](int i, int) {
      ++ran;
      if (i == 7) STOKER_BAD_DATA("task {}", i);
      if (i == 3) throw std::runtime_error("task 3");
      if (i == 40) throw std::runtime_error("task 40");
    });
    try {
      job->wait();
      FAIL() << "wait() did not rethrow";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "task 3");
    }
    EXPECT_EQ(ran, 50) << "a failing task does not stop its job's other tasks";
    // Handed over: a second wait finds the index but no exception to throw again.
    int index = -2;
    EXPECT_EQ(job->wait_error(&index), nullptr);
    EXPECT_EQ(index, 3);
  }
}

TEST(TaskPool, CancelDropsTheTasksNotStarted) {
  TaskPool pool(1);
  std::latch release(1);
  std::atomic<int> second_ran{0};
  auto first = pool.submit(1, [&](int, int) { release.wait(); });
  auto second = pool.submit(5, [&](int, int) { ++second_ran; });
  EXPECT_FALSE(second->done());
  second->cancel();
  EXPECT_TRUE(second->done());
  int index = 0;
  EXPECT_EQ(second->wait_error(&index), nullptr);
  EXPECT_EQ(index, -1);
  release.count_down();
  first->wait();
  EXPECT_EQ(second_ran, 0);
  // Cancelling a job that has finished, or twice, changes nothing.
  first->cancel();
  second->cancel();
  EXPECT_TRUE(first->done());
}

TEST(TaskPool, CancelWaitsForTheStartedTasks) {
  TaskPool pool(2);
  std::latch started(2), release(1);
  std::atomic<int> finished{0};
  auto job = pool.submit(10, [&](int i, int) {
    if (i < 2) {
      started.count_down();
      release.wait();
    }
    ++finished;
  });
  started.wait();  // tasks 0 and 1 run, 2..9 queued
  job->cancel();
  EXPECT_FALSE(job->done());
  release.count_down();
  job->wait();
  EXPECT_EQ(finished, 2);
}

// The destructor returns once the running task finishes, whatever is still queued (the queued
// tasks may or may not have started by then: no assertion on that timing).
TEST(TaskPool, DestructionWaitsForRunningTasksAndDropsTheRest) {
  std::atomic<int> ran{0};
  std::atomic<bool> running_finished{false};
  std::latch started(1), release(1);
  std::thread releaser;
  {
    TaskPool pool(1);
    pool.submit(1, [&](int, int) {
      started.count_down();
      release.wait();
      running_finished = true;
    });
    pool.submit(100, [&](int, int) { ++ran; });
    started.wait();
    releaser = std::thread([&] { release.count_down(); });
  }
  EXPECT_TRUE(running_finished);
  EXPECT_LE(ran, 100);
  releaser.join();
}

TEST(TaskPool, AnEmptyJobIsDone) {
  TaskPool pool(1);
  auto job = pool.submit(0, [](int, int) { FAIL(); });
  EXPECT_TRUE(job->done());
  job->wait();
}

TEST(TaskPool, RejectsNoThreads) {
  try {
    TaskPool pool(0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
}

}  // namespace
}  // namespace stoker::util
