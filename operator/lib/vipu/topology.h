#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace ipu::vipu {

// The shape of one V-IPU cluster (one IPU-POD): how many IPU-Link domains (ILDs) it has and how many IPUs
// each holds. IPUs are numbered globally as ild * ildSize + topologyId, so that an aligned block of global
// ids of size <= ildSize lies in one ILD, and an aligned block of size k * ildSize is k whole, aligned ILDs.
// Only create() builds one, so every Topology in the program is valid.
class Topology {
 public:
  static constexpr std::uint32_t kIpusPerMachine = 4;  // IPU-M2000 / Bow-2000
  static constexpr std::uint32_t kMinIldSize = 4;      // one IPU-Machine
  static constexpr std::uint32_t kMaxIldSize = 256;
  static constexpr std::uint32_t kMaxIlds = 64;

  // ildSize: a power of two in [kMinIldSize, kMaxIldSize]; ilds in [1, kMaxIlds].
  static Result<Topology> create(std::string clusterId, std::uint32_t ilds, std::uint32_t ildSize);
  // "pod16" (1 x 16), "pod64" (1 x 64), "pod128" (2 x 64), "pod256" (4 x 64).
  static Result<Topology> forPod(std::string_view pod, std::string clusterId);

  const std::string& clusterId() const { return clusterId_; }
  std::uint32_t ildCount() const { return ildCount_; }
  std::uint32_t ildSize() const { return ildSize_; }
  std::uint32_t totalIpus() const { return ildCount_ * ildSize_; }
  std::uint32_t machinesPerIld() const { return ildSize_ / kIpusPerMachine; }
  // The largest partition the cluster can hold: whole ILDs in an aligned power-of-two group.
  std::uint32_t maxPartitionSize() const;

  std::uint32_t ildOf(std::uint32_t globalIpu) const { return globalIpu / ildSize_; }
  std::uint32_t topologyIdOf(std::uint32_t globalIpu) const { return globalIpu % ildSize_; }
  // The IPU-Machine inside its ILD.
  std::uint32_t machineOf(std::uint32_t globalIpu) const { return topologyIdOf(globalIpu) / kIpusPerMachine; }
  std::uint32_t globalIpu(std::uint32_t ild, std::uint32_t topologyId) const {
    return ild * ildSize_ + topologyId;
  }

  // "cluster 'pod-a': 2 ILDs x 64 IPUs (128 IPUs)"
  std::string describe() const;
  bool operator==(const Topology&) const = default;

 private:
  Topology(std::string clusterId, std::uint32_t ilds, std::uint32_t ildSize)
      : clusterId_(std::move(clusterId)), ildCount_(ilds), ildSize_(ildSize) {}

  std::string clusterId_;
  std::uint32_t ildCount_;
  std::uint32_t ildSize_;
};

bool isPowerOfTwo(std::uint64_t value);
// The largest power of two <= value (value >= 1).
std::uint32_t floorPowerOfTwo(std::uint32_t value);

}  // namespace ipu::vipu
