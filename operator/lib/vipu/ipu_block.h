#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "vipu/topology.h"
#include "vipu/vipu_types.h"

namespace ipu::vipu {

// An aligned, contiguous run of global IPU ids [first, first + size): the only shape a partition has.
struct IpuBlock {
  std::uint32_t first = 0;
  std::uint32_t size = 0;

  std::uint32_t end() const { return first + size; }
  bool overlaps(const IpuBlock& other) const { return first < other.end() && other.first < end(); }
  bool operator==(const IpuBlock&) const = default;
};

// The partition's IPUs as V-IPU lists them: physical ILD and IPU ids plus logical (routing) ids counted from
// 0 inside the partition.
std::vector<PartitionIpu> ipusOfBlock(const Topology& topology, const IpuBlock& block);

// Checks an explicit IPU list the way V-IPU requires (ids inside the topology, no duplicates, a power-of-two
// count, contiguous and aligned) and returns the block it forms. Routing ids are not checked: the controller
// assigns them.
Result<IpuBlock> blockOfIpus(const Topology& topology, const std::vector<PartitionIpu>& ipus);

// The physical ILDs a block touches, in order.
std::vector<std::uint32_t> ildsOfBlock(const Topology& topology, const IpuBlock& block);

// "ILD 0 IPUs 16-31" / "ILDs 0-1 (128 IPUs)"
std::string describeBlock(const Topology& topology, const IpuBlock& block);

}  // namespace ipu::vipu
