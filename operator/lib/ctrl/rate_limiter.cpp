#include "ctrl/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace ipu::ctrl {

ItemExponentialFailureRateLimiter::ItemExponentialFailureRateLimiter(Clock::Duration baseDelay,
                                                                     Clock::Duration maxDelay)
    : baseDelay_(baseDelay), maxDelay_(maxDelay) {}

Clock::Duration ItemExponentialFailureRateLimiter::when(const std::string& key) {
  std::lock_guard lock(mutex_);
  int& failures = failures_[key];
  const int exponent = failures;
  if (failures < std::numeric_limits<int>::max()) ++failures;
  // In floating point, as client-go does, so that a long failure streak saturates at the cap instead of
  // overflowing (2^63 ns is only ~292 years).
  const double backoff = static_cast<double>(baseDelay_.count()) * std::pow(2.0, exponent);
  if (backoff >= static_cast<double>(maxDelay_.count())) return maxDelay_;
  return Clock::Duration(static_cast<Clock::Duration::rep>(backoff));
}

void ItemExponentialFailureRateLimiter::forget(const std::string& key) {
  std::lock_guard lock(mutex_);
  failures_.erase(key);
}

int ItemExponentialFailureRateLimiter::numRequeues(const std::string& key) const {
  std::lock_guard lock(mutex_);
  const auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

BucketRateLimiter::BucketRateLimiter(Clock& clock, double qps, int burst) : bucket_(qps, burst, clock) {}

Clock::Duration BucketRateLimiter::when(const std::string& /*key*/) {
  return bucket_.reserve();
}

void BucketRateLimiter::forget(const std::string& /*key*/) {}

int BucketRateLimiter::numRequeues(const std::string& /*key*/) const {
  return 0;
}

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<RateLimiterPtr> limiters) : limiters_(std::move(limiters)) {}

Clock::Duration MaxOfRateLimiter::when(const std::string& key) {
  Clock::Duration longest = Clock::Duration::zero();
  for (const RateLimiterPtr& limiter : limiters_) longest = std::max(longest, limiter->when(key));
  return longest;
}

void MaxOfRateLimiter::forget(const std::string& key) {
  for (const RateLimiterPtr& limiter : limiters_) limiter->forget(key);
}

int MaxOfRateLimiter::numRequeues(const std::string& key) const {
  int most = 0;
  for (const RateLimiterPtr& limiter : limiters_) most = std::max(most, limiter->numRequeues(key));
  return most;
}

RateLimiterPtr makeDefaultControllerRateLimiter(Clock& clock) {
  std::vector<RateLimiterPtr> limiters;
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter>());
  limiters.push_back(std::make_unique<BucketRateLimiter>(clock));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace ipu::ctrl
