#pragma once

#include <chrono>
#include <memory>

#include "vipu-sim/call_log.h"
#include "vipu-sim/fault_injector.h"
#include "vipu-sim/simulated_pod.h"
#include "vipu/proto/virmgrpc.grpc.pb.h"

namespace ipu::vipu::sim {

// virmgrpc.UserService over a SimulatedPod: converts messages, adds the injected latency, maps errors to gRPC
// codes, logs each call. Any exception (a bug) becomes INTERNAL for that call instead of ending the process.
class UserService final : public virmgrpc::UserService::Service {
 public:
  UserService(SimulatedPod& pod, std::shared_ptr<FaultInjector> faults, CallLog& log)
      : pod_(pod), faults_(std::move(faults)), log_(log) {}

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

 private:
  template <typename Handler>
  grpc::Status serve(std::string_view method, std::string_view arguments, Handler&& handler);

  SimulatedPod& pod_;
  std::shared_ptr<FaultInjector> faults_;
  CallLog& log_;
};

}  // namespace ipu::vipu::sim
