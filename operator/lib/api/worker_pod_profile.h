#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ipu::api {

// What a worker pod template may ask for. Kubernetes' Pod Security Standards have no level between
// `baseline` (no host namespaces, no added capabilities beyond a short list) and `privileged` (anything),
// and IPU workers need two things beyond baseline: hostIPC (Poplar's shared memory with the IPU-Machine's
// host agents) and the IPC_LOCK capability (pinned buffers). The operator adds both to every worker.
enum class WorkerPodProfile {
  kIpuBaseline,  // the default: `baseline` plus hostIPC and IPC_LOCK
  kPrivileged,   // anything the template asks for (what the operator did before it checked)
};

// The Namespace annotation by which a cluster admin widens (or narrows) the profile for every IPUJob of one
// namespace. Tenants with the `edit` or `admin` role cannot write Namespaces, so only a cluster admin can.
inline constexpr const char* kWorkerPodProfileAnnotation = "graphcore.ai/worker-pod-profile";

// "ipu-baseline" / "privileged"; nullopt for anything else.
std::optional<WorkerPodProfile> parseWorkerPodProfile(std::string_view name);
std::string_view profileName(WorkerPodProfile profile);

// The first field of a worker template that asks for more than `profile` allows.
struct ProfileViolation {
  std::string field;    // its path, e.g. spec.workers.template.spec.containers[0].securityContext.privileged
  std::string message;  // what is allowed there, for the user
};

// Judges the template as written (the operator's own additions, hostIPC, IPC_LOCK and a memory-backed
// /dev/shm, are within kIpuBaseline by construction), with field paths under `path`. Expects a template
// that passed checkPodTemplate (types already right; anything else is read as absent).
std::optional<ProfileViolation> profileViolation(const nlohmann::json& podTemplate, WorkerPodProfile profile,
                                                 const std::string& path);

}  // namespace ipu::api
