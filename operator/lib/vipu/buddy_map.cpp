#include "vipu/buddy_map.h"

#include <algorithm>
#include <bit>

namespace ipu::vipu {

BuddyMap::BuddyMap(const Topology& topology, const IpuSet& taken)
    : topLevel_(static_cast<std::uint32_t>(std::countr_zero(topology.maxPartitionSize()))) {
  const std::uint32_t total = topology.totalIpus();
  free_.resize(topLevel_ + 1);
  freeCount_.assign(topLevel_ + 1, 0);
  free_[0].resize(total);
  for (std::uint32_t ipu = 0; ipu < total; ++ipu) {
    free_[0][ipu] = taken.contains(ipu) ? 0 : 1;
    freeCount_[0] += free_[0][ipu];
  }
  for (std::uint32_t level = 1; level <= topLevel_; ++level) {
    free_[level].resize(total >> level);
    for (std::uint32_t index = 0; index < free_[level].size(); ++index) {
      free_[level][index] = free_[level - 1][2 * index] & free_[level - 1][2 * index + 1];
      freeCount_[level] += free_[level][index];
    }
  }
}

bool BuddyMap::isMaximal(std::uint32_t level, std::uint32_t index) const {
  return isFree(level, index) && (level == topLevel_ || !isFree(level + 1, index / 2));
}

std::optional<IpuBlock> BuddyMap::bestFit(std::uint32_t size) const {
  if (!isPowerOfTwo(size)) return std::nullopt;
  const auto wanted = static_cast<std::uint32_t>(std::countr_zero(size));
  for (std::uint32_t level = wanted; level <= topLevel_; ++level) {
    // The smallest maximal free blocks that can hold `size`: splitting one leaves one free buddy at each
    // level in between and every other free block untouched. Among equals, take the one least likely to merge
    // into a larger free block later: no buddy block at all first, then the buddy with the fewest free IPUs;
    // lowest address last, so the choice is deterministic.
    std::optional<std::uint32_t> best;
    std::int64_t bestBuddyFree = 0;
    for (std::uint32_t index = 0; index < free_[level].size(); ++index) {
      if (!isMaximal(level, index)) continue;
      const std::int64_t buddyFree = buddyFreeIpus(level, index);
      if (!best || buddyFree < bestBuddyFree) {
        best = index;
        bestBuddyFree = buddyFree;
      }
    }
    if (best) return IpuBlock{*best << level, size};
  }
  return std::nullopt;
}

std::int64_t BuddyMap::buddyFreeIpus(std::uint32_t level, std::uint32_t index) const {
  const std::uint32_t buddy = index ^ 1u;
  if (level == topLevel_ || buddy >= free_[level].size()) return -1;  // can never merge
  const auto first = free_[0].begin() + (static_cast<std::ptrdiff_t>(buddy) << level);
  return std::count(first, first + (std::ptrdiff_t{1} << level), 1);
}

void BuddyMap::occupy(const IpuBlock& block) {
  for (std::uint32_t level = 0; level <= topLevel_; ++level) {
    const std::uint32_t firstIndex = block.first >> level;
    // Levels up to the block's own cover it with several blocks; above it, one ancestor per level.
    const std::uint32_t endIndex = std::max(firstIndex + 1, block.end() >> level);
    for (std::uint32_t index = firstIndex; index < endIndex && index < free_[level].size(); ++index) {
      freeCount_[level] -= free_[level][index];
      free_[level][index] = 0;
    }
  }
}

std::uint32_t BuddyMap::countFree(std::uint32_t size) const {
  if (!isPowerOfTwo(size)) return 0;
  const auto level = static_cast<std::uint32_t>(std::countr_zero(size));
  if (level > topLevel_) return 0;
  return freeCount_[level];
}

std::vector<std::uint32_t> BuddyMap::maximalFreeBlockSizes() const {
  std::vector<std::uint32_t> sizes;
  for (std::uint32_t level = topLevel_ + 1; level-- > 0;) {
    for (std::uint32_t index = 0; index < free_[level].size(); ++index) {
      if (isMaximal(level, index)) sizes.push_back(1u << level);
    }
  }
  return sizes;
}

std::uint32_t BuddyMap::largestFreeBlock() const {
  for (std::uint32_t level = topLevel_ + 1; level-- > 0;) {
    if (freeCount_[level] > 0) return 1u << level;
  }
  return 0;
}

std::uint32_t BuddyMap::freeIpus() const {
  return countFree(1);
}

}  // namespace ipu::vipu
