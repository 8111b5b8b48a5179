#include "ipujob/vipu_call_slots.h"

namespace ipu::controllers {

std::optional<VipuCallSlots::Slot> VipuCallSlots::tryAcquire(const std::string& controller) {
  if (state_->limit <= 0) return Slot(nullptr);
  {
    std::lock_guard lock(state_->mutex);
    int& inUse = state_->inUse[controller];
    if (inUse >= state_->limit) return std::nullopt;
    ++inUse;
  }
  // The slot outlives nothing it needs: the state is shared with it.
  return Slot(std::shared_ptr<void>(nullptr, [state = state_, controller](void*) {
    std::lock_guard lock(state->mutex);
    --state->inUse[controller];
  }));
}

}  // namespace ipu::controllers
