#include "vipu/topology_discovery.h"

#include <charconv>
#include <map>
#include <set>
#include <string>

namespace ipu::vipu {
namespace {

Result<std::uint32_t> numberAttribute(const std::map<std::string, std::string>& attributes, const char* name,
                                      const std::string& where) {
  const auto found = attributes.find(name);
  if (found == attributes.end()) {
    return makeError(ErrorCode::kFailedPrecondition, where + " has no '" + name + "' attribute");
  }
  std::uint32_t value = 0;
  const std::string& text = found->second;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return makeError(ErrorCode::kFailedPrecondition,
                     where + " has '" + name + "' = '" + text + "', which is not a number");
  }
  return value;
}

}  // namespace

Result<Topology> topologyFromAttributes(const std::vector<AgentIpuAttributes>& agents) {
  std::string clusterId;
  std::map<std::uint32_t, std::set<std::uint32_t>> ildIpus;
  for (const AgentIpuAttributes& agent : agents) {
    for (const auto& [hardwareId, attributes] : agent.ipus) {
      const std::string where = "IPU " + std::to_string(hardwareId) + " of agent '" + agent.agent + "'";
      const auto cluster = attributes.find(kAttrClusterId);
      if (cluster == attributes.end()) {
        return makeError(ErrorCode::kFailedPrecondition,
                         where + " has no '" + kAttrClusterId + "' attribute");
      }
      if (clusterId.empty()) clusterId = cluster->second;
      if (cluster->second != clusterId) {
        return makeError(ErrorCode::kFailedPrecondition, "the controller reports several clusters ('" +
                                                             clusterId + "', '" + cluster->second + "')");
      }
      Result<std::uint32_t> ild = numberAttribute(attributes, kAttrIldId, where);
      if (!ild) return ild.error();
      Result<std::uint32_t> topologyId = numberAttribute(attributes, kAttrTopologyId, where);
      if (!topologyId) return topologyId.error();
      if (!ildIpus[*ild].insert(*topologyId).second) {
        return makeError(ErrorCode::kFailedPrecondition, "IPU " + std::to_string(*topologyId) + " of ILD " +
                                                             std::to_string(*ild) + " is reported twice");
      }
    }
  }
  if (ildIpus.empty()) return makeError(ErrorCode::kFailedPrecondition, "the controller reports no IPUs");
  const auto ildSize = static_cast<std::uint32_t>(ildIpus.begin()->second.size());
  std::uint32_t expectedIld = 0;
  for (const auto& [ild, ipus] : ildIpus) {
    if (ild != expectedIld) {
      return makeError(ErrorCode::kFailedPrecondition, "ILD " + std::to_string(expectedIld) + " is missing");
    }
    if (ipus.size() != ildSize || *ipus.rbegin() != ildSize - 1) {
      return makeError(ErrorCode::kFailedPrecondition,
                       "ILD " + std::to_string(ild) + " reports " + std::to_string(ipus.size()) +
                           " IPUs with ids up to " + std::to_string(*ipus.rbegin()) + "; expected " +
                           std::to_string(ildSize) + " IPUs numbered from 0 in every ILD");
    }
    ++expectedIld;
  }
  return Topology::create(clusterId, expectedIld, ildSize);
}

}  // namespace ipu::vipu
