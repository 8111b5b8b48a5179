// How long an interactive job lives: the ttl in force and status.interactive from when its workers run.
#include "ipujob/interactive_session.h"

#include <gtest/gtest.h>

#include "common/time_format.h"

namespace ipu::controllers {
namespace {

using namespace std::chrono_literals;

const InteractiveLimits kLimits{4h, 24h};
const Clock::WallTime kNoon = *parseTime("2026-11-27T12:00:00Z");

TEST(InteractiveSessionTest, TheTtlInForceIsTheSpecsTheDefaultForZeroAndAtMostTheMaximum) {
  EXPECT_EQ(interactiveTtl({3600}, kLimits).ttl, 3600s);
  EXPECT_FALSE(interactiveTtl({3600}, kLimits).capped);
  EXPECT_EQ(interactiveTtl({0}, kLimits).ttl, 4h);
  EXPECT_EQ(interactiveTtl({86400}, kLimits).ttl, 24h);
  EXPECT_FALSE(interactiveTtl({86400}, kLimits).capped);
  EXPECT_EQ(interactiveTtl({86401}, kLimits).ttl, 24h);
  EXPECT_TRUE(interactiveTtl({86401}, kLimits).capped);
}

TEST(InteractiveSessionTest, TheSessionStartsOnceAndEndsItsTtlLaterWhateverTheTtlBecomes) {
  const api::InteractiveStatus started = interactiveStatus(std::nullopt, 600s, kNoon);
  EXPECT_EQ(started, (api::InteractiveStatus{"2026-11-27T12:00:00Z", 600, "2026-11-27T12:10:00Z"}));
  EXPECT_EQ(interactiveExpiry(started), kNoon + 600s);

  // Later passes keep when it started; a raised ttl moves the end only.
  EXPECT_EQ(interactiveStatus(started, 600s, kNoon + 5min), started);
  EXPECT_EQ(interactiveStatus(started, 1800s, kNoon + 5min),
            (api::InteractiveStatus{"2026-11-27T12:00:00Z", 1800, "2026-11-27T12:30:00Z"}));
  // A start time the operator cannot read starts the session again rather than never ending it.
  EXPECT_EQ(interactiveStatus(api::InteractiveStatus{"soon", 600, "later"}, 600s, kNoon + 1min).runningSince,
            "2026-11-27T12:01:00Z");
  EXPECT_EQ(interactiveExpiry({"", 0, "not a time"}), std::nullopt);
}

}  // namespace
}  // namespace ipu::controllers
