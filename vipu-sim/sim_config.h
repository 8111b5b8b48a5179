#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "vipu-sim/fault_injector.h"
#include "vipu-sim/sim_state.h"
#include "vipu-sim/simulated_pod.h"
#include "vipu/grpc_server.h"
#include "vipu/topology.h"

namespace ipu::vipu::sim {

// Everything vipu-sim can be told, from flags and an optional config file (flags win). Defaults here are
// the defaults --help shows.
struct SimConfig {
  std::string configFile;
  std::string listen = "127.0.0.1:8090";
  std::string pod = "pod64";
  std::optional<std::uint32_t> ilds;     // overrides the POD's
  std::optional<std::uint32_t> ildSize;  // overrides the POD's
  std::string clusterId = "vipu-sim";
  std::vector<std::string> allocations;  // "ID=ILDS", ILDS like "0", "0-1" or "0,2"
  std::string stateFile;                 // empty = memory only
  std::int64_t activationDelayMs = 1000;
  std::int64_t resetDurationMs = 500;
  std::int64_t latencyMs = 0;
  double createFailureRate = 0.0;
  std::vector<std::string> errorPartitions;
  double errorRate = 0.0;
  std::uint64_t seed = 1;
  std::string portFile;
  std::string tlsCert;
  std::string tlsKey;
  std::string tlsClientCa;
  bool quiet = false;

  Result<Topology> topology() const;
  Result<std::vector<SimAllocation>> allocationList(const Topology& topology) const;
  SimBehaviour behaviour() const;
  FaultOptions faults() const;
  // nullopt when neither certificate nor key is given; an error when only one of them is.
  Result<std::optional<ServerTls>> tls() const;
};

// "team-a=0-1" -> {team-a, [0, 1]}; checks the ILDs exist.
Result<SimAllocation> parseAllocation(std::string_view text, const Topology& topology);

}  // namespace ipu::vipu::sim
