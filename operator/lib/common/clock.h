#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <utility>

namespace ipu {

// The source of time for everything that waits: work-queue delays, rate limits, retries, leases.
// Code takes a Clock& instead of calling steady_clock directly so that tests can drive time by hand
// (tests/support/fake_clock.h) and never sleep.
//
// Each implementation provides one blocking primitive, waitUntil(); sleeping is built on it here, once,
// so a fake clock cannot get sleeping subtly different from waiting.
class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;

  // Monotonic time: for every deadline, delay and timeout.
  virtual TimePoint now() const = 0;
  // Calendar time: only for what is shown to people or written to the API server (timestamps, Lease times).
  virtual WallTime wallNow() const = 0;

  // Blocks on `cv` with `lock` released, like condition_variable_any::wait, until one of: `cv` is notified,
  // now() reaches `deadline`, or `stop` is requested. May also return spuriously; callers loop and re-check
  // their own state, as with any condition variable. `lock` is held again on return.
  // TimePoint::max() means no deadline.
  //
  // This is what lets a work queue's get() wait for "an item, or the time of the next delayed item, or
  // shutdown" in one place, and a fake clock wake it when time is advanced past its deadline.
  virtual void waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable_any& cv,
                         TimePoint deadline, std::stop_token stop) = 0;

  // Sleeps until now() reaches `deadline` (or for `d`). Returns false if `stop` was requested first.
  bool sleepUntil(TimePoint deadline, std::stop_token stop = {});
  bool sleepFor(Duration d, std::stop_token stop = {});

  // The process-wide real clock (SteadyClock): the default for production wiring.
  static Clock& real();
};

// The real clock: std::chrono::steady_clock and system_clock.
class SteadyClock final : public Clock {
 public:
  TimePoint now() const override;
  WallTime wallNow() const override;
  void waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable_any& cv, TimePoint deadline,
                 std::stop_token stop) override;
};

namespace detail {

// For Clock implementations. condition_variable_any's stop_token overloads take a predicate and keep
// waiting while it is false; a predicate that is false only when first asked turns them into "wait once":
// return on the first wake-up (notify, deadline, stop or spurious), which is what waitUntil promises. Those
// overloads are worth the trick because they register the stop callback without a lost-wakeup window.
class WakeOnce {
 public:
  bool operator()() { return std::exchange(asked_, true); }

 private:
  bool asked_ = false;
};

}  // namespace detail

// The deadline `d` after `start`: a negative `d` counts as zero, and a huge one saturates at TimePoint::max()
// (no deadline) instead of overflowing into the past.
Clock::TimePoint deadlineAfter(Clock::TimePoint start, Clock::Duration d);

}  // namespace ipu
