#include "vipu/ipu_set.h"

#include <algorithm>
#include <cassert>

namespace ipu::vipu {

Result<std::vector<std::uint32_t>> globalIpusOf(const Topology& topology, const Partition& partition) {
  std::vector<std::uint32_t> ids;
  if (!partition.spec.clusterId.empty() && partition.spec.clusterId != topology.clusterId()) return ids;
  for (const PartitionIpu& ipu : partition.spec.ipus) {
    if (ipu.ildTopologyId >= topology.ildCount() || ipu.topologyId >= topology.ildSize()) {
      return makeError(ErrorCode::kInternal, "partition '" + partition.id + "' uses IPU " +
                                                 std::to_string(ipu.topologyId) + " of ILD " +
                                                 std::to_string(ipu.ildTopologyId) + ", outside " +
                                                 topology.describe());
    }
    ids.push_back(topology.globalIpu(ipu.ildTopologyId, ipu.topologyId));
  }
  return ids;
}

Result<IpuSet> IpuSet::fromPartitions(const Topology& topology, const std::vector<Partition>& partitions) {
  IpuSet taken(topology.totalIpus());
  for (const Partition& partition : partitions) {
    auto ids = globalIpusOf(topology, partition);
    if (!ids) return ids.error();
    for (const std::uint32_t ipu : *ids) taken.insert(ipu);
  }
  return taken;
}

bool IpuSet::intersects(const IpuBlock& block) const {
  const std::uint32_t end = std::min<std::uint32_t>(block.end(), capacity());
  for (std::uint32_t ipu = block.first; ipu < end; ++ipu) {
    if (bits_[ipu]) return true;
  }
  return false;
}

std::uint32_t IpuSet::count() const {
  return static_cast<std::uint32_t>(std::count(bits_.begin(), bits_.end(), true));
}

void IpuSet::insert(std::uint32_t ipu) {
  assert(ipu < bits_.size());
  bits_[ipu] = true;
}

void IpuSet::insert(const IpuBlock& block) {
  assert(block.end() <= bits_.size());
  std::fill(bits_.begin() + block.first, bits_.begin() + block.end(), true);
}

void IpuSet::erase(const IpuBlock& block) {
  assert(block.end() <= bits_.size());
  std::fill(bits_.begin() + block.first, bits_.begin() + block.end(), false);
}

void IpuSet::insertAll(const IpuSet& other) {
  assert(other.capacity() == capacity());
  for (std::uint32_t ipu = 0; ipu < capacity(); ++ipu) {
    if (other.bits_[ipu]) bits_[ipu] = true;
  }
}

}  // namespace ipu::vipu
