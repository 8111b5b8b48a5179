#include "ctrl/delayed_keys.h"

namespace ipu::ctrl {

bool DelayedKeys::schedule(const std::string& key, Clock::TimePoint readyAt) {
  const Clock::TimePoint earliestBefore = nextReadyAt();
  if (auto known = slotOf_.find(key); known != slotOf_.end()) {
    if (known->second.first <= readyAt) return false;
    byTime_.erase(known->second);
    slotOf_.erase(known);
  }
  const Slot slot{readyAt, nextSequence_++};
  byTime_.emplace(slot, key);
  slotOf_.emplace(key, slot);
  return readyAt < earliestBefore;
}

Clock::TimePoint DelayedKeys::nextReadyAt() const {
  return byTime_.empty() ? Clock::TimePoint::max() : byTime_.begin()->first.first;
}

std::vector<std::string> DelayedKeys::takeReady(Clock::TimePoint now) {
  std::vector<std::string> ready;
  while (!byTime_.empty() && byTime_.begin()->first.first <= now) {
    auto node = byTime_.extract(byTime_.begin());
    slotOf_.erase(node.mapped());
    ready.push_back(std::move(node.mapped()));
  }
  return ready;
}

void DelayedKeys::clear() {
  byTime_.clear();
  slotOf_.clear();
}

}  // namespace ipu::ctrl
