#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "vipu/topology.h"
#include "vipu/vipu_types.h"

// The made-up hardware details vipu-sim reports, in one place so that they are consistent and documented:
//   agent (one per IPU-Machine)   "ag-<ild>-<machine>", machine counted inside its ILD, e.g. "ag-1-03"
//   IPU hardware id               the global IPU id, ild * ildSize + topology id
//   IPU-Machine address           10.1.<ild>.<machine + 1>   (host parts start at 1; .0 is a network address)
//   IPUoF server / RDMA ports     50052 / 50053 on every machine
//   serial / chip id              "SIM-<cluster>-<global IPU id>"
namespace ipu::vipu::sim {

inline constexpr std::uint32_t kIpuofServerPort = 50052;
inline constexpr std::uint32_t kIpuofRdmaPort = 50053;
inline constexpr std::uint32_t kIpuArchId = 2;  // Mk2 IPU (GC200)
inline constexpr const char* kSoftwareVersion = "2.6.0-sim";

std::string agentName(std::uint32_t ild, std::uint32_t machine);
std::string machineAddress(std::uint32_t ild, std::uint32_t machine);
std::string ipuSerial(const Topology& topology, std::uint32_t globalIpu);

// The attributes ListIPUAttributes reports for one IPU; `partitionId` empty when free.
std::map<std::string, std::string> ipuAttributes(const Topology& topology, std::uint32_t globalIpu,
                                                 const std::string& partitionId);

// The IPUoF device for the IPU at `routingId` of a partition starting at global IPU `first`.
IpuofDevice ipuofDevice(const Topology& topology, std::uint32_t first, std::uint32_t routingId,
                        std::uint32_t deviceId);

}  // namespace ipu::vipu::sim
