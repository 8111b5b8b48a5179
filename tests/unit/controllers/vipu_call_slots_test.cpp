#include "ipujob/vipu_call_slots.h"

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

TEST(VipuCallSlotsTest, EachControllerHasItsOwnBoundAndASlotComesBackWhenItsPassEnds) {
  VipuCallSlots slots(1);
  auto first = slots.tryAcquire("slow");
  ASSERT_TRUE(first);
  EXPECT_FALSE(slots.tryAcquire("slow")) << "the slow controller's one slot is taken";
  EXPECT_TRUE(slots.tryAcquire("fast")) << "another controller is not held up";
  first.reset();
  EXPECT_TRUE(slots.tryAcquire("slow")) << "given back when the pass ended";
}

TEST(VipuCallSlotsTest, ABoundOfTwoLetsTwoPassesInAndZeroIsNoBound) {
  VipuCallSlots two(2);
  auto a = two.tryAcquire("c");
  auto b = two.tryAcquire("c");
  EXPECT_TRUE(a && b);
  EXPECT_FALSE(two.tryAcquire("c"));
  VipuCallSlots unbounded(0);
  std::vector<VipuCallSlots::Slot> held;
  for (int i = 0; i < 100; ++i) {
    auto slot = unbounded.tryAcquire("c");
    ASSERT_TRUE(slot);
    held.push_back(std::move(*slot));
  }
}

}  // namespace
}  // namespace ipu::controllers
