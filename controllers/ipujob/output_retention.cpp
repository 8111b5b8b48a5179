#include "ipujob/output_retention.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string_view>
#include <vector>

#include "api/resources.h"
#include "common/json_access.h"
#include "common/time_format.h"
#include "contract/runtime_contract.h"
#include "ipujob/launch_form.h"
#include "ipujob/pod_json.h"

namespace ipu::controllers {
namespace {

namespace contract = runtime::contract;

constexpr const char* kOutputsVolume = "ipu-outputs";
constexpr const char* kRuntimeVolume = "ipu-runtime";

// The statuses of the pod's containers but the retention container, and the retention container's state.
// Read from the status only: the operator's pod cache keeps no spec.
struct ContainerStates {
  std::vector<const Json*> command;
  const Json* retention = nullptr;
};
ContainerStates containerStatesOf(const Json& pod) {
  ContainerStates states;
  for (const Json& status : ipu::arrayMember(member(pod, "status"), "containerStatuses")) {
    if (stringMember(status, "name") == contract::kRetentionContainer) {
      states.retention = &member(status, "state");
    } else {
      states.command.push_back(&member(status, "state"));
    }
  }
  return states;
}

// The retention container is there and every other container has ended.
bool commandEnded(const ContainerStates& states) {
  return states.retention != nullptr && !states.command.empty() &&
         std::all_of(states.command.begin(), states.command.end(),
                     [](const Json* state) { return member(*state, "terminated").is_object(); });
}

Json retentionContainer(const api::OutputsSpec& spec, std::chrono::seconds retain,
                        const RuntimeOptions& options, const Json& podSpec) {
  Json securityContext = {{"allowPrivilegeEscalation", false},
                          {"readOnlyRootFilesystem", true},
                          {"capabilities", {{"drop", Json::array({"ALL"})}}}};
  // It reads what the worker wrote: as the worker's user when the pod says which, else as root (the user of
  // most ML images), unless the pod must not run as root (then the runtime image's own user, 65532).
  const auto user = workerSecurityInteger(podSpec, "runAsUser");
  const bool nonRoot =
      trueMember(member(podSpec, "securityContext"), "runAsNonRoot") ||
      trueMember(member(ipu::arrayMember(podSpec, "containers")[0], "securityContext"), "runAsNonRoot");
  if (user) {
    securityContext["runAsUser"] = *user;
  } else if (!nonRoot) {
    securityContext["runAsUser"] = 0;
  }
  if (const auto group = workerSecurityInteger(podSpec, "runAsGroup")) securityContext["runAsGroup"] = *group;
  return {
      {"name", contract::kRetentionContainer},
      {"image", options.image},
      {"imagePullPolicy", options.imagePullPolicy},
      {"command",
       {"/ipu-runtime", contract::kRetainCommand, "--lock", contract::kWorkerLockFile, "--seconds",
        std::to_string(retain.count()), "--path", spec.path}},
      {"volumeMounts",
       {{{"name", kOutputsVolume}, {"mountPath", spec.path}, {"readOnly", true}},
        {{"name", kRuntimeVolume}, {"mountPath", contract::kInstallDir}, {"readOnly", true}}}},
      {"resources", {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}, {"limits", {{"memory", "64Mi"}}}}},
      {"securityContext", std::move(securityContext)}};
}

}  // namespace

RetainFor retainFor(const api::OutputsSpec& spec, const RetentionLimits& limits) {
  const std::chrono::seconds asked =
      spec.retainSeconds > 0 ? std::chrono::seconds(spec.retainSeconds) : limits.defaultRetain;
  return {std::min(asked, limits.maxRetain), asked > limits.maxRetain};
}

std::optional<std::string> outputsNotRetainedMessage(const api::IpuJobSpec& spec,
                                                     const RuntimeOptions& options) {
  if (!spec.outputs) return std::nullopt;
  if (options.image.empty()) {
    return "spec.outputs is set, but the operator runs without --runtime-image: nothing tells when worker "
           "0's "
           "command ends, so its pod goes as cleanPodPolicy says and " +
           spec.outputs->path + " is not kept";
  }
  if (!spec.launcherCommand.empty() || !workerCommandLine(spec).empty()) return std::nullopt;
  return "spec.outputs is set, but the worker container has no command (it keeps its image's entrypoint, "
         "which ipu-runtime does not wrap): nothing tells when it ends, so " +
         spec.outputs->path + " is not kept; write the command in the template";
}

Status addOutputsRetention(Json& pod, const api::OutputsSpec& spec, std::chrono::seconds retain,
                           const RuntimeOptions& options) {
  Json& podSpec = pod["spec"];
  Json& containers = podSpec["containers"];
  if (options.image.empty() || !containers.is_array() || containers.empty()) return {};
  Json& worker = containers[0];
  if (!runsUnderRuntime(worker)) return {};  // not wrapped: no lock
  for (const char* reserved : {contract::kInstallDir, contract::kImageDir, contract::kCredentialsDir}) {
    if (contract::pathWithin(spec.path, reserved)) {
      return makeError(ErrorCode::kInvalidArgument, "spec.outputs.path: " + spec.path + " is under " +
                                                        reserved + ", which ipu-runtime uses");
    }
  }
  for (const Json& mount : arrayMember(worker, "volumeMounts")) {
    if (stringMember(mount, "mountPath") == spec.path) {
      return makeError(ErrorCode::kInvalidArgument,
                       "spec.outputs.path: the worker container mounts volume \"" +
                           stringMember(mount, "name") + "\" at " + spec.path +
                           " already; give spec.outputs another directory (or drop that mount)");
    }
  }
  if (findNamed(arrayMember(podSpec, "volumes"), kOutputsVolume) != nullptr) {
    return makeError(ErrorCode::kInvalidArgument, std::string("spec.workers.template: a volume is named ") +
                                                      kOutputsVolume + ", which spec.outputs uses");
  }
  if (findNamed(containers, contract::kRetentionContainer) != nullptr) {
    return makeError(ErrorCode::kInvalidArgument,
                     std::string("spec.workers.template: a container is named ") +
                         contract::kRetentionContainer + ", which spec.outputs uses");
  }
  arrayMember(podSpec, "volumes").push_back({{"name", kOutputsVolume}, {"emptyDir", Json::object()}});
  arrayMember(worker, "volumeMounts").push_back({{"name", kOutputsVolume}, {"mountPath", spec.path}});
  setEnv(arrayMember(worker, "env"), contract::kEnvWorkerLock, contract::kWorkerLockFile);
  containers.push_back(retentionContainer(spec, retain, options, podSpec));
  Json& annotations = pod["metadata"]["annotations"];
  if (!annotations.is_object()) annotations = Json::object();
  annotations[api::kOutputsPathAnnotation] = spec.path;
  annotations[api::kOutputsRetainAnnotation] = std::to_string(retain.count());
  return {};
}

bool keepsOutputs(const Json& pod) {
  return !stringMember(member(member(pod, "metadata"), "annotations"), api::kOutputsPathAnnotation).empty();
}

std::string commandPhase(const Json& pod) {
  const std::string phase = stringMember(member(pod, "status"), "phase");
  if (phase != "Running" || !keepsOutputs(pod)) return phase;
  const ContainerStates states = containerStatesOf(pod);
  if (!commandEnded(states)) return phase;
  const bool failed = std::any_of(states.command.begin(), states.command.end(), [](const Json* state) {
    const Json& code = member(member(*state, "terminated"), "exitCode");
    return !code.is_number_integer() || code.get<int>() != 0;
  });
  return failed ? "Failed" : "Succeeded";
}

std::optional<KeptOutputs> keptOutputs(const Json& pod) {
  if (!keepsOutputs(pod) || stringMember(member(pod, "status"), "phase") != "Running") return std::nullopt;
  const ContainerStates states = containerStatesOf(pod);
  if (!commandEnded(states) || member(*states.retention, "terminated").is_object()) return std::nullopt;
  std::optional<Clock::WallTime> ended;
  for (const Json* state : states.command) {
    const auto finished = parseTime(stringMember(member(*state, "terminated"), "finishedAt"));
    if (finished && (!ended || *finished > *ended)) ended = finished;
  }
  if (!ended) return std::nullopt;
  const Json& annotations = member(member(pod, "metadata"), "annotations");
  std::int64_t retain = 0;
  try {
    retain = std::stoll(stringMember(annotations, api::kOutputsRetainAnnotation));
  } catch (const std::exception&) {
    retain = 0;  // not one the operator wrote: nothing is kept past the command's end
  }
  return KeptOutputs{
      stringMember(annotations, api::kOutputsPathAnnotation),
      *ended + std::chrono::seconds(std::clamp<std::int64_t>(retain, 0, api::kMaxSpecSeconds))};
}

}  // namespace ipu::controllers
