#pragma once

#include <vector>

#include "common/result.h"
#include "vipu/topology.h"
#include "vipu/vipu_types.h"

namespace ipu::vipu {

// Attribute names this project reads from ListIPUAttributes (vipu-sim reports them for every IPU).
inline constexpr const char* kAttrClusterId = "cluster_id";
inline constexpr const char* kAttrIldId = "ild_id";
inline constexpr const char* kAttrTopologyId = "topology_id";

// The cluster's topology from ListIPUAttributes of every agent: ILD ids 0..n-1, each with the same
// power-of-two number of IPUs, topology ids 0..size-1, one cluster id. A controller that does not report
// these attributes gets an error that says which one is missing; give such a controller its topology
// explicitly.
Result<Topology> topologyFromAttributes(const std::vector<AgentIpuAttributes>& agents);

}  // namespace ipu::vipu
