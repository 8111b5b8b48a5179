#include "vipu-ctl/output_format.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "vipu/buddy_map.h"
#include "vipu/ipu_set.h"

namespace ipu::vipu::ctl {
namespace {

using nlohmann::ordered_json;

std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t column = 0; column < row.size(); ++column) {
      widths[column] = std::max(widths[column], row[column].size());
    }
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t column = 0; column < row.size(); ++column) {
      line += row[column];
      if (column + 1 < row.size()) line += std::string(widths[column] - row[column].size() + 2, ' ');
    }
    text += line + "\n";
  }
  return text;
}

ordered_json ipuJson(const PartitionIpu& ipu) {
  return ordered_json{{"ipulink_domain_topology_id", ipu.ildTopologyId},
                      {"ipulink_domain_routing_id", ipu.ildRoutingId},
                      {"topology_id", ipu.topologyId},
                      {"routing_id", ipu.routingId}};
}

}  // namespace

std::string ipusText(const std::vector<PartitionIpu>& ipus) {
  if (ipus.empty()) return "-";
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sorted;
  for (const PartitionIpu& ipu : ipus) sorted.emplace_back(ipu.ildTopologyId, ipu.topologyId);
  std::sort(sorted.begin(), sorted.end());
  const auto [firstIld, firstId] = sorted.front();
  const auto [lastIld, lastId] = sorted.back();
  if (firstIld == lastIld && lastId - firstId + 1 == sorted.size()) {
    if (sorted.size() == 1) return "ILD " + std::to_string(firstIld) + " IPU " + std::to_string(firstId);
    return "ILD " + std::to_string(firstIld) + " IPUs " + std::to_string(firstId) + "-" +
           std::to_string(lastId);
  }
  if (firstIld != lastIld) {
    return "ILDs " + std::to_string(firstIld) + "-" + std::to_string(lastIld) + " (" +
           std::to_string(sorted.size()) + " IPUs)";
  }
  return std::to_string(sorted.size()) + " IPUs";
}

std::string partitionsText(const std::vector<Partition>& partitions) {
  std::vector<std::vector<std::string>> rows{{"ID", "SIZE", "STATE", "CLUSTER", "ALLOCATION", "IPUS"}};
  for (const Partition& partition : partitions) {
    rows.push_back({partition.id, std::to_string(partition.size()), toString(partition.readyState),
                    partition.spec.clusterId, partition.spec.allocationId, ipusText(partition.spec.ipus)});
  }
  return table(rows);
}

std::string partitionsJson(const std::vector<Partition>& partitions) {
  ordered_json list = ordered_json::array();
  for (const Partition& partition : partitions) {
    ordered_json ipus = ordered_json::array();
    for (const PartitionIpu& ipu : partition.spec.ipus) ipus.push_back(ipuJson(ipu));
    list.push_back(ordered_json{{"id", partition.id},
                                {"size", partition.size()},
                                {"ready_state", toString(partition.readyState)},
                                {"cluster_id", partition.spec.clusterId},
                                {"allocation_id", partition.spec.allocationId},
                                {"num_gcds", partition.spec.numGcds},
                                {"num_ipulink_segments", partition.spec.numIpulinkSegments},
                                {"num_replicas", partition.spec.numReplicas},
                                {"ipulink_routing_type", toString(partition.spec.ipuLinkRouting)},
                                {"ipuof_server_version", partition.ipuofServerVersion},
                                {"ipus", ipus}});
  }
  return list.dump(2) + "\n";
}

std::string statusText(const PartitionStatus& status) {
  std::string text = status.partitionId + ": " + toString(status.readyState) + " (" +
                     toString(status.operationState) + ")\n";
  for (const std::string& error : status.errors) text += "  error: " + error + "\n";
  return text;
}

std::string statusJson(const PartitionStatus& status) {
  ordered_json json{{"partition_id", status.partitionId},
                    {"ready_state", toString(status.readyState)},
                    {"operation_state", toString(status.operationState)},
                    {"errors", status.errors},
                    {"max_auto_reset_retries", status.maxAutoResetRetries},
                    {"auto_reset_retry_count", status.autoResetRetryCount}};
  return json.dump(2) + "\n";
}

std::string ipuofText(const IpuofConfig& config) {
  std::string text;
  for (std::size_t gcd = 0; gcd < config.gcds.size(); ++gcd) {
    const auto id = config.gcds[gcd].attributes.find("gcd_id");
    text += "GCD " + (id != config.gcds[gcd].attributes.end() ? id->second : std::to_string(gcd)) + ":\n";
    std::vector<std::vector<std::string>> rows{
        {"  DEVICE", "ROUTING", "SEGMENT", "IP", "PORT", "IPU", "CHIP"}};
    for (const IpuofDevice& device : config.gcds[gcd].devices) {
      rows.push_back({"  " + std::to_string(device.deviceId), std::to_string(device.routingId),
                      std::to_string(device.ipulinkSegmentId), device.ip, std::to_string(device.serverPort),
                      std::to_string(device.ipuId), device.chipId});
    }
    text += table(rows);
  }
  return text;
}

std::string ipuofJson(const IpuofConfig& config) {
  ordered_json gcds = ordered_json::array();
  for (const GcdConfig& gcd : config.gcds) {
    ordered_json devices = ordered_json::array();
    for (const IpuofDevice& device : gcd.devices) {
      devices.push_back(ordered_json{{"ip", device.ip},
                                     {"server_port", device.serverPort},
                                     {"rdma_port", device.rdmaPort},
                                     {"device_id", device.deviceId},
                                     {"ipulink_segment_id", device.ipulinkSegmentId},
                                     {"routing_id", device.routingId},
                                     {"ipu_arch_id", device.ipuArchId},
                                     {"ipu_id", device.ipuId},
                                     {"chip_id", device.chipId},
                                     {"gwsw_version", device.gwswVersion},
                                     {"ipum_sw_version", device.ipumSwVersion}});
    }
    gcds.push_back(ordered_json{{"devices", devices}, {"attributes", gcd.attributes}});
  }
  ordered_json json{{"ipulink_routing_type", toString(config.ipuLinkRouting)},
                    {"num_ipulink_segments", config.numIpulinkSegments},
                    {"ipuof_server_version", config.ipuofServerVersion},
                    {"gcd_configs", gcds}};
  return json.dump(2) + "\n";
}

std::string attributesText(const std::vector<AgentIpuAttributes>& agents) {
  std::string text;
  for (const AgentIpuAttributes& agent : agents) {
    text += agent.agent + ":\n";
    for (const auto& [ipu, attributes] : agent.ipus) {
      text += "  " + std::to_string(ipu) + ":";
      for (const auto& [key, value] : attributes) text += " " + key + "=" + value;
      text += "\n";
    }
  }
  return text;
}

std::string attributesJson(const std::vector<AgentIpuAttributes>& agents) {
  ordered_json list = ordered_json::array();
  for (const AgentIpuAttributes& agent : agents) {
    ordered_json ipus = ordered_json::object();
    for (const auto& [ipu, attributes] : agent.ipus) ipus[std::to_string(ipu)] = attributes;
    list.push_back(ordered_json{{"agent", agent.agent}, {"ipu_attributes", ipus}});
  }
  return list.dump(2) + "\n";
}

std::string createdJson(const std::string& id, bool active) {
  return ordered_json{{"partition_id", id}, {"ready_state", active ? "PS_ACTIVE" : "PS_PENDING"}}.dump() +
         "\n";
}

std::string occupancyText(const Topology& topology, const std::vector<Partition>& partitions) {
  IpuSet taken = IpuSet::fromPartitions(topology, partitions).valueOr(IpuSet(topology.totalIpus()));
  std::string text = topology.describe() + "\n";
  for (std::uint32_t ild = 0; ild < topology.ildCount(); ++ild) {
    text += "  ILD " + std::to_string(ild) + " ";
    for (std::uint32_t id = 0; id < topology.ildSize(); ++id) {
      if (id > 0 && id % Topology::kIpusPerMachine == 0) text += ' ';
      text += taken.contains(topology.globalIpu(ild, id)) ? '#' : '.';
    }
    text += "\n";
  }
  const BuddyMap map(topology, taken);
  text += "free IPUs: " + std::to_string(map.freeIpus()) + " of " + std::to_string(topology.totalIpus()) +
          ", largest free partition: " + std::to_string(map.largestFreeBlock()) + "\n";
  return text;
}

}  // namespace ipu::vipu::ctl
