#include "remote/agent_limits.h"

#include <cstdlib>

#include <gtest/gtest.h>

#include "settings/whole_number.h"

namespace ipu::runtime::remote {
namespace {

TEST(ConnectionLimiterTest, BoundsEachSourceAndTheTotal) {
  ConnectionLimiter limiter({.total = 3, .perSource = 2});
  EXPECT_TRUE(limiter.admit("10.0.0.1"));
  EXPECT_TRUE(limiter.admit("10.0.0.1"));
  EXPECT_FALSE(limiter.admit("10.0.0.1"));  // its own bound
  EXPECT_TRUE(limiter.admit("10.0.0.2"));
  EXPECT_FALSE(limiter.admit("10.0.0.3"));  // the total
  EXPECT_EQ(limiter.held(), 3u);
  limiter.release("10.0.0.1");
  EXPECT_TRUE(limiter.admit("10.0.0.3"));
  limiter.release("10.0.0.9");  // never admitted: changes nothing
  EXPECT_EQ(limiter.held(), 3u);
}

TEST(ConnectionLimiterTest, LimitsComeFromTheEnvironmentAndAreChecked) {
  ::unsetenv(kEnvMaxUnauthenticated);
  ::unsetenv(kEnvMaxUnauthenticatedPerSource);
  ConnectionLimits defaults = connectionLimitsFromEnvironment();
  EXPECT_EQ(defaults.total, kDefaultMaxUnauthenticated);
  EXPECT_EQ(defaults.perSource, kDefaultMaxUnauthenticatedPerSource);
  ::setenv(kEnvMaxUnauthenticated, "8", 1);
  EXPECT_EQ(connectionLimitsFromEnvironment().total, 8u);
  ::setenv(kEnvMaxUnauthenticatedPerSource, "0", 1);
  EXPECT_THROW(connectionLimitsFromEnvironment(), settings::SettingError);
  ::setenv(kEnvMaxUnauthenticatedPerSource, "many", 1);
  EXPECT_THROW(connectionLimitsFromEnvironment(), settings::SettingError);
  ::unsetenv(kEnvMaxUnauthenticated);
  ::unsetenv(kEnvMaxUnauthenticatedPerSource);
}

TEST(RefusedConnectionsTest, SaysHowManyAndWhy) {
  RefusedConnections refused{.overTheBound = 1200, .failedHandshake = 34};
  EXPECT_EQ(refused.describe(), "refused 1234 connection(s) (over the bound: 1200, failed handshake: 34)");
}

}  // namespace
}  // namespace ipu::runtime::remote
