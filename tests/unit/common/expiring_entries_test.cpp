#include "common/expiring_entries.h"

#include <map>

#include <gtest/gtest.h>

namespace ipu {
namespace {

// Entry value: whether it has expired.
using Entries = std::map<int, bool>;

Entries entries(int count, bool expired) {
  Entries out;
  for (int i = 0; i < count; ++i) out[i] = expired;
  return out;
}

const auto kExpired = [](const auto& entry) { return entry.second; };

TEST(ExpiringEntriesTest, ASmallMapIsNeverWalked) {
  ExpiringEntries expiring;
  Entries map = entries(63, true);
  expiring.prune(map, kExpired);
  EXPECT_EQ(map.size(), 63u);
}

TEST(ExpiringEntriesTest, DropsTheExpiredOnceTheMapReachesItsBoundThenWaitsForItToDouble) {
  ExpiringEntries expiring;
  Entries map = entries(64, true);
  for (int i = 0; i < 40; ++i) map[i] = false;  // 40 live, 24 expired
  expiring.prune(map, kExpired);
  EXPECT_EQ(map.size(), 40u);

  // The next bound is twice what was left (80): 79 entries, all expired, are kept until then.
  for (int i = 40; i < 79; ++i) map[i] = true;
  expiring.prune(map, kExpired);
  EXPECT_EQ(map.size(), 79u);
  map[79] = true;
  expiring.prune(map, kExpired);
  EXPECT_EQ(map.size(), 40u);
}

TEST(ExpiringEntriesTest, AMapOfLiveEntriesIsWalkedAgainOnlyOnceItHasDoubled) {
  ExpiringEntries expiring;
  int walked = 0;
  const auto counting = [&walked](const auto&) {
    ++walked;
    return false;
  };
  Entries map = entries(64, false);
  expiring.prune(map, counting);
  EXPECT_EQ(walked, 64);
  for (int i = 64; i < 127; ++i) map[i] = false;
  expiring.prune(map, counting);
  EXPECT_EQ(walked, 64);
  map[127] = false;
  expiring.prune(map, counting);
  EXPECT_EQ(walked, 64 + 128);
}

}  // namespace
}  // namespace ipu
