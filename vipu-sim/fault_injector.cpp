#include "vipu-sim/fault_injector.h"

namespace ipu::vipu::sim {

bool FaultInjector::failThisCreate() {
  if (options_.createFailureRate <= 0.0) return false;
  std::lock_guard lock(mutex_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(random_) < options_.createFailureRate;
}

}  // namespace ipu::vipu::sim
