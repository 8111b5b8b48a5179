#include "ipujob/creation_expectations.h"

#include <gtest/gtest.h>

#include "fake_clock.h"

namespace ipu::controllers {
namespace {

using namespace std::chrono_literals;

TEST(CreationExpectationsTest, APodIsAwaitedFromItsCreateUntilSeenOrItsTtlRunsOut) {
  testing::FakeClock clock;
  CreationExpectations expectations(clock, 30s);
  EXPECT_FALSE(expectations.awaiting("uid-a", 0, "a-worker-0")) << "never created here: create it";
  expectations.podCreated("uid-a", 0, "a-worker-0");
  expectations.podCreated("uid-a", 0, "a-worker-1");
  clock.advance(10s);
  EXPECT_EQ(expectations.awaiting("uid-a", 0, "a-worker-0"), std::optional<Clock::Duration>(20s));
  expectations.podSeen("uid-a", 0, "a-worker-0");
  EXPECT_FALSE(expectations.awaiting("uid-a", 0, "a-worker-0")) << "seen, then missing: lost, create it";
  clock.advance(20s);
  EXPECT_FALSE(expectations.awaiting("uid-a", 0, "a-worker-1")) << "never shown within the TTL";
}

TEST(CreationExpectationsTest, AnotherAttemptOrAJobOfTheSameNameInheritsNothing) {
  testing::FakeClock clock;
  CreationExpectations expectations(clock);
  expectations.podCreated("uid-a", 0, "a-worker-0");
  expectations.sharedChildrenMade("uid-a", 0);
  EXPECT_TRUE(expectations.sharedChildrenMadeFor("uid-a", 0));
  EXPECT_FALSE(expectations.awaiting("uid-a", 1, "a-worker-0"));
  EXPECT_FALSE(expectations.sharedChildrenMadeFor("uid-a", 1)) << "a restart makes sure of its Service";
  EXPECT_FALSE(expectations.awaiting("uid-b", 0, "a-worker-0"));
  EXPECT_FALSE(expectations.sharedChildrenMadeFor("uid-b", 0));
}

TEST(CreationExpectationsTest, MemoryIsBoundedByForgettingTheLeastRecentAttempt) {
  testing::FakeClock clock;
  CreationExpectations expectations(clock, 30s, 2);
  expectations.podCreated("uid-a", 0, "a-worker-0");
  expectations.podCreated("uid-b", 0, "b-worker-0");
  expectations.podCreated("uid-c", 0, "c-worker-0");
  EXPECT_FALSE(expectations.awaiting("uid-a", 0, "a-worker-0"))
      << "forgotten: a create answered 409 at worst";
  EXPECT_TRUE(expectations.awaiting("uid-b", 0, "b-worker-0"));
  EXPECT_TRUE(expectations.awaiting("uid-c", 0, "c-worker-0"));
}

}  // namespace
}  // namespace ipu::controllers
