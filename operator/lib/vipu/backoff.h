#pragma once

#include <chrono>

namespace ipu::vipu {

struct BackoffPolicy {
  std::chrono::milliseconds initial{100};
  std::chrono::milliseconds max{2000};
  double multiplier = 2.0;
};

// Exponential backoff without jitter: one operator talks to each controller, so there is no herd to spread,
// and fixed delays keep tests and logs reproducible.
class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy) : policy_(policy), next_(policy.initial) {}

  // The delay before the next attempt; each call grows the following one, up to policy.max.
  std::chrono::milliseconds next();
  void reset() { next_ = policy_.initial; }

 private:
  BackoffPolicy policy_;
  std::chrono::milliseconds next_;
};

}  // namespace ipu::vipu
