#include "metrics/histogram.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ipu::metrics {

Histogram::Histogram(std::shared_ptr<const std::vector<double>> upperBounds)
    : upperBounds_(std::move(upperBounds)), bucketCounts_(upperBounds_->size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto& bounds = *upperBounds_;
  // lower_bound would put NaN in the first bucket: every comparison with NaN is false.
  const std::size_t bucket =
      std::isnan(value)
          ? bounds.size()
          : static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin());
  std::lock_guard lock(mutex_);
  ++bucketCounts_[bucket];
  sum_ += value;
  ++count_;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot out;
  out.cumulativeCounts.reserve(upperBounds_->size());
  std::lock_guard lock(mutex_);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < upperBounds_->size(); ++i) {
    cumulative += bucketCounts_[i];
    out.cumulativeCounts.push_back(cumulative);
  }
  out.sum = sum_;
  out.count = count_;
  return out;
}

}  // namespace ipu::metrics
