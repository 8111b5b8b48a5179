#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/result.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace ipu::vipu::sim {

// TLS for the simulator, to test clients of secured controllers. PEM files.
struct ServerTls {
  std::string certFile;
  std::string keyFile;
  std::string clientCaFile;  // set = clients must present a certificate signed by it
};

// A gRPC server for one service on one address; "host:0" picks a free port (see port()).
class SimServer {
  struct PrivateTag {};  // only the factory constructs, after validating

 public:
  static Result<std::unique_ptr<SimServer>> start(const std::string& listen, grpc::Service& service,
                                                  const std::optional<ServerTls>& tls);
  ~SimServer();
  SimServer(const SimServer&) = delete;
  SimServer& operator=(const SimServer&) = delete;

  int port() const { return port_; }
  // Stops accepting calls and waits (up to a short grace period) for the ones in flight.
  void shutdown();

  SimServer(PrivateTag, std::unique_ptr<grpc::Server> server, int port);

 private:
  std::unique_ptr<grpc::Server> server_;
  int port_;
};

}  // namespace ipu::vipu::sim
