#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace ipu::runtime::remote {

// Connections the agent holds before they are authenticated cost it a socket and TLS state each (no process:
// it forks only for an authenticated Run). Any pod of the cluster can connect, so their number is bounded:
// 32 at once is far more than an instance's launch and mpirun's daemons open at one time (a few per peer),
// and a few hundred KB of TLS state; 4 per source address keeps one misbehaving pod from taking them all.
inline constexpr std::size_t kDefaultMaxUnauthenticated = 32;
inline constexpr std::size_t kDefaultMaxUnauthenticatedPerSource = 4;
// Overrides (tests, unusual clusters): whole numbers 1-4096.
inline constexpr const char* kEnvMaxUnauthenticated = "IPU_RUNTIME_AGENT_MAX_UNAUTHENTICATED";
inline constexpr const char* kEnvMaxUnauthenticatedPerSource =
    "IPU_RUNTIME_AGENT_MAX_UNAUTHENTICATED_PER_SOURCE";

struct ConnectionLimits {
  std::size_t total = kDefaultMaxUnauthenticated;
  std::size_t perSource = kDefaultMaxUnauthenticatedPerSource;
};

// The defaults, or the environment's overrides (LaunchError naming the variable when one is malformed).
ConnectionLimits connectionLimitsFromEnvironment();

// Counts the unauthenticated connections held, in total and per source address, against the limits.
class ConnectionLimiter {
 public:
  explicit ConnectionLimiter(ConnectionLimits limits) : limits_(limits) {}

  // Whether one more from `source` fits; if so it is counted until release(source).
  bool admit(const std::string& source);
  void release(const std::string& source);
  std::size_t held() const { return held_; }

 private:
  ConnectionLimits limits_;
  std::size_t held_ = 0;
  std::map<std::string, std::size_t> perSource_;
};

// The connections the agent refused, for its log and its termination message.
struct RefusedConnections {
  std::uint64_t overTheBound = 0;
  std::uint64_t failedHandshake = 0;  // including handshakes that did not finish in time

  std::uint64_t total() const { return overTheBound + failedHandshake; }
  // "refused 1234 connection(s) (over the bound: 1200, failed handshake: 34)"
  std::string describe() const;
};

}  // namespace ipu::runtime::remote
