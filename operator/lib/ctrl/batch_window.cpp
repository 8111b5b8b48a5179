#include "ctrl/batch_window.h"

#include <algorithm>

namespace ipu::ctrl {

Clock::Duration BatchWindow::holdFor(const std::string& key, Clock::TimePoint now) {
  std::lock_guard lock(mutex_);
  if (auto open = windowEnds_.find(key); open != windowEnds_.end() && now < open->second) {
    return open->second - now;
  }
  if (windowEnds_.size() >= pruneAbove_) pruneLocked(now);
  windowEnds_[key] = now + batch_;
  return Clock::Duration::zero();
}

std::size_t BatchWindow::openWindows() const {
  std::lock_guard lock(mutex_);
  return windowEnds_.size();
}

void BatchWindow::pruneLocked(Clock::TimePoint now) {
  std::erase_if(windowEnds_, [now](const auto& entry) { return entry.second <= now; });
  pruneAbove_ = std::max<std::size_t>(64, 2 * windowEnds_.size());
}

}  // namespace ipu::ctrl
