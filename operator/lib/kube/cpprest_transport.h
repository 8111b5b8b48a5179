#pragma once

#include <chrono>
#include <memory>

#include "kube/cluster_config.h"
#include "kube/transport.h"

namespace ipu::kube {

struct TransportOptions {
  // A request (headers and body) that shows no progress for this long fails with DeadlineExceeded.
  std::chrono::seconds requestTimeout{30};
  // A watch stream with no byte for this long is treated as dead. The API server sends bookmarks about
  // every minute when asked to, so this must be comfortably longer.
  std::chrono::seconds streamIdleTimeout{150};
  // The most of one response body the operator holds; a larger one fails with kBodyTooLarge (read no
  // further). A list page of 500 objects of 32 KiB fits; the watcher halves its page until a page fits.
  std::size_t maxBodyBytes = 16 * 1024 * 1024;
  // The most of one watch event line held; a longer one reaches the handler cut (StreamLine::cut). The API
  // server stores objects up to 1.5 MiB (etcd's default request limit) and takes requests up to 3 MiB.
  std::size_t maxLineBytes = 4 * 1024 * 1024;
};

// Transport over cpprestsdk (Boost.Asio + OpenSSL). Connections are pooled per client and reused.
// The server is always verified: against the configured CA only (as client-go does), or the system's trust
// store when none is given.
class CppRestTransport final : public Transport {
 public:
  static Result<std::unique_ptr<CppRestTransport>> create(const ClusterConfig& config,
                                                          TransportOptions options = {});

  struct Clients;
  // Only create() can make the key, so only create() constructs (with make_unique).
  class ConstructionKey {
    friend class CppRestTransport;
    ConstructionKey() = default;
  };
  CppRestTransport(ConstructionKey, std::unique_ptr<Clients> clients, TransportOptions options);
  ~CppRestTransport() override;

  Result<HttpResponse> send(const HttpRequest& request, std::stop_token stop = {}) override;
  Result<HttpResponse> stream(const HttpRequest& request, const LineHandler& onLine,
                              std::stop_token stop = {}) override;

 private:
  std::unique_ptr<Clients> clients_;
  TransportOptions options_;
};

// Checks that PEM material parses (certificate chain, private key, and that they belong together) so that a
// bad kubeconfig fails at start-up with a clear message instead of at the first TLS handshake.
Status validateTlsMaterial(const ClusterConfig& config);

// cpprestsdk loads OpenSSL's default CA file (SSL_CERT_FILE; on Debian the whole system bundle, about 140
// certificates) into every new connection's context before the transport puts the configured CA in its place:
// some 10 ms of CPU per connection, paid for each of the dozen a restart opens at once. A process whose API
// server configuration names a CA, and whose other TLS clients bring their own roots (gRPC does), calls this
// once at start, before its threads read the environment: it points SSL_CERT_FILE at /dev/null (whatever
// the environment set it to), so nothing is loaded that no connection would use. Whoever else in the process
// wants the system's trust still finds it through OpenSSL's certificate directory (SSL_CERT_DIR), read
// certificate by certificate on demand. Returns whether it changed the environment.
bool skipDefaultCaFileLoads(const ClusterConfig& config);
// The same whatever the configuration: for a process every API server client of which is given its
// cluster's CA (the benches' own).
bool skipDefaultCaFileLoads();

}  // namespace ipu::kube
