#include "ipujob/worker_pod.h"

#include <algorithm>

#include "common/json_access.h"
#include "contract/runtime_contract.h"
#include "ipujob/pod_json.h"

namespace ipu::controllers {
namespace {

namespace contract = runtime::contract;

constexpr const char* kShmVolume = "devshm";

bool mountsDevShm(const Json& container) {
  for (const auto& mount : container.value("volumeMounts", Json::array())) {
    if (mount.is_object() && mount.value("mountPath", "") == "/dev/shm") return true;
  }
  return false;
}

void addIpcLock(Json& container) {
  Json& add = container["securityContext"]["capabilities"]["add"];
  if (!add.is_array()) add = Json::array();
  bool present = std::any_of(add.begin(), add.end(), [](const Json& c) {
    return c.is_string() && (c == "IPC_LOCK" || c == "CAP_IPC_LOCK");
  });
  if (!present) add.push_back("IPC_LOCK");
}

void injectEnv(Json& container, const api::IpuJob& job, int workerIndex, const WorkerAssignment& partition,
               const WorkerPodOptions& options) {
  const api::IpuJobSpec& spec = job.spec;
  int instance = workerIndex / spec.workersPerJobInstance;
  int workerInInstance = workerIndex % spec.workersPerJobInstance;
  Json& env = arrayMember(container, "env");

  setEnv(env, "IPUOF_VIPU_API_HOST", partition.vipuHost);
  setEnv(env, "IPUOF_VIPU_API_PORT", std::to_string(partition.vipuPort));
  setEnv(env, "IPUOF_VIPU_API_PARTITION_ID", partition.partitionId);
  defaultEnv(env, "IPUOF_VIPU_API_GCD_ID", "0");
  defaultEnv(env, "IPUOF_VIPU_API_TIMEOUT", std::to_string(options.ipuofTimeoutSeconds));
  if (!partition.poplarTargetOptions.empty())
    defaultEnv(env, "POPLAR_TARGET_OPTIONS", partition.poplarTargetOptions);

  // What poprun would pass to this worker as one instance of the partition's replicas.
  defaultEnv(env, "POPDIST_NUM_TOTAL_REPLICAS", std::to_string(spec.replicasPerInstance()));
  defaultEnv(env, "POPDIST_NUM_IPUS_PER_REPLICA", std::to_string(spec.ipusPerReplica()));
  defaultEnv(env, "POPDIST_NUM_LOCAL_REPLICAS", std::to_string(spec.modelReplicasPerWorker));
  defaultEnv(env, "POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "1");
  defaultEnv(env, "POPDIST_REPLICA_INDEX_OFFSET",
             std::to_string(workerInInstance * spec.modelReplicasPerWorker));
  defaultEnv(env, "POPDIST_LOCAL_INSTANCE_INDEX", "0");

  setEnv(env, contract::kEnvJobName, job.identity.name);
  setEnv(env, contract::kEnvJobNamespace, job.identity.ns);
  setEnv(env, contract::kEnvInstance, std::to_string(instance));
  setEnv(env, contract::kEnvInstances, std::to_string(spec.jobInstances));
  setEnv(env, contract::kEnvWorkerIndex, std::to_string(workerIndex));
  setEnv(env, contract::kEnvWorkerInInstance, std::to_string(workerInInstance));
  setEnv(env, contract::kEnvWorkersPerInstance, std::to_string(spec.workersPerJobInstance));
  setEnv(env, contract::kEnvIpusPerInstance, std::to_string(spec.ipusPerJobInstance));
  setEnv(env, contract::kEnvReplicasPerWorker, std::to_string(spec.modelReplicasPerWorker));
  setEnv(env, contract::kEnvService, headlessServiceName(job.identity.name));
}

// `kubectl logs <pod>` then shows the worker container without asking, though the pod has an init container.
void defaultContainerForKubectl(Json& metadata, const Json& podSpec) {
  const Json& containers = podSpec.value("containers", Json::array());
  if (!containers.is_array() || containers.empty() || !containers[0].is_object()) return;
  Json& annotations = metadata["annotations"];
  if (!annotations.is_object()) annotations = Json::object();
  if (!annotations.contains("kubectl.kubernetes.io/default-container"))
    annotations["kubectl.kubernetes.io/default-container"] = containers[0].value("name", "");
}

}  // namespace

Json jobLabels(const api::IpuJob& job) {
  return {{kJobNameLabel, jobLabelValue(job.identity.name)}};
}

Json ownerReferenceTo(const api::ObjectIdentity& job) {
  return {{"apiVersion", std::string(api::kGroup) + "/" + api::kVersion},
          {"kind", api::kKind},
          {"name", job.name},
          {"uid", job.uid},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

Json buildWorkerPod(const api::IpuJob& job, int workerIndex, const WorkerAssignment& partition,
                    const WorkerPodOptions& options) {
  const Json& podTemplate = job.spec.workerTemplate;
  Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  Json metadata = podTemplate.value("metadata", Json::object());
  if (!metadata.is_object()) metadata = Json::object();
  metadata.erase("name");
  metadata.erase("generateName");
  metadata["name"] = workerPodName(job.identity.name, workerIndex);
  metadata["namespace"] = job.identity.ns;
  Json& labels = metadata["labels"];
  if (!labels.is_object()) labels = Json::object();
  labels.update(jobLabels(job));
  labels[kInstanceLabel] = std::to_string(workerIndex / job.spec.workersPerJobInstance);
  labels[kWorkerIndexLabel] = std::to_string(workerIndex);
  labels[kAttemptLabel] = std::to_string(partition.attempt);
  metadata["ownerReferences"] = Json::array({ownerReferenceTo(job.identity)});
  pod["metadata"] = std::move(metadata);

  Json spec = podTemplate.value("spec", Json::object());
  spec["hostIPC"] = true;
  spec["restartPolicy"] = "Never";
  spec["hostname"] = workerHostname(job.identity.name, workerIndex);
  spec["subdomain"] = headlessServiceName(job.identity.name);
  for (const auto& [key, value] : partition.queueNodeSelector) {
    Json& selector = spec["nodeSelector"];
    if (!selector.is_object()) selector = Json::object();
    if (!selector.contains(key)) selector[key] = value;
  }
  for (const Json& toleration : partition.queueTolerations) {
    Json& tolerations = spec["tolerations"];
    if (!tolerations.is_array()) tolerations = Json::array();
    if (std::find(tolerations.begin(), tolerations.end(), toleration) == tolerations.end())
      tolerations.push_back(toleration);
  }
  if (!partition.vipuController.empty()) {
    Json& selector = spec["nodeSelector"];
    if (!selector.is_object()) selector = Json::object();
    // A user's own value is kept: admission only placed the job on the controller it names.
    if (!selector.contains(kVipuControllerNodeLabel))
      selector[kVipuControllerNodeLabel] = partition.vipuController;
  }

  bool needsShmVolume = false;
  for (auto& container : spec["containers"]) {
    addIpcLock(container);
    if (!mountsDevShm(container)) {
      arrayMember(container, "volumeMounts").push_back({{"name", kShmVolume}, {"mountPath", "/dev/shm"}});
      needsShmVolume = true;
    }
    injectEnv(container, job, workerIndex, partition, options);
  }
  if (needsShmVolume) {
    addNamed(
        arrayMember(spec, "volumes"),
        {{"name", kShmVolume}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", options.shmSizeLimit}}}});
  }
  const std::string statusUrl = partition.partitionActive || !startsWhileActivating(options)
                                    ? ""
                                    : options.partitionStatusBase +
                                          std::string(runtime::contract::kPartitionStatusPath) +
                                          partition.partitionId;
  injectRuntime(spec, job, workerIndex, options.runtime, partition.runtimeSecret, statusUrl);
  if (!options.runtime.image.empty()) defaultContainerForKubectl(pod["metadata"], spec);
  pod["spec"] = std::move(spec);
  return pod;
}

bool startsWhileActivating(const WorkerPodOptions& options) {
  return !options.runtime.image.empty() && !options.partitionStatusBase.empty();
}

Result<Json> tryBuildWorkerPod(const api::IpuJob& job, int workerIndex, const WorkerAssignment& partition,
                               const WorkerPodOptions& options) {
  try {
    Json pod = buildWorkerPod(job, workerIndex, partition, options);
    if (workerIndex == 0 && job.spec.outputs) {
      const std::chrono::seconds retain = retainFor(*job.spec.outputs, options.outputs).seconds;
      if (Status added = addOutputsRetention(pod, *job.spec.outputs, retain, options.runtime); !added)
        return added.error();
    }
    if (job.spec.interactive && workerRole(job.spec, workerIndex) == WorkerRole::kExec) {
      const auto idle = idleReclaimAfter(*job.spec.interactive, options.interactive);
      Json& worker = pod["spec"]["containers"][0];
      if (idle.count() > 0 && runsUnderRuntime(worker))
        setEnv(arrayMember(worker, "env"), contract::kEnvIdleSeconds, std::to_string(idle.count()));
    }
    if (auto why = runtimeKeyUnreadable(pod["spec"], job.spec, options.runtime))
      return makeError(ErrorCode::kInvalidArgument, *why);
    return pod;
  } catch (const nlohmann::json::exception& error) {
    return makeError(
        ErrorCode::kInvalidArgument,
        "spec.workers.template: the worker pod cannot be built from it: " + std::string(error.what()));
  }
}

Json childMetadata(const api::IpuJob& job, const std::string& name) {
  return {{"name", name},
          {"namespace", job.identity.ns},
          {"labels", jobLabels(job)},
          {"ownerReferences", Json::array({ownerReferenceTo(job.identity)})}};
}

Json buildHeadlessService(const api::IpuJob& job) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", childMetadata(job, headlessServiceName(job.identity.name))},
          {"spec",
           {{"clusterIP", "None"},
            {"publishNotReadyAddresses", true},  // peers must resolve each other before they are Ready
            {"selector", jobLabels(job)}}}};
}

}  // namespace ipu::controllers
