#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vipu/buddy_map.h"
#include "vipu/ipu_block.h"
#include "vipu/ipu_set.h"
#include "vipu/topology.h"
#include "vipu/vipu_types.h"

namespace ipu::vipu {

// N partitions of one power-of-two size, placed together or not at all (one per job instance).
struct GangRequest {
  std::uint32_t instances = 1;
  std::uint32_t ipusPerInstance = 0;
};

struct InstancePlacement {
  IpuBlock block;
  std::vector<std::uint32_t> ilds;  // physical ILDs, in order
  std::vector<PartitionIpu> ipus;   // ready for PartitionRequest::ipus
  std::uint32_t numIpulinkSegments = 1;
};

// What the free space looks like, for messages and status.
struct FreeSummary {
  std::uint32_t totalIpus = 0;
  std::uint32_t freeIpus = 0;
  std::uint32_t largestFreeBlock = 0;
  std::uint32_t freeBlocksOfRequestedSize = 0;
};

enum class RefusalReason {
  kInvalidRequest,  // zero instances, or a size that is not a power of two
  kDoesNotFitNow,   // would fit an emptier cluster: wait for partitions to go
  kNeverFits,       // cannot fit even in an empty cluster: fail the job
};

struct PlanRefusal {
  RefusalReason reason = RefusalReason::kInvalidRequest;
  std::string message;
  FreeSummary free;
  std::uint32_t largestPossibleSize = 0;  // the largest partition this cluster can ever hold
};

struct PlanResult {
  std::vector<InstancePlacement> placements;  // one per instance when placed
  std::optional<PlanRefusal> refusal;

  bool placed() const { return !refusal.has_value(); }
};

// Buddy placement of power-of-two partitions over one cluster. Pure and deterministic: the same topology,
// taken IPUs and request give the same answer, and no gRPC is involved.
//   - size <= ILD size: an aligned block of that many IPUs in one ILD (sizes 1-2 stay in one IPU-Machine);
//   - larger: an aligned group of whole ILDs (num_ipulink_segments = number of ILDs).
//   - best fit: each instance goes into the smallest free block that can hold it, lowest address first. For
//     a gang of equal sizes this places all N whenever N disjoint aligned free blocks exist, and it leaves
//     the free space as unfragmented as any single placement could.
class PartitionPlanner {
 public:
  // `unusable`: IPUs that never take part (outside the allocation, broken); they count for "never fits". A
  // set sized for another topology is ignored.
  explicit PartitionPlanner(Topology topology, IpuSet unusable = {});

  PlanResult plan(const IpuSet& taken, const GangRequest& request) const;
  // The free space as plan() sees it, for planning several requests in a row: planInto() places a request in
  // `free` and, when it is placed, marks its blocks taken there. Same answers as plan() on the IPU set,
  // without rebuilding the free map for each request (admission plans a whole queue this way).
  BuddyMap freeMap(const IpuSet& taken) const { return freeMapOf(taken); }
  PlanResult planInto(BuddyMap& free, const GangRequest& request) const;
  FreeSummary summarize(const IpuSet& taken, std::uint32_t requestedSize) const;

  const Topology& topology() const { return topology_; }

 private:
  BuddyMap freeMapOf(const IpuSet& taken) const;

  Topology topology_;
  IpuSet unusable_;
  bool anyUnusable_ = false;
  // The cluster with nothing taken: how many partitions of each size could ever fit ("never fits").
  BuddyMap emptyCluster_;
};

// The CreatePartition request for one planned instance: explicit IPUs plus the cluster id V-IPU requires with
// them.
PartitionRequest makePartitionRequest(std::string id, const Topology& topology,
                                      const InstancePlacement& placement);

}  // namespace ipu::vipu
