#include "vipu/poplar_target_options.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

namespace ipu::vipu {

std::string poplarTargetOptions(const Partition& partition, const Topology& topology) {
  const std::uint32_t size = partition.size();
  const std::uint32_t domainSize = std::min(size, topology.ildSize());
  std::set<std::uint32_t> ilds;
  for (const PartitionIpu& ipu : partition.spec.ipus) ilds.insert(ipu.ildTopologyId);

  std::string configuration = "default";
  if (partition.spec.ipuLinkRouting == IpuLinkRouting::kSwnc ||
      partition.spec.ipuLinkRouting == IpuLinkRouting::kRingSwnc) {
    configuration = "slidingWindow";
  } else if (partition.spec.ipuLinkRouting == IpuLinkRouting::kBtnc) {
    configuration = "barleyTwist";
  }
  const bool torus = domainSize >= 64 || partition.spec.ipuLinkRouting == IpuLinkRouting::kRingSwnc;
  const bool gateway = ilds.size() > 1 || topology.ildSize() >= 64;

  nlohmann::ordered_json options;
  options["ipuLinkDomainSize"] = std::to_string(domainSize);
  options["ipuLinkConfiguration"] = configuration;
  options["ipuLinkTopology"] = torus ? "torus" : "mesh";
  options["gatewayMode"] = gateway ? "true" : "false";
  options["instanceSize"] = std::to_string(size);
  return options.dump();
}

}  // namespace ipu::vipu
