#include "vipu-sim/user_service.h"

#include <exception>
#include <string>
#include <thread>

#include "vipu/grpc_error.h"
#include "vipu/proto_convert.h"

namespace ipu::vipu::sim {
namespace {

// Client-supplied text in a log line: bounded and on one line, whatever the client sent.
std::string printable(std::string_view text) {
  constexpr std::size_t kMax = 80;
  std::string out;
  for (char c : text.substr(0, kMax)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > kMax) out += "...";
  return out;
}

std::string idArgument(std::string_view id) {
  return "id=" + printable(id);
}

}  // namespace

template <typename Handler>
grpc::Status UserService::serve(std::string_view method, std::string_view arguments, Handler&& handler) {
  const auto started = std::chrono::steady_clock::now();
  if (faults_->latency() > std::chrono::milliseconds::zero()) std::this_thread::sleep_for(faults_->latency());
  grpc::Status status;
  try {
    Status result = handler();
    status = result ? grpc::Status::OK : grpcStatusFromError(result.error());
  } catch (const std::exception& error) {
    status = grpc::Status(grpc::StatusCode::INTERNAL, std::string("vipu-sim bug: ") + error.what());
  }
  log_.record(method, arguments, status, std::chrono::steady_clock::now() - started);
  return status;
}

grpc::Status UserService::ListPartitions(grpc::ServerContext*, const virmgrpc::ListPartitionsRequest* request,
                                         virmgrpc::ListPartitionsReply* reply) {
  const std::string arguments =
      request->allocation_id().empty() ? std::string() : "allocation=" + printable(request->allocation_id());
  return serve("ListPartitions", arguments, [&]() -> Status {
    Result<std::vector<Partition>> partitions = pod_.listPartitions(request->allocation_id());
    if (!partitions) return partitions.error();
    for (const Partition& partition : *partitions) toProto(partition, reply->add_partitions());
    return {};
  });
}

grpc::Status UserService::ListIPUAttributes(grpc::ServerContext*,
                                            const virmgrpc::ListIPUAttributesRequest* request,
                                            virmgrpc::ListIPUAttributesReply* reply) {
  std::vector<std::string> agents(request->agents().begin(), request->agents().end());
  const std::string arguments = agents.empty() ? std::string() : "agents=" + std::to_string(agents.size());
  return serve("ListIPUAttributes", arguments, [&]() -> Status {
    Result<std::vector<AgentIpuAttributes>> attributes = pod_.listIpuAttributes(agents);
    if (!attributes) return attributes.error();
    toProto(*attributes, reply);
    return {};
  });
}

grpc::Status UserService::CreatePartition(grpc::ServerContext*,
                                          const virmgrpc::CreatePartitionRequest* request,
                                          virmgrpc::CreatePartitionReply* reply) {
  const std::string arguments = idArgument(request->requirements().id()) +
                                " size=" + std::to_string(request->requirements().size()) +
                                " ipus=" + std::to_string(request->requirements().ipus_size());
  return serve("CreatePartition", arguments, [&]() -> Status {
    if (!request->has_requirements())
      return makeError(ErrorCode::kInvalidArgument, "requirements are missing");
    Result<std::string> id = pod_.createPartition(toValue(*request));
    if (!id) return id.error();
    reply->set_partition_id(*id);
    return {};
  });
}

grpc::Status UserService::RemovePartition(grpc::ServerContext*,
                                          const virmgrpc::RemovePartitionRequest* request,
                                          virmgrpc::RemovePartitionReply*) {
  return serve("RemovePartition", idArgument(request->partition_id()),
               [&]() { return pod_.removePartition(request->partition_id(), request->force()); });
}

grpc::Status UserService::ResetPartition(grpc::ServerContext*, const virmgrpc::ResetPartitionRequest* request,
                                         virmgrpc::ResetPartitionReply*) {
  return serve("ResetPartition", idArgument(request->partition_id()),
               [&]() { return pod_.resetPartition(request->partition_id()); });
}

grpc::Status UserService::GetPartitionIpuofConfig(grpc::ServerContext*,
                                                  const virmgrpc::GetPartitionIpuofConfigRequest* request,
                                                  virmgrpc::GetPartitionIpuofConfigReply* reply) {
  std::optional<std::uint32_t> gcd;
  if (request->has_gcd_id()) gcd = request->gcd_id().id();
  const std::string arguments =
      idArgument(request->partition_id()) + (gcd ? " gcd=" + std::to_string(*gcd) : std::string());
  return serve("GetPartitionIpuofConfig", arguments, [&]() -> Status {
    Result<IpuofConfig> config = pod_.getPartitionIpuofConfig(request->partition_id(), gcd);
    if (!config) return config.error();
    toProto(*config, reply->mutable_ipuof_config());
    return {};
  });
}

grpc::Status UserService::GetPartitionStatus(grpc::ServerContext*,
                                             const virmgrpc::GetPartitionStatusRequest* request,
                                             virmgrpc::GetPartitionStatusReply* reply) {
  return serve("GetPartitionStatus", idArgument(request->partition_id()), [&]() -> Status {
    Result<PartitionStatus> status = pod_.getPartitionStatus(request->partition_id());
    if (!status) return status.error();
    toProto(*status, reply->mutable_status());
    return {};
  });
}

}  // namespace ipu::vipu::sim
