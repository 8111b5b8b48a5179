#include "metrics/health_checks.h"

#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ipu::metrics {
namespace {

using ::testing::HasSubstr;

Status passing() {
  return {};
}

TEST(HealthChecksTest, NoChecksPass) {
  HealthChecks checks("healthz");
  EXPECT_TRUE(checks.run(false).passed);
  EXPECT_EQ(checks.run(false).text, "ok");
  EXPECT_EQ(checks.run(true).text, "healthz check passed\n");
}

TEST(HealthChecksTest, PassingChecksSayOkOrListThemselvesWhenVerbose) {
  HealthChecks checks("readyz");
  checks.add("informers-synced", passing);
  checks.add("leader", passing);
  EXPECT_EQ(checks.run(false).text, "ok");
  const auto verbose = checks.run(true);
  EXPECT_TRUE(verbose.passed);
  EXPECT_EQ(verbose.text, "[+]informers-synced ok\n[+]leader ok\nreadyz check passed\n");
}

TEST(HealthChecksTest, FailingChecksAreListedWithTheirMessages) {
  HealthChecks checks("readyz");
  checks.add("ping", passing);
  checks.add("informers-synced",
             [] { return Status(makeError(ErrorCode::kUnavailable, "pods not synced")); });
  checks.add("vipu", [] { return Status(makeError(ErrorCode::kDeadlineExceeded, "")); });
  const auto terse = checks.run(false);
  EXPECT_FALSE(terse.passed);
  EXPECT_EQ(terse.text,
            "[-]informers-synced failed: pods not synced\n"
            "[-]vipu failed: DeadlineExceeded\n"
            "readyz check failed\n");
  EXPECT_EQ(checks.run(true).text,
            "[+]ping ok\n"
            "[-]informers-synced failed: pods not synced\n"
            "[-]vipu failed: DeadlineExceeded\n"
            "readyz check failed\n");
}

TEST(HealthChecksTest, AThrowingCheckFailsAndMessagesStayOnOneLine) {
  HealthChecks checks("healthz");
  checks.add("throws", []() -> Status { throw std::runtime_error("kaput"); });
  checks.add("multiline", [] { return Status(makeError(ErrorCode::kInternal, "first\nsecond\r\nthird")); });
  EXPECT_EQ(checks.run(false).text,
            "[-]throws failed: threw: kaput\n"
            "[-]multiline failed: first second  third\n"
            "healthz check failed\n");
}

TEST(HealthChecksTest, ChecksAreSeenByLaterRuns) {
  HealthChecks checks("healthz");
  EXPECT_TRUE(checks.run(false).passed);
  checks.add("late", [] { return Status(makeError(ErrorCode::kUnavailable, "not yet")); });
  EXPECT_FALSE(checks.run(false).passed);
}

TEST(HealthChecksTest, BadOrRepeatedNamesAndEmptyChecksAreRefused) {
  HealthChecks checks("healthz");
  checks.add("ping", passing);
  EXPECT_THROW(checks.add("ping", passing), std::invalid_argument);
  for (const char* bad : {"", "has space", "a/b", "new\nline"}) {
    EXPECT_THROW(checks.add(bad, passing), std::invalid_argument) << bad;
  }
  EXPECT_THROW(checks.add("empty", HealthCheck()), std::invalid_argument);
  EXPECT_EQ(checks.run(true).text, "[+]ping ok\nhealthz check passed\n");
}

}  // namespace
}  // namespace ipu::metrics
