#include "vipu/vipu_client.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <grpcpp/grpcpp.h>

#include "vipu/grpc_error.h"
#include "vipu/proto/virmgrpc.grpc.pb.h"
#include "vipu/proto_convert.h"
#include "vipu/wait_until_active.h"

namespace ipu::vipu {

class VipuClient::Stub {
 public:
  explicit Stub(std::shared_ptr<grpc::Channel> connection)
      : channel(std::move(connection)), stub(virmgrpc::UserService::NewStub(channel)) {}
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<virmgrpc::UserService::Stub> stub;
};

namespace {

constexpr const char* kStopped =
    "not called: this client was stopped (the operator stops or no longer leads)";

Result<std::string> readPem(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError(ErrorCode::kInvalidArgument,
                     "cannot read " + std::string(what) + " file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().empty()) {
    return makeError(ErrorCode::kInvalidArgument, std::string(what) + " file '" + path + "' is empty");
  }
  return text.str();
}

Result<std::shared_ptr<grpc::ChannelCredentials>> credentialsFor(const ClientOptions& options,
                                                                 grpc::ChannelArguments& arguments) {
  if (!options.tls) return grpc::InsecureChannelCredentials();
  const TlsOptions& tls = *options.tls;
  grpc::SslCredentialsOptions ssl;
  if (!tls.caCertFile.empty()) {
    Result<std::string> roots = readPem(tls.caCertFile, "CA certificate");
    if (!roots) return roots.error();
    ssl.pem_root_certs = *roots;
  }
  if (tls.clientCertFile.empty() != tls.clientKeyFile.empty()) {
    return makeError(
        ErrorCode::kInvalidArgument,
        "V-IPU '" + options.name + "': a client certificate needs both a certificate and a key file");
  }
  if (!tls.clientCertFile.empty()) {
    Result<std::string> certificate = readPem(tls.clientCertFile, "client certificate");
    if (!certificate) return certificate.error();
    Result<std::string> key = readPem(tls.clientKeyFile, "client key");
    if (!key) return key.error();
    ssl.pem_cert_chain = *certificate;
    ssl.pem_private_key = *key;
  }
  if (!tls.serverNameOverride.empty()) arguments.SetSslTargetNameOverride(tls.serverNameOverride);
  return grpc::SslCredentials(ssl);
}

std::string quoted(std::string_view text) {
  return "'" + std::string(text) + "'";
}

}  // namespace

Result<std::unique_ptr<VipuClient>> VipuClient::create(ClientOptions options) {
  if (options.endpoint.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "V-IPU '" + options.name + "': endpoint is empty");
  }
  if (options.retry.maxAttempts < 1) {
    return makeError(ErrorCode::kInvalidArgument,
                     "V-IPU '" + options.name + "': maxAttempts must be at least 1");
  }
  if (options.callTimeout <= std::chrono::milliseconds::zero()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "V-IPU '" + options.name + "': callTimeout must be positive");
  }
  grpc::ChannelArguments arguments;
  // gRPC's own reconnect backoff starts at 1 s and grows to 2 min; a restarted controller must be found again
  // within our retry budget, so reconnect on our schedule. (GRPC_ARG_MIN_RECONNECT_BACKOFF_MS is really the
  // connect timeout: it stays at gRPC's default, short values make handshakes on a busy machine fail.)
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
                   std::max(static_cast<int>(options.retry.backoff.initial.count()), 20));
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
                   std::max(static_cast<int>(options.retry.backoff.max.count()), 100));
  // After a lost connection gRPC re-resolves the name before connecting again, and by default waits 30 s
  // between resolutions: a controller restarted within seconds would stay unreachable for all our retries.
  arguments.SetInt(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS,
                   std::max(static_cast<int>(options.retry.backoff.initial.count()), 20));
  Result<std::shared_ptr<grpc::ChannelCredentials>> credentials = credentialsFor(options, arguments);
  if (!credentials) return credentials.error();
  auto channel = grpc::CreateCustomChannel(options.endpoint, *credentials, arguments);
  return std::make_unique<VipuClient>(PrivateTag{}, std::move(options), std::make_unique<Stub>(channel));
}

VipuClient::VipuClient(PrivateTag, ClientOptions options, std::unique_ptr<Stub> stub)
    : options_(std::move(options)), stub_(std::move(stub)) {}

VipuClient::~VipuClient() = default;

std::shared_ptr<grpc::Channel> VipuClient::channel() const {
  return stub_->channel;
}

template <typename Call>
Status VipuClient::invoke(std::string_view method, std::string_view subject, Call&& call) {
  const std::string controller = options_.name == options_.endpoint
                                     ? "V-IPU at " + options_.endpoint
                                     : "V-IPU " + quoted(options_.name) + " at " + options_.endpoint;
  const std::string context =
      controller + ": " + std::string(method) + (subject.empty() ? "" : " " + quoted(subject));
  Backoff backoff(options_.retry.backoff);
  for (int attempt = 1;; ++attempt) {
    // The stop token fences this client: once it fires (the process stops, or its leadership ended) no call
    // starts, and one in flight is cancelled, so a replica that no longer leads cannot act on partitions.
    if (options_.stop.stop_requested()) return makeError(ErrorCode::kCancelled, context + ": " + kStopped);
    grpc::ClientContext rpcContext;
    rpcContext.set_deadline(std::chrono::system_clock::now() + options_.callTimeout);
    std::stop_callback cancel(options_.stop, [&rpcContext] { rpcContext.TryCancel(); });
    const grpc::Status status = call(rpcContext);
    if (status.ok()) return {};
    if (options_.stop.stop_requested()) return makeError(ErrorCode::kCancelled, context + ": " + kStopped);
    if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return makeError(ErrorCode::kDeadlineExceeded,
                       context + ": no reply within " + std::to_string(options_.callTimeout.count()) + " ms");
    }
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return errorFromGrpc(status, context);
    if (attempt >= options_.retry.maxAttempts) {
      return errorFromGrpc(status, context + ": unavailable after " + std::to_string(attempt) +
                                       (attempt == 1 ? " attempt" : " attempts"));
    }
    if (!options_.clock->sleepFor(backoff.next(), options_.stop)) {
      return makeError(ErrorCode::kCancelled, context + ": stopped while waiting to retry");
    }
  }
}

Result<std::vector<Partition>> VipuClient::listPartitions(const std::string& allocationId) {
  virmgrpc::ListPartitionsRequest request;
  request.set_allocation_id(allocationId);
  virmgrpc::ListPartitionsReply reply;
  Status status = invoke("ListPartitions", allocationId, [&](grpc::ClientContext& context) {
    return stub_->stub->ListPartitions(&context, request, &reply);
  });
  if (!status) return status.error();
  std::vector<Partition> partitions;
  partitions.reserve(static_cast<std::size_t>(reply.partitions_size()));
  for (const virmgrpc::Partition& partition : reply.partitions()) partitions.push_back(toValue(partition));
  return partitions;
}

Result<std::vector<AgentIpuAttributes>> VipuClient::listIpuAttributes(
    const std::vector<std::string>& agents) {
  virmgrpc::ListIPUAttributesRequest request;
  for (const std::string& agent : agents) request.add_agents(agent);
  virmgrpc::ListIPUAttributesReply reply;
  Status status = invoke("ListIPUAttributes", "", [&](grpc::ClientContext& context) {
    return stub_->stub->ListIPUAttributes(&context, request, &reply);
  });
  if (!status) return status.error();
  return toValue(reply);
}

Result<std::string> VipuClient::createPartition(const PartitionRequest& partition) {
  virmgrpc::CreatePartitionRequest request;
  toProto(partition, &request);
  virmgrpc::CreatePartitionReply reply;
  Status status = invoke("CreatePartition", partition.id, [&](grpc::ClientContext& context) {
    return stub_->stub->CreatePartition(&context, request, &reply);
  });
  if (!status) return status.error();
  return reply.partition_id();
}

Status VipuClient::removePartition(const std::string& partitionId, bool force) {
  virmgrpc::RemovePartitionRequest request;
  request.set_partition_id(partitionId);
  request.set_force(force);
  virmgrpc::RemovePartitionReply reply;
  return invoke("RemovePartition", partitionId, [&](grpc::ClientContext& context) {
    return stub_->stub->RemovePartition(&context, request, &reply);
  });
}

Status VipuClient::resetPartition(const std::string& partitionId) {
  virmgrpc::ResetPartitionRequest request;
  request.set_partition_id(partitionId);
  virmgrpc::ResetPartitionReply reply;
  return invoke("ResetPartition", partitionId, [&](grpc::ClientContext& context) {
    return stub_->stub->ResetPartition(&context, request, &reply);
  });
}

Result<IpuofConfig> VipuClient::getPartitionIpuofConfig(const std::string& partitionId,
                                                        std::optional<std::uint32_t> gcdId) {
  virmgrpc::GetPartitionIpuofConfigRequest request;
  request.set_partition_id(partitionId);
  if (gcdId) request.mutable_gcd_id()->set_id(*gcdId);
  virmgrpc::GetPartitionIpuofConfigReply reply;
  Status status = invoke("GetPartitionIpuofConfig", partitionId, [&](grpc::ClientContext& context) {
    return stub_->stub->GetPartitionIpuofConfig(&context, request, &reply);
  });
  if (!status) return status.error();
  return toValue(reply.ipuof_config());
}

Result<PartitionStatus> VipuClient::getPartitionStatus(const std::string& partitionId) {
  virmgrpc::GetPartitionStatusRequest request;
  request.set_partition_id(partitionId);
  virmgrpc::GetPartitionStatusReply reply;
  Status status = invoke("GetPartitionStatus", partitionId, [&](grpc::ClientContext& context) {
    return stub_->stub->GetPartitionStatus(&context, request, &reply);
  });
  if (!status) return status.error();
  return toValue(reply.status());
}

Result<PartitionStatus> VipuClient::waitUntilActive(const std::string& partitionId,
                                                    std::chrono::milliseconds timeout) {
  return vipu::waitUntilActive(*this, partitionId, timeout, kActivationPoll, *options_.clock, options_.stop);
}

}  // namespace ipu::vipu
