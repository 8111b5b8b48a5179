#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/clock.h"

namespace ipu::ctrl {

// When a key whose changes are batched is reconciled: its first change at once (a lone change, such as a
// job's last pod ending, reaches the reconciler without delay), the changes within `batch` after it together
// at the end of that window. A key is reconciled at most twice per window, however many changes come.
// Thread-safe (informers' handlers call it); memory bounded by the keys changed within one window, as ended
// windows are dropped whenever the map has doubled since it was last pruned.
class BatchWindow {
 public:
  explicit BatchWindow(Clock::Duration batch) : batch_(batch) {}

  // How long to hold a change of `key` that happens at `now`: zero when no window of the key is open (this
  // change opens one), else until the open window ends.
  Clock::Duration holdFor(const std::string& key, Clock::TimePoint now);

  std::size_t openWindows() const;

 private:
  void pruneLocked(Clock::TimePoint now);

  const Clock::Duration batch_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Clock::TimePoint> windowEnds_;
  std::size_t pruneAbove_ = 64;
};

}  // namespace ipu::ctrl
