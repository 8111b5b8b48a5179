#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "api/ipujob.h"
#include "common/result.h"
#include "ipujob/creation_expectations.h"
#include "ipujob/job_pass.h"
#include "ipujob/partition_steps.h"
#include "ipujob/worker_observation.h"
#include "ipujob/worker_pod.h"
#include "kube/event_recorder.h"
#include "kube/rest_client.h"
#include "kueue/workload.h"

namespace ipu::controllers {

// How long a job's runtime certificate is valid: longer than any job runs.
inline constexpr std::chrono::hours kRuntimeCredentialValidity{24 * 366};

// What creating a job's children came to, when the API server answered.
struct ChildrenState {
  enum class Kind {
    kCreated,         // every child exists and is this job's
    kBlocked,         // an earlier job of this name still has a child's name (or it is being deleted): wait
    kNameTaken,       // somebody else's object holds a child's name: waiting never heals it
    kInvalidSpec,     // a worker pod cannot be built from the job's template: only an edit heals it
    kSecretRecorded,  // the runtime Secret was made and recorded in the pass's status; the pods follow once
                      // that is written (StepOutcome::Decision::kRuntimeSecretRecorded)
  };
  Kind kind = Kind::kCreated;
  std::string message;  // kBlocked, kNameTaken, kInvalidSpec: what, for the user
  // kCreated: pods this process created that the cache has not shown yet are awaited rather than created
  // again; look again by then if none has shown (CreationExpectations).
  std::optional<Clock::Duration> recheckIn;
};

// A job's children in Kubernetes: the runtime's certificate Secret and the NetworkPolicy that admits only
// the job's own pods to its agents (multi-worker instances), the headless Service and the worker pods of the
// current attempt.
class WorkerSteps {
 public:
  WorkerSteps(kube::RestClient& client, kube::EventRecorder& events, const Clock& clock,
              WorkerPodOptions options)
      : client_(client), events_(events), options_(std::move(options)), expectations_(clock) {}

  // Creates the worker pods the current attempt lacks, each on its instance's partition; the Service (and
  // the agents' NetworkPolicy) before the attempt's first pod. A pod this process created and the cache does
  // not show yet is awaited, not created again (CreationExpectations). An existing child of the same name
  // counts as created only when it is this job's (see ChildrenState for the others).
  Result<ChildrenState> createMissing(JobPass& pass, const api::IpuJob& job, const WorkerPods& pods,
                                      const QueuePlacement& placement, const PartitionsState& partitions);
  // Makes the job's runtime Secret under a name the API server generates and records it in pass.status,
  // when the job's pods need one and it has none. The status write must land before any pod refers to it
  // (a Secret made by a pass whose write is lost is never mounted; the garbage collector removes it with the
  // job).
  Status issueRuntimeSecret(JobPass& pass, const api::IpuJob& job);
  // Deletes pods not already going, each only if it is still the pod read (uid precondition).
  Status remove(const std::vector<kube::ObjectPtr>& pods);
  // Force-deletes (grace period 0) the pods whose deletion is overdue by `grace` (deletionOverdue): their
  // node stopped answering, so nothing else ever confirms it. Call only once the IPUs those pods could reach
  // were reset or released. Answers when the next of the pods being deleted becomes overdue (nullopt: none
  // is waiting). A zero `grace` never force-deletes.
  Result<std::optional<Clock::Duration>> forceRemoveOverdue(const JobPass& pass,
                                                            const std::vector<kube::ObjectPtr>& pods,
                                                            Clock::Duration grace);

  const WorkerPodOptions& options() const { return options_; }

 private:
  // The per-job certificate Secret the runtime's agents and rsh authenticate with, as the pods are to mount
  // it: the recorded one; for a job whose pods of this attempt were made before records existed, the
  // derived name those pods mount; none yet: made and recorded now (nullopt), the pods wait for the write.
  Result<std::optional<api::RuntimeSecretRecord>> runtimeSecretFor(JobPass& pass, const api::IpuJob& job,
                                                                   const WorkerPods& pods);
  bool needsRuntimeSecret(const api::IpuJob& job) const;
  // Creates one child of the job, judging an existing one of the same name by its owner (createMissing).
  Result<ChildrenState> createChild(const kube::ResourceRef& resource, const api::IpuJob& job,
                                    const Json& child);

  kube::RestClient& client_;
  kube::EventRecorder& events_;
  WorkerPodOptions options_;
  CreationExpectations expectations_;
};

}  // namespace ipu::controllers
