#pragma once

#include <string>
#include <vector>

#include "vipu/topology.h"
#include "vipu/vipu_types.h"

// What vipu-ctl prints: aligned text for people, JSON (--json) for scripts. JSON field names follow the
// protocol's (snake_case), enums by their protocol names.
namespace ipu::vipu::ctl {

std::string partitionsText(const std::vector<Partition>& partitions);
std::string partitionsJson(const std::vector<Partition>& partitions);
std::string statusText(const PartitionStatus& status);
std::string statusJson(const PartitionStatus& status);
std::string ipuofText(const IpuofConfig& config);
std::string ipuofJson(const IpuofConfig& config);
std::string attributesText(const std::vector<AgentIpuAttributes>& agents);
std::string attributesJson(const std::vector<AgentIpuAttributes>& agents);
// {"partition_id": id, "ready_state": "PS_ACTIVE" when waited for, else "PS_PENDING"}
std::string createdJson(const std::string& id, bool active);
// One line per ILD: '.' free, '#' taken, plus the free-space summary.
std::string occupancyText(const Topology& topology, const std::vector<Partition>& partitions);

// "ILD 0 IPUs 0-15" for a partition's IPU list ("-" when empty, "<n> IPUs" when not one block).
std::string ipusText(const std::vector<PartitionIpu>& ipus);

}  // namespace ipu::vipu::ctl
