#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "vipu/ipu_block.h"
#include "vipu/ipu_set.h"
#include "vipu/topology.h"

namespace ipu::vipu {

// Which aligned power-of-two blocks of a cluster are entirely free, at every size from 1 IPU up to the
// largest partition. Level L holds blocks of 2^L IPUs; a block is free when both halves are. Built bottom-up
// in O(IPUs) from the taken set, then updated in place as a gang's instances are placed one by one.
class BuddyMap {
 public:
  BuddyMap(const Topology& topology, const IpuSet& taken);

  // Best fit: a free aligned block of `size` IPUs taken from the smallest maximal free block that can hold
  // it, so larger free blocks stay whole (ties: see the .cpp). nullopt when none is free.
  std::optional<IpuBlock> bestFit(std::uint32_t size) const;
  void occupy(const IpuBlock& block);

  // How many disjoint free aligned blocks of `size` exist: aligned blocks of one size never partly overlap,
  // so this is exactly how many partitions of that size could still be placed.
  std::uint32_t countFree(std::uint32_t size) const;
  // The sizes of the maximal free blocks (free, and whose parent block is not), largest first: the
  // fragmentation profile of the free space.
  std::vector<std::uint32_t> maximalFreeBlockSizes() const;
  std::uint32_t largestFreeBlock() const;
  std::uint32_t freeIpus() const;

 private:
  bool isFree(std::uint32_t level, std::uint32_t index) const {
    return index < free_[level].size() && free_[level][index] != 0;
  }
  bool isMaximal(std::uint32_t level, std::uint32_t index) const;
  // Free IPUs in the buddy of a block; -1 when it has none (top level, or past the last ILD).
  std::int64_t buddyFreeIpus(std::uint32_t level, std::uint32_t index) const;

  std::uint32_t topLevel_ = 0;
  // free_[level][index] != 0: block [index << level, (index + 1) << level) is entirely free. Blocks that
  // would run past the last IPU do not exist (a cluster of 3 ILDs has no second 2-ILD block).
  std::vector<std::vector<std::uint8_t>> free_;
  // freeCount_[level]: how many of free_[level] are free, kept with it. A plan asks for the free summary
  // once per queued job: counted, that was a pass over every IPU of the cluster each time.
  std::vector<std::uint32_t> freeCount_;
};

}  // namespace ipu::vipu
