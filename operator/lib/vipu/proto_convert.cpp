#include "vipu/proto_convert.h"

#include <chrono>
#include <cstdint>
#include <optional>

namespace ipu::vipu {
namespace {

// Protocol enums are open (proto3): a number this build does not know passes through unchanged.
template <typename Value, typename Proto>
Value enumValue(Proto proto) {
  return static_cast<Value>(static_cast<std::uint32_t>(proto));
}
template <typename Proto, typename Value>
Proto enumProto(Value value) {
  return static_cast<Proto>(static_cast<int>(value));
}

void ipusToProto(const std::vector<PartitionIpu>& ipus,
                 google::protobuf::RepeatedPtrField<virmgrpc::PartitionIpu>* messages) {
  messages->Reserve(static_cast<int>(ipus.size()));
  for (const PartitionIpu& ipu : ipus) toProto(ipu, messages->Add());
}

// A Timestamp as a system_clock time, or nothing when that clock cannot hold it: its 64-bit nanoseconds end
// in 1677 and 2262, and a Timestamp may be from year 1 to 9999 (its nanos, from a peer, anything an int32
// holds).
std::optional<std::chrono::system_clock::time_point> timePointOf(const google::protobuf::Timestamp& time) {
  using std::chrono::seconds;
  // Seconds and nanoseconds are added in nanoseconds: three seconds of room for the nanos.
  constexpr std::int64_t kMaxSeconds =
      std::chrono::duration_cast<seconds>(std::chrono::nanoseconds::max()).count() - 3;
  if (time.seconds() > kMaxSeconds || time.seconds() < -kMaxSeconds) return std::nullopt;
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          seconds(time.seconds()) + std::chrono::nanoseconds(time.nanos())));
}

std::vector<PartitionIpu> ipusToValue(
    const google::protobuf::RepeatedPtrField<virmgrpc::PartitionIpu>& messages) {
  std::vector<PartitionIpu> ipus;
  ipus.reserve(static_cast<std::size_t>(messages.size()));
  for (const virmgrpc::PartitionIpu& message : messages) ipus.push_back(toValue(message));
  return ipus;
}

}  // namespace

PartitionIpu toValue(const virmgrpc::PartitionIpu& message) {
  return PartitionIpu{message.ipulink_domain_topology_id(), message.ipulink_domain_routing_id(),
                      message.topology_id(), message.routing_id()};
}

void toProto(const PartitionIpu& value, virmgrpc::PartitionIpu* message) {
  message->set_ipulink_domain_topology_id(value.ildTopologyId);
  message->set_ipulink_domain_routing_id(value.ildRoutingId);
  message->set_topology_id(value.topologyId);
  message->set_routing_id(value.routingId);
}

Partition toValue(const virmgrpc::Partition& message) {
  Partition partition;
  partition.id = message.id();
  const virmgrpc::PartitionSpec& spec = message.spec();
  partition.spec.clusterId = spec.cluster_id();
  partition.spec.ipus = ipusToValue(spec.ipus());
  partition.spec.ipuLinkRouting = enumValue<IpuLinkRouting>(spec.ipulink_routing_type());
  partition.spec.syncType = enumValue<SyncType>(spec.sync_type());
  partition.spec.numGcds = spec.num_gcds();
  partition.spec.numIpulinkSegments = spec.num_ipulink_segments();
  partition.spec.reconfigurable = spec.reconfigurable();
  partition.spec.gatewayRouting = enumValue<GatewayRouting>(spec.gw_routing_type());
  partition.spec.numReplicas = spec.num_replicas();
  partition.spec.allocationId = spec.allocation_id();
  partition.readyState = enumValue<ReadyState>(message.ready_state());
  partition.ipuofServerVersion = message.ipuof_server_version();
  return partition;
}

void toProto(const Partition& value, virmgrpc::Partition* message) {
  message->set_id(value.id);
  virmgrpc::PartitionSpec* spec = message->mutable_spec();
  spec->set_cluster_id(value.spec.clusterId);
  ipusToProto(value.spec.ipus, spec->mutable_ipus());
  spec->set_ipulink_routing_type(enumProto<virmgrpc::IpuLinkRoutingType>(value.spec.ipuLinkRouting));
  spec->set_sync_type(enumProto<virmgrpc::SyncType>(value.spec.syncType));
  spec->set_num_gcds(value.spec.numGcds);
  spec->set_num_ipulink_segments(value.spec.numIpulinkSegments);
  spec->set_reconfigurable(value.spec.reconfigurable);
  spec->set_gw_routing_type(enumProto<virmgrpc::GatewayRoutingType>(value.spec.gatewayRouting));
  spec->set_num_replicas(value.spec.numReplicas);
  spec->set_allocation_id(value.spec.allocationId);
  message->set_ready_state(enumProto<virmgrpc::PartitionReadyState>(value.readyState));
  message->set_ipuof_server_version(value.ipuofServerVersion);
}

PartitionRequest toValue(const virmgrpc::CreatePartitionRequest& message) {
  const virmgrpc::PartitionRequirements& requirements = message.requirements();
  PartitionRequest request;
  request.id = requirements.id();
  request.size = requirements.size();
  request.clusterId = requirements.cluster_id();
  request.ipuLinkRouting = enumValue<IpuLinkRouting>(requirements.ipulink_routing_type());
  request.numIpulinkSegments = requirements.num_ipulink_segments();
  request.gatewayRouting = enumValue<GatewayRouting>(requirements.gw_routing_type());
  request.syncType = enumValue<SyncType>(requirements.sync_type());
  request.numGcds = requirements.num_gcds();
  request.reconfigurable = requirements.reconfigurable();
  request.numReplicas = requirements.num_replicas();
  request.allocationId = requirements.allocation_id();
  request.ipus = ipusToValue(requirements.ipus());
  request.disableAutoReset = message.disable_auto_reset();
  request.relocatable = message.relocatable();
  return request;
}

void toProto(const PartitionRequest& value, virmgrpc::CreatePartitionRequest* message) {
  virmgrpc::PartitionRequirements* requirements = message->mutable_requirements();
  requirements->set_id(value.id);
  requirements->set_size(value.size);
  requirements->set_cluster_id(value.clusterId);
  requirements->set_ipulink_routing_type(enumProto<virmgrpc::IpuLinkRoutingType>(value.ipuLinkRouting));
  requirements->set_num_ipulink_segments(value.numIpulinkSegments);
  requirements->set_gw_routing_type(enumProto<virmgrpc::GatewayRoutingType>(value.gatewayRouting));
  requirements->set_sync_type(enumProto<virmgrpc::SyncType>(value.syncType));
  requirements->set_num_gcds(value.numGcds);
  requirements->set_reconfigurable(value.reconfigurable);
  requirements->set_num_replicas(value.numReplicas);
  requirements->set_allocation_id(value.allocationId);
  ipusToProto(value.ipus, requirements->mutable_ipus());
  message->set_disable_auto_reset(value.disableAutoReset);
  message->set_relocatable(value.relocatable);
}

PartitionStatus toValue(const virmgrpc::PartitionStatus& message) {
  PartitionStatus status;
  status.partitionId = message.partition_id();
  status.readyState = enumValue<ReadyState>(message.ready_state());
  status.operationState = enumValue<OperationState>(message.operation_state());
  status.errors.assign(message.errors().begin(), message.errors().end());
  status.maxAutoResetRetries = message.max_auto_reset_retries();
  status.autoResetRetryCount = message.auto_reset_retry_count();
  if (message.has_last_auto_reset_time())
    status.lastAutoResetTime = timePointOf(message.last_auto_reset_time());
  return status;
}

void toProto(const PartitionStatus& value, virmgrpc::PartitionStatus* message) {
  message->set_partition_id(value.partitionId);
  message->set_ready_state(enumProto<virmgrpc::PartitionReadyState>(value.readyState));
  message->set_operation_state(enumProto<virmgrpc::PartitionOperationState>(value.operationState));
  for (const std::string& error : value.errors) message->add_errors(error);
  message->set_max_auto_reset_retries(value.maxAutoResetRetries);
  message->set_auto_reset_retry_count(value.autoResetRetryCount);
  if (value.lastAutoResetTime) {
    const auto sinceEpoch = value.lastAutoResetTime->time_since_epoch();
    const auto seconds = std::chrono::floor<std::chrono::seconds>(sinceEpoch);
    message->mutable_last_auto_reset_time()->set_seconds(seconds.count());
    message->mutable_last_auto_reset_time()->set_nanos(static_cast<std::int32_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(sinceEpoch - seconds).count()));
  }
}

IpuofConfig toValue(const virmgrpc::PartitionConfig& message) {
  IpuofConfig config;
  config.ipuLinkRouting = enumValue<IpuLinkRouting>(message.ipulink_routing_type());
  config.syncType = enumValue<SyncType>(message.sync_type());
  config.reconfigurable = message.reconfigurable();
  config.gatewayRouting = enumValue<GatewayRouting>(message.gw_routing_type());
  config.numIpulinkSegments = message.num_ipulink_segments();
  config.ipuofServerVersion = message.ipuof_server_version();
  for (const virmgrpc::PartitionConfig::Gcd& gcdMessage : message.gcd_configs()) {
    GcdConfig gcd;
    for (const virmgrpc::IpuofDevice& device : gcdMessage.devices()) {
      gcd.devices.push_back(IpuofDevice{device.ip(), device.server_port(), device.rdma_port(),
                                        device.device_id(), device.ipulink_segment_id(), device.routing_id(),
                                        device.ipu_arch_id(), device.ipu_id(), device.chip_id(),
                                        device.gwsw_version(), device.ipum_sw_version()});
    }
    gcd.attributes.insert(gcdMessage.attributes().begin(), gcdMessage.attributes().end());
    config.gcds.push_back(std::move(gcd));
  }
  return config;
}

void toProto(const IpuofConfig& value, virmgrpc::PartitionConfig* message) {
  message->set_ipulink_routing_type(enumProto<virmgrpc::IpuLinkRoutingType>(value.ipuLinkRouting));
  message->set_sync_type(enumProto<virmgrpc::SyncType>(value.syncType));
  message->set_reconfigurable(value.reconfigurable);
  message->set_gw_routing_type(enumProto<virmgrpc::GatewayRoutingType>(value.gatewayRouting));
  message->set_num_ipulink_segments(value.numIpulinkSegments);
  message->set_ipuof_server_version(value.ipuofServerVersion);
  for (const GcdConfig& gcd : value.gcds) {
    virmgrpc::PartitionConfig::Gcd* gcdMessage = message->add_gcd_configs();
    for (const IpuofDevice& device : gcd.devices) {
      virmgrpc::IpuofDevice* deviceMessage = gcdMessage->add_devices();
      deviceMessage->set_ip(device.ip);
      deviceMessage->set_server_port(device.serverPort);
      deviceMessage->set_rdma_port(device.rdmaPort);
      deviceMessage->set_device_id(device.deviceId);
      deviceMessage->set_ipulink_segment_id(device.ipulinkSegmentId);
      deviceMessage->set_routing_id(device.routingId);
      deviceMessage->set_ipu_arch_id(device.ipuArchId);
      deviceMessage->set_ipu_id(device.ipuId);
      deviceMessage->set_chip_id(device.chipId);
      deviceMessage->set_gwsw_version(device.gwswVersion);
      deviceMessage->set_ipum_sw_version(device.ipumSwVersion);
    }
    for (const auto& [key, attribute] : gcd.attributes) (*gcdMessage->mutable_attributes())[key] = attribute;
  }
}

std::vector<AgentIpuAttributes> toValue(const virmgrpc::ListIPUAttributesReply& message) {
  std::vector<AgentIpuAttributes> agents;
  for (const virmgrpc::ListIPUAttributesReply::Entry& entry : message.entries()) {
    AgentIpuAttributes agent;
    agent.agent = entry.agent();
    for (const auto& [ipuId, attributes] : entry.ipu_attributes()) {
      agent.ipus[ipuId].insert(attributes.attributes().begin(), attributes.attributes().end());
    }
    agents.push_back(std::move(agent));
  }
  return agents;
}

void toProto(const std::vector<AgentIpuAttributes>& value, virmgrpc::ListIPUAttributesReply* message) {
  for (const AgentIpuAttributes& agent : value) {
    virmgrpc::ListIPUAttributesReply::Entry* entry = message->add_entries();
    entry->set_agent(agent.agent);
    for (const auto& [ipuId, attributes] : agent.ipus) {
      auto* target = (*entry->mutable_ipu_attributes())[ipuId].mutable_attributes();
      for (const auto& [key, attribute] : attributes) (*target)[key] = attribute;
    }
  }
}

}  // namespace ipu::vipu
