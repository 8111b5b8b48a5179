#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/result.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace ipu::vipu {

// TLS for a server (vipu-sim, to test clients of secured controllers). PEM files.
struct ServerTls {
  std::string certFile;
  std::string keyFile;
  std::string clientCaFile;  // set = clients must present a certificate signed by it
};

// A gRPC server for one service on one address; "host:0" picks a free port (see port()). vipu-sim serves
// its simulated controller with it, the operator its V-IPU proxy. Stopped (shutdown()) when destroyed.
class GrpcServer {
  struct PrivateTag {};  // only the factory constructs, after validating

 public:
  static Result<std::unique_ptr<GrpcServer>> start(const std::string& listen, grpc::Service& service,
                                                   const std::optional<ServerTls>& tls);
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  int port() const { return port_; }
  // Stops accepting calls and waits (up to a short grace period) for the ones in flight.
  void shutdown();

  GrpcServer(PrivateTag, std::unique_ptr<grpc::Server> server, int port);

 private:
  std::unique_ptr<grpc::Server> server_;
  int port_;
};

}  // namespace ipu::vipu
