// A V-IPU for tests of code above VipuApi: forwards to another (an in-memory SimulatedPod), and can be made
// unreachable, count topology reads, or run a change between taking a ListPartitions answer and returning
// it (a change racing with a read).
#pragma once

#include <functional>
#include <utility>

#include "vipu/vipu_api.h"

namespace ipu::testing {

class ScriptedVipu final : public vipu::VipuApi {
 public:
  explicit ScriptedVipu(vipu::VipuApi& inner) : inner_(inner) {}

  Result<std::vector<vipu::Partition>> listPartitions(const std::string& allocation) override {
    if (down) return makeError(ErrorCode::kUnavailable, "connection refused");
    auto answer = inner_.listPartitions(allocation);
    if (duringList) std::exchange(duringList, nullptr)();
    return answer;
  }
  Result<std::vector<vipu::AgentIpuAttributes>> listIpuAttributes(
      const std::vector<std::string>& agents) override {
    ++attributeCalls;
    if (down) return makeError(ErrorCode::kUnavailable, "connection refused");
    return inner_.listIpuAttributes(agents);
  }
  Result<std::string> createPartition(const vipu::PartitionRequest& request) override {
    return inner_.createPartition(request);
  }
  Status removePartition(const std::string& id, bool force) override {
    return inner_.removePartition(id, force);
  }
  Status resetPartition(const std::string& id) override { return inner_.resetPartition(id); }
  Result<vipu::IpuofConfig> getPartitionIpuofConfig(const std::string& id,
                                                    std::optional<std::uint32_t> gcd) override {
    return inner_.getPartitionIpuofConfig(id, gcd);
  }
  Result<vipu::PartitionStatus> getPartitionStatus(const std::string& id) override {
    return inner_.getPartitionStatus(id);
  }

  bool down = false;
  int attributeCalls = 0;
  std::function<void()> duringList;

 private:
  vipu::VipuApi& inner_;
};

}  // namespace ipu::testing
