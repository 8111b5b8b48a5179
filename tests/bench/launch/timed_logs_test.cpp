#include "timed_logs.h"

#include <gtest/gtest.h>

namespace ipu::testing {
namespace {

TEST(TimedLogsTest, ReadsTheKubeletsTimestampsToTheNanosecond) {
  // 2026-12-02T22:30:01Z is 1796250601 s after the epoch.
  EXPECT_DOUBLE_EQ(rfc3339Seconds("2026-12-02T22:30:01Z"), 1796250601.0);
  EXPECT_NEAR(rfc3339Seconds("2026-12-02T22:30:01.123456789Z"), 1796250601.123456789, 1e-6);
  EXPECT_NEAR(rfc3339Seconds("2026-12-02T23:30:01.5+01:00"), 1796250601.5, 1e-6);
  EXPECT_NEAR(rfc3339Seconds("2026-12-02T21:00:01.5-01:30"), 1796250601.5, 1e-6);
}

TEST(TimedLogsTest, TextThatIsNoTimeReadsAsZero) {
  EXPECT_EQ(rfc3339Seconds("ipu-runtime"), 0);
  EXPECT_EQ(rfc3339Seconds(""), 0);
}

TEST(TimedLogsTest, EachLineKeepsItsTextAfterTheTimestamp) {
  const auto lines = timedLines(
      "2026-12-02T22:30:01.25Z ipu-runtime launch: waiting\n"
      "2026-12-02T22:30:02Z rank 0 up 1796250602.0\n"
      "nospace\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NEAR(lines[0].first, 1796250601.25, 1e-6);
  EXPECT_EQ(lines[0].second, "ipu-runtime launch: waiting");
  EXPECT_EQ(lines[1].second, "rank 0 up 1796250602.0");
}

}  // namespace
}  // namespace ipu::testing
