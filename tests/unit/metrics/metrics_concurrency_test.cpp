#include <atomic>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metrics/metrics_registry.h"

namespace ipu::metrics {
namespace {

using ::testing::HasSubstr;

constexpr int kThreads = 8;
constexpr int kIterations = 20000;

TEST(MetricsConcurrencyTest, UpdatesFromManyThreadsAllCount) {
  Registry registry;
  auto& reconciles = registry.counter("reconciles_total", "Reconciles.", {"result"});
  auto& inFlight = registry.gauge("in_flight", "In flight.").with();
  auto& latency = registry.histogram("latency_seconds", "Latency.", {0.5, 1});

  std::atomic<bool> done{false};
  std::thread scraper([&] {  // renders while the others write: every sample must stay readable
    while (!done.load()) EXPECT_THAT(registry.render(), HasSubstr("# TYPE latency_seconds histogram"));
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kIterations; ++i) {
        // Every thread looks children up by value each time: creation races with lookups.
        reconciles.with({"success"}).inc();
        reconciles.with({"thread-" + std::to_string(t % 3)}).inc(0.5);
        inFlight.inc();
        latency.with().observe(i % 2 == 0 ? 0.25 : 2);
        inFlight.dec();
      }
    });
  }
  for (auto& writer : writers) writer.join();
  done = true;
  scraper.join();

  EXPECT_EQ(reconciles.with({"success"}).value(), kThreads * kIterations);
  double perThreadLabels = 0;
  for (int k = 0; k < 3; ++k) perThreadLabels += reconciles.with({"thread-" + std::to_string(k)}).value();
  EXPECT_EQ(perThreadLabels, kThreads * kIterations * 0.5);
  EXPECT_EQ(inFlight.value(), 0);
  const auto snapshot = latency.with().snapshot();
  EXPECT_EQ(snapshot.count, std::uint64_t{kThreads} * kIterations);
  EXPECT_EQ(snapshot.cumulativeCounts,
            (std::vector<std::uint64_t>{kThreads * kIterations / 2, kThreads * kIterations / 2}));
  EXPECT_EQ(snapshot.sum, kThreads * (kIterations / 2) * (0.25 + 2));
}

TEST(MetricsConcurrencyTest, AChildKeptByReferenceCountsEveryUpdate) {
  // The hot path: a cached child updated in a tight loop, where a lost update would show (given a second
  // core to race on: on one, even a plain load-then-store rarely loses anything).
  constexpr int kTightIterations = 500000;
  Registry registry;
  Counter& counter = registry.counter("hot_total", "Hot.").with();
  Gauge& gauge = registry.gauge("hot_gauge", "Hot.").with();
  std::latch start(kThreads);  // all at once: a thread that finished before the next began would race nobody
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&] {
      start.arrive_and_wait();
      for (int i = 0; i < kTightIterations; ++i) counter.inc();
      for (int i = 0; i < kTightIterations; ++i) gauge.inc(2);
      for (int i = 0; i < kTightIterations; ++i) gauge.dec();
    });
  }
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(counter.value(), kThreads * kTightIterations);
  EXPECT_EQ(gauge.value(), kThreads * kTightIterations);
}

TEST(MetricsConcurrencyTest, RacingRegistrationsOfOneNameLeaveExactlyOneWinner) {
  Registry registry;
  std::atomic<int> winners{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        registry.counter("contested_total", "One wins.");
        ++winners;
      } catch (const std::invalid_argument&) {
        ++refused;
      }
      registry.gauge("own_" + std::to_string(t), "Each thread its own.");
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(winners.load(), 1);
  EXPECT_EQ(refused.load(), kThreads - 1);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_THAT(registry.render(), HasSubstr("\nown_" + std::to_string(t) + " 0\n"));
  }
}

}  // namespace
}  // namespace ipu::metrics
