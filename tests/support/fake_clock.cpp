#include "fake_clock.h"

#include <algorithm>
#include <stdexcept>

namespace ipu::testing {

namespace {

// Holds the caller's lock and the clock's lock as one Lockable, so condition_variable_any::wait releases
// both only once the waiter is registered with the condition variable. A notify from advance(), which
// needs the clock's lock, therefore comes either before the waiter read the time or after it sleeps:
// never in between, where it would be lost.
class BothLocks {
 public:
  BothLocks(std::unique_lock<std::mutex>& caller, std::unique_lock<std::mutex>& clock)
      : caller_(caller), clock_(clock) {}

  // Caller's first: the documented lock order.
  void lock() {
    caller_.lock();
    clock_.lock();
  }
  void unlock() {
    clock_.unlock();
    caller_.unlock();
  }

 private:
  std::unique_lock<std::mutex>& caller_;
  std::unique_lock<std::mutex>& clock_;
};

}  // namespace

FakeClock::FakeClock(TimePoint start, WallTime wallStart) : now_(start), wall_(wallStart) {}

Clock::TimePoint FakeClock::now() const {
  std::lock_guard lock(mutex_);
  return now_;
}

Clock::WallTime FakeClock::wallNow() const {
  std::lock_guard lock(mutex_);
  return wall_;
}

void FakeClock::waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable_any& cv,
                          TimePoint deadline, std::stop_token stop) {
  std::unique_lock clockLock(mutex_);
  if (now_ >= deadline || stop.stop_requested()) return;

  // Registered for exactly as long as the wait: erased under mutex_ (re-taken by the wait) before the
  // caller can destroy `cv`, so advance() never notifies a dead condition variable.
  struct Registration {
    FakeClock& clock;
    std::list<Waiter>::iterator self;
    ~Registration() {
      clock.waiters_.erase(self);
      clock.waitersChanged_.notify_all();
    }
  } registration{*this, waiters_.insert(waiters_.end(), Waiter{&cv, deadline})};
  waitersChanged_.notify_all();

  BothLocks both(lock, clockLock);
  cv.wait(both, stop, detail::WakeOnce{});
}

void FakeClock::advance(Duration d) {
  if (d < Duration::zero()) throw std::invalid_argument("FakeClock::advance: negative duration");
  std::lock_guard lock(mutex_);
  now_ += d;
  wall_ += std::chrono::duration_cast<WallTime::duration>(d);
  wakeDueLocked();
}

void FakeClock::set(TimePoint t) {
  std::lock_guard lock(mutex_);
  if (t < now_) throw std::invalid_argument("FakeClock::set: monotonic time cannot go back");
  wall_ += std::chrono::duration_cast<WallTime::duration>(t - now_);
  now_ = t;
  wakeDueLocked();
}

void FakeClock::setWall(WallTime t) {
  std::lock_guard lock(mutex_);
  wall_ = t;
}

std::size_t FakeClock::waiters() const {
  std::lock_guard lock(mutex_);
  return waiters_.size();
}

std::optional<Clock::TimePoint> FakeClock::nextDeadline() const {
  std::lock_guard lock(mutex_);
  std::optional<TimePoint> earliest;
  for (const Waiter& waiter : waiters_) {
    if (waiter.deadline == TimePoint::max()) continue;
    if (!earliest || waiter.deadline < *earliest) earliest = waiter.deadline;
  }
  return earliest;
}

bool FakeClock::waitForWaiters(std::size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return waitersChanged_.wait_for(lock, timeout, [&] { return waiters_.size() >= n; });
}

void FakeClock::wakeDueLocked() {
  // Notified with mutex_ held: see BothLocks.
  for (const Waiter& waiter : waiters_) {
    if (waiter.deadline <= now_) waiter.cv->notify_all();
  }
}

}  // namespace ipu::testing
