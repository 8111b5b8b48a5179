#include "vipu/grpc_server.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include <grpcpp/grpcpp.h>

namespace ipu::vipu {
namespace {

Result<std::string> readPem(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || text.str().empty()) {
    return makeError(ErrorCode::kInvalidArgument, "cannot read " + what + " from '" + path + "'");
  }
  return text.str();
}

Result<std::shared_ptr<grpc::ServerCredentials>> credentialsFor(const std::optional<ServerTls>& tls) {
  if (!tls) return grpc::InsecureServerCredentials();
  Result<std::string> certificate = readPem(tls->certFile, "the TLS certificate");
  if (!certificate) return certificate.error();
  Result<std::string> key = readPem(tls->keyFile, "the TLS key");
  if (!key) return key.error();
  grpc::SslServerCredentialsOptions options(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_key_cert_pairs.push_back({*key, *certificate});
  if (!tls->clientCaFile.empty()) {
    Result<std::string> clientCa = readPem(tls->clientCaFile, "the client CA");
    if (!clientCa) return clientCa.error();
    options.pem_root_certs = *clientCa;
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

}  // namespace

Result<std::unique_ptr<GrpcServer>> GrpcServer::start(const std::string& listen, grpc::Service& service,
                                                      const std::optional<ServerTls>& tls) {
  Result<std::shared_ptr<grpc::ServerCredentials>> credentials = credentialsFor(tls);
  if (!credentials) return credentials.error();
  int port = 0;
  grpc::ServerBuilder builder;
  // gRPC allows SO_REUSEPORT by default: a second server on the same port (a second vipu-sim, with its state
  // file) would then share the traffic instead of failing to start.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(listen, *credentials, &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    return makeError(ErrorCode::kUnavailable,
                     "cannot listen on '" + listen + "' (address in use, or not a valid host:port)");
  }
  return std::make_unique<GrpcServer>(PrivateTag{}, std::move(server), port);
}

GrpcServer::GrpcServer(PrivateTag, std::unique_ptr<grpc::Server> server, int port)
    : server_(std::move(server)), port_(port) {}

GrpcServer::~GrpcServer() {
  shutdown();
}

void GrpcServer::shutdown() {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->Wait();
  server_.reset();
}

}  // namespace ipu::vipu
