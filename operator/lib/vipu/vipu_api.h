#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "vipu/vipu_types.h"

namespace ipu::vipu {

// The seven calls of virmgrpc.UserService, in value types. VipuClient implements it over gRPC; vipu-sim's
// SimulatedPod implements it in memory, so code above this interface can be tested without a network.
class VipuApi {
 public:
  virtual ~VipuApi() = default;

  // allocationId empty = every allocation the caller may see.
  virtual Result<std::vector<Partition>> listPartitions(const std::string& allocationId) = 0;
  // agents empty = every agent.
  virtual Result<std::vector<AgentIpuAttributes>> listIpuAttributes(
      const std::vector<std::string>& agents) = 0;
  // Returns the new partition's id. It starts PS_PENDING; see waitUntilActive().
  virtual Result<std::string> createPartition(const PartitionRequest& request) = 0;
  virtual Status removePartition(const std::string& partitionId, bool force) = 0;
  virtual Status resetPartition(const std::string& partitionId) = 0;
  // gcdId nullopt = every GCD of the partition.
  virtual Result<IpuofConfig> getPartitionIpuofConfig(const std::string& partitionId,
                                                      std::optional<std::uint32_t> gcdId) = 0;
  virtual Result<PartitionStatus> getPartitionStatus(const std::string& partitionId) = 0;
};

}  // namespace ipu::vipu
