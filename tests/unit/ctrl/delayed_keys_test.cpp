#include "ctrl/delayed_keys.h"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ipu::ctrl {
namespace {

using namespace std::chrono_literals;
using Keys = std::vector<std::string>;

const Clock::TimePoint kT0(1h);

TEST(DelayedKeysTest, EmptyHasNoDeadline) {
  DelayedKeys keys;
  EXPECT_TRUE(keys.empty());
  EXPECT_EQ(keys.nextReadyAt(), Clock::TimePoint::max());
  EXPECT_TRUE(keys.takeReady(Clock::TimePoint::max()).empty());
}

TEST(DelayedKeysTest, EarliestTimeWinsAndAKeyIsHeldOnce) {
  DelayedKeys keys;
  EXPECT_TRUE(keys.schedule("ns/a", kT0 + 10s));
  EXPECT_TRUE(keys.schedule("ns/a", kT0 + 5s));    // earlier: moves the key
  EXPECT_FALSE(keys.schedule("ns/a", kT0 + 20s));  // later: ignored
  EXPECT_FALSE(keys.schedule("ns/a", kT0 + 5s));   // same: ignored
  EXPECT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys.nextReadyAt(), kT0 + 5s);

  EXPECT_TRUE(keys.takeReady(kT0 + 5s - 1ns).empty());
  EXPECT_EQ(keys.takeReady(kT0 + 5s), Keys{"ns/a"});
  EXPECT_TRUE(keys.empty());
}

TEST(DelayedKeysTest, ReportsOnlyAnEarlierOverallDeadline) {
  DelayedKeys keys;
  EXPECT_TRUE(keys.schedule("ns/a", kT0 + 5s));
  EXPECT_FALSE(keys.schedule("ns/b", kT0 + 9s));  // another key, but not the first due
  EXPECT_TRUE(keys.schedule("ns/c", kT0 + 1s));
  EXPECT_TRUE(keys.schedule("ns/b", kT0));  // moved ahead of everything
  EXPECT_EQ(keys.nextReadyAt(), kT0);
}

TEST(DelayedKeysTest, TakesReadyKeysInTimeOrderThenSchedulingOrder) {
  DelayedKeys keys;
  keys.schedule("ns/c", kT0 + 3s);
  keys.schedule("ns/b", kT0 + 1s);
  keys.schedule("ns/a", kT0 + 1s);
  keys.schedule("ns/d", kT0 + 4s);

  Keys seen;
  keys.forEachReady(kT0 + 3s, [&](const std::string& key) { seen.push_back(key); });
  EXPECT_EQ(seen, (Keys{"ns/b", "ns/a", "ns/c"}));
  EXPECT_EQ(keys.size(), 4u) << "forEachReady only looks";

  EXPECT_EQ(keys.takeReady(kT0 + 3s), (Keys{"ns/b", "ns/a", "ns/c"}));
  EXPECT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys.nextReadyAt(), kT0 + 4s);

  // A taken key can be scheduled again.
  EXPECT_TRUE(keys.schedule("ns/a", kT0 + 3s));
  keys.clear();
  EXPECT_TRUE(keys.empty());
  EXPECT_EQ(keys.nextReadyAt(), Clock::TimePoint::max());
}

}  // namespace
}  // namespace ipu::ctrl
