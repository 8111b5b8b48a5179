#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "kube/store.h"
#include "vipu/proto/virmgrpc.grpc.pb.h"
#include "vipu/vipu_client.h"
#include "vipu_proxy/pods_by_address.h"
#include "vipu_proxy/proxy_policy.h"

namespace ipu::controllers {

// A V-IPU controller the proxy forwards to, over the operator's own connection to it: the operator's TLS
// and client certificate stay on its side, and workers never see them.
struct ProxyUpstream {
  std::string controller;  // its name, as status.partitions[].controller records it
  std::shared_ptr<grpc::Channel> channel;
};
// The controller `client` calls, under the name it is configured with.
ProxyUpstream upstreamOf(const vipu::VipuClient& client);

struct VipuProxyOptions {
  PartitionIdPrefixes partitionIds;  // the reconciler's: a job's partitions are the ids it derives
  // Deadline of each forwarded call; a caller's own deadline, when sooner, wins (and a caller that gives up
  // cancels the forwarded call).
  std::chrono::milliseconds callTimeout{30000};
  // A fence, as for the operator's V-IPU clients: once it fires, calls in flight are cancelled and new ones
  // refused (UNAVAILABLE), so a replica that no longer leads acts on no partition.
  std::stop_token stop;
  // False while the caches that identify callers are still filling: calls get UNAVAILABLE (which Poplar and
  // vipu-ctl retry) rather than a refusal for a pod the proxy does not know yet. Unset: always ready.
  std::function<bool()> ready;
};

// virmgrpc.UserService for worker pods: each call's caller is known by its source address from the worker
// pod cache and the IPUJob cache (identifyCaller), the call decided (authorizeCall), and an allowed call
// forwarded unchanged to the V-IPU controller its job's partitions are on, ListPartitions' reply filtered to
// the job's partitions. Refusals are PERMISSION_DENIED with the reason, and logged. Forwarded calls are not
// retried: the controller's answer, an error included, is the caller's (Poplar retries on its own). Thread-
// safe, as gRPC's synchronous server calls it from many threads.
class VipuProxyService final : public virmgrpc::UserService::Service {
 public:
  // `pods`, `jobs`: the IPUJob controller's caches (worker pods, trimmed; IPUJobs), which outlive the
  // service.
  VipuProxyService(const kube::Store& pods, const kube::Store& jobs,
                   const std::vector<ProxyUpstream>& upstreams, VipuProxyOptions options);

  grpc::Status ListPartitions(grpc::ServerContext* context, const virmgrpc::ListPartitionsRequest* request,
                              virmgrpc::ListPartitionsReply* reply) override;
  grpc::Status ListIPUAttributes(grpc::ServerContext* context,
                                 const virmgrpc::ListIPUAttributesRequest* request,
                                 virmgrpc::ListIPUAttributesReply* reply) override;
  grpc::Status CreatePartition(grpc::ServerContext* context, const virmgrpc::CreatePartitionRequest* request,
                               virmgrpc::CreatePartitionReply* reply) override;
  grpc::Status RemovePartition(grpc::ServerContext* context, const virmgrpc::RemovePartitionRequest* request,
                               virmgrpc::RemovePartitionReply* reply) override;
  grpc::Status ResetPartition(grpc::ServerContext* context, const virmgrpc::ResetPartitionRequest* request,
                              virmgrpc::ResetPartitionReply* reply) override;
  grpc::Status GetPartitionIpuofConfig(grpc::ServerContext* context,
                                       const virmgrpc::GetPartitionIpuofConfigRequest* request,
                                       virmgrpc::GetPartitionIpuofConfigReply* reply) override;
  grpc::Status GetPartitionStatus(grpc::ServerContext* context,
                                  const virmgrpc::GetPartitionStatusRequest* request,
                                  virmgrpc::GetPartitionStatusReply* reply) override;

  // GetPartitionStatus for a caller at `address` (as status.podIP writes it) that asks over HTTP
  // (ipu-runtime, which speaks no gRPC: partition_status_endpoint.h): the same identification, decision and
  // forwarding as the gRPC call. The partition's ready state, or the refusal (PermissionDenied, Unavailable)
  // or V-IPU's error.
  Result<virmgrpc::PartitionReadyState> partitionStatusFor(const std::string& address,
                                                           const std::string& partitionId);

 private:
  using Stub = virmgrpc::UserService::Stub;
  struct Allowed {
    ProxyCaller caller;
    Stub* upstream = nullptr;  // null when the caller's job holds no partitions (only listing gets here)
  };
  // Identifies the caller at `address` (`peer` for the log) and decides on the call: what it may reach, or
  // why not.
  Result<Allowed> allow(const std::optional<std::string>& address, const std::string& peer, VipuCall call,
                        std::string_view partitionId);
  // The gRPC call: allow(), then `forward(stub, upstreamContext, caller)` for an allowed call.
  template <typename Forward>
  grpc::Status serve(grpc::ServerContext& context, VipuCall call, std::string_view partitionId,
                     Forward&& forward);

  PodsByAddress pods_;
  const kube::Store& jobs_;
  std::map<std::string, std::unique_ptr<Stub>> upstreams_;  // by controller name
  VipuProxyOptions options_;
};

}  // namespace ipu::controllers
