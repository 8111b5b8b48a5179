#pragma once

#include <optional>
#include <set>
#include <string>

#include "api/ipujob.h"
#include "common/result.h"
#include "ipujob/claimed_workers.h"
#include "ipujob/job_pass.h"
#include "ipujob/reconciler_options.h"
#include "ipujob/step_outcome.h"
#include "kube/event_recorder.h"
#include "kube/rest_client.h"
#include "kueue/workload.h"

namespace ipu::controllers {

// What Kueue says of a job it queues, for this pass.
struct KueueGate {
  enum class Kind {
    kGoOn,   // admitted by Kueue: the operator places and runs the job
    kWait,   // the pass ends with `outcome` (Workload made, waiting in Kueue, its reservation given back)
    kEvict,  // Kueue took the admission back while the job holds IPUs or pods: the job lets go of them
    // Kueue reserved quota and asks the operator's IPU placement check: the job is planned (and its placement
    // recorded) as any admission, but its partitions are made only once Kueue admits it.
    kPlace,
  };
  Kind kind = Kind::kGoOn;
  StepOutcome outcome = StepOutcome(ctrl::Action::awaitChange());
  std::string reason;   // kEvict: the phase reason
  std::string message;  // kEvict
  std::string check;    // kPlace: the AdmissionCheck to answer

  static KueueGate goOn() { return {}; }
  static KueueGate wait(StepOutcome outcome) { return {Kind::kWait, std::move(outcome), "", "", ""}; }
  static KueueGate evict(std::string reason, std::string message) {
    return {Kind::kEvict, StepOutcome(ctrl::Action::awaitChange()), std::move(reason), std::move(message),
            ""};
  }
  static KueueGate place(std::string check) {
    return {Kind::kPlace, StepOutcome(ctrl::Action::awaitChange()), "", "", std::move(check)};
  }
};

// The outcome of making a job's Workload.
struct WorkloadCreation {
  enum class Kind {
    kCreated,               // made now, or there already
    kPriorityClassMissing,  // the label names a WorkloadPriorityClass that does not exist (yet)
    kRefused,               // Kueue's webhook or the schema refused it: the job cannot be queued as it is
  };
  Kind kind = Kind::kCreated;
  std::string message;  // why not, for the user
};

// The IPUJob's side of Kueue's Workload protocol (docs/using-kueue.md). A job with the label
// kueue.x-k8s.io/queue-name, with the operator's Kueue support on, gets a Workload (owned by the job) and
// waits for Kueue to admit it, never touching the user's spec.suspend; then the operator places and runs it
// as any job, without its IPUQuota. Evicted or preempted, it lets go of its pods and partitions, and its
// Workload's quota reservation is given back once nothing of it runs; all workers running sets the Workload's
// PodsReady; the job's end sets Finished. Everything is read again each pass from the Workload cache and the
// job's status.kueue, so a restarted operator carries on.
class KueueSteps {
 public:
  KueueSteps(kube::RestClient& client, WorkerPodsOfJob& pods, kube::EventRecorder& events,
             const ReconcilerOptions& options)
      : client_(client), pods_(pods), events_(events), options_(options) {}

  // Whether Kueue queues the job: status.kueue recorded, or, with Kueue in use, its queue-name label on a job
  // that holds no partitions (a label added to a running job waits for its next admission).
  bool queues(const JobPass& pass) const;

  // A job Kueue queues, before each step that places or runs it.
  KueueGate gate(JobPass& pass, const api::IpuJob& job);
  // After a kPlace pass's admission: the placement check Pending with why the job cannot be placed now, or
  // Rejected when it never can (Ready is answered once the placement is recorded).
  Status reportPlacement(const JobPass& pass, const std::string& check);
  // The placement Kueue admitted can no longer be made (others took its IPUs): the check says Retry, and
  // Kueue evicts and queues the job again.
  Status placementLost(const JobPass& pass, const std::string& why);
  // Every worker runs: the Workload's PodsReady (once).
  Status workersReady(const JobPass& pass);
  // The job ended: the Workload's Finished (once), after which Kueue frees its quota.
  Status finished(const JobPass& pass);
  // Makes the job's Workload (its name from workloadNameFor).
  Result<WorkloadCreation> createWorkload(const JobPass& pass, const api::IpuJob& job);
  // The name of the job's Workload: recorded in status.kueue, else the prebuilt one MultiKueue names, else
  // workloadNameFor.
  static std::string workloadNameOf(const JobPass& pass);
  // A condition of the job's side on its Workload (PodsReady, Finished), under a field manager of its own.
  Status applyCondition(const Json& workload, const std::string& type, const std::string& reason,
                        const std::string& message, const JobPass& pass);
  // After an eviction, once nothing of the job runs: the Workload's reservation given back, as Kueue's
  // job integrations do; a conflict or a Workload gone is left to the next event.
  Status giveBackReservation(const JobPass& pass, const Json& workload);

  // Where Kueue's flavors put the workers (none for a job Kueue does not queue).
  Result<QueuePlacement> placement(const JobPass& pass) const;

  // Why labelled jobs run under the operator's own queue, for a Warning Event at their admission; nullopt
  // when Kueue is in use or the job has no label.
  std::optional<std::string> notUsedMessage(const JobPass& pass) const;

 private:
  // The job's Workload from the cache, if it is there and the job's.
  kube::ObjectPtr workloadOf(const JobPass& pass) const;
  KueueGate create(JobPass& pass, const api::IpuJob& job);
  // On a MultiKueue worker cluster: the prebuilt Workload made the job's (its pod sets checked first).
  KueueGate adopt(JobPass& pass, const api::IpuJob& job, const Json& workload);
  KueueGate waitInKueue(JobPass& pass, const WorkloadView& view);
  // Kueue reserved quota and its ClusterQueue lists an IPU placement check: the job is placed (kPlace), or,
  // placed already, the check answered Ready. nullopt when no such check waits on the operator.
  std::optional<KueueGate> placementGate(JobPass& pass, api::KueueStatus& kueue, const Json& workload,
                                         const WorkloadView& view);
  // The Workload's reservation given back once nothing of the job runs (Kueue then queues it again).
  KueueGate giveBack(JobPass& pass, const Json& workload, const WorkloadView& view);
  // The names of the AdmissionChecks the operator answers.
  std::set<std::string> placementChecks() const;
  Status answer(const Json& workload, const std::string& check, const std::string& state,
                const std::string& message, const JobPass& pass);
  // A server-side apply of the Workload's status under `fieldManager` (force: Kueue co-owns these fields); a
  // Workload gone meanwhile is nothing to answer.
  Status applyStatus(const Json& body, const std::string& fieldManager, const JobPass& pass);

  kube::RestClient& client_;
  WorkerPodsOfJob& pods_;
  kube::EventRecorder& events_;
  const ReconcilerOptions& options_;
};

}  // namespace ipu::controllers
