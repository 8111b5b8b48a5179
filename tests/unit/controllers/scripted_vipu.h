// A V-IPU for tests of code above VipuApi: forwards to another (an in-memory SimulatedPod), and can be made
// unreachable, refuse creates, count topology reads, lists and status reads, or run a change between taking a
// ListPartitions answer and returning it (a change racing with a read). InMemoryVipu wires one POD64 up to
// the inventory admission plans from.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include <gtest/gtest.h>

#include "admission/vipu_inventory.h"
#include "common/clock.h"
#include "vipu-sim/simulated_pod.h"
#include "vipu/vipu_api.h"

namespace ipu::testing {

class ScriptedVipu final : public vipu::VipuApi {
 public:
  explicit ScriptedVipu(vipu::VipuApi& inner) : inner_(inner) {}

  Result<std::vector<vipu::Partition>> listPartitions(const std::string& allocation) override {
    ++listCalls;
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
    if (createRefusal) return *createRefusal;
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
    ++statusCalls;
    if (down) return makeError(ErrorCode::kUnavailable, "connection refused");
    return inner_.getPartitionStatus(id);
  }

  bool down = false;
  int attributeCalls = 0;
  int listCalls = 0;    // ListPartitions: every partition of the POD
  int statusCalls = 0;  // GetPartitionStatus: one partition
  std::function<void()> duringList;
  std::optional<Error> createRefusal;  // CreatePartition answers this instead of creating

 private:
  vipu::VipuApi& inner_;
};

// A simulated POD64 (V-IPU controller "pod64") behind a ScriptedVipu, its VipuControllers entry and the
// inventory, not read yet. Partitions activate `activationDelay` after creation on `clock`'s wall time.
struct InMemoryVipu {
  InMemoryVipu(Clock& clock, std::chrono::milliseconds activationDelay = std::chrono::milliseconds(1000)) {
    auto pod = vipu::sim::SimulatedPod::open(*vipu::Topology::forPod("pod64", "pod64"), {},
                                             vipu::sim::SimBehaviour{.activationDelay = activationDelay},
                                             nullptr, std::nullopt, [&clock] { return clock.wallNow(); });
    EXPECT_TRUE(pod.ok()) << pod.error().message;
    sim = std::move(*pod);
    api = std::make_unique<ScriptedVipu>(*sim);
    controllers = std::make_unique<controllers::VipuControllers>(
        std::vector<controllers::VipuTarget>{{"pod64", "vipu.example", 8090, api.get()}}, clock,
        std::chrono::minutes(5));
    inventory = std::make_unique<controllers::VipuInventory>(*controllers);
  }

  std::unique_ptr<vipu::sim::SimulatedPod> sim;
  std::unique_ptr<ScriptedVipu> api;
  std::unique_ptr<controllers::VipuControllers> controllers;
  std::unique_ptr<controllers::VipuInventory> inventory;
};

}  // namespace ipu::testing
