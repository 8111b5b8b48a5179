#include "vipu-sim/state_file.h"

#include <set>

#include <nlohmann/json.hpp>

#include "vipu-sim/atomic_file.h"
#include "vipu/ipu_set.h"
#include "vipu/partition_id.h"

namespace ipu::vipu::sim {
namespace {

using nlohmann::json;
constexpr const char* kFormatName = "vipu-sim-state";

json partitionToJson(const SimPartition& partition) {
  return json{{"id", partition.id},
              {"allocation_id", partition.allocationId},
              {"first_ipu", partition.block.first},
              {"size", partition.block.size},
              {"num_gcds", partition.numGcds},
              {"num_replicas", partition.numReplicas},
              {"ipulink_routing_type", static_cast<std::uint32_t>(partition.ipuLinkRouting)},
              {"sync_type", static_cast<std::uint32_t>(partition.syncType)},
              {"gw_routing_type", static_cast<std::uint32_t>(partition.gatewayRouting)},
              {"reconfigurable", partition.reconfigurable},
              {"disable_auto_reset", partition.disableAutoReset},
              {"created_at_ms", partition.createdAtMs},
              {"active_at_ms", partition.activeAtMs},
              {"reset_until_ms", partition.resetUntilMs},
              {"faulted", partition.faulted},
              {"errors", partition.errors},
              {"reset_count", partition.resetCount}};
}

// nlohmann's checked accessors throw json::exception with a useful text ("type must be number, but is
// string"); parse() catches them and adds where they happened.
SimPartition partitionFromJson(const json& item) {
  SimPartition partition;
  partition.id = item.at("id").get<std::string>();
  partition.allocationId = item.at("allocation_id").get<std::string>();
  partition.block.first = item.at("first_ipu").get<std::uint32_t>();
  partition.block.size = item.at("size").get<std::uint32_t>();
  partition.numGcds = item.at("num_gcds").get<std::uint32_t>();
  partition.numReplicas = item.at("num_replicas").get<std::uint32_t>();
  partition.ipuLinkRouting =
      static_cast<IpuLinkRouting>(item.at("ipulink_routing_type").get<std::uint32_t>());
  partition.syncType = static_cast<SyncType>(item.at("sync_type").get<std::uint32_t>());
  partition.gatewayRouting = static_cast<GatewayRouting>(item.at("gw_routing_type").get<std::uint32_t>());
  partition.reconfigurable = item.at("reconfigurable").get<bool>();
  partition.disableAutoReset = item.at("disable_auto_reset").get<bool>();
  partition.createdAtMs = item.at("created_at_ms").get<std::int64_t>();
  partition.activeAtMs = item.at("active_at_ms").get<std::int64_t>();
  partition.resetUntilMs = item.at("reset_until_ms").get<std::int64_t>();
  partition.faulted = item.at("faulted").get<bool>();
  partition.errors = item.at("errors").get<std::vector<std::string>>();
  partition.resetCount = item.at("reset_count").get<std::uint32_t>();
  return partition;
}

Status checkPartition(const SimState& state, const SimPartition& partition, IpuSet& taken) {
  if (Status id = validatePartitionId(partition.id); !id) return id;
  const SimAllocation* allocation = state.findAllocation(partition.allocationId);
  if (allocation == nullptr) {
    return makeError(ErrorCode::kInvalidArgument,
                     "its allocation '" + partition.allocationId + "' does not exist");
  }
  const IpuBlock& block = partition.block;
  const Topology& topology = state.topology;
  if (!isPowerOfTwo(block.size) || block.size > topology.maxPartitionSize() ||
      block.first % block.size != 0 || block.end() > topology.totalIpus()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "IPUs [" + std::to_string(block.first) + ", +" + std::to_string(block.size) +
                         ") are not an aligned power-of-two block of " + topology.describe());
  }
  for (std::uint32_t ild : ildsOfBlock(topology, block)) {
    if (!allocation->containsIld(ild)) {
      return makeError(ErrorCode::kInvalidArgument, "it uses ILD " + std::to_string(ild) +
                                                        ", outside its allocation '" + allocation->id + "'");
    }
  }
  if (taken.intersects(block)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "it overlaps another partition (" + describeBlock(topology, block) + ")");
  }
  taken.insert(block);
  if (!isPowerOfTwo(partition.numGcds) || partition.numGcds > block.size) {
    return makeError(ErrorCode::kInvalidArgument, "num_gcds " + std::to_string(partition.numGcds) +
                                                      " is not a power of two dividing its size");
  }
  if (partition.createdAtMs < 0 || partition.activeAtMs < partition.createdAtMs ||
      partition.resetUntilMs < 0) {
    return makeError(ErrorCode::kInvalidArgument, "its timestamps are inconsistent");
  }
  return {};
}

Result<SimState> parseState(const json& document) {
  if (!document.is_object())
    return makeError(ErrorCode::kInvalidArgument, "the document is not a JSON object");
  if (document.value("format", "") != kFormatName) {
    return makeError(ErrorCode::kInvalidArgument, std::string("\"format\" is not \"") + kFormatName + "\"");
  }
  const int version = document.at("version").get<int>();
  if (version != StateFile::kFormatVersion) {
    return makeError(ErrorCode::kInvalidArgument, "format version " + std::to_string(version) +
                                                      " is not supported (this vipu-sim reads version " +
                                                      std::to_string(StateFile::kFormatVersion) + ")");
  }
  Result<Topology> topology =
      Topology::create(document.at("cluster_id").get<std::string>(), document.at("ilds").get<std::uint32_t>(),
                       document.at("ild_size").get<std::uint32_t>());
  if (!topology) return topology.error();
  SimState state{*topology, {}, {}};
  std::set<std::uint32_t> allocatedIlds;
  for (const json& item : document.at("allocations")) {
    SimAllocation allocation{item.at("id").get<std::string>(),
                             item.at("ilds").get<std::vector<std::uint32_t>>()};
    if (allocation.id.empty() || state.findAllocation(allocation.id) != nullptr) {
      return makeError(ErrorCode::kInvalidArgument,
                       "allocation '" + allocation.id + "' is empty-named or repeated");
    }
    std::set<std::uint32_t> ilds(allocation.ilds.begin(), allocation.ilds.end());
    if (allocation.ilds.empty() || ilds.size() != allocation.ilds.size() ||
        *ilds.rbegin() >= state.topology.ildCount()) {
      return makeError(ErrorCode::kInvalidArgument,
                       "allocation '" + allocation.id +
                           "' lists no ILDs, repeats one, or names one outside " + state.topology.describe());
    }
    for (std::uint32_t ild : ilds) {
      if (!allocatedIlds.insert(ild).second) {
        return makeError(ErrorCode::kInvalidArgument,
                         "ILD " + std::to_string(ild) + " is in two allocations");
      }
    }
    allocation.ilds.assign(ilds.begin(), ilds.end());
    state.allocations.push_back(std::move(allocation));
  }
  IpuSet taken(state.topology.totalIpus());
  std::size_t index = 0;
  for (const json& item : document.at("partitions")) {
    SimPartition partition;
    try {
      partition = partitionFromJson(item);
    } catch (const json::exception& error) {
      return makeError(ErrorCode::kInvalidArgument,
                       "partition #" + std::to_string(index) + ": " + error.what());
    }
    if (Status valid = checkPartition(state, partition, taken); !valid) {
      return makeError(
          ErrorCode::kInvalidArgument,
          "partition '" + partition.id + "' (#" + std::to_string(index) + "): " + valid.error().message);
    }
    if (!state.partitions.emplace(partition.id, partition).second) {
      return makeError(ErrorCode::kInvalidArgument, "partition id '" + partition.id + "' appears twice");
    }
    ++index;
  }
  return state;
}

}  // namespace

std::string StateFile::serialize(const SimState& state) {
  json allocations = json::array();
  for (const SimAllocation& allocation : state.allocations) {
    allocations.push_back(json{{"id", allocation.id}, {"ilds", allocation.ilds}});
  }
  json partitions = json::array();
  for (const auto& [id, partition] : state.partitions) partitions.push_back(partitionToJson(partition));
  const json document{{"format", kFormatName},
                      {"version", kFormatVersion},
                      {"cluster_id", state.topology.clusterId()},
                      {"ilds", state.topology.ildCount()},
                      {"ild_size", state.topology.ildSize()},
                      {"allocations", allocations},
                      {"partitions", partitions}};
  return document.dump(2) + "\n";
}

Result<SimState> StateFile::parse(std::string_view text, std::string_view origin) {
  const std::string where = "state file '" + std::string(origin) + "'";
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return makeError(
        ErrorCode::kInvalidArgument,
        where + " is empty (vipu-sim never writes an empty state; restore it or delete it to start over)");
  }
  try {
    Result<SimState> state = parseState(json::parse(text));
    if (!state) return makeError(ErrorCode::kInvalidArgument, where + ": " + state.error().message);
    return state;
  } catch (const json::exception& error) {
    return makeError(ErrorCode::kInvalidArgument, where + " is damaged: " + error.what());
  }
}

Result<std::optional<SimState>> StateFile::load() const {
  Result<std::string> text = readWholeFile(path_);
  if (!text) {
    if (text.error().code == ErrorCode::kNotFound) return std::optional<SimState>();
    return text.error();
  }
  Result<SimState> state = parse(*text, path_);
  if (!state) return state.error();
  return std::optional<SimState>(std::move(*state));
}

Status StateFile::save(const SimState& state) const {
  return writeFileAtomically(path_, serialize(state));
}

}  // namespace ipu::vipu::sim
