#include "ipujob/runtime_injection.h"

#include <cstdint>

#include "common/json_access.h"
#include "contract/runtime_contract.h"
#include "ipujob/launch_form.h"
#include "ipujob/pod_json.h"
#include "ipujob/worker_pod.h"

namespace ipu::controllers {
namespace {

namespace contract = runtime::contract;

constexpr const char* kRuntimeVolume = "ipu-runtime";
constexpr const char* kRuntimeImageVolume = "ipu-runtime-image";
constexpr const char* kCredentialsVolume = "ipu-runtime-tls";
constexpr const char* kInstallContainer = "ipu-runtime-install";
constexpr const char* kDefaultTerminationLog = "/dev/termination-log";
// The job's key is for the worker container's user only (root, unless the pod says otherwise: then its
// fsGroup, to which the kubelet adds group read).
constexpr int kCredentialsMode = 0400;

void addMount(Json& container, const std::string& volume, const std::string& path, bool readOnly) {
  Json& mounts = arrayMember(container, "volumeMounts");
  if (findNamed(mounts, volume) == nullptr)
    mounts.push_back({{"name", volume}, {"mountPath", path}, {"readOnly", readOnly}});
}

Json installContainer(const RuntimeOptions& options) {
  return {
      {"name", kInstallContainer},
      {"image", options.image},
      {"imagePullPolicy", options.imagePullPolicy},
      {"command", {"/ipu-runtime", contract::kInstallCommand, contract::kInstallDir}},
      {"volumeMounts", Json::array({{{"name", kRuntimeVolume}, {"mountPath", contract::kInstallDir}}})},
      {"resources", {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}, {"limits", {{"memory", "64Mi"}}}}},
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"readOnlyRootFilesystem", true},
        {"capabilities", {{"drop", Json::array({"ALL"})}}}}}};
}

// The runtime command line for the worker's role; nullopt when the container keeps its own (a container
// without `command` keeps its image's entrypoint and gets the environment only).
std::optional<std::vector<std::string>> wrappedCommand(const Json& container, const api::IpuJobSpec& spec,
                                                       WorkerRole role, const char* binary) {
  std::vector<std::string> command = stringsOf(container.contains("command") ? container["command"] : Json());
  std::vector<std::string> args = stringsOf(container.contains("args") ? container["args"] : Json());
  const bool hasCommand = !command.empty();
  command.insert(command.end(), args.begin(), args.end());
  std::vector<std::string> wrapped = {binary};
  switch (role) {
    case WorkerRole::kAgent:
      return std::vector<std::string>{binary, contract::kAgentCommand};
    case WorkerRole::kLaunch:
      wrapped.push_back(contract::kLaunchCommand);
      if (!spec.launcherCommand.empty()) {
        wrapped.insert(wrapped.end(), {contract::kLauncherFlag, "--"});
        wrapped.insert(wrapped.end(), spec.launcherCommand.begin(), spec.launcherCommand.end());
        return wrapped;
      }
      // The worker command is the launcher: run once, as written, not wrapped in a second one.
      if (launchForm(spec) == LaunchForm::kLauncherInCommand) wrapped.push_back(contract::kLauncherFlag);
      break;
    case WorkerRole::kExec:
      wrapped.push_back(contract::kExecCommand);
      break;
  }
  if (!hasCommand) return std::nullopt;
  wrapped.push_back("--");
  wrapped.insert(wrapped.end(), command.begin(), command.end());
  return wrapped;
}

void applyLauncherEnv(Json& container, const api::IpuJobSpec& spec) {
  if (!spec.launcherEnv.is_array()) return;
  for (const auto& entry : spec.launcherEnv) {
    if (!entry.is_object() || !entry.contains("name")) continue;
    putNamed(arrayMember(container, "env"), entry);
  }
}

// Puts the runtime's binary where the worker container finds it: an init container copying it into the
// emptyDir, or the image mounted read-only beside it.
void deliverBinary(Json& podSpec, Json& worker, const RuntimeOptions& options) {
  switch (options.delivery) {
    case RuntimeDelivery::kInitContainer: {
      Json& inits = arrayMember(podSpec, "initContainers");
      if (findNamed(inits, kInstallContainer) == nullptr)
        inits.insert(inits.begin(), installContainer(options));
      return;
    }
    case RuntimeDelivery::kImageVolume:
      addNamed(arrayMember(podSpec, "volumes"),
               {{"name", kRuntimeImageVolume},
                {"image", {{"reference", options.image}, {"pullPolicy", options.imagePullPolicy}}}});
      addMount(worker, kRuntimeImageVolume, contract::kImageDir, true);
      return;
  }
}

}  // namespace

std::optional<RuntimeDelivery> parseRuntimeDelivery(const std::string& text) {
  if (text == "init-container") return RuntimeDelivery::kInitContainer;
  if (text == "image-volume") return RuntimeDelivery::kImageVolume;
  return std::nullopt;
}

const char* runtimeDeliveryName(RuntimeDelivery delivery) {
  return delivery == RuntimeDelivery::kImageVolume ? "image-volume" : "init-container";
}

const char* runtimeBinary(const RuntimeOptions& options) {
  return options.delivery == RuntimeDelivery::kImageVolume ? contract::kImageBinary : contract::kBinary;
}

std::optional<std::int64_t> workerSecurityInteger(const Json& podSpec, const char* field) {
  const Json& containers = member(podSpec, "containers");
  static const Json kNone;
  const Json& worker = containers.is_array() && !containers.empty() ? containers[0] : kNone;
  for (const Json* context : {&member(worker, "securityContext"), &member(podSpec, "securityContext")}) {
    if (const Json& value = member(*context, field); value.is_number_integer())
      return value.get<std::int64_t>();
  }
  return std::nullopt;
}

bool runsUnderRuntime(const Json& container) {
  const std::vector<std::string> command = stringsOf(member(container, "command"));
  return !command.empty() && contract::isRuntimeBinary(command.front());
}

WorkerRole workerRole(const api::IpuJobSpec& spec, int workerIndex) {
  if (!needsRuntimeCredentials(spec) && spec.launcherCommand.empty()) return WorkerRole::kExec;
  return workerIndex % spec.workersPerJobInstance == 0 ? WorkerRole::kLaunch : WorkerRole::kAgent;
}

bool needsRuntimeCredentials(const api::IpuJobSpec& spec) {
  return spec.workersPerJobInstance > 1;
}

std::string runtimeIdentity(const api::ObjectIdentity& job) {
  return job.ns + "/" + job.name + "/" + job.uid;
}

Json buildRuntimeSecret(const api::IpuJob& job, const runtime::pki::JobCredentials& credentials) {
  Json metadata = childMetadata(job, "");
  metadata.erase("name");  // the API server makes it from generateName
  metadata["generateName"] = runtimeSecretGenerateName(job.identity.name);
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", std::move(metadata)},
          {"type", "kubernetes.io/tls"},
          {"immutable", true},
          {"stringData",
           {{contract::kCaFile, credentials.caCertPem},
            {contract::kCertFile, credentials.certPem},
            {contract::kKeyFile, credentials.keyPem}}}};
}

api::RuntimeSecretRecord runtimeSecretRecord(const std::string& name,
                                             const runtime::pki::JobCredentials& credentials) {
  return {name, runtime::pki::pemDigest(credentials.caCertPem)};
}

std::string instancePeers(const api::IpuJob& job, int workerIndex) {
  const int perInstance = job.spec.workersPerJobInstance;
  const int first = workerIndex / perInstance * perInstance;
  std::string peers;
  for (int k = first; k < first + perInstance; ++k) {
    peers += (peers.empty() ? "" : ",") + workerHostname(job.identity.name, k) + "." +
             headlessServiceName(job.identity.name);
  }
  return peers;
}

void injectRuntime(Json& podSpec, const api::IpuJob& job, int workerIndex, const RuntimeOptions& options,
                   const api::RuntimeSecretRecord& secret, const std::string& partitionStatusUrl) {
  if (options.image.empty() || !podSpec["containers"].is_array() || podSpec["containers"].empty()) return;
  const api::IpuJobSpec& spec = job.spec;
  const WorkerRole role = workerRole(spec, workerIndex);

  addNamed(arrayMember(podSpec, "volumes"), {{"name", kRuntimeVolume}, {"emptyDir", Json::object()}});
  // The worker container is the first; sidecars are left alone.
  Json& worker = podSpec["containers"][0];
  // Writable: the runtime keeps the worker's lock and the launch writes the instance's hostfile there (the
  // image's own filesystem may be read-only).
  addMount(worker, kRuntimeVolume, contract::kInstallDir, false);
  deliverBinary(podSpec, worker, options);
  const char* binary = runtimeBinary(options);
  if (auto command = wrappedCommand(worker, spec, role, binary)) {
    worker["command"] = *command;
    worker.erase("args");
  }
  if (needsRuntimeCredentials(spec)) {
    addNamed(arrayMember(podSpec, "volumes"),
             {{"name", kCredentialsVolume},
              {"secret", {{"secretName", secret.name}, {"defaultMode", kCredentialsMode}}}});
    addMount(worker, kCredentialsVolume, contract::kCredentialsDir, true);
    if (!secret.caSha256.empty()) setEnv(arrayMember(worker, "env"), contract::kEnvCaSha256, secret.caSha256);
  }
  setEnv(arrayMember(worker, "env"), contract::kEnvPeers, instancePeers(job, workerIndex));
  const Json& path = worker.contains("terminationMessagePath") ? worker["terminationMessagePath"] : Json();
  setEnv(arrayMember(worker, "env"), contract::kEnvTerminationLog,
         path.is_string() ? path.get<std::string>() : kDefaultTerminationLog);
  defaultEnv(arrayMember(worker, "env"), contract::kEnvOmpiRshAgent,
             std::string(binary) + " " + contract::kRshCommand);
  if (role == WorkerRole::kLaunch) applyLauncherEnv(worker, spec);
  // An agent runs only what its instance's launch starts, once the launch has waited.
  if (!partitionStatusUrl.empty() && role != WorkerRole::kAgent)
    setEnv(arrayMember(worker, "env"), contract::kEnvPartitionStatusUrl, partitionStatusUrl);
}

std::optional<std::string> runtimeKeyUnreadable(const Json& podSpec, const api::IpuJobSpec& spec,
                                                const RuntimeOptions& options) {
  if (options.image.empty() || !needsRuntimeCredentials(spec)) return std::nullopt;
  const auto user = workerSecurityInteger(podSpec, "runAsUser");
  if (!user || *user == 0 || member(member(podSpec, "securityContext"), "fsGroup").is_number_integer())
    return std::nullopt;
  return "spec.workers.template: the worker container runs as user " + std::to_string(*user) +
         " and the pod sets no securityContext.fsGroup, so ipu-runtime could not read the job's key (mounted "
         "readable by its owner, root, only): set spec.securityContext.fsGroup (any group; the kubelet makes "
         "the key readable by it)";
}

std::optional<std::string> launcherNotRunMessage(const api::IpuJobSpec& spec, const RuntimeOptions& options) {
  std::string what;
  if (!spec.launcherCommand.empty()) what = "launcher.command is set";
  if (spec.workersPerJobInstance > 1) {
    what += (what.empty() ? "" : " and ") + std::string("workersPerJobInstance is ") +
            std::to_string(spec.workersPerJobInstance);
  }
  if (what.empty()) return std::nullopt;
  if (options.image.empty()) {
    return what +
           ", but the operator runs without --runtime-image: each worker pod runs its own container command, "
           "and "
           "no process starts the instance across its worker pods";
  }
  if (!spec.launcherCommand.empty()) return std::nullopt;
  if (!workerCommandLine(spec).empty()) return std::nullopt;
  return what +
         ", but the worker container has no command: the launch needs one to start on every worker (set "
         "command, or a launcher.command)";
}

}  // namespace ipu::controllers
