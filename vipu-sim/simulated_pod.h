#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "vipu-sim/fault_injector.h"
#include "vipu-sim/sim_state.h"
#include "vipu-sim/state_file.h"
#include "vipu/vipu_api.h"

namespace ipu::vipu::sim {

struct SimBehaviour {
  std::chrono::milliseconds activationDelay{1000};  // PS_PENDING -> PS_ACTIVE after this
  std::chrono::milliseconds resetDuration{500};     // POS_RESETTING lasts this long
  std::uint32_t maxAutoResetRetries = 3;            // reported in PartitionStatus (0 with disable_auto_reset)
  std::string ipuofServerVersion = "vipu-sim-1";
};

using SimClock = std::function<std::chrono::system_clock::time_point()>;

// A simulated IPU-POD behind the V-IPU user API: the rules of the real controller over an in-memory state
// that is written to the state file (when there is one) after every change, before the change is visible.
// Ready and operation states follow from timestamps and the clock, so they survive restarts. Thread-safe.
// Being a VipuApi, it also serves as an in-memory V-IPU for tests of code above the client.
class SimulatedPod final : public VipuApi {
  struct PrivateTag {};  // only the factory constructs, after validating

 public:
  // Starts from the state file when it exists (it must describe the same topology and allocations), empty
  // otherwise. No state file = memory only.
  static Result<std::unique_ptr<SimulatedPod>> open(const Topology& topology,
                                                    std::vector<SimAllocation> allocations,
                                                    SimBehaviour behaviour,
                                                    std::shared_ptr<FaultInjector> faults,
                                                    std::optional<StateFile> stateFile,
                                                    SimClock clock = &std::chrono::system_clock::now);

  Result<std::vector<Partition>> listPartitions(const std::string& allocationId) override;
  Result<std::vector<AgentIpuAttributes>> listIpuAttributes(const std::vector<std::string>& agents) override;
  Result<std::string> createPartition(const PartitionRequest& request) override;
  Status removePartition(const std::string& partitionId, bool force) override;
  Status resetPartition(const std::string& partitionId) override;
  Result<IpuofConfig> getPartitionIpuofConfig(const std::string& partitionId,
                                              std::optional<std::uint32_t> gcdId) override;
  Result<PartitionStatus> getPartitionStatus(const std::string& partitionId) override;

  const Topology& topology() const { return topology_; }
  SimState snapshot() const;

  SimulatedPod(PrivateTag, SimState state, SimBehaviour behaviour, std::shared_ptr<FaultInjector> faults,
               std::optional<StateFile> stateFile, SimClock clock);

 private:
  std::int64_t nowMs() const;
  PartitionStatus statusOf(const SimPartition& partition, std::int64_t now) const;
  Partition partitionOf(const SimPartition& partition, std::int64_t now) const;
  Result<const SimAllocation*> allocationFor(const PartitionRequest& request) const;
  Result<IpuBlock> placeExplicitly(const PartitionRequest& request, const SimAllocation& allocation) const;
  Result<IpuBlock> placeWithPlanner(const PartitionRequest& request, const SimAllocation& allocation) const;
  Result<const SimPartition*> find(const std::string& partitionId) const;
  // Persists `next`, then makes it the current state; on failure nothing changes.
  Status commit(SimState next);

  const Topology topology_;
  const SimBehaviour behaviour_;
  const std::shared_ptr<FaultInjector> faults_;
  const std::optional<StateFile> stateFile_;
  const SimClock clock_;
  mutable std::mutex mutex_;
  SimState state_;
};

}  // namespace ipu::vipu::sim
