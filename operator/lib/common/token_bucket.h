#pragma once

#include <mutex>
#include <stop_token>

#include "common/clock.h"

namespace ipu {

// A token bucket (the shape of golang.org/x/time/rate): it holds up to `burst` tokens, starts full, and
// refills at `qps` tokens per second of the injected clock. Shared by the work queue's overall retry limit
// and the REST client's client-side QPS/burst limit, so it lives in common rather than in either.
// Thread-safe.
class TokenBucket {
 public:
  // Preconditions: qps > 0 and burst >= 1 (std::invalid_argument otherwise). Whoever wants "no limit"
  // simply does not use a bucket.
  TokenBucket(double qps, int burst, Clock& clock = Clock::real());

  // Takes one token and returns how long the caller must wait before acting on it: zero while the bucket
  // has tokens, otherwise the time until the token it borrowed has refilled. Never refuses, so waits queue
  // up 1/qps apart and the long-run rate holds however many callers there are.
  Clock::Duration reserve();

  // Takes a token only if one is available now.
  bool tryAcquire();

  // reserve(), then sleeps on the clock for the wait. False if `stop` fires first (or had already fired,
  // in which case nothing is taken). A token reserved by a stopped wait stays spent: that can only slow
  // later callers a little, never let them exceed the rate.
  bool wait(std::stop_token stop = {});

  double qps() const { return qps_; }
  int burst() const { return burst_; }

 private:
  void refillLocked(Clock::TimePoint now);

  const double qps_;
  const int burst_;
  Clock& clock_;
  std::mutex mutex_;
  double tokens_;  // negative while callers are waiting on borrowed tokens
  Clock::TimePoint last_;
};

}  // namespace ipu
