#pragma once

#include <chrono>
#include <mutex>
#include <vector>

#include "common/clock.h"

namespace ipu::testing {

// A clock on which every wait ends at once by jumping time to its deadline, and which remembers how long
// each sleep would have been. For single-threaded tests of code that backs off (retries, watch reconnects):
// they run instantly and can assert the waits. Multi-threaded timing tests use FakeClock instead.
class SkippingClock final : public Clock {
 public:
  TimePoint now() const override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  WallTime wallNow() const override {
    std::lock_guard lock(mutex_);
    return WallTime(std::chrono::duration_cast<WallTime::duration>(now_.time_since_epoch()));
  }
  void waitUntil(std::unique_lock<std::mutex>&, std::condition_variable_any&, TimePoint deadline,
                 std::stop_token) override {
    std::lock_guard lock(mutex_);
    if (deadline != TimePoint::max() && deadline > now_) {
      sleeps_.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now_));
      now_ = deadline;
    }
  }
  std::vector<std::chrono::milliseconds> sleeps() const {
    std::lock_guard lock(mutex_);
    return sleeps_;
  }

 private:
  mutable std::mutex mutex_;
  TimePoint now_{std::chrono::hours(1000)};
  std::vector<std::chrono::milliseconds> sleeps_;
};

}  // namespace ipu::testing
