#include "ipujob/activation_polls.h"

#include <algorithm>

namespace ipu::controllers {

Clock::Duration ActivationPolls::next(const std::string& job, Clock::TimePoint now) {
  std::lock_guard lock(mutex_);
  // A job activating for a hundred polls at the longest wait is long gone or long stuck: either way it only
  // waits the longest.
  expiring_.prune(firstSeen_, [&](const auto& entry) { return now - entry.second > 100 * longest_; });
  const Clock::TimePoint first = firstSeen_.try_emplace(job, now).first->second;
  const Clock::Duration half = (now - first) / 2;
  return std::clamp(half, shortest_, std::max(shortest_, longest_));
}

void ActivationPolls::settled(const std::string& job) {
  std::lock_guard lock(mutex_);
  firstSeen_.erase(job);
}

std::size_t ActivationPolls::tracked() const {
  std::lock_guard lock(mutex_);
  return firstSeen_.size();
}

}  // namespace ipu::controllers
