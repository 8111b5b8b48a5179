#include "vipu/partition_planner.h"

#include <utility>

namespace ipu::vipu {
namespace {

std::string describeFree(const FreeSummary& free) {
  return std::to_string(free.freeIpus) + " of " + std::to_string(free.totalIpus) +
         " IPUs free, largest free block " + std::to_string(free.largestFreeBlock);
}

PlanResult refuse(RefusalReason reason, std::string message, FreeSummary free,
                  std::uint32_t largestPossible) {
  return PlanResult{{}, PlanRefusal{reason, std::move(message), free, largestPossible}};
}

}  // namespace

PartitionPlanner::PartitionPlanner(Topology topology, IpuSet unusable)
    : topology_(std::move(topology)),
      unusable_(unusable.capacity() == topology_.totalIpus() ? std::move(unusable)
                                                             : IpuSet(topology_.totalIpus())),
      anyUnusable_(unusable_.count() > 0),
      emptyCluster_(topology_, unusable_) {}

BuddyMap PartitionPlanner::freeMapOf(const IpuSet& taken) const {
  if (!anyUnusable_) return BuddyMap(topology_, taken);
  IpuSet all = unusable_;
  if (taken.capacity() == all.capacity()) all.insertAll(taken);
  return BuddyMap(topology_, all);
}

FreeSummary PartitionPlanner::summarize(const IpuSet& taken, std::uint32_t requestedSize) const {
  const BuddyMap map = freeMapOf(taken);
  return FreeSummary{topology_.totalIpus(), map.freeIpus(), map.largestFreeBlock(),
                     map.countFree(requestedSize)};
}

PlanResult PartitionPlanner::plan(const IpuSet& taken, const GangRequest& request) const {
  const std::uint32_t largestPossible = topology_.maxPartitionSize();
  if (taken.capacity() != topology_.totalIpus()) {
    return refuse(
        RefusalReason::kInvalidRequest,
        "the taken-IPU set has " + std::to_string(taken.capacity()) + " IPUs but " + topology_.describe(), {},
        largestPossible);
  }
  BuddyMap map = freeMapOf(taken);
  return planInto(map, request);
}

PlanResult PartitionPlanner::planInto(BuddyMap& map, const GangRequest& request) const {
  const std::uint32_t size = request.ipusPerInstance;
  const std::uint32_t largestPossible = topology_.maxPartitionSize();
  const FreeSummary free{topology_.totalIpus(), map.freeIpus(), map.largestFreeBlock(), map.countFree(size)};
  if (request.instances == 0) {
    return refuse(RefusalReason::kInvalidRequest, "a gang needs at least one instance", free,
                  largestPossible);
  }
  if (!isPowerOfTwo(size)) {
    return refuse(RefusalReason::kInvalidRequest,
                  "partition size " + std::to_string(size) + " is not a power of two", free, largestPossible);
  }
  if (size > largestPossible) {
    return refuse(RefusalReason::kNeverFits,
                  "a partition of " + std::to_string(size) + " IPUs can never fit " + topology_.describe() +
                      ": the largest possible partition is " + std::to_string(largestPossible) + " IPUs",
                  free, largestPossible);
  }
  const std::uint32_t capacity = emptyCluster_.countFree(size);
  if (request.instances > capacity) {
    return refuse(RefusalReason::kNeverFits,
                  std::to_string(request.instances) + " partitions of " + std::to_string(size) +
                      " IPUs can never fit " + topology_.describe() + ": at most " +
                      std::to_string(capacity) + " of that size fit at once (largest possible partition " +
                      std::to_string(largestPossible) + " IPUs)",
                  free, largestPossible);
  }
  if (request.instances > free.freeBlocksOfRequestedSize) {
    return refuse(RefusalReason::kDoesNotFitNow,
                  "needs " + std::to_string(request.instances) +
                      (request.instances == 1 ? " free aligned block of " : " free aligned blocks of ") +
                      std::to_string(size) + " IPUs, " + std::to_string(free.freeBlocksOfRequestedSize) +
                      " available now (" + describeFree(free) + ")",
                  free, largestPossible);
  }

  PlanResult result;
  result.placements.reserve(request.instances);
  for (std::uint32_t instance = 0; instance < request.instances; ++instance) {
    // Cannot fail: there were at least `instances` disjoint free blocks of this size, and best fit uses one
    // each.
    const IpuBlock block = *map.bestFit(size);
    map.occupy(block);
    std::vector<std::uint32_t> ilds = ildsOfBlock(topology_, block);
    const auto segments = static_cast<std::uint32_t>(ilds.size());
    result.placements.push_back(
        InstancePlacement{block, std::move(ilds), ipusOfBlock(topology_, block), segments});
  }
  return result;
}

PartitionRequest makePartitionRequest(std::string id, const Topology& topology,
                                      const InstancePlacement& placement) {
  PartitionRequest request;
  request.id = std::move(id);
  request.size = placement.block.size;
  request.clusterId = topology.clusterId();
  request.numIpulinkSegments = placement.numIpulinkSegments;
  request.ipus = placement.ipus;
  return request;
}

}  // namespace ipu::vipu
