#pragma once

#include <string>

#include "vipu/topology.h"
#include "vipu/vipu_types.h"

namespace ipu::vipu {

// POPLAR_TARGET_OPTIONS for processes that use `partition`, a JSON object of strings:
//   ipuLinkDomainSize     IPUs of the partition inside one ILD: min(partition size, ILD size). A partition
//   smaller
//                         than its ILD is its own link domain; a larger one spans whole ILDs of ILD-size
//                         IPUs.
//   ipuLinkConfiguration  from the partition's routing: IRT_SWNC / IRT_RINGSWNC -> "slidingWindow",
//                         IRT_BTNC -> "barleyTwist", otherwise "default".
//   ipuLinkTopology       "torus" when the partition holds a whole ILD of 64 IPUs (a POD64 ILD is a 2D torus)
//   or
//                         uses ring routing (IRT_RINGSWNC), otherwise "mesh".
//   gatewayMode           "true" when the partition spans more than one ILD (GW-Links join them) or the ILD
//   has
//                         64 IPUs or more, otherwise "false".
//   instanceSize          the partition size.
// Keys appear in that order. E.g. a 64-IPU SWNC partition on a POD64:
//   {"ipuLinkDomainSize":"64","ipuLinkConfiguration":"slidingWindow","ipuLinkTopology":"torus",
//    "gatewayMode":"true","instanceSize":"64"}
std::string poplarTargetOptions(const Partition& partition, const Topology& topology);

}  // namespace ipu::vipu
