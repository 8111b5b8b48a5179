#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/ipujob.h"
#include "ipujob/child_names.h"

// What the operator injects into a worker pod so that ipu-runtime runs the job (docs/architecture.md,
// "Runtime and launch"): the init container that installs the runtime, the worker container's command wrapped
// by it, the per-job credentials of multi-worker instances, and the environment the runtime reads. Pure: the
// same job and worker give the same pod.
namespace ipu::controllers {

using Json = nlohmann::json;

struct RuntimeOptions {
  std::string image;  // the ipu-runtime image; empty: nothing is injected (each worker runs its own command)
  std::string imagePullPolicy = "IfNotPresent";
};

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

// The Secret (type kubernetes.io/tls, plus ca.crt) with the job's CA and key pair, owned by the job.
Json buildRuntimeSecret(const api::IpuJob& job, const std::string& caPem, const std::string& certPem,
                        const std::string& keyPem);

// The worker host names of worker `workerIndex`'s instance, worker 0 first, as peers resolve them through
// the job's headless Service ("<pod hostname>.<service>").
std::string instancePeers(const api::IpuJob& job, int workerIndex);

// Injects the runtime into `podSpec` (the spec of worker `workerIndex`, its containers already merged):
// volumes, the install init container, the first container's command, mounts and environment. Does nothing
// when options.image is empty.
void injectRuntime(Json& podSpec, const api::IpuJob& job, int workerIndex, const RuntimeOptions& options);

// Why the job does not run as it asks (nullopt when it does): a launcher or several workers per instance
// while the runtime is not injected, or a multi-worker instance whose worker container has no command for
// the launch to start.
std::optional<std::string> launcherNotRunMessage(const api::IpuJobSpec& spec, const RuntimeOptions& options);

}  // namespace ipu::controllers
