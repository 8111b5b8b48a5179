#pragma once

#include <atomic>

namespace ipu::metrics {

// A value that only goes up (requests served, reconciles failed); Prometheus' rate() reads a decrease as a
// process restart. Obtained from a CounterFamily; thread-safe and lock-free.
class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  // Adds `amount`. A negative or NaN amount is a programming error: std::invalid_argument.
  void inc(double amount = 1);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

}  // namespace ipu::metrics
