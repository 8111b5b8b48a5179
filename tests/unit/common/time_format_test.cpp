#include "common/time_format.h"

#include <gtest/gtest.h>

namespace ipu {
namespace {

using namespace std::chrono;

TEST(TimeFormatTest, EachPrecisionAlwaysInUtc) {
  // 2026-01-02T03:04:05.678901Z
  Clock::WallTime time =
      sys_days{year{2026} / 1 / 2} + hours(3) + minutes(4) + seconds(5) + microseconds(678901);
  EXPECT_EQ(formatTime(time), "2026-01-02T03:04:05Z");
  EXPECT_EQ(formatMilliTime(time), "2026-01-02T03:04:05.678Z");
  EXPECT_EQ(formatMicroTime(time), "2026-01-02T03:04:05.678901Z");
  EXPECT_EQ(formatMicroTime(sys_days{year{2026} / 1 / 2}), "2026-01-02T00:00:00.000000Z")
      << "always six digits";
}

TEST(TimeFormatTest, BeforeTheEpochRoundsDown) {
  Clock::WallTime time = Clock::WallTime{} - milliseconds(1500);
  EXPECT_EQ(formatTime(time), "1969-12-31T23:59:58Z");
  EXPECT_EQ(formatMilliTime(time), "1969-12-31T23:59:58.500Z");
}

TEST(TimeFormatTest, ParsesWhatTheApiServerWrites) {
  const Clock::WallTime time = sys_days{year{2026} / 1 / 2} + hours(3) + minutes(4) + seconds(5);
  EXPECT_EQ(parseTime("2026-01-02T03:04:05Z"), time);
  EXPECT_EQ(parseTime("2026-01-02T03:04:05.678901Z"), time) << "the fraction is dropped";
  EXPECT_EQ(parseTime(formatTime(time)), time);
}

TEST(TimeFormatTest, MalformedTimesAreRefused) {
  for (const char* bad :
       {"", "2026-01-02", "2026-01-02T03:04:05", "2026-01-02 03:04:05Z", "2026-13-02T03:04:05Z",
        "2026-02-30T03:04:05Z", "2026-01-02T24:04:05Z", "2026-01-02T03:04:05.Z", "2026-01-02T03:04:05.12aZ",
        "2026-01-02T03:04:05+01:00", "+2026-01-02T03:04:05Z", "2026-1-02T03:04:05Z"}) {
    EXPECT_FALSE(parseTime(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace ipu
