#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace ipu::metrics {

// Counts observations (request durations, reconcile latencies) into buckets with fixed upper bounds, plus
// their sum and count. Obtained from a HistogramFamily; thread-safe.
//
// One mutex per histogram rather than an atomic per bucket: a scrape then always sees buckets, sum and count
// from the same set of observations, and the operator observes far too rarely for the lock to matter.
class Histogram {
 public:
  // `upperBounds`: finite and strictly increasing (the registry checks); the +Inf bucket is implicit.
  // Shared by every histogram of a family.
  explicit Histogram(std::shared_ptr<const std::vector<double>> upperBounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Counts `value` in the first bucket whose bound is >= value. NaN lands only in +Inf (as in Go's client)
  // and makes the sum NaN.
  void observe(double value);

  struct Snapshot {
    // Prometheus buckets are cumulative: [i] counts observations <= upperBounds()[i]. The +Inf bucket is
    // `count`.
    std::vector<std::uint64_t> cumulativeCounts;
    double sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot snapshot() const;

  std::span<const double> upperBounds() const { return *upperBounds_; }

 private:
  const std::shared_ptr<const std::vector<double>> upperBounds_;
  mutable std::mutex mutex_;
  std::vector<std::uint64_t> bucketCounts_;  // not cumulative; one per bound, then (last bound, +Inf]
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

}  // namespace ipu::metrics
