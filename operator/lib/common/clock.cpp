#include "common/clock.h"

namespace ipu {

bool Clock::sleepUntil(TimePoint deadline, std::stop_token stop) {
  // A private mutex and condition variable: nobody else notifies them, so only the deadline or `stop`
  // ends the sleep (spurious wake-ups just loop).
  std::mutex mutex;
  std::condition_variable_any cv;
  std::unique_lock lock(mutex);
  while (now() < deadline) {
    if (stop.stop_requested()) return false;
    waitUntil(lock, cv, deadline, stop);
  }
  return true;
}

bool Clock::sleepFor(Duration d, std::stop_token stop) {
  return sleepUntil(deadlineAfter(now(), d), stop);
}

Clock& Clock::real() {
  static SteadyClock clock;
  return clock;
}

Clock::TimePoint SteadyClock::now() const {
  return std::chrono::steady_clock::now();
}

Clock::WallTime SteadyClock::wallNow() const {
  return std::chrono::system_clock::now();
}

void SteadyClock::waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable_any& cv,
                            TimePoint deadline, std::stop_token stop) {
  if (deadline == TimePoint::max()) {
    cv.wait(lock, stop, detail::WakeOnce{});
  } else {
    cv.wait_until(lock, stop, deadline, detail::WakeOnce{});
  }
}

Clock::TimePoint deadlineAfter(Clock::TimePoint start, Clock::Duration d) {
  if (d <= Clock::Duration::zero()) return start;
  if (start > Clock::TimePoint::max() - d) return Clock::TimePoint::max();
  return start + d;
}

}  // namespace ipu
