#include "vipu/backoff.h"

#include <algorithm>

namespace ipu::vipu {

std::chrono::milliseconds Backoff::next() {
  const std::chrono::milliseconds current = std::min(next_, policy_.max);
  const double grown = static_cast<double>(current.count()) * std::max(policy_.multiplier, 1.0);
  next_ =
      std::min(policy_.max, std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(grown)));
  return current;
}

}  // namespace ipu::vipu
