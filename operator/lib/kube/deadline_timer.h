#pragma once

#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <thread>
#include <utility>

#include "common/clock.h"

namespace ipu::kube {

// Bounds blocking calls (HTTP requests) by a deadline on a Clock: when the deadline passes, the call's
// stop token fires and a Transport that honours it gives up at once. A Transport's own timeout runs on
// real time and is sized for any request; this one is for callers whose promise is measured on their
// own clock, such as a leader that must know it has stopped leading before its lease can run out.
//
// One thread waits for every deadline in turn, so a bounded call costs no thread of its own. Used by one
// caller at a time.
class DeadlineTimer {
 public:
  explicit DeadlineTimer(Clock& clock);
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  // Runs call(token) with a token that fires when `deadline` passes or `stop` fires, whichever is first.
  template <typename Call>
  auto callBefore(Clock::TimePoint deadline, const std::stop_token& stop, Call&& call) {
    std::stop_source source;
    std::stop_callback forward(stop, [source]() mutable { source.request_stop(); });
    arm(deadline, source);
    struct Disarm {
      DeadlineTimer& timer;
      ~Disarm() { timer.disarm(); }
    } disarmOnExit{*this};
    return std::forward<Call>(call)(source.get_token());
  }

 private:
  void arm(Clock::TimePoint deadline, std::stop_source target);
  void disarm();
  void waitForDeadlines(std::stop_token stop);

  Clock& clock_;
  std::mutex mutex_;
  std::condition_variable_any changed_;
  bool armed_ = false;
  Clock::TimePoint deadline_;
  std::stop_source target_{std::nostopstate};
  std::jthread thread_;  // last: it starts in the constructor and uses the members above
};

}  // namespace ipu::kube
