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
#include "ipujob/step_outcome.h"
#include "kube/event_recorder.h"

namespace ipu::controllers {

// Where a job's recorded partitions stand in V-IPU.
struct PartitionsState {
  enum class Kind {
    kActive,             // every partition PS_ACTIVE: pods may start
    kActivating,         // created (now or before), not all active yet: poll (byId complete when none
                         // was created in this call: each is the job's, where status says)
    kNoLongerFits,       // recorded, never created, and the IPUs are gone (taken while no process ran)
    kError,              // a partition is in error
    kControllerUnknown,  // the partitions are on a V-IPU controller the operator is not configured with
    kNotOwned,           // status names a partition this job's identity does not derive (an edited status)
    kLost,               // a partition recorded Active is gone from V-IPU: the attempt on it is lost
    kBlocked,            // a partition of the job's id held by someone else: wait until it is removed
  };
  Kind kind = Kind::kActivating;
  bool createdNow = false;  // kActivating: this call created the missing partitions
  std::string message;      // kError, kControllerUnknown, kNotOwned, kLost, kBlocked: what, for the user
  const VipuTarget* target = nullptr;
  std::shared_ptr<const vipu::PartitionPlanner> planner;
  // kActive, and kActivating unless createdNow: V-IPU's view of each recorded partition.
  std::map<std::string, vipu::Partition> byId;
};

// A job's V-IPU partitions: created where admission planned them (ids are in status first), waited on,
// reset for a restart, released at the end. Every step is idempotent: an id V-IPU already has is ours.
class PartitionSteps {
 public:
  // `prefix`: this installation's partition id prefix; the operator acts only on ids partitionIdFor derives
  // from it and the job's own identity, never on an id merely read back from status (which others can
  // write), so an edited status cannot make it remove or adopt a partition that is not the job's.
  // `legacyPrefix` (may be empty): ids derived under it for the job's identity are the job's too (jobs
  // admitted under a former default prefix keep their partitions).
  PartitionSteps(VipuInventory& inventory, Admitter& admitter, kube::EventRecorder& events,
                 std::string prefix, std::string legacyPrefix = "")
      : controllers_(inventory.controllers()),
        inventory_(inventory),
        admitter_(admitter),
        events_(events),
        prefix_(std::move(prefix)),
        legacyPrefix_(std::move(legacyPrefix)) {}

  // Creates the recorded partitions V-IPU lacks (where the admission in flight planned them, or planned
  // again after a restart of the operator) and reports whether all are active.
  // A partition recorded Active that V-IPU no longer has is never created again silently under the pods
  // that used it: ensure() reports kLost and leaves the decision to the restart policy.
  Result<PartitionsState> ensure(JobPass& pass, const api::IpuJobSpec& spec);
  // Records the lost partitions (kLost: recorded, gone from V-IPU) as Planned again, so that ensure()
  // creates them anew for the next attempt.
  static void planLostAgain(JobPass& pass, const PartitionsState& lost);
  // ResetPartition on each recorded partition (a new attempt starts on clean IPUs).
  Status reset(const JobPass& pass);
  // RemovePartition on each held partition; marks them Released in the pass's status.
  Status release(JobPass& pass);

 private:
  // ensure(), with V-IPU's FailedPrecondition answers still errors.
  Result<PartitionsState> inspect(JobPass& pass, const api::IpuJobSpec& spec);
  // The job's recorded partitions that V-IPU has, by id: each one's ready state from GetPartitionStatus of
  // its id, its IPUs from the inventory's last list (which the operator's own creates update at once), so a
  // pass costs V-IPU one small call per partition of the job, however many partitions the POD holds. Only a
  // partition under one of the job's ids that the inventory has not seen makes it read the whole list.
  Result<std::map<std::string, vipu::Partition>> readOwn(const VipuTarget& target,
                                                         const std::vector<api::PartitionRecord>& held);
  // Creates each partition where `admission` placed its instance, and tells the inventory at once. Blocked:
  // V-IPU has another partition under one of the ids.
  Result<std::optional<Blocked>> create(const JobPass& pass, const VipuTarget& target,
                                        const std::vector<api::PartitionRecord>& partitions,
                                        const Admission& admission);
  // The missing partitions placed (the reservation, or a new placement) and created: kActivating,
  // kNoLongerFits or kBlocked.
  Result<PartitionsState> createMissing(JobPass& pass, const api::IpuJobSpec& spec, const VipuTarget& target,
                                        const std::vector<api::PartitionRecord>& missing);

  // Whether `record` names the partition the job's identity derives for its instance.
  bool derivedForJob(const JobPass& pass, const api::PartitionRecord& record) const;
  // Lets go of a partition this operator cannot or may not remove: Abandoned, with a Warning Event.
  void abandon(const JobPass& pass, api::PartitionRecord& partition, const std::string& reason,
               const std::string& message);

  VipuControllers& controllers_;
  VipuInventory& inventory_;
  Admitter& admitter_;
  kube::EventRecorder& events_;
  std::string prefix_;
  std::string legacyPrefix_;
};

// "ild0:0-3": where a partition's IPUs are, for people reading status.
std::string describeIpus(const vipu::Topology& topology, const vipu::IpuBlock& block);

}  // namespace ipu::controllers
