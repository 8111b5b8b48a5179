#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vipu/ipu_block.h"
#include "vipu/topology.h"
#include "vipu/vipu_types.h"

namespace ipu::vipu::sim {

// A V-IPU allocation: the ILDs whose IPUs partitions of this allocation may use. Partitions never span two.
struct SimAllocation {
  std::string id;
  std::vector<std::uint32_t> ilds;  // sorted, distinct

  bool containsIld(std::uint32_t ild) const;
  bool operator==(const SimAllocation&) const = default;
};

// One partition as vipu-sim stores it. Its ready and operation states are not stored: they follow from the
// timestamps and the clock (see SimulatedPod), so a restart mid-activation or mid-reset finishes on time.
struct SimPartition {
  std::string id;
  std::string allocationId;
  IpuBlock block;
  std::uint32_t numGcds = 1;
  std::uint32_t numReplicas = 1;
  IpuLinkRouting ipuLinkRouting = IpuLinkRouting::kUndefined;
  SyncType syncType = SyncType::kUndefined;
  GatewayRouting gatewayRouting = GatewayRouting::kUndefined;
  bool reconfigurable = false;
  bool disableAutoReset = false;
  std::int64_t createdAtMs = 0;     // unix time
  std::int64_t activeAtMs = 0;      // PS_PENDING / POS_CREATING before this
  std::int64_t resetUntilMs = 0;    // PS_PENDING / POS_RESETTING before this (0 = never reset)
  bool faulted = false;             // PS_ERROR once active, until reset
  std::vector<std::string> errors;  // reported with PS_ERROR
  std::uint32_t resetCount = 0;

  bool operator==(const SimPartition&) const = default;
};

// Everything vipu-sim persists: what the cluster looks like and which partitions exist.
struct SimState {
  Topology topology;
  std::vector<SimAllocation> allocations;
  std::map<std::string, SimPartition> partitions;  // by id

  const SimAllocation* findAllocation(const std::string& id) const;
};

}  // namespace ipu::vipu::sim
