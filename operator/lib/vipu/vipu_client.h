#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "vipu/client_options.h"
#include "vipu/vipu_api.h"

namespace grpc {
class Channel;
}  // namespace grpc

namespace ipu::vipu {

// A gRPC client of one V-IPU controller (virmgrpc.UserService). Every attempt has its own deadline;
// UNAVAILABLE (controller down, restarting, unreachable) is retried with exponential backoff up to
// maxAttempts; other errors return at once, mapped to ErrorCode with a message naming the controller, the
// call and its subject. Thread-safe: gRPC stubs may be shared between threads.
//
// Retrying CreatePartition after UNAVAILABLE can meet ALREADY_EXISTS when the first attempt did reach the
// controller; callers that record the id before creating (the operator does) treat that as success.
class VipuClient final : public VipuApi {
  struct PrivateTag {};  // only create() constructs, after validating the options

 public:
  static Result<std::unique_ptr<VipuClient>> create(ClientOptions options);
  ~VipuClient() override;
  VipuClient(const VipuClient&) = delete;
  VipuClient& operator=(const VipuClient&) = delete;

  Result<std::vector<Partition>> listPartitions(const std::string& allocationId) override;
  Result<std::vector<AgentIpuAttributes>> listIpuAttributes(const std::vector<std::string>& agents) override;
  Result<std::string> createPartition(const PartitionRequest& request) override;
  Status removePartition(const std::string& partitionId, bool force) override;
  Status resetPartition(const std::string& partitionId) override;
  Result<IpuofConfig> getPartitionIpuofConfig(const std::string& partitionId,
                                              std::optional<std::uint32_t> gcdId) override;
  Result<PartitionStatus> getPartitionStatus(const std::string& partitionId) override;

  // Polls until PS_ACTIVE; see wait_until_active.h for the errors.
  Result<PartitionStatus> waitUntilActive(const std::string& partitionId, std::chrono::milliseconds timeout);

  const ClientOptions& options() const { return options_; }
  // The connection to the controller, with the options' TLS: for a proxy that forwards callers' requests
  // over the operator's own connection rather than opening one of its own. Calls made on it directly have
  // neither this client's retries nor its fence.
  std::shared_ptr<grpc::Channel> channel() const;

  class Stub;
  VipuClient(PrivateTag, ClientOptions options, std::unique_ptr<Stub> stub);

 private:
  // Runs `call(context)` with a fresh deadline per attempt, retrying UNAVAILABLE.
  template <typename Call>
  Status invoke(std::string_view method, std::string_view subject, Call&& call);

  ClientOptions options_;
  std::unique_ptr<Stub> stub_;
};

}  // namespace ipu::vipu
