#include "vipu/ipu_block.h"

#include <algorithm>

namespace ipu::vipu {

std::vector<PartitionIpu> ipusOfBlock(const Topology& topology, const IpuBlock& block) {
  std::vector<PartitionIpu> ipus;
  ipus.reserve(block.size);
  const std::uint32_t firstIld = topology.ildOf(block.first);
  for (std::uint32_t offset = 0; offset < block.size; ++offset) {
    const std::uint32_t global = block.first + offset;
    ipus.push_back(PartitionIpu{topology.ildOf(global), topology.ildOf(global) - firstIld,
                                topology.topologyIdOf(global), offset});
  }
  return ipus;
}

Result<IpuBlock> blockOfIpus(const Topology& topology, const std::vector<PartitionIpu>& ipus) {
  if (ipus.empty()) return makeError(ErrorCode::kInvalidArgument, "the IPU list is empty");
  if (!isPowerOfTwo(ipus.size())) {
    return makeError(ErrorCode::kInvalidArgument, "the IPU list has " + std::to_string(ipus.size()) +
                                                      " IPUs; partitions have power-of-two sizes");
  }
  std::vector<std::uint32_t> globals;
  globals.reserve(ipus.size());
  for (const PartitionIpu& ipu : ipus) {
    if (ipu.ildTopologyId >= topology.ildCount()) {
      return makeError(ErrorCode::kInvalidArgument, "IPU in ILD " + std::to_string(ipu.ildTopologyId) +
                                                        " is outside " + topology.describe());
    }
    if (ipu.topologyId >= topology.ildSize()) {
      return makeError(ErrorCode::kInvalidArgument, "IPU " + std::to_string(ipu.topologyId) + " of ILD " +
                                                        std::to_string(ipu.ildTopologyId) + " is outside " +
                                                        topology.describe());
    }
    globals.push_back(topology.globalIpu(ipu.ildTopologyId, ipu.topologyId));
  }
  std::sort(globals.begin(), globals.end());
  for (std::size_t i = 1; i < globals.size(); ++i) {
    if (globals[i] == globals[i - 1]) {
      return makeError(ErrorCode::kInvalidArgument,
                       "IPU " + std::to_string(topology.topologyIdOf(globals[i])) + " of ILD " +
                           std::to_string(topology.ildOf(globals[i])) + " is listed twice");
    }
    if (globals[i] != globals[i - 1] + 1) {
      return makeError(ErrorCode::kInvalidArgument,
                       "the IPUs are not contiguous (gap after ILD " +
                           std::to_string(topology.ildOf(globals[i - 1])) + " IPU " +
                           std::to_string(topology.topologyIdOf(globals[i - 1])) + ")");
    }
  }
  const IpuBlock block{globals.front(), static_cast<std::uint32_t>(globals.size())};
  if (block.size > topology.maxPartitionSize()) {
    return makeError(ErrorCode::kInvalidArgument,
                     std::to_string(block.size) + " IPUs exceed the largest partition of " +
                         topology.describe() + " (" + std::to_string(topology.maxPartitionSize()) + ")");
  }
  if (block.first % block.size != 0) {
    return makeError(ErrorCode::kInvalidArgument, "a partition of " + std::to_string(block.size) +
                                                      " IPUs must start at a multiple of " +
                                                      std::to_string(block.size) + ", but " +
                                                      describeBlock(topology, block) + " does not");
  }
  return block;
}

std::vector<std::uint32_t> ildsOfBlock(const Topology& topology, const IpuBlock& block) {
  std::vector<std::uint32_t> ilds;
  if (block.size == 0) return ilds;
  for (std::uint32_t ild = topology.ildOf(block.first); ild <= topology.ildOf(block.end() - 1); ++ild) {
    ilds.push_back(ild);
  }
  return ilds;
}

std::string describeBlock(const Topology& topology, const IpuBlock& block) {
  if (block.size == 0) return "no IPUs";
  const std::uint32_t firstIld = topology.ildOf(block.first);
  const std::uint32_t lastIld = topology.ildOf(block.end() - 1);
  if (firstIld != lastIld) {
    return "ILDs " + std::to_string(firstIld) + "-" + std::to_string(lastIld) + " (" +
           std::to_string(block.size) + " IPUs)";
  }
  const std::uint32_t firstId = topology.topologyIdOf(block.first);
  std::string text = "ILD " + std::to_string(firstIld) + " IPU";
  if (block.size == 1) return text + " " + std::to_string(firstId);
  return text + "s " + std::to_string(firstId) + "-" + std::to_string(firstId + block.size - 1);
}

}  // namespace ipu::vipu
