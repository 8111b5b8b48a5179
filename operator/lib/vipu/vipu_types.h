#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Plain C++ value types for the V-IPU user API. The rest of the operator uses these and never sees protobuf:
// proto_convert.h is the only bridge. Enum values equal the protocol's numbers so an unknown number from a
// newer controller survives a round trip.
namespace ipu::vipu {

enum class IpuLinkRouting : std::uint32_t { kUndefined = 0, kDnc = 1, kSwnc = 2, kBtnc = 3, kRingSwnc = 4 };
enum class GatewayRouting : std::uint32_t { kUndefined = 0, kRing = 2, kSwRing = 3 };
enum class SyncType : std::uint32_t {
  kUndefined = 0,
  kGs2Default = 1,
  kGs2IndependentRails = 2,
  kPodNativeDefault = 3,
  kPodNativeReplicatedPipeline = 4,
};
enum class ReadyState : std::uint32_t { kUndefined = 0, kPending = 1, kActive = 2, kRemoved = 3, kError = 4 };
enum class OperationState : std::uint32_t {
  kUndefined = 0,
  kIdle = 1,
  kCreating = 2,
  kRemoving = 3,
  kResetting = 4,
  kFailed = 5,
};

// The protocol's names ("PS_ACTIVE", "POS_RESETTING"...), so logs and CLI output match V-IPU's documentation.
std::string toString(ReadyState state);
std::string toString(OperationState state);
std::string toString(IpuLinkRouting routing);

struct PartitionIpu {
  std::uint32_t ildTopologyId = 0;  // physical ILD id in the cluster
  std::uint32_t ildRoutingId = 0;   // logical ILD id inside the partition
  std::uint32_t topologyId = 0;     // physical IPU id inside its ILD
  std::uint32_t routingId = 0;      // logical IPU id inside the partition

  bool operator==(const PartitionIpu&) const = default;
};

struct PartitionSpec {
  std::string clusterId;
  std::vector<PartitionIpu> ipus;
  IpuLinkRouting ipuLinkRouting = IpuLinkRouting::kUndefined;
  SyncType syncType = SyncType::kUndefined;
  std::uint32_t numGcds = 0;
  std::uint32_t numIpulinkSegments = 0;
  bool reconfigurable = false;
  GatewayRouting gatewayRouting = GatewayRouting::kUndefined;
  std::uint32_t numReplicas = 0;
  std::string allocationId;

  bool operator==(const PartitionSpec&) const = default;
};

struct Partition {
  std::string id;
  PartitionSpec spec;
  ReadyState readyState = ReadyState::kUndefined;
  std::string ipuofServerVersion;

  std::uint32_t size() const { return static_cast<std::uint32_t>(spec.ipus.size()); }
  bool operator==(const Partition&) const = default;
};

// CreatePartitionRequest flattened: its requirements plus the two request-level flags.
struct PartitionRequest {
  std::string id;
  std::uint32_t size = 0;
  std::string clusterId;  // required by V-IPU when ipus is not empty
  IpuLinkRouting ipuLinkRouting = IpuLinkRouting::kUndefined;
  std::uint32_t numIpulinkSegments = 0;  // 0 = let the controller decide
  GatewayRouting gatewayRouting = GatewayRouting::kUndefined;
  SyncType syncType = SyncType::kUndefined;
  std::uint32_t numGcds = 0;  // 0 = one GCD
  bool reconfigurable = false;
  std::uint32_t numReplicas = 0;  // 0 = one per GCD
  std::string allocationId;
  std::vector<PartitionIpu> ipus;  // empty = let the controller place the partition
  bool disableAutoReset = false;
  bool relocatable = false;
};

struct PartitionStatus {
  std::string partitionId;
  ReadyState readyState = ReadyState::kUndefined;
  OperationState operationState = OperationState::kUndefined;
  std::vector<std::string> errors;
  std::uint32_t maxAutoResetRetries = 0;
  std::uint32_t autoResetRetryCount = 0;
  std::optional<std::chrono::system_clock::time_point> lastAutoResetTime;
};

struct IpuofDevice {
  std::string ip;
  std::uint32_t serverPort = 0;
  std::uint32_t rdmaPort = 0;
  std::uint32_t deviceId = 0;
  std::uint32_t ipulinkSegmentId = 0;
  std::uint32_t routingId = 0;
  std::uint32_t ipuArchId = 0;
  std::uint32_t ipuId = 0;
  std::string chipId;
  std::string gwswVersion;
  std::string ipumSwVersion;
};

struct GcdConfig {
  std::vector<IpuofDevice> devices;
  std::map<std::string, std::string> attributes;
};

struct IpuofConfig {
  IpuLinkRouting ipuLinkRouting = IpuLinkRouting::kUndefined;
  SyncType syncType = SyncType::kUndefined;
  bool reconfigurable = false;
  GatewayRouting gatewayRouting = GatewayRouting::kUndefined;
  std::uint32_t numIpulinkSegments = 0;
  std::vector<GcdConfig> gcds;
  std::string ipuofServerVersion;
};

// One V-IPU agent (one IPU-Machine) and the attributes of each of its IPUs, keyed by IPU hardware id.
struct AgentIpuAttributes {
  std::string agent;
  std::map<std::uint32_t, std::map<std::string, std::string>> ipus;
};

}  // namespace ipu::vipu
