#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "api/ipujob.h"
#include "api/resources.h"
#include "common/result.h"
#include "ipujob/child_names.h"
#include "ipujob/interactive_session.h"
#include "ipujob/output_retention.h"
#include "ipujob/runtime_injection.h"

namespace ipu::controllers {

using Json = nlohmann::json;

using api::kAttemptLabel;
using api::kInstanceLabel;
using api::kJobNameLabel;
using api::kVipuControllerNodeLabel;
using api::kWorkerIndexLabel;

// What one worker pod is given: where its instance's partition is and how Poplar should see it, which
// attempt of the job the pod is, and the job's runtime Secret.
struct WorkerAssignment {
  std::string partitionId;
  std::string vipuController;  // its name: worker pods select nodes labelled with it
  std::string vipuHost;
  int vipuPort = 8090;
  std::string poplarTargetOptions;         // JSON text, as POPLAR_TARGET_OPTIONS wants it
  int attempt = 0;                         // status.restartCount when the pod is made
  api::RuntimeSecretRecord runtimeSecret;  // status.runtimeSecret (jobs whose instances span several workers)
  // False when the pod is made while its partition still activates: the runtime then waits for it
  // (WorkerPodOptions::partitionStatusBase).
  bool partitionActive = true;
  // Where Kueue's ResourceFlavors put a job it admitted: node labels to select, taints to tolerate.
  std::map<std::string, std::string> queueNodeSelector;
  Json queueTolerations = Json::array();
};

struct WorkerPodOptions {
  std::string shmSizeLimit = "10Gi";  // for the /dev/shm emptyDir the operator adds when the user has none
  int ipuofTimeoutSeconds = 120;      // IPUOF_VIPU_API_TIMEOUT unless the user set it
  RuntimeOptions runtime;             // ipu-runtime's image; empty: not injected
  // "http://HOST:PORT" of the V-IPU proxy's HTTP face (--vipu-proxy-http-port), where the runtime asks
  // whether its partition is active. Set (and the runtime injected): pods are made while their partitions
  // activate (startsWhileActivating). Empty: only once they are active.
  std::string partitionStatusBase;
  RetentionLimits outputs;  // how long worker 0 keeps spec.outputs after its command ends
  // How long interactive jobs (spec.interactive) live, and their idle reclaim.
  InteractiveLimits interactive;
};

// Worker pod `workerIndex` (0 .. workerCount-1) of the job: the user's template with what Poplar needs merged
// in, never duplicating what the user already wrote:
//  - hostIPC: true;
//  - a memory-backed emptyDir mounted at /dev/shm in every container that mounts nothing there;
//  - the IPC_LOCK capability in every container;
//  - IPUOF_VIPU_API_HOST/PORT/PARTITION_ID (always ours: the partition is the operator's),
//  IPUOF_VIPU_API_GCD_ID,
//    IPUOF_VIPU_API_TIMEOUT, POPLAR_TARGET_OPTIONS and POPDIST_* (the user's value wins when set), and
//    IPUJOB_*;
//  - a nodeSelector for the partition's V-IPU controller (unless the user selected that label already);
//  - ipu-runtime (injectRuntime) when options.runtime names its image;
//  - labels (job, instance, worker index, attempt), the controller ownerReference, hostname/subdomain for the
//  headless Service, restartPolicy Never
//    (restarts are the job's: the operator replaces pods, so a restart gets a reset partition).
// Pure: the same inputs give the same pod.
// Whether a job's pods are made while its partitions activate: the runtime is injected (it does the waiting)
// and the proxy's HTTP face is there to ask.
bool startsWhileActivating(const WorkerPodOptions& options);

Json buildWorkerPod(const api::IpuJob& job, int workerIndex, const WorkerAssignment& partition,
                    const WorkerPodOptions& options = {});

// buildWorkerPod as a value, and worker 0 with the retention of spec.outputs (addOutputsRetention): a
// template that passed the spec's checks but still cannot be built (a shape no check foresaw), an outputs
// path that collides with a mount, or a pod whose runtime could not read the job's key
// (runtimeKeyUnreadable), is InvalidArgument with the cause, so that its job ends InvalidSpec instead of a
// pass throwing on every retry.
Result<Json> tryBuildWorkerPod(const api::IpuJob& job, int workerIndex, const WorkerAssignment& partition,
                               const WorkerPodOptions& options = {});

// The label every worker pod of the job carries (and its Service selects): graphcore.ai/ipujob=<job>.
Json jobLabels(const api::IpuJob& job);

// The metadata of a child the job owns: `name`, the job's namespace and label, its controller ownerReference.
Json childMetadata(const api::IpuJob& job, const std::string& name);

// The headless Service for the job's worker pods.
Json buildHeadlessService(const api::IpuJob& job);

using api::pinnedVipuController;

// The controller ownerReference to the job, as children carry it.
Json ownerReferenceTo(const api::ObjectIdentity& job);

}  // namespace ipu::controllers
