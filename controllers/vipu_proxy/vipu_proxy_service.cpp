#include "vipu_proxy/vipu_proxy_service.h"

#include <algorithm>
#include <exception>

#include <grpcpp/grpcpp.h>

#include "common/log.h"
#include "vipu/grpc_error.h"
#include "vipu_proxy/caller_address.h"

namespace ipu::controllers {

ProxyUpstream upstreamOf(const vipu::VipuClient& client) {
  return {client.options().name, client.channel()};
}

VipuProxyService::VipuProxyService(const kube::Store& pods, const kube::Store& jobs,
                                   const std::vector<ProxyUpstream>& upstreams, VipuProxyOptions options)
    : pods_(pods), jobs_(jobs), options_(std::move(options)) {
  for (const ProxyUpstream& upstream : upstreams)
    upstreams_[upstream.controller] = virmgrpc::UserService::NewStub(upstream.channel);
}

Result<VipuProxyService::Allowed> VipuProxyService::allow(const std::optional<std::string>& address,
                                                          const std::string& peer, VipuCall call,
                                                          std::string_view partitionId) {
  if (options_.stop.stop_requested()) {
    return makeError(ErrorCode::kUnavailable,
                     "the V-IPU proxy is stopping, or its operator no longer leads: call again");
  }
  if (options_.ready && !options_.ready()) {
    return makeError(ErrorCode::kUnavailable,
                     "the V-IPU proxy is starting (its operator's caches are syncing): call again");
  }
  Result<ProxyCaller> caller =
      address ? identifyCaller(*address, pods_.podsAt(*address), jobs_, options_.partitionIds)
              : Result<ProxyCaller>(
                    makeError(ErrorCode::kPermissionDenied, "a caller at " + peer + " identifies no pod"));
  const Status allowed = caller ? authorizeCall(*caller, call, partitionId) : Status(caller.error());
  if (!allowed) {
    log::warning(
        "V-IPU proxy refused a call",
        {{"call", std::string(vipuCallName(call))}, {"peer", peer}, {"why", allowed.error().message}});
    return allowed.error();
  }
  // A job that holds no partitions has no controller to ask; authorizeCall let only listing through, and
  // its answer is the empty list.
  if (caller->controller.empty()) return Allowed{std::move(*caller), nullptr};
  const auto upstream = upstreams_.find(caller->controller);
  if (upstream == upstreams_.end()) {
    return makeError(ErrorCode::kFailedPrecondition,
                     "IPUJob " + caller->job + "'s partitions are on V-IPU controller '" +
                         caller->controller + "', which this operator is not configured with");
  }
  return Allowed{std::move(*caller), upstream->second.get()};
}

template <typename Forward>
grpc::Status VipuProxyService::serve(grpc::ServerContext& context, VipuCall call,
                                     std::string_view partitionId, Forward&& forward) {
  try {
    const std::string peer = context.peer();
    const Result<Allowed> allowed = allow(callerAddressOf(peer), peer, call, partitionId);
    if (!allowed) return vipu::grpcStatusFromError(allowed.error());
    if (allowed->upstream == nullptr) return grpc::Status::OK;
    // Propagates the caller's deadline (the sooner of the two applies) and its cancellation.
    const std::unique_ptr<grpc::ClientContext> forwarded = grpc::ClientContext::FromServerContext(context);
    forwarded->set_deadline(std::chrono::system_clock::now() + options_.callTimeout);
    std::stop_callback cancel(options_.stop, [&forwarded] { forwarded->TryCancel(); });
    return forward(*allowed->upstream, *forwarded, allowed->caller);
  } catch (const std::exception& error) {
    return grpc::Status(grpc::StatusCode::INTERNAL, std::string("V-IPU proxy bug: ") + error.what());
  }
}

Result<virmgrpc::PartitionReadyState> VipuProxyService::partitionStatusFor(const std::string& address,
                                                                           const std::string& partitionId) {
  const Result<Allowed> allowed = allow(address, address, VipuCall::kGetPartitionStatus, partitionId);
  if (!allowed) return allowed.error();
  if (allowed->upstream == nullptr) {
    return makeError(ErrorCode::kInternal, "V-IPU proxy bug: a status call allowed to a job holding nothing");
  }
  grpc::ClientContext forwarded;
  forwarded.set_deadline(std::chrono::system_clock::now() + options_.callTimeout);
  std::stop_callback cancel(options_.stop, [&forwarded] { forwarded.TryCancel(); });
  virmgrpc::GetPartitionStatusRequest request;
  request.set_partition_id(partitionId);
  virmgrpc::GetPartitionStatusReply reply;
  const grpc::Status status = allowed->upstream->GetPartitionStatus(&forwarded, request, &reply);
  if (!status.ok()) return vipu::errorFromGrpc(status, "GetPartitionStatus " + partitionId);
  return reply.status().ready_state();
}

grpc::Status VipuProxyService::ListPartitions(grpc::ServerContext* context,
                                              const virmgrpc::ListPartitionsRequest* request,
                                              virmgrpc::ListPartitionsReply* reply) {
  return serve(*context, VipuCall::kListPartitions, "",
               [&](Stub& stub, grpc::ClientContext& forwarded, const ProxyCaller& caller) {
                 const grpc::Status status = stub.ListPartitions(&forwarded, *request, reply);
                 auto& partitions = *reply->mutable_partitions();
                 partitions.erase(std::remove_if(partitions.begin(), partitions.end(),
                                                 [&caller](const virmgrpc::Partition& partition) {
                                                   return !caller.mayUse(partition.id());
                                                 }),
                                  partitions.end());
                 return status;
               });
}

grpc::Status VipuProxyService::ListIPUAttributes(grpc::ServerContext* context,
                                                 const virmgrpc::ListIPUAttributesRequest* request,
                                                 virmgrpc::ListIPUAttributesReply* reply) {
  return serve(*context, VipuCall::kListIpuAttributes, "",
               [&](Stub& stub, grpc::ClientContext& forwarded, const ProxyCaller&) {
                 return stub.ListIPUAttributes(&forwarded, *request, reply);
               });
}

// Never forwarded (authorizeCall denies it): the operator alone creates partitions.
grpc::Status VipuProxyService::CreatePartition(grpc::ServerContext* context,
                                               const virmgrpc::CreatePartitionRequest* request,
                                               virmgrpc::CreatePartitionReply*) {
  return serve(*context, VipuCall::kCreatePartition, request->requirements().id(),
               [](Stub&, grpc::ClientContext&, const ProxyCaller&) {
                 return grpc::Status(grpc::StatusCode::INTERNAL, "CreatePartition is never forwarded");
               });
}

// Never forwarded (authorizeCall denies it): the operator alone removes partitions.
grpc::Status VipuProxyService::RemovePartition(grpc::ServerContext* context,
                                               const virmgrpc::RemovePartitionRequest* request,
                                               virmgrpc::RemovePartitionReply*) {
  return serve(*context, VipuCall::kRemovePartition, request->partition_id(),
               [](Stub&, grpc::ClientContext&, const ProxyCaller&) {
                 return grpc::Status(grpc::StatusCode::INTERNAL, "RemovePartition is never forwarded");
               });
}

grpc::Status VipuProxyService::ResetPartition(grpc::ServerContext* context,
                                              const virmgrpc::ResetPartitionRequest* request,
                                              virmgrpc::ResetPartitionReply* reply) {
  return serve(*context, VipuCall::kResetPartition, request->partition_id(),
               [&](Stub& stub, grpc::ClientContext& forwarded, const ProxyCaller&) {
                 return stub.ResetPartition(&forwarded, *request, reply);
               });
}

grpc::Status VipuProxyService::GetPartitionIpuofConfig(
    grpc::ServerContext* context, const virmgrpc::GetPartitionIpuofConfigRequest* request,
    virmgrpc::GetPartitionIpuofConfigReply* reply) {
  return serve(*context, VipuCall::kGetPartitionIpuofConfig, request->partition_id(),
               [&](Stub& stub, grpc::ClientContext& forwarded, const ProxyCaller&) {
                 return stub.GetPartitionIpuofConfig(&forwarded, *request, reply);
               });
}

grpc::Status VipuProxyService::GetPartitionStatus(grpc::ServerContext* context,
                                                  const virmgrpc::GetPartitionStatusRequest* request,
                                                  virmgrpc::GetPartitionStatusReply* reply) {
  return serve(*context, VipuCall::kGetPartitionStatus, request->partition_id(),
               [&](Stub& stub, grpc::ClientContext& forwarded, const ProxyCaller&) {
                 return stub.GetPartitionStatus(&forwarded, *request, reply);
               });
}

}  // namespace ipu::controllers
