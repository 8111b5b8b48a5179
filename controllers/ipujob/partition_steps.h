#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "admission/admitter.h"
#include "admission/vipu_controllers.h"
#include "admission/vipu_inventory.h"
#include "api/ipujob.h"
#include "common/result.h"
#include "ipujob/job_pass.h"
#include "kube/event_recorder.h"

namespace ipu::controllers {

// Where a job's recorded partitions stand in V-IPU.
struct PartitionsState {
  enum class Kind {
    kActive,             // every partition PS_ACTIVE: pods may start
    kActivating,         // created (now or before), not all active yet: poll
    kNoLongerFits,       // recorded, never created, and the IPUs are gone (taken while no process ran)
    kError,              // a partition is in error
    kControllerUnknown,  // the partitions are on a V-IPU controller the operator is not configured with
  };
  Kind kind = Kind::kActivating;
  std::string message;  // kError: which partition; kControllerUnknown: which controller
  const VipuTarget* target = nullptr;
  std::shared_ptr<const vipu::PartitionPlanner> planner;
  std::map<std::string, vipu::Partition> byId;  // kActive: V-IPU's view of each recorded partition
};

// A job's V-IPU partitions: created where admission planned them (ids are in status first), waited on,
// reset for a restart, released at the end. Every step is idempotent: an id V-IPU already has is ours.
class PartitionSteps {
 public:
  PartitionSteps(VipuInventory& inventory, Admitter& admitter, kube::EventRecorder& events)
      : controllers_(inventory.controllers()), inventory_(inventory), admitter_(admitter), events_(events) {}

  // Creates the recorded partitions V-IPU lacks (where the admission in flight planned them, or planned
  // again after a restart of the operator) and reports whether all are active. FailedPrecondition when the
  // job's controller is not configured.
  Result<PartitionsState> ensure(JobPass& pass, const api::IpuJobSpec& spec);
  // ResetPartition on each recorded partition (a new attempt starts on clean IPUs).
  Status reset(const JobPass& pass);
  // RemovePartition on each held partition; marks them Released in the pass's status.
  Status release(JobPass& pass);

 private:
  // Creates each partition where `admission` placed its instance, and tells the inventory at once.
  Status create(const JobPass& pass, const VipuTarget& target,
                const std::vector<api::PartitionRecord>& partitions, const Admission& admission);
  Status createMissing(JobPass& pass, const api::IpuJobSpec& spec, const VipuTarget& target,
                       const std::vector<api::PartitionRecord>& missing, bool& fits);

  VipuControllers& controllers_;
  VipuInventory& inventory_;
  Admitter& admitter_;
  kube::EventRecorder& events_;
};

// "ild0:0-3": where a partition's IPUs are, for people reading status.
std::string describeIpus(const vipu::Topology& topology, const vipu::IpuBlock& block);

}  // namespace ipu::controllers
