#include "vipu-sim/sim_config.h"

#include <charconv>
#include <set>

namespace ipu::vipu::sim {
namespace {

Result<std::uint32_t> parseIld(std::string_view text, std::string_view allocation, const Topology& topology) {
  std::uint32_t ild = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), ild);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return makeError(ErrorCode::kInvalidArgument, "--allocation " + std::string(allocation) + ": '" +
                                                      std::string(text) + "' is not an ILD number");
  }
  if (ild >= topology.ildCount()) {
    return makeError(ErrorCode::kInvalidArgument, "--allocation " + std::string(allocation) + ": ILD " +
                                                      std::to_string(ild) + " does not exist in " +
                                                      topology.describe());
  }
  return ild;
}

}  // namespace

Result<SimAllocation> parseAllocation(std::string_view text, const Topology& topology) {
  const auto equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0 || equals + 1 == text.size()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--allocation '" + std::string(text) + "' is not of the form ID=ILDS (e.g. team-a=0-1)");
  }
  SimAllocation allocation{std::string(text.substr(0, equals)), {}};
  std::set<std::uint32_t> ilds;
  std::string_view rest = text.substr(equals + 1);
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const auto dash = item.find('-');
    Result<std::uint32_t> first = parseIld(item.substr(0, dash), text, topology);
    if (!first) return first.error();
    std::uint32_t last = *first;
    if (dash != std::string_view::npos) {
      Result<std::uint32_t> parsedLast = parseIld(item.substr(dash + 1), text, topology);
      if (!parsedLast) return parsedLast.error();
      last = *parsedLast;
      if (last < *first) {
        return makeError(ErrorCode::kInvalidArgument, "--allocation " + std::string(text) + ": range '" +
                                                          std::string(item) + "' runs backwards");
      }
    }
    for (std::uint32_t ild = *first; ild <= last; ++ild) ilds.insert(ild);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  allocation.ilds.assign(ilds.begin(), ilds.end());
  return allocation;
}

Result<Topology> SimConfig::topology() const {
  Result<Topology> preset = Topology::forPod(pod, clusterId);
  if (!preset) return preset.error();
  return Topology::create(clusterId, ilds.value_or(preset->ildCount()), ildSize.value_or(preset->ildSize()));
}

Result<std::vector<SimAllocation>> SimConfig::allocationList(const Topology& topology) const {
  std::vector<SimAllocation> result;
  std::set<std::uint32_t> used;
  std::set<std::string> names;
  for (const std::string& text : allocations) {
    Result<SimAllocation> allocation = parseAllocation(text, topology);
    if (!allocation) return allocation.error();
    if (!names.insert(allocation->id).second) {
      return makeError(ErrorCode::kInvalidArgument, "--allocation " + allocation->id + " is given twice");
    }
    for (std::uint32_t ild : allocation->ilds) {
      if (!used.insert(ild).second) {
        return makeError(ErrorCode::kInvalidArgument,
                         "--allocation: ILD " + std::to_string(ild) +
                             " is in two allocations; allocations never share IPUs");
      }
    }
    result.push_back(std::move(*allocation));
  }
  return result;
}

SimBehaviour SimConfig::behaviour() const {
  SimBehaviour behaviour;
  behaviour.activationDelay = std::chrono::milliseconds(activationDelayMs);
  behaviour.resetDuration = std::chrono::milliseconds(resetDurationMs);
  return behaviour;
}

FaultOptions SimConfig::faults() const {
  FaultOptions options;
  options.latency = std::chrono::milliseconds(latencyMs);
  options.createFailureRate = createFailureRate;
  options.errorPartitions.insert(errorPartitions.begin(), errorPartitions.end());
  options.errorRate = errorRate;
  options.seed = seed;
  return options;
}

Result<std::optional<ServerTls>> SimConfig::tls() const {
  if (tlsCert.empty() && tlsKey.empty()) {
    if (!tlsClientCa.empty()) {
      return makeError(ErrorCode::kInvalidArgument, "--tls-client-ca needs --tls-cert and --tls-key");
    }
    return std::optional<ServerTls>();
  }
  if (tlsCert.empty() || tlsKey.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "TLS needs both --tls-cert and --tls-key");
  }
  return std::optional<ServerTls>(ServerTls{tlsCert, tlsKey, tlsClientCa});
}

}  // namespace ipu::vipu::sim
