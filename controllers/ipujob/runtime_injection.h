#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "ipujob/child_names.h"
#include "tls/pki.h"

// What the operator injects into a worker pod so that ipu-runtime runs the job (docs/architecture.md,
// "Runtime and launch"): the init container that installs the runtime, the worker container's command wrapped
// by it, the per-job credentials of multi-worker instances, and the environment the runtime reads. Pure: the
// same job and worker give the same pod.
namespace ipu::controllers {

using Json = nlohmann::json;

// How the runtime's binary reaches the worker container.
enum class RuntimeDelivery {
  // An init container of the ipu-runtime image copies it into the runtime's emptyDir: works on every
  // container runtime, but the kubelet starts the worker container only after it has seen the init
  // container exit (its next relist, up to a second later).
  kInitContainer,
  // The kubelet mounts the ipu-runtime image itself, read-only, as an image volume (Kubernetes 1.35+ with
  // ImageVolume, containerd 2.1+ or CRI-O 1.31+ on the nodes): no init container to wait for.
  kImageVolume,
};
// "init-container" / "image-volume", as --runtime-delivery names them; nullopt for anything else.
std::optional<RuntimeDelivery> parseRuntimeDelivery(const std::string& text);
const char* runtimeDeliveryName(RuntimeDelivery delivery);

struct RuntimeOptions {
  std::string image;  // the ipu-runtime image; empty: nothing is injected (each worker runs its own command)
  std::string imagePullPolicy = "IfNotPresent";
  RuntimeDelivery delivery = RuntimeDelivery::kInitContainer;
};

// Where the worker container runs the runtime from under `options`.
const char* runtimeBinary(const RuntimeOptions& options);

// What ipu-runtime does in a worker.
enum class WorkerRole {
  kExec,    // one worker per instance, no launcher: the worker's command under `ipu-runtime exec`
  kLaunch,  // worker 0 of an instance with several workers or a launcher: `ipu-runtime launch`
  kAgent,   // the other workers: `ipu-runtime agent`, their ranks are started by the launch
};
WorkerRole workerRole(const api::IpuJobSpec& spec, int workerIndex);

// Whether the job's pods need the per-job certificate Secret (some instance spans several workers).
bool needsRuntimeCredentials(const api::IpuJobSpec& spec);

// Who the job's certificate is issued for: "<namespace>/<name>/<uid>" (a job recreated under the same name
// gets a new identity, so its predecessor's pods can never talk to it).
std::string runtimeIdentity(const api::ObjectIdentity& job);

// The Secret (type kubernetes.io/tls, plus ca.crt) with the job's CA and key pair, owned by the job, under
// a name the API server generates (runtimeSecretGenerateName) and immutable: it is never updated, so one
// replaced under the same name cannot reach the pods that mount it already.
Json buildRuntimeSecret(const api::IpuJob& job, const runtime::pki::JobCredentials& credentials);

// What the pods pin of a Secret created from `credentials` under the name `name` (status.runtimeSecret).
api::RuntimeSecretRecord runtimeSecretRecord(const std::string& name,
                                             const runtime::pki::JobCredentials& credentials);

// The worker host names of worker `workerIndex`'s instance, worker 0 first, as peers resolve them through
// the job's headless Service ("<pod hostname>.<service>").
std::string instancePeers(const api::IpuJob& job, int workerIndex);

// Injects the runtime into `podSpec` (the spec of worker `workerIndex`, its containers already merged):
// volumes, the install init container or the image volume, the first container's command, mounts and
// environment. Does nothing when options.image is empty. Jobs whose instances span several workers mount
// `secret` (mode 0400: the key is for the container's own user, root unless it sets one) and pin its CA
// (IPU_RUNTIME_CA_SHA256). `partitionStatusUrl` (may be empty): where the worker's command, when it is an
// instance's leader (exec or launch), first waits for its partition to be active.
void injectRuntime(Json& podSpec, const api::IpuJob& job, int workerIndex, const RuntimeOptions& options,
                   const api::RuntimeSecretRecord& secret, const std::string& partitionStatusUrl = "");

// Whether `container`'s command is ipu-runtime's (injectRuntime wrapped it): the runtime then runs as its
// PID 1, holds worker 0's lock and watches an interactive worker for activity.
bool runsUnderRuntime(const Json& container);

// A whole-number field of the worker container's securityContext (runAsUser, runAsGroup), its own or else
// the pod's, as the kubelet applies them; nullopt when neither sets it (the image decides).
std::optional<std::int64_t> workerSecurityInteger(const Json& podSpec, const char* field);

// Why the runtime in the worker pod `podSpec` could not read the job's key (nullopt: it can): the worker
// container runs as a user other than root (runAsUser, its own or the pod's) while the pod sets no fsGroup,
// the only way the kubelet makes a Secret's files readable to a user other than their owner. A user set
// only by the image (USER) is not visible here: the runtime then says the same when it starts.
std::optional<std::string> runtimeKeyUnreadable(const Json& podSpec, const api::IpuJobSpec& spec,
                                                const RuntimeOptions& options);

// Why the job does not run as it asks (nullopt when it does): a launcher or several workers per instance
// while the runtime is not injected, or a multi-worker instance whose worker container has no command for
// the launch to start.
std::optional<std::string> launcherNotRunMessage(const api::IpuJobSpec& spec, const RuntimeOptions& options);

}  // namespace ipu::controllers
