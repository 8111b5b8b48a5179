#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"

namespace ipu::ctrl {

// Keys waiting for their time to be queued: the delaying half of the work queue (client-go's
// delaying_queue.go). Each key appears once, at the earliest time anyone asked for it, so repeated
// addAfter calls for one key cannot pile up. Not thread-safe: the work queue guards it.
class DelayedKeys {
 public:
  // Schedules `key` for `readyAt`, unless it is already scheduled at or before then (earliest wins).
  // Returns true if this moved the earliest deadline earlier, so that waiters must re-plan their sleep.
  bool schedule(const std::string& key, Clock::TimePoint readyAt);

  // The earliest time any key becomes ready; TimePoint::max() if there are none.
  Clock::TimePoint nextReadyAt() const;

  // Removes and returns the keys ready at `now`, in order of readiness (ties in order of scheduling).
  std::vector<std::string> takeReady(Clock::TimePoint now);

  // Calls fn(key) for each key ready at `now` without removing it.
  template <typename Fn>
  void forEachReady(Clock::TimePoint now, Fn&& fn) const {
    for (auto it = byTime_.begin(); it != byTime_.end() && it->first.first <= now; ++it) fn(it->second);
  }

  std::size_t size() const { return byTime_.size(); }
  bool empty() const { return byTime_.empty(); }
  void clear();

 private:
  // (ready time, scheduling sequence number): the number keeps equal times in first-come order.
  using Slot = std::pair<Clock::TimePoint, std::uint64_t>;

  std::map<Slot, std::string> byTime_;
  std::unordered_map<std::string, Slot> slotOf_;
  std::uint64_t nextSequence_ = 0;
};

}  // namespace ipu::ctrl
