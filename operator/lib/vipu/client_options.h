#pragma once

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>

#include "common/clock.h"
#include "vipu/backoff.h"

namespace ipu::vipu {

// TLS for controllers that require it. Files hold PEM.
struct TlsOptions {
  std::string caCertFile;      // roots that sign the controller's certificate; empty = the system's roots
  std::string clientCertFile;  // for controllers that check client certificates (needs clientKeyFile)
  std::string clientKeyFile;
  std::string serverNameOverride;  // when the certificate names another host than the endpoint (IP endpoints)
};

struct RetryPolicy {
  int maxAttempts = 5;  // attempts per call, the first included; only UNAVAILABLE is retried
  BackoffPolicy backoff;
};

struct ClientOptions {
  std::string name = "default";                  // the controller's name in the registry and in messages
  std::string endpoint = "127.0.0.1:8090";       // host:port
  std::chrono::milliseconds callTimeout{10000};  // deadline of each attempt
  RetryPolicy retry;
  std::optional<TlsOptions> tls;
  // Retries wait on this clock (tests drive it by hand).
  Clock* clock = &Clock::real();
  // A fence: once it fires every call ends with Cancelled, a call in flight included (a retry's wait too),
  // and none starts. A stopping operator is never held up by a controller that does not answer, and one
  // that lost its leadership cannot act on partitions a successor now manages.
  std::stop_token stop;
};

}  // namespace ipu::vipu
