#include "vipu-sim/sim_state.h"

#include <algorithm>

namespace ipu::vipu::sim {

bool SimAllocation::containsIld(std::uint32_t ild) const {
  return std::binary_search(ilds.begin(), ilds.end(), ild);
}

const SimAllocation* SimState::findAllocation(const std::string& id) const {
  for (const SimAllocation& allocation : allocations) {
    if (allocation.id == id) return &allocation;
  }
  return nullptr;
}

}  // namespace ipu::vipu::sim
