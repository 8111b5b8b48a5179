#include "metrics/exposition.h"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "metrics/scrape_gauges.h"

namespace ipu::metrics {
namespace {

using ::testing::HasSubstr;

class ExpositionTest : public ::testing::Test {
 protected:
  ExpositionTest() {
    exposition_.add(registry_);
    exposition_.add(gauges_);
  }

  prometheus::Registry registry_;
  ScrapeGauges gauges_;
  Exposition exposition_;
};

TEST_F(ExpositionTest, FamiliesComeInNameOrderAndSamplesInLabelOrder) {
  auto& results = prometheus::BuildCounter().Name("b_total").Help("B.").Register(registry_);
  for (const char* result : {"success", "error", "conflict"}) results.Add({{"result", result}}).Increment();
  gauges_.add("c", "C.", {"controller"}, [] { return GaugeSamples{{{"pod64"}, 4}, {{"pod16"}, 2}}; });
  prometheus::BuildGauge().Name("a").Help("A.").Register(registry_).Add({}).Set(1.5);
  EXPECT_EQ(exposition_.render(),
            "# HELP a A.\n"
            "# TYPE a gauge\n"
            "a 1.5\n"
            "# HELP b_total B.\n"
            "# TYPE b_total counter\n"
            "b_total{result=\"conflict\"} 1\n"
            "b_total{result=\"error\"} 1\n"
            "b_total{result=\"success\"} 1\n"
            "# HELP c C.\n"
            "# TYPE c gauge\n"
            "c{controller=\"pod16\"} 2\n"
            "c{controller=\"pod64\"} 4\n");
}

TEST_F(ExpositionTest, FamiliesWithoutSamplesAreLeftOut) {
  prometheus::BuildCounter().Name("unused_total").Help("Unused.").Register(registry_);
  gauges_.add("nothing", "Nothing yet.", {}, [] { return GaugeSamples{}; });
  EXPECT_EQ(exposition_.render(), "");
}

TEST_F(ExpositionTest, HistogramsShowEveryBucketWithLeAfterTheirLabels) {
  auto& latency = prometheus::BuildHistogram().Name("latency_seconds").Help("Latency.").Register(registry_);
  auto& histogram =
      latency.Add({{"verb", "get"}}, prometheus::Histogram::BucketBoundaries{0.005, 0.25, 1, 86400});
  histogram.Observe(0.25);
  histogram.Observe(0.5);
  histogram.Observe(100000);
  const std::string text = exposition_.render();
  for (const char* line :
       {"# TYPE latency_seconds histogram\n", "latency_seconds_bucket{verb=\"get\",le=\"0.005\"} 0\n",
        "latency_seconds_bucket{verb=\"get\",le=\"0.25\"} 1\n",
        "latency_seconds_bucket{verb=\"get\",le=\"1\"} 2\n",
        "latency_seconds_bucket{verb=\"get\",le=\"86400\"} 2\n",
        "latency_seconds_bucket{verb=\"get\",le=\"+Inf\"} 3\n",
        "latency_seconds_sum{verb=\"get\"} 100000.75\n", "latency_seconds_count{verb=\"get\"} 3\n"}) {
    EXPECT_THAT(text, HasSubstr(line));
  }
}

TEST_F(ExpositionTest, HelpAndLabelValuesAreEscaped) {
  gauges_.add("odd", "Back\\slash and\nnewline.", {"path"}, [] { return GaugeSamples{{{"a\"b\\c\nd"}, 1}}; });
  EXPECT_EQ(exposition_.render(),
            "# HELP odd Back\\\\slash and\\nnewline.\n"
            "# TYPE odd gauge\n"
            "odd{path=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST_F(ExpositionTest, AFamilyReportedTwiceIsAnError) {
  prometheus::BuildGauge().Name("twice").Help("Twice.").Register(registry_).Add({});
  gauges_.add("twice", "Twice.", {}, [] { return GaugeSamples{{{}, 1}}; });
  try {
    (void)exposition_.render();
    FAIL() << "rendered a family twice";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("\"twice\""));
  }
}

TEST_F(ExpositionTest, ScrapesWhileOtherThreadsUpdate) {
  auto& reconciles = prometheus::BuildCounter().Name("reconciles_total").Help("R.").Register(registry_);
  auto& latency = prometheus::BuildHistogram()
                      .Name("latency_seconds")
                      .Help("L.")
                      .Register(registry_)
                      .Add({}, prometheus::Histogram::BucketBoundaries{0.5, 1});
  std::atomic<int> depth{0};
  gauges_.add("depth", "D.", {}, [&] { return GaugeSamples{{{}, static_cast<double>(depth.load())}}; });
  constexpr int kThreads = 4;
  constexpr int kIterations = 5000;
  std::atomic<bool> done{false};
  std::thread scraper([&] {
    while (!done.load()) EXPECT_THAT(exposition_.render(), HasSubstr("# TYPE latency_seconds histogram"));
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kIterations; ++i) {
        reconciles.Add({{"result", "thread-" + std::to_string(t % 2)}}).Increment();
        latency.Observe(i % 2 == 0 ? 0.25 : 2);
        ++depth;
      }
    });
  }
  for (auto& writer : writers) writer.join();
  done = true;
  scraper.join();
  const std::string text = exposition_.render();
  EXPECT_THAT(text, HasSubstr("reconciles_total{result=\"thread-0\"} 10000\n"));
  EXPECT_THAT(text, HasSubstr("latency_seconds_count 20000\n"));
  EXPECT_THAT(text, HasSubstr("latency_seconds_bucket{le=\"0.5\"} 10000\n"));
  EXPECT_THAT(text, HasSubstr("depth 20000\n"));
}

}  // namespace
}  // namespace ipu::metrics
