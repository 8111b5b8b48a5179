#include "ipujob/vipu_call_slots.h"

namespace ipu::controllers {

std::optional<VipuCallSlots::Slot> VipuCallSlots::tryAcquire(const std::string& controller,
                                                             const std::string& key) {
  if (state_->limit <= 0) return Slot(nullptr);
  {
    std::lock_guard lock(state_->mutex);
    Waiters& slots = state_->controllers[controller];
    if (slots.inUse >= state_->limit) {
      if (slots.keys.insert(key).second) slots.order.push_back(key);
      return std::nullopt;
    }
    ++slots.inUse;
  }
  // The slot outlives nothing it needs: the state is shared with it.
  return Slot(
      std::shared_ptr<void>(nullptr, [state = state_, controller](void*) { release(*state, controller); }));
}

void VipuCallSlots::release(State& state, const std::string& controller) {
  std::optional<std::string> next;
  {
    std::lock_guard lock(state.mutex);
    Waiters& slots = state.controllers[controller];
    --slots.inUse;
    if (!slots.order.empty()) {
      next = std::move(slots.order.front());
      slots.order.pop_front();
      slots.keys.erase(*next);
    }
  }
  // Outside the lock: the wake queues a pass, which may come straight back here on another worker.
  if (next && state.wake) state.wake(*next);
}

std::size_t VipuCallSlots::waiting(const std::string& controller) const {
  std::lock_guard lock(state_->mutex);
  const auto found = state_->controllers.find(controller);
  return found == state_->controllers.end() ? 0 : found->second.order.size();
}

}  // namespace ipu::controllers
