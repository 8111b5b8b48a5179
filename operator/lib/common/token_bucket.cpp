#include "common/token_bucket.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ipu {

namespace {

constexpr double kNanosPerSecond = 1e9;

}  // namespace

TokenBucket::TokenBucket(double qps, int burst, Clock& clock)
    : qps_(qps), burst_(burst), clock_(clock), tokens_(burst), last_(clock.now()) {
  if (!(qps > 0) || !std::isfinite(qps)) throw std::invalid_argument("TokenBucket: qps must be positive");
  if (burst < 1) throw std::invalid_argument("TokenBucket: burst must be at least 1");
}

Clock::Duration TokenBucket::reserve() {
  std::lock_guard lock(mutex_);
  refillLocked(clock_.now());
  tokens_ -= 1;
  if (tokens_ >= 0) return Clock::Duration::zero();
  // Multiply before dividing, and round up: whole-number rates give exact waits, and a caller never acts
  // a nanosecond before its token exists.
  const double nanos = std::ceil(-tokens_ * kNanosPerSecond / qps_);
  if (nanos >= static_cast<double>(Clock::Duration::max().count())) return Clock::Duration::max();
  return Clock::Duration(static_cast<Clock::Duration::rep>(nanos));
}

bool TokenBucket::tryAcquire() {
  std::lock_guard lock(mutex_);
  refillLocked(clock_.now());
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

bool TokenBucket::wait(std::stop_token stop) {
  if (stop.stop_requested()) return false;
  const Clock::Duration delay = reserve();
  if (delay == Clock::Duration::zero()) return true;
  return clock_.sleepFor(delay, stop);
}

void TokenBucket::refillLocked(Clock::TimePoint now) {
  if (now <= last_) return;  // time stood still (or the clock was read out of order by two threads)
  const double elapsedNanos = static_cast<double>((now - last_).count());
  tokens_ = std::min(static_cast<double>(burst_), tokens_ + elapsedNanos * qps_ / kNanosPerSecond);
  last_ = now;
}

}  // namespace ipu
