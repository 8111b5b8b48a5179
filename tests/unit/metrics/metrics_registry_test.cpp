#include "metrics/metrics_registry.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ipu::metrics {
namespace {

using ::testing::HasSubstr;

// The message of the std::invalid_argument `call` throws; fails the test if it throws nothing.
template <typename Call>
std::string invalidArgumentFrom(Call&& call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::invalid_argument";
  return "";
}

TEST(RegistryRenderTest, CountersAndGaugesInNameOrder) {
  Registry registry;
  registry.counter("ipu_reconciles_total", "Reconciles done.").with().inc(3);
  auto& depth = registry.gauge("ipu_queue_depth", "Keys waiting.").with();
  depth.set(4);
  depth.inc(0.5);
  depth.dec(2);
  EXPECT_EQ(registry.render(),
            "# HELP ipu_queue_depth Keys waiting.\n"
            "# TYPE ipu_queue_depth gauge\n"
            "ipu_queue_depth 2.5\n"
            "# HELP ipu_reconciles_total Reconciles done.\n"
            "# TYPE ipu_reconciles_total counter\n"
            "ipu_reconciles_total 3\n");
}

TEST(RegistryRenderTest, EmptyRegistryRendersNothing) {
  Registry registry;
  EXPECT_EQ(registry.render(), "");
}

TEST(RegistryRenderTest, UnlabelledFamiliesShowZeroAndUnusedLabelledOnesNothing) {
  Registry registry;
  registry.counter("a_total", "Unlabelled.");
  registry.counter("b_total", "Labelled, never used.", {"kind"});
  registry.gauge("c", "Labelled gauge, never used.", {"kind"});
  EXPECT_EQ(registry.render(),
            "# HELP a_total Unlabelled.\n"
            "# TYPE a_total counter\n"
            "a_total 0\n");
}

TEST(RegistryRenderTest, LabelledSamplesSortByValuesWithLabelsInRegisteredOrder) {
  Registry registry;
  auto& requests = registry.counter("http_requests_total", "Requests.", {"method", "code"});
  requests.with({"POST", "500"}).inc();
  requests.with({"GET", "200"}).inc(2);
  requests.with({"GET", "404"}).inc();
  requests.with({"GET", "200"}).inc();
  EXPECT_EQ(registry.render(),
            "# HELP http_requests_total Requests.\n"
            "# TYPE http_requests_total counter\n"
            "http_requests_total{method=\"GET\",code=\"200\"} 3\n"
            "http_requests_total{method=\"GET\",code=\"404\"} 1\n"
            "http_requests_total{method=\"POST\",code=\"500\"} 1\n");
}

TEST(RegistryRenderTest, HelpAndLabelValuesAreEscaped) {
  Registry registry;
  registry.gauge("g", "Path like C:\\x\nsecond line with \"quotes\".", {"path"})
      .with({"a\\b \"c\"\nd"})
      .set(1);
  EXPECT_EQ(registry.render(),
            "# HELP g Path like C:\\\\x\\nsecond line with \"quotes\".\n"
            "# TYPE g gauge\n"
            "g{path=\"a\\\\b \\\"c\\\"\\nd\"} 1\n");
}

TEST(RegistryRenderTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Registry registry;
  auto& latency = registry.histogram("ipu_reconcile_seconds", "Reconcile latency.", {0.005, 0.1, 1});
  for (double seconds : {0.001, 0.005, 0.05, 0.5, 3.0}) latency.with().observe(seconds);
  EXPECT_EQ(registry.render(),
            "# HELP ipu_reconcile_seconds Reconcile latency.\n"
            "# TYPE ipu_reconcile_seconds histogram\n"
            "ipu_reconcile_seconds_bucket{le=\"0.005\"} 2\n"  // 0.005 itself is <= 0.005
            "ipu_reconcile_seconds_bucket{le=\"0.1\"} 3\n"
            "ipu_reconcile_seconds_bucket{le=\"1\"} 4\n"
            "ipu_reconcile_seconds_bucket{le=\"+Inf\"} 5\n"
            "ipu_reconcile_seconds_sum 3.556\n"
            "ipu_reconcile_seconds_count 5\n");
}

TEST(RegistryRenderTest, LabelledHistogramPutsLeLastAndUnusedChildrenAreAbsent) {
  Registry registry;
  auto& sizes = registry.histogram("job_ipus", "IPUs per job.",
                                   {1, 4, std::numeric_limits<double>::infinity()}, {"controller"});
  sizes.with({"pod64"}).observe(4);
  sizes.with({"pod16"}).observe(16);
  EXPECT_EQ(registry.render(),
            "# HELP job_ipus IPUs per job.\n"
            "# TYPE job_ipus histogram\n"
            "job_ipus_bucket{controller=\"pod16\",le=\"1\"} 0\n"
            "job_ipus_bucket{controller=\"pod16\",le=\"4\"} 0\n"
            "job_ipus_bucket{controller=\"pod16\",le=\"+Inf\"} 1\n"
            "job_ipus_sum{controller=\"pod16\"} 16\n"
            "job_ipus_count{controller=\"pod16\"} 1\n"
            "job_ipus_bucket{controller=\"pod64\",le=\"1\"} 0\n"
            "job_ipus_bucket{controller=\"pod64\",le=\"4\"} 1\n"
            "job_ipus_bucket{controller=\"pod64\",le=\"+Inf\"} 1\n"
            "job_ipus_sum{controller=\"pod64\"} 4\n"
            "job_ipus_count{controller=\"pod64\"} 1\n");
}

TEST(RegistryRenderTest, UnusedUnlabelledHistogramShowsZerosAndNanCountsOnlyInInf) {
  Registry registry;
  auto& h = registry.histogram("h", "H.", {1});
  EXPECT_EQ(registry.render(),
            "# HELP h H.\n# TYPE h histogram\n"
            "h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n");
  h.with().observe(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(registry.render(),
            "# HELP h H.\n# TYPE h histogram\n"
            "h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 1\nh_sum NaN\nh_count 1\n");
}

TEST(RegistryRenderTest, HistogramWithoutBoundsHasOnlyTheInfBucket) {
  Registry registry;
  registry.histogram("h", "H.", {}).with().observe(2);
  EXPECT_EQ(registry.render(),
            "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 2\nh_count 1\n");
}

TEST(RegistryRenderTest, DefaultBucketsAreClientGolangs) {
  EXPECT_EQ(defaultBuckets(), (std::vector<double>{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}));
}

TEST(GaugeCallbackTest, ComputedAtEachScrapeAndSortedByLabels) {
  Registry registry;
  GaugeSamples current = {{{"Running"}, 2}, {{"Pending"}, 1}};
  registry.gaugeCallback("ipu_jobs", "IPUJobs by phase.", {"phase"}, [&current] { return current; });
  registry.counter("ipu_a_total", "Sorted before the callback family.");
  EXPECT_EQ(registry.render(),
            "# HELP ipu_a_total Sorted before the callback family.\n"
            "# TYPE ipu_a_total counter\n"
            "ipu_a_total 0\n"
            "# HELP ipu_jobs IPUJobs by phase.\n"
            "# TYPE ipu_jobs gauge\n"
            "ipu_jobs{phase=\"Pending\"} 1\n"
            "ipu_jobs{phase=\"Running\"} 2\n");
  current = {{{"Succeeded"}, 7}};
  EXPECT_THAT(registry.render(), HasSubstr("# TYPE ipu_jobs gauge\nipu_jobs{phase=\"Succeeded\"} 7\n"));
  current = {};
  EXPECT_EQ(registry.render(),
            "# HELP ipu_a_total Sorted before the callback family.\n"
            "# TYPE ipu_a_total counter\n"
            "ipu_a_total 0\n");
}

TEST(GaugeCallbackTest, UnlabelledCallback) {
  Registry registry;
  registry.gaugeCallback("ipu_leader", "1 while leading.", {}, [] { return GaugeSamples{{{}, 1}}; });
  EXPECT_EQ(registry.render(), "# HELP ipu_leader 1 while leading.\n# TYPE ipu_leader gauge\nipu_leader 1\n");
}

TEST(GaugeCallbackTest, WrongLabelCountOrRepeatedLabelsFailTheRender) {
  Registry registry;
  GaugeSamples current = {{{"Running", "extra"}, 1}};
  registry.gaugeCallback("ipu_jobs", "Jobs.", {"phase"}, [&current] { return current; });
  EXPECT_THAT(invalidArgumentFrom([&] { (void)registry.render(); }), HasSubstr("\"ipu_jobs\""));
  current = {{{"Running"}, 1}, {{"Running"}, 2}};
  EXPECT_THAT(invalidArgumentFrom([&] { (void)registry.render(); }),
              HasSubstr("reported the label values {phase=\"Running\"} twice"));
}

TEST(RegistrationTest, MetricNamesFollowThePrometheusGrammar) {
  Registry registry;
  for (const char* good : {"a", "_a", ":a", "a:b_c9", "ipu_jobs_total"}) {
    EXPECT_NO_THROW(registry.counter(good, "ok")) << good;
  }
  for (const char* bad : {"", "1a", "a-b", "a b", "a.b", "é", "a\n"}) {
    EXPECT_THAT(invalidArgumentFrom([&] { registry.gauge(bad, "bad"); }), HasSubstr("invalid metric name"))
        << bad;
  }
}

TEST(RegistrationTest, LabelNamesFollowTheGrammarAndAreUnique) {
  Registry registry;
  EXPECT_NO_THROW(registry.counter("ok_total", "ok", {"a", "_b", "c9", "le"}));
  for (const char* bad : {"", "__reserved", "a:b", "1a", "a-b"}) {
    EXPECT_THAT(invalidArgumentFrom([&] { registry.counter("c_total", "bad", {bad}); }),
                HasSubstr("invalid label name"))
        << bad;
  }
  EXPECT_THAT(invalidArgumentFrom([&] {
                registry.counter("d_total", "dup", {"x", "y", "x"});
              }),
              HasSubstr("label name \"x\" is repeated"));
  EXPECT_THAT(invalidArgumentFrom([&] { registry.histogram("h", "le", {1}, {"le"}); }),
              HasSubstr("\"le\" cannot be a label name"));
  EXPECT_EQ(registry.render().find("c_total"), std::string::npos) << "a refused family is not registered";
}

TEST(RegistrationTest, DuplicateNamesAreRefusedAcrossTypes) {
  Registry registry;
  registry.counter("x_total", "first");
  EXPECT_THAT(invalidArgumentFrom([&] { registry.counter("x_total", "again"); }),
              HasSubstr("metric \"x_total\" is already registered"));
  EXPECT_THAT(invalidArgumentFrom([&] { registry.gauge("x_total", "again"); }),
              HasSubstr("already registered"));
  EXPECT_THAT(invalidArgumentFrom(
                  [&] { registry.gaugeCallback("x_total", "again", {}, [] { return GaugeSamples{}; }); }),
              HasSubstr("already registered"));
}

TEST(RegistrationTest, HistogramSampleNamesClashWithOtherFamilies) {
  Registry registry;
  registry.histogram("latency", "h", {1});
  EXPECT_THAT(invalidArgumentFrom([&] { registry.counter("latency_count", "c"); }),
              HasSubstr("clashes with metric \"latency\""));
  EXPECT_THAT(invalidArgumentFrom([&] { registry.gauge("latency", "g"); }), HasSubstr("already registered"));
  registry.gauge("size_sum", "g");
  EXPECT_THAT(invalidArgumentFrom([&] { registry.histogram("size", "h", {1}); }),
              HasSubstr("both would use the name \"size_sum\""));
}

TEST(RegistrationTest, HistogramBoundsMustBeFiniteAndIncreasing) {
  Registry registry;
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THAT(invalidArgumentFrom([&] {
                registry.histogram("h1", "h", {1, 1});
              }),
              HasSubstr("increase strictly"));
  EXPECT_THAT(invalidArgumentFrom([&] {
                registry.histogram("h2", "h", {2, 1});
              }),
              HasSubstr("2 is followed by 1"));
  EXPECT_THAT(invalidArgumentFrom([&] {
                registry.histogram("h3", "h", {1, std::nan("")});
              }),
              HasSubstr("not finite"));
  EXPECT_THAT(invalidArgumentFrom([&] {
                registry.histogram("h4", "h", {-inf, 1});
              }),
              HasSubstr("not finite"));
  EXPECT_THAT(invalidArgumentFrom([&] { registry.histogram("h5", "h", {inf, 1}); }), HasSubstr("not finite"));
}

TEST(LabelValuesTest, WrongCountIsAProgrammingError) {
  Registry registry;
  auto& byPhase = registry.gauge("jobs", "Jobs.", {"phase", "namespace"});
  EXPECT_THAT(invalidArgumentFrom([&] { byPhase.with({"Running"}); }),
              HasSubstr("metric \"jobs\" has 2 label(s) (phase, namespace) but was given 1 label value(s)"));
  EXPECT_THAT(invalidArgumentFrom([&] { byPhase.with(); }), HasSubstr("given 0"));
  auto& unlabelled = registry.counter("plain_total", "Plain.");
  EXPECT_THAT(invalidArgumentFrom([&] { unlabelled.with({"x"}); }), HasSubstr("has 0 label(s)"));
  EXPECT_EQ(registry.render().find("jobs{"), std::string::npos) << "no child was created by the bad calls";
}

TEST(ChildTest, CounterRefusesToDecrease) {
  Registry registry;
  auto& counter = registry.counter("c_total", "C.").with();
  counter.inc(2);
  EXPECT_THAT(invalidArgumentFrom([&] { counter.inc(-1); }), HasSubstr("cannot decrease: inc(-1)"));
  EXPECT_THAT(invalidArgumentFrom([&] { counter.inc(std::nan("")); }), HasSubstr("inc(NaN)"));
  counter.inc(0);
  EXPECT_EQ(counter.value(), 2);
}

TEST(ChildTest, ReferencesStayValidAsChildrenAreAdded) {
  Registry registry;
  auto& family = registry.counter("c_total", "C.", {"key"});
  Counter& first = family.with({"first"});
  for (int i = 0; i < 1000; ++i) family.with({"k" + std::to_string(i)}).inc();
  first.inc(5);
  EXPECT_EQ(&family.with({"first"}), &first);
  EXPECT_EQ(family.with({"first"}).value(), 5);
  EXPECT_THAT(registry.render(), HasSubstr("c_total{key=\"first\"} 5\n"));
}

}  // namespace
}  // namespace ipu::metrics
