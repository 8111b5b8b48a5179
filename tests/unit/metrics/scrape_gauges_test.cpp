#include "metrics/scrape_gauges.h"

#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ipu::metrics {
namespace {

using ::testing::HasSubstr;

std::string failure(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(ScrapeGaugesTest, CollectorsRunAtEachScrape) {
  ScrapeGauges gauges;
  double jobs = 1;
  gauges.add("jobs", "Jobs by phase.", {"phase"}, [&] { return GaugeSamples{{{"Running"}, jobs}}; });
  ASSERT_EQ(gauges.Collect().size(), 1u);
  EXPECT_EQ(gauges.Collect()[0].metric[0].gauge.value, 1);
  jobs = 5;
  const auto families = gauges.Collect();
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].name, "jobs");
  EXPECT_EQ(families[0].help, "Jobs by phase.");
  EXPECT_EQ(families[0].type, prometheus::MetricType::Gauge);
  ASSERT_EQ(families[0].metric.size(), 1u);
  EXPECT_EQ(families[0].metric[0].label,
            (std::vector<prometheus::ClientMetric::Label>{{"phase", "Running"}}));
  EXPECT_EQ(families[0].metric[0].gauge.value, 5);
}

TEST(ScrapeGaugesTest, AFamilyWithoutSamplesIsLeftOut) {
  ScrapeGauges gauges;
  bool attached = false;
  gauges.add("waiting", "Waiting.", {}, [&] { return attached ? GaugeSamples{{{}, 2}} : GaugeSamples{}; });
  EXPECT_TRUE(gauges.Collect().empty());
  attached = true;
  EXPECT_EQ(gauges.Collect().size(), 1u);
}

TEST(ScrapeGaugesTest, BadNamesAreRefusedWhenAdded) {
  ScrapeGauges gauges;
  const GaugeCollector none = [] { return GaugeSamples{}; };
  EXPECT_THAT(failure([&] { gauges.add("bad name", "", {}, none); }), HasSubstr("invalid metric name"));
  EXPECT_THAT(failure([&] { gauges.add("ok", "", {"__reserved"}, none); }), HasSubstr("invalid label name"));
  EXPECT_THAT(failure([&] { gauges.add("ok", "", {"a", "a"}, none); }), HasSubstr("is repeated"));
  EXPECT_THAT(failure([&] { gauges.add("ok", "", {}, nullptr); }), HasSubstr("collector is empty"));
  gauges.add("ok", "", {}, none);
  EXPECT_THAT(failure([&] { gauges.add("ok", "", {}, none); }), HasSubstr("already registered"));
}

TEST(ScrapeGaugesTest, WrongOrRepeatedLabelValuesAreAProgrammingError) {
  ScrapeGauges wrongCount;
  wrongCount.add("held", "Held.", {"controller"}, [] { return GaugeSamples{{{}, 1}}; });
  EXPECT_THAT(failure([&] { (void)wrongCount.Collect(); }),
              HasSubstr("metric \"held\" has 1 label(s) (controller) but was given 0 label value(s)"));
  ScrapeGauges repeated;
  repeated.add("held", "Held.", {"controller"}, [] { return GaugeSamples{{{"a"}, 1}, {{"a"}, 2}}; });
  EXPECT_THAT(failure([&] { (void)repeated.Collect(); }), HasSubstr("(a) twice"));
}

}  // namespace
}  // namespace ipu::metrics
