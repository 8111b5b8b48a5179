#include "ipujob/vipu_call_slots.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

TEST(VipuCallSlotsTest, EachControllerHasItsOwnBoundAndASlotComesBackWhenItsPassEnds) {
  VipuCallSlots slots(1);
  auto first = slots.tryAcquire("slow", "ns/job");
  ASSERT_TRUE(first);
  EXPECT_FALSE(slots.tryAcquire("slow", "ns/job")) << "the slow controller's one slot is taken";
  EXPECT_TRUE(slots.tryAcquire("fast", "ns/job")) << "another controller is not held up";
  first.reset();
  EXPECT_TRUE(slots.tryAcquire("slow", "ns/job")) << "given back when the pass ended";
}

TEST(VipuCallSlotsTest, ABoundOfTwoLetsTwoPassesInAndZeroIsNoBound) {
  VipuCallSlots two(2);
  auto a = two.tryAcquire("c", "ns/job");
  auto b = two.tryAcquire("c", "ns/job");
  EXPECT_TRUE(a && b);
  EXPECT_FALSE(two.tryAcquire("c", "ns/job"));
  VipuCallSlots unbounded(0);
  std::vector<VipuCallSlots::Slot> held;
  for (int i = 0; i < 100; ++i) {
    auto slot = unbounded.tryAcquire("c", "ns/job");
    ASSERT_TRUE(slot);
    held.push_back(std::move(*slot));
  }
}

TEST(VipuCallSlotsTest, AJobThatFoundTheSlotsTakenIsWokenOnceWhenOneComesBack) {
  VipuCallSlots slots(1);
  std::vector<std::string> woken;
  slots.wakeWith([&woken](const std::string& key) { woken.push_back(key); });
  auto held = slots.tryAcquire("c", "ns/holder");
  ASSERT_TRUE(held);
  EXPECT_FALSE(slots.tryAcquire("c", "ns/waiter"));
  EXPECT_FALSE(slots.tryAcquire("c", "ns/waiter")) << "asked twice, remembered once";
  EXPECT_EQ(slots.waiting("c"), 1u);
  EXPECT_TRUE(woken.empty()) << "nothing came back yet";
  held.reset();
  EXPECT_EQ(woken, std::vector<std::string>{"ns/waiter"});
  EXPECT_EQ(slots.waiting("c"), 0u);
  EXPECT_TRUE(slots.tryAcquire("c", "ns/waiter")) << "the woken pass finds the slot free";
}

TEST(VipuCallSlotsTest, EachSlotGivenBackWakesTheJobThatWaitedLongestAndOnlyOnController) {
  VipuCallSlots slots(1);
  std::vector<std::string> woken;
  slots.wakeWith([&woken](const std::string& key) { woken.push_back(key); });
  auto held = slots.tryAcquire("c", "ns/holder");
  auto other = slots.tryAcquire("d", "ns/elsewhere");
  ASSERT_TRUE(held && other);
  EXPECT_FALSE(slots.tryAcquire("c", "ns/first"));
  EXPECT_FALSE(slots.tryAcquire("c", "ns/second"));
  other.reset();
  EXPECT_TRUE(woken.empty()) << "a slot on another controller wakes none of c's waiters";
  held.reset();
  EXPECT_EQ(woken, std::vector<std::string>{"ns/first"});
  auto first = slots.tryAcquire("c", "ns/first");
  ASSERT_TRUE(first);
  first.reset();
  EXPECT_EQ(woken, (std::vector<std::string>{"ns/first", "ns/second"}));
  auto idle = slots.tryAcquire("c", "ns/second");
  idle.reset();
  EXPECT_EQ(woken.size(), 2u) << "a slot given back with nobody waiting wakes nobody";
}

}  // namespace
}  // namespace ipu::controllers
