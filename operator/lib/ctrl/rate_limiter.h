#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/token_bucket.h"

namespace ipu::ctrl {

// Decides how long a key waits before it is retried: client-go's workqueue rate limiters
// (util/workqueue/default_rate_limiters.go), with the same defaults. Keys are "namespace/name".
// Implementations are thread-safe.
class RateLimiter {
 public:
  virtual ~RateLimiter() = default;

  // How long `key` should wait before it is processed again. Each call counts as one more requeue.
  virtual Clock::Duration when(const std::string& key) = 0;
  // Stops tracking `key` (it succeeded): its next when() starts again from the first delay.
  virtual void forget(const std::string& key) = 0;
  // How many times when() was asked for `key` since it was last forgotten.
  virtual int numRequeues(const std::string& key) const = 0;
};

using RateLimiterPtr = std::unique_ptr<RateLimiter>;

// Per key: base, 2·base, 4·base, … capped at max. Defaults 5 ms → 1000 s, as in client-go.
class ItemExponentialFailureRateLimiter final : public RateLimiter {
 public:
  static constexpr Clock::Duration kDefaultBaseDelay = std::chrono::milliseconds(5);
  static constexpr Clock::Duration kDefaultMaxDelay = std::chrono::seconds(1000);

  explicit ItemExponentialFailureRateLimiter(Clock::Duration baseDelay = kDefaultBaseDelay,
                                             Clock::Duration maxDelay = kDefaultMaxDelay);

  Clock::Duration when(const std::string& key) override;
  void forget(const std::string& key) override;
  int numRequeues(const std::string& key) const override;

 private:
  const Clock::Duration baseDelay_;
  const Clock::Duration maxDelay_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, int> failures_;
};

// One token bucket for all keys: bounds the overall retry rate however many keys fail at once.
// Defaults 10 qps, burst 100, as in client-go. Keeps no per-key state.
class BucketRateLimiter final : public RateLimiter {
 public:
  static constexpr double kDefaultQps = 10;
  static constexpr int kDefaultBurst = 100;

  explicit BucketRateLimiter(Clock& clock = Clock::real(), double qps = kDefaultQps,
                             int burst = kDefaultBurst);

  Clock::Duration when(const std::string& key) override;
  void forget(const std::string& key) override;
  int numRequeues(const std::string& key) const override;

 private:
  TokenBucket bucket_;
};

// The longest wait any of its limiters asks for. when() and forget() go to every limiter, so each keeps
// its own count; numRequeues() is the largest of theirs.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<RateLimiterPtr> limiters);

  Clock::Duration when(const std::string& key) override;
  void forget(const std::string& key) override;
  int numRequeues(const std::string& key) const override;

 private:
  std::vector<RateLimiterPtr> limiters_;
};

// client-go's DefaultControllerRateLimiter: max(per-key 5 ms → 1000 s, overall 10 qps burst 100).
RateLimiterPtr makeDefaultControllerRateLimiter(Clock& clock = Clock::real());

}  // namespace ipu::ctrl
