#include "ipujob/progress_writes.h"

namespace ipu::controllers {

ProgressWrites::ProgressWrites(Clock& clock, Clock::Duration period, std::size_t jobsRemembered)
    : clock_(clock), period_(period), waitingSince_(jobsRemembered) {}

Clock::Duration ProgressWrites::holdFor(const std::string& key) {
  if (period_ <= Clock::Duration::zero()) return Clock::Duration::zero();
  std::lock_guard lock(mutex_);
  const Clock::TimePoint now = clock_.now();
  const Clock::TimePoint* since = waitingSince_.find(key);
  if (since == nullptr) since = &waitingSince_.put(key, now);
  const Clock::TimePoint due = *since + period_;
  return due > now ? due - now : Clock::Duration::zero();
}

void ProgressWrites::written(const std::string& key) {
  if (period_ <= Clock::Duration::zero()) return;
  std::lock_guard lock(mutex_);
  waitingSince_.erase(key);
}

}  // namespace ipu::controllers
