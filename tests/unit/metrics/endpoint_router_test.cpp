#include "metrics/endpoint_router.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "metrics/scrape_gauges.h"

namespace ipu::metrics {
namespace {

using ::testing::HasSubstr;
using Headers = std::vector<std::pair<std::string, std::string>>;

class EndpointRouterTest : public ::testing::Test {
 protected:
  EndpointRouterTest() {
    prometheus::BuildCounter().Name("ipu_up_total").Help("Up.").Register(registry_).Add({}).Increment();
    metrics_.add(registry_);
    metrics_.add(gauges_);
    healthz_.add("ping", [] { return Status(); });
    readyz_.add("synced", [this] {
      return synced_ ? Status() : Status(makeError(ErrorCode::kUnavailable, "caches not synced"));
    });
  }

  HttpReply get(std::string_view path, std::string_view query = "") {
    return route(endpoints_, "GET", path, query);
  }

  prometheus::Registry registry_;
  ScrapeGauges gauges_;
  Exposition metrics_;
  HealthChecks healthz_{"healthz"};
  HealthChecks readyz_{"readyz"};
  bool synced_ = true;
  Endpoints endpoints_{.metrics = &metrics_, .healthz = &healthz_, .readyz = &readyz_};
};

TEST_F(EndpointRouterTest, MetricsServeTheRenderedExposition) {
  const HttpReply reply = get("/metrics");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.contentType, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(reply.body, metrics_.render());
  EXPECT_THAT(reply.body, HasSubstr("ipu_up_total 1\n"));
}

TEST_F(EndpointRouterTest, ABrokenScrapeGaugeIsA500WithItsMessage) {
  gauges_.add("broken", "Broken.", {"a"}, [] { return GaugeSamples{{{}, 1}}; });
  const HttpReply reply = get("/metrics");
  EXPECT_EQ(reply.status, 500);
  EXPECT_THAT(reply.body, HasSubstr("metric \"broken\" has 1 label(s)"));
}

TEST_F(EndpointRouterTest, ProbesReportTheirChecks) {
  EXPECT_EQ(get("/healthz").status, 200);
  EXPECT_EQ(get("/healthz").body, "ok");
  EXPECT_EQ(get("/healthz").contentType, "text/plain; charset=utf-8");
  EXPECT_EQ(get("/readyz", "verbose").body, "[+]synced ok\nreadyz check passed\n");
  synced_ = false;
  const HttpReply failing = get("/readyz");
  EXPECT_EQ(failing.status, 500);
  EXPECT_EQ(failing.body, "[-]synced failed: caches not synced\nreadyz check failed\n");
  EXPECT_EQ(get("/healthz").status, 200) << "liveness does not depend on readiness";
}

TEST_F(EndpointRouterTest, VerboseIsAQueryKeyWithOrWithoutValue) {
  for (const char* query : {"verbose", "verbose=1", "verbose=", "exclude=x&verbose", "a=b&verbose=true&c"}) {
    EXPECT_EQ(get("/healthz", query).body, "[+]ping ok\nhealthz check passed\n") << query;
  }
  for (const char* query : {"", "verbosely", "x=verbose", "Verbose"}) {
    EXPECT_EQ(get("/healthz", query).body, "ok") << query;
  }
}

TEST_F(EndpointRouterTest, UnknownPathsAre404WhateverTheMethod) {
  for (const char* path : {"/", "/metrics/", "/healthz/ping", "/other", ""}) {
    EXPECT_EQ(get(path).status, 404) << path;
    EXPECT_EQ(route(endpoints_, "POST", path, "").status, 404) << path;
  }
}

TEST_F(EndpointRouterTest, EndpointsNotGivenAre404) {
  const Endpoints probesOnly{.healthz = &healthz_, .readyz = &readyz_};
  EXPECT_EQ(route(probesOnly, "GET", "/metrics", "").status, 404);
  EXPECT_EQ(route(probesOnly, "GET", "/healthz", "").status, 200);
  const Endpoints metricsOnly{.metrics = &metrics_};
  EXPECT_EQ(route(metricsOnly, "GET", "/readyz", "").status, 404);
  EXPECT_EQ(route(metricsOnly, "GET", "/metrics", "").status, 200);
}

TEST_F(EndpointRouterTest, OtherMethodsAre405AllowingGet) {
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "get"}) {
    for (const char* path : {"/metrics", "/healthz", "/readyz"}) {
      const HttpReply reply = route(endpoints_, method, path, "");
      EXPECT_EQ(reply.status, 405) << method << " " << path;
      EXPECT_EQ(reply.headers, (Headers{{"Allow", "GET"}})) << method << " " << path;
    }
  }
}

}  // namespace
}  // namespace ipu::metrics
