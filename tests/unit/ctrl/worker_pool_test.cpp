#include "ctrl/worker_pool.h"

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

namespace ipu::ctrl {
namespace {

using namespace std::chrono_literals;

TEST(WorkerPoolTest, ProcessesEveryKeyWithNoKeyInTwoWorkersAtOnce) {
  WorkQueue queue;
  std::mutex mutex;
  std::set<std::string> inFlight;
  std::map<std::string, int> processed;
  bool overlap = false;
  {
    WorkerPool pool(queue, 4, [&](const std::string& key) {
      {
        std::lock_guard lock(mutex);
        overlap |= !inFlight.insert(key).second;
      }
      std::this_thread::sleep_for(1ms);
      std::lock_guard lock(mutex);
      inFlight.erase(key);
      ++processed[key];
    });
    for (int round = 0; round < 20; ++round) {
      for (int k = 0; k < 8; ++k) queue.add("ns/job-" + std::to_string(k));
      std::this_thread::sleep_for(2ms);
    }
    // Wait until the queue is idle, then let the destructor drain and stop.
    for (int i = 0; i < 5000 && (queue.len() > 0 || queue.depth().processing > 0); ++i)
      std::this_thread::sleep_for(1ms);
  }
  EXPECT_FALSE(overlap);
  EXPECT_EQ(processed.size(), 8u);
  for (const auto& [key, count] : processed) EXPECT_GE(count, 1) << key;
}

TEST(WorkerPoolTest, AThrowingProcessDoesNotKillTheWorkerAndTheKeyIsRetried) {
  WorkQueue queue;
  std::atomic<int> calls{0};
  {
    WorkerPool pool(queue, 1, [&](const std::string&) {
      if (calls++ == 0) throw std::runtime_error("bug");
    });
    queue.add("ns/a");
    for (int i = 0; i < 5000 && calls < 2; ++i) std::this_thread::sleep_for(1ms);
  }
  EXPECT_GE(calls.load(), 2) << "the key was not retried after the exception";
}

TEST(WorkerPoolTest, RejectsZeroWorkersAndStopIsIdempotent) {
  WorkQueue queue;
  EXPECT_THROW(WorkerPool(queue, 0, [](const std::string&) {}), std::invalid_argument);
  WorkQueue other;
  WorkerPool pool(other, 2, [](const std::string&) {});
  pool.stop();
  pool.stop();
  EXPECT_TRUE(other.shuttingDown());
}

}  // namespace
}  // namespace ipu::ctrl
