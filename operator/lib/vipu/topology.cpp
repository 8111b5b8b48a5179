#include "vipu/topology.h"

#include <bit>

namespace ipu::vipu {

bool isPowerOfTwo(std::uint64_t value) {
  return std::has_single_bit(value);
}

std::uint32_t floorPowerOfTwo(std::uint32_t value) {
  return value == 0 ? 0 : std::bit_floor(value);
}

Result<Topology> Topology::create(std::string clusterId, std::uint32_t ilds, std::uint32_t ildSize) {
  if (clusterId.empty()) return makeError(ErrorCode::kInvalidArgument, "cluster id must not be empty");
  if (ilds < 1 || ilds > kMaxIlds) {
    return makeError(
        ErrorCode::kInvalidArgument,
        "number of ILDs must be between 1 and " + std::to_string(kMaxIlds) + ", got " + std::to_string(ilds));
  }
  if (!isPowerOfTwo(ildSize) || ildSize < kMinIldSize || ildSize > kMaxIldSize) {
    return makeError(ErrorCode::kInvalidArgument,
                     "ILD size must be a power of two between " + std::to_string(kMinIldSize) + " and " +
                         std::to_string(kMaxIldSize) + " IPUs (whole IPU-Machines of " +
                         std::to_string(kIpusPerMachine) + "), got " + std::to_string(ildSize));
  }
  return Topology(std::move(clusterId), ilds, ildSize);
}

Result<Topology> Topology::forPod(std::string_view pod, std::string clusterId) {
  if (pod == "pod16") return create(std::move(clusterId), 1, 16);
  if (pod == "pod64") return create(std::move(clusterId), 1, 64);
  if (pod == "pod128") return create(std::move(clusterId), 2, 64);
  if (pod == "pod256") return create(std::move(clusterId), 4, 64);
  return makeError(ErrorCode::kInvalidArgument,
                   "unknown POD '" + std::string(pod) + "': expected pod16, pod64, pod128 or pod256");
}

std::uint32_t Topology::maxPartitionSize() const {
  return ildSize_ * floorPowerOfTwo(ildCount_);
}

std::string Topology::describe() const {
  return "cluster '" + clusterId_ + "': " + std::to_string(ildCount_) + (ildCount_ == 1 ? " ILD" : " ILDs") +
         " x " + std::to_string(ildSize_) + " IPUs (" + std::to_string(totalIpus()) + " IPUs)";
}

}  // namespace ipu::vipu
