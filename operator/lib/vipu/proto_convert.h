#pragma once

#include <vector>

#include "vipu/proto/virmgrpc.pb.h"
#include "vipu/vipu_types.h"

// The one bridge between protobuf messages and the value types: only the client and vipu-sim include it.
namespace ipu::vipu {

PartitionIpu toValue(const virmgrpc::PartitionIpu& message);
void toProto(const PartitionIpu& value, virmgrpc::PartitionIpu* message);

Partition toValue(const virmgrpc::Partition& message);
void toProto(const Partition& value, virmgrpc::Partition* message);

PartitionRequest toValue(const virmgrpc::CreatePartitionRequest& message);
void toProto(const PartitionRequest& value, virmgrpc::CreatePartitionRequest* message);

PartitionStatus toValue(const virmgrpc::PartitionStatus& message);
void toProto(const PartitionStatus& value, virmgrpc::PartitionStatus* message);

IpuofConfig toValue(const virmgrpc::PartitionConfig& message);
void toProto(const IpuofConfig& value, virmgrpc::PartitionConfig* message);

std::vector<AgentIpuAttributes> toValue(const virmgrpc::ListIPUAttributesReply& message);
void toProto(const std::vector<AgentIpuAttributes>& value, virmgrpc::ListIPUAttributesReply* message);

}  // namespace ipu::vipu
