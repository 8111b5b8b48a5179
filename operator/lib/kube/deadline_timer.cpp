#include "kube/deadline_timer.h"

namespace ipu::kube {

DeadlineTimer::DeadlineTimer(Clock& clock)
    : clock_(clock), thread_([this](std::stop_token stop) { waitForDeadlines(stop); }) {}

void DeadlineTimer::arm(Clock::TimePoint deadline, std::stop_source target) {
  std::lock_guard lock(mutex_);
  armed_ = true;
  deadline_ = deadline;
  target_ = std::move(target);
  changed_.notify_all();
}

void DeadlineTimer::disarm() {
  std::lock_guard lock(mutex_);
  armed_ = false;
  target_ = std::stop_source(std::nostopstate);
  changed_.notify_all();
}

void DeadlineTimer::waitForDeadlines(std::stop_token stop) {
  std::unique_lock lock(mutex_);
  while (!stop.stop_requested()) {
    // Decided from the state under the lock after every wake-up, so a wake-up for a deadline that was
    // meanwhile disarmed or moved does nothing.
    if (armed_ && clock_.now() >= deadline_) {
      target_.request_stop();
      armed_ = false;
      continue;
    }
    clock_.waitUntil(lock, changed_, armed_ ? deadline_ : Clock::TimePoint::max(), stop);
  }
}

}  // namespace ipu::kube
