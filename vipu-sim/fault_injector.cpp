#include "vipu-sim/fault_injector.h"

namespace ipu::vipu::sim {

bool FaultInjector::draw(double rate) {
  if (rate <= 0.0) return false;
  std::lock_guard lock(mutex_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(random_) < rate;
}

bool FaultInjector::failThisCreate() {
  return draw(options_.createFailureRate);
}

bool FaultInjector::faultThisPartition(const std::string& id) {
  return options_.errorPartitions.count(id) != 0 || draw(options_.errorRate);
}

}  // namespace ipu::vipu::sim
