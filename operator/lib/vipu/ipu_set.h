#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "vipu/ipu_block.h"
#include "vipu/topology.h"
#include "vipu/vipu_types.h"

namespace ipu::vipu {

// The global ids of a partition's IPUs; none for a partition of another cluster. An IPU outside the topology
// means the topology is wrong: an error rather than something to ignore.
Result<std::vector<std::uint32_t>> globalIpusOf(const Topology& topology, const Partition& partition);

// A set of global IPU ids of one cluster (a bitmap): which IPUs are taken, or unusable.
class IpuSet {
 public:
  IpuSet() = default;
  explicit IpuSet(std::uint32_t capacity) : bits_(capacity, false) {}

  // The IPUs held by a controller's partitions. Partitions of another cluster are skipped; an IPU outside the
  // topology means the topology is wrong, which is an error rather than something to ignore.
  static Result<IpuSet> fromPartitions(const Topology& topology, const std::vector<Partition>& partitions);

  std::uint32_t capacity() const { return static_cast<std::uint32_t>(bits_.size()); }
  bool contains(std::uint32_t ipu) const { return ipu < bits_.size() && bits_[ipu]; }
  bool intersects(const IpuBlock& block) const;
  std::uint32_t count() const;

  void insert(std::uint32_t ipu);
  void insert(const IpuBlock& block);
  void erase(const IpuBlock& block);
  void insertAll(const IpuSet& other);

 private:
  std::vector<bool> bits_;
};

}  // namespace ipu::vipu
