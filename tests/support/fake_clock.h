#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <list>
#include <mutex>
#include <optional>

#include "common/clock.h"

namespace ipu::testing {

// A Clock that moves only when a test says so, for timing tests with no real sleeps.
//
// Threads that wait on it (Clock::waitUntil, sleepFor, and so everything built on them: work-queue delays,
// token buckets) block until advance()/set() moves time past their deadline, their condition variable is
// notified, or their stop token fires. Thread-safe.
//
// To wake a thread deterministically, first let it block: waitForWaiters(n) returns only once n threads
// are inside waitUntil, after which an advance() cannot slip in before they sleep and be missed.
//
// It lives with the tests because production code never needs it: the Clock interface is the only seam.
class FakeClock final : public Clock {
 public:
  // Deliberately not the epoch, so code that treats a zero time point as "unset" shows up in tests.
  static constexpr TimePoint kDefaultStart = TimePoint(std::chrono::hours(1000));
  // 2024-01-01T00:00:00Z.
  static constexpr WallTime kDefaultWallStart = WallTime(std::chrono::seconds(1704067200));

  explicit FakeClock(TimePoint start = kDefaultStart, WallTime wallStart = kDefaultWallStart);

  TimePoint now() const override;
  WallTime wallNow() const override;
  void waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable_any& cv, TimePoint deadline,
                 std::stop_token stop) override;

  // Moves both monotonic and wall time forward by `d` and wakes every waiter whose deadline has come.
  // Throws std::invalid_argument for a negative `d`: monotonic time never goes back.
  void advance(Duration d);
  // Moves monotonic time to `t` (wall time by the same amount) and wakes the waiters now due.
  // Throws std::invalid_argument if `t` is before now().
  void set(TimePoint t);
  // Sets wall time alone (it may jump either way, as a real system clock may); wakes nobody, since waits
  // are measured in monotonic time.
  void setWall(WallTime t);

  // How many threads are blocked in waitUntil() (sleeps included) right now.
  std::size_t waiters() const;
  // The earliest deadline among them, ignoring "no deadline" waits: how far to advance to wake the next one.
  std::optional<TimePoint> nextDeadline() const;
  // Blocks in real time until at least `n` threads are blocked on this clock. False if `timeout` passes
  // first: generous by default, since it only bounds a hung test and is never part of what is measured.
  bool waitForWaiters(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

 private:
  struct Waiter {
    std::condition_variable_any* cv;
    TimePoint deadline;
  };

  void wakeDueLocked();

  // Lock order: a waiter's own mutex, then mutex_; mutex_ is never held while taking a caller's mutex.
  mutable std::mutex mutex_;
  mutable std::condition_variable waitersChanged_;
  TimePoint now_;
  WallTime wall_;
  std::list<Waiter> waiters_;
};

}  // namespace ipu::testing
