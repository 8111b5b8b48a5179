#include "vipu-sim/hardware_model.h"

#include <cstdio>

#include "vipu/topology_discovery.h"

namespace ipu::vipu::sim {

std::string agentName(std::uint32_t ild, std::uint32_t machine) {
  char name[32];
  std::snprintf(name, sizeof name, "ag-%u-%02u", ild, machine);
  return name;
}

std::string machineAddress(std::uint32_t ild, std::uint32_t machine) {
  return "10.1." + std::to_string(ild) + "." + std::to_string(machine + 1);
}

std::string ipuSerial(const Topology& topology, std::uint32_t globalIpu) {
  return "SIM-" + topology.clusterId() + "-" + std::to_string(globalIpu);
}

std::map<std::string, std::string> ipuAttributes(const Topology& topology, std::uint32_t globalIpu,
                                                 const std::string& partitionId) {
  const std::uint32_t ild = topology.ildOf(globalIpu);
  const std::uint32_t machine = topology.machineOf(globalIpu);
  return {{kAttrClusterId, topology.clusterId()},
          {kAttrIldId, std::to_string(ild)},
          {kAttrTopologyId, std::to_string(topology.topologyIdOf(globalIpu))},
          {"machine", std::to_string(machine)},
          {"ipu_index", std::to_string(globalIpu % Topology::kIpusPerMachine)},
          {"ipu_arch", "ipu2"},
          {"serial", ipuSerial(topology, globalIpu)},
          {"ip", machineAddress(ild, machine)},
          {"partition_id", partitionId}};
}

IpuofDevice ipuofDevice(const Topology& topology, std::uint32_t first, std::uint32_t routingId,
                        std::uint32_t deviceId) {
  const std::uint32_t global = first + routingId;
  const std::uint32_t ild = topology.ildOf(global);
  IpuofDevice device;
  device.ip = machineAddress(ild, topology.machineOf(global));
  device.serverPort = kIpuofServerPort;
  device.rdmaPort = kIpuofRdmaPort;
  device.deviceId = deviceId;
  device.ipulinkSegmentId = ild - topology.ildOf(first);
  device.routingId = routingId;
  device.ipuArchId = kIpuArchId;
  device.ipuId = global % Topology::kIpusPerMachine;
  device.chipId = ipuSerial(topology, global);
  device.gwswVersion = kSoftwareVersion;
  device.ipumSwVersion = kSoftwareVersion;
  return device;
}

}  // namespace ipu::vipu::sim
