#include "ipujob/ipujob_reconciler.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "common/log.h"
#include "ipujob/job_status.h"
#include "common/time_format.h"
#include "vipu/ipu_set.h"
#include "vipu/partition_id.h"
#include "vipu/partition_planner.h"
#include "vipu/poplar_target_options.h"
#include "vipu/topology_discovery.h"

namespace ipu::controllers {
namespace {

constexpr const char* kStatePlanned = "Planned";
constexpr const char* kStateActive = "Active";
constexpr const char* kStateReleased = "Released";

const Json& field(const Json& object, const char* name) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(name);
  return it == object.end() ? kNull : *it;
}

std::string phaseOf(const Json& job) {
  return field(field(job, "status"), "phase").is_string()
             ? field(field(job, "status"), "phase").get<std::string>()
             : std::string();
}

Json recordedPartitions(const Json& job) {
  const Json& partitions = field(field(job, "status"), "partitions");
  return partitions.is_array() ? partitions : Json::array();
}

bool hasFinalizer(const Json& job) {
  const Json& finalizers = field(field(job, "metadata"), "finalizers");
  return finalizers.is_array() &&
         std::find(finalizers.begin(), finalizers.end(), Json(kCleanupFinalizer)) != finalizers.end();
}

// Graphcore's operator shows these in STATUS; keep its words.
std::string launcherStatusFor(const std::string& phase) {
  if (phase == kPhaseRunning) return "Running";
  if (phase == kPhaseSucceeded) return "Completed";
  if (phase == kPhaseFailed) return "Failed";
  if (phase == kPhaseSuspended) return "Suspended";
  return "Pending";
}

// "ild0:0-3": where a partition's IPUs are, for people reading status.
std::string describeIpus(const vipu::Topology& topology, const vipu::IpuBlock& block) {
  const auto last = block.end() - 1;
  return "ild" + std::to_string(topology.ildOf(block.first)) + ":" +
         std::to_string(topology.topologyIdOf(block.first)) + "-" +
         std::to_string(topology.topologyIdOf(last)) +
         (topology.ildOf(last) != topology.ildOf(block.first) ? "@ild" + std::to_string(topology.ildOf(last))
                                                              : "");
}

// The first non-zero exit code of a terminated container of the pod (0 when none).
int exitCodeOf(const Json& pod) {
  const Json& statuses = field(field(pod, "status"), "containerStatuses");
  if (!statuses.is_array()) return 0;
  for (const Json& status : statuses) {
    const Json& terminated = field(field(status, "state"), "terminated");
    const Json& code = field(terminated, "exitCode");
    if (code.is_number_integer() && code.get<int>() != 0) return code.get<int>();
  }
  return 0;
}

bool isNotFound(const Error& error) {
  return error.code == ErrorCode::kNotFound;
}

// The recorded partitions, marked released (after RemovePartition).
Json releasedPartitions(const Json& job) {
  Json partitions = recordedPartitions(job);
  for (Json& partition : partitions) partition["state"] = kStateReleased;
  return partitions;
}

}  // namespace

IpuJobReconciler::IpuJobReconciler(kube::RestClient& client, const kube::Store& jobs, const kube::Store& pods,
                                   VipuTarget vipu, kube::EventRecorder& events, Clock& clock,
                                   ReconcilerOptions options)
    : client_(client),
      jobs_(jobs),
      pods_(pods),
      vipu_(std::move(vipu)),
      events_(events),
      clock_(clock),
      options_(std::move(options)) {}

Result<Action> IpuJobReconciler::reconcile(const std::string& ns, const std::string& name) {
  const kube::ObjectPtr cached = jobs_.get(ns, name);
  if (!cached) return Action{};  // deleted, and the finalizer has already run
  const Json& job = *cached;

  if (!field(field(job, "metadata"), "deletionTimestamp").is_null()) return finalize(job);

  if (auto status = ensureFinalizer(job); !status) return status.error();
  if (isTerminalPhase(phaseOf(job))) return releaseFinished(job);

  auto parsed = api::parseIpuJob(job);
  if (!parsed) {
    if (auto status = setPhase(job, kPhaseFailed, "InvalidSpec", parsed.error().message); !status) {
      return status.error();
    }
    return Action{};  // retrying cannot help until the user edits the job, which triggers a reconcile
  }
  if (parsed->spec.suspend) return suspend(job, *parsed);
  return runJob(job, *parsed);
}

Result<Action> IpuJobReconciler::finalize(const Json& job) {
  if (!hasFinalizer(job)) return Action{};
  if (auto status = removeRecordedPartitions(job); !status) return status.error();
  const Json& finalizers = job["metadata"]["finalizers"];
  Json remaining = Json::array();
  for (const Json& finalizer : finalizers) {
    if (finalizer != kCleanupFinalizer) remaining.push_back(finalizer);
  }
  // The test op makes this a compare-and-swap: another controller's finalizer edit is never lost.
  const Json patch =
      Json::array({{{"op", "test"}, {"path", "/metadata/finalizers"}, {"value", finalizers}},
                   {{"op", "replace"}, {"path", "/metadata/finalizers"}, {"value", remaining}}});
  auto patched = client_.patch(ipuJobResource(), job["metadata"].value("namespace", ""),
                               job["metadata"].value("name", ""), kube::PatchType::kJson, patch);
  if (!patched && !isNotFound(patched.error())) return patched.error();
  log::info("released the partitions of a deleted IPUJob", {{"job", kube::objectKey(job)}});
  return Action{};
}

Status IpuJobReconciler::ensureFinalizer(const Json& job) {
  if (hasFinalizer(job)) return {};
  const Json& metadata = job["metadata"];
  Json finalizers = field(metadata, "finalizers").is_array() ? metadata["finalizers"] : Json::array();
  finalizers.push_back(kCleanupFinalizer);
  // Conditional on the version we read, so a concurrent edit of the finalizers is never overwritten.
  const Json patch = Json::array({{{"op", "test"},
                                   {"path", "/metadata/resourceVersion"},
                                   {"value", metadata.value("resourceVersion", "")}},
                                  {{"op", "add"}, {"path", "/metadata/finalizers"}, {"value", finalizers}}});
  auto patched = client_.patch(ipuJobResource(), metadata.value("namespace", ""), metadata.value("name", ""),
                               kube::PatchType::kJson, patch);
  if (!patched) return patched.error();
  return {};
}

Status IpuJobReconciler::removeRecordedPartitions(const Json& job) {
  for (const Json& partition : recordedPartitions(job)) {
    if (partition.value("state", "") == kStateReleased) continue;
    const std::string id = partition.value("id", "");
    auto removed = vipu_.api->removePartition(id, /*force=*/true);
    if (!removed && !isNotFound(removed.error())) return removed.error();
    log::info("removed partition", {{"job", kube::objectKey(job)}, {"partition", id}});
  }
  return {};
}

Result<Action> IpuJobReconciler::releaseFinished(const Json& job) {
  if (auto status = removeRecordedPartitions(job); !status) return status.error();
  if (auto status = patchStatus(job, {{"partitions", releasedPartitions(job)}}); !status)
    return status.error();
  return Action{};
}

Result<Action> IpuJobReconciler::suspend(const Json& job, const api::IpuJob& parsed) {
  for (const kube::ObjectPtr& pod : pods_.listOwnedBy(parsed.identity.uid)) {
    auto removed =
        client_.remove(kube::ResourceRef::pods(), parsed.identity.ns, (*pod)["metadata"].value("name", ""));
    if (!removed && !isNotFound(removed.error())) return removed.error();
  }
  if (auto status = removeRecordedPartitions(job); !status) return status.error();
  if (auto status = setPhase(job, kPhaseSuspended, "Suspended", "The job is suspended",
                             {{"partitions", Json::array()}, {"currentReplicas", 0}});
      !status) {
    return status.error();
  }
  return Action{};
}

Result<Action> IpuJobReconciler::runJob(const Json& job, const api::IpuJob& parsed) {
  const auto& spec = parsed.spec;
  auto attributes = vipu_.api->listIpuAttributes({});
  if (!attributes) return attributes.error();
  auto topology = vipu::topologyFromAttributes(*attributes);
  if (!topology) return topology.error();
  auto existing = vipu_.api->listPartitions("");
  if (!existing) return existing.error();
  auto taken = vipu::IpuSet::fromPartitions(*topology, *existing);
  if (!taken) return taken.error();
  std::map<std::string, vipu::Partition> byId;
  for (const auto& partition : *existing) byId.emplace(partition.id, partition);

  const vipu::PartitionPlanner planner(*topology);
  const auto size = static_cast<std::uint32_t>(spec.ipusPerJobInstance);
  Json recorded = recordedPartitions(job);

  // Admission: the whole gang is planned at once; ids go into status before any partition exists, so a
  // crash after CreatePartition leaves nothing that status does not name.
  if (recorded.empty()) {
    const auto plan = planner.plan(*taken, {static_cast<std::uint32_t>(spec.jobInstances), size});
    if (!plan.placed()) {
      const auto& refusal = *plan.refusal;
      if (refusal.reason == vipu::RefusalReason::kDoesNotFitNow) {
        if (auto status = setPhase(job, kPhaseQueued, "InsufficientCapacity", refusal.message); !status) {
          return status.error();
        }
        return Action{options_.queuedRetry};
      }
      const std::string message = refusal.message + " (the largest partition this cluster can hold has " +
                                  std::to_string(refusal.largestPossibleSize) + " IPUs)";
      if (auto status = setPhase(job, kPhaseFailed, "Unschedulable", message); !status) return status.error();
      return Action{};
    }
    for (std::uint32_t instance = 0; instance < plan.placements.size(); ++instance) {
      recorded.push_back({{"id", vipu::derivePartitionId(parsed.identity.ns, parsed.identity.name, instance)},
                          {"instance", instance},
                          {"size", size},
                          {"controller", vipu_.name},
                          {"ipus", describeIpus(*topology, plan.placements[instance].block)},
                          {"state", kStatePlanned}});
    }
    if (auto status = setPhase(job, kPhaseCreating, "Admitted",
                               "Admitted: creating " + std::to_string(recorded.size()) + " partition(s)",
                               {{"partitions", recorded}, {"desiredReplicas", spec.workerCount()}});
        !status) {
      return status.error();
    }
    // Create from the next reconcile, which sees the recorded ids: one code path for first runs and restarts.
    return Action{std::chrono::milliseconds(0)};
  }

  // Create the recorded partitions V-IPU does not have (first run, or a crash between record and create).
  std::vector<const Json*> missing;
  for (const Json& partition : recorded) {
    if (!byId.contains(partition.value("id", ""))) missing.push_back(&partition);
  }
  if (!missing.empty()) {
    const auto plan = planner.plan(*taken, {static_cast<std::uint32_t>(missing.size()), size});
    if (!plan.placed()) {
      log::warning("recorded partitions do not fit now; waiting",
                   {{"job", kube::objectKey(job)}, {"reason", plan.refusal->message}});
      return Action{options_.queuedRetry};
    }
    for (std::size_t i = 0; i < missing.size(); ++i) {
      const std::string id = missing[i]->value("id", "");
      auto created =
          vipu_.api->createPartition(vipu::makePartitionRequest(id, *topology, plan.placements[i]));
      // ALREADY_EXISTS: ours, created by an earlier attempt whose answer was lost.
      if (!created && created.error().code != ErrorCode::kAlreadyExists) return created.error();
      events_.record(
          kube::referenceTo(job), kube::EventType::kNormal, "PartitionCreated",
          "Created V-IPU partition " + id + " (" + std::to_string(size) + " IPUs) on " + vipu_.name);
    }
    return Action{options_.activationPoll};
  }

  // Wait for every partition to be active before any pod exists (gang or nothing).
  for (const Json& partition : recorded) {
    const auto& current = byId.at(partition.value("id", ""));
    if (current.readyState == vipu::ReadyState::kError) {
      if (auto status = removeRecordedPartitions(job); !status) return status.error();
      if (auto status = setPhase(job, kPhaseFailed, "PartitionError", "Partition " + current.id + " failed",
                                 {{"partitions", releasedPartitions(job)}});
          !status) {
        return status.error();
      }
      return Action{};
    }
    if (current.readyState != vipu::ReadyState::kActive) return Action{options_.activationPoll};
  }
  for (Json& partition : recorded) partition["state"] = kStateActive;

  // Children: the headless Service and every missing worker pod, by fixed name, never twice.
  std::map<std::string, Json> pods;
  for (const kube::ObjectPtr& pod : pods_.listOwnedBy(parsed.identity.uid)) {
    pods.emplace((*pod)["metadata"].value("name", ""), *pod);
  }
  int created = 0;
  for (int k = 0; k < spec.workerCount(); ++k) {
    const std::string podName = workerPodName(parsed.identity.name, k);
    if (pods.contains(podName)) continue;
    if (created == 0) {
      auto service =
          client_.create(kube::ResourceRef::services(), parsed.identity.ns, buildHeadlessService(parsed));
      if (!service && service.error().code != ErrorCode::kAlreadyExists) return service.error();
    }
    const int instance = k / spec.workersPerJobInstance;
    const Json& partition = recorded.at(static_cast<std::size_t>(instance));
    const auto& current = byId.at(partition.value("id", ""));
    const PartitionAssignment assignment{current.id, vipu_.host, vipu_.port,
                                         vipu::poplarTargetOptions(current, *topology)};
    auto pod = client_.create(kube::ResourceRef::pods(), parsed.identity.ns,
                              buildWorkerPod(parsed, k, assignment, options_.pods));
    if (!pod && pod.error().code != ErrorCode::kAlreadyExists) return pod.error();
    ++created;
  }
  if (created > 0) {
    events_.record(kube::referenceTo(job), kube::EventType::kNormal, "PodsCreated",
                   "Created " + std::to_string(created) + " worker pod(s)");
  }

  // Status from the pods the cache shows.
  int running = 0;
  int succeeded = 0;
  const Json* failed = nullptr;
  for (const auto& [podName, pod] : pods) {
    const std::string podPhase =
        field(field(pod, "status"), "phase").is_string() ? pod["status"]["phase"] : "";
    if (podPhase == "Running") ++running;
    if (podPhase == "Succeeded") ++succeeded;
    if (podPhase == "Failed" && failed == nullptr) failed = &pod;
  }
  const int workers = spec.workerCount();
  const std::string now = formatTime(clock_.wallNow());
  Json counts = {
      {"currentReplicas", running}, {"desiredReplicas", workers}, {"currentInstances", spec.jobInstances}};

  if (failed != nullptr) {
    const std::string podName = (*failed)["metadata"].value("name", "");
    if (auto status = removeRecordedPartitions(job); !status) return status.error();
    counts["partitions"] = releasedPartitions(job);
    counts["completionTime"] = now;
    const std::string message =
        "Worker pod " + podName + " failed with exit code " + std::to_string(exitCodeOf(*failed));
    if (auto status = setPhase(job, kPhaseFailed, "WorkerFailed", message, counts); !status)
      return status.error();
    return Action{};
  }
  if (succeeded == workers) {
    if (auto status = removeRecordedPartitions(job); !status) return status.error();
    counts["partitions"] = releasedPartitions(job);
    counts["completionTime"] = now;
    if (auto status = setPhase(job, kPhaseSucceeded, "Succeeded", "All instances done", counts); !status) {
      return status.error();
    }
    return Action{};
  }
  counts["partitions"] = recorded;
  if (running + succeeded == workers) {
    if (field(field(job, "status"), "startTime").is_null()) counts["startTime"] = now;
    if (auto status = setPhase(job, kPhaseRunning, "Running", "All worker pods are running", counts);
        !status) {
      return status.error();
    }
    return Action{};
  }
  const std::string message = "Waiting for worker pods: " + std::to_string(running + succeeded) + " of " +
                              std::to_string(workers) + " running";
  if (auto status = setPhase(job, kPhaseCreating, "PodsStarting", message, counts); !status)
    return status.error();
  return Action{};
}

Status IpuJobReconciler::patchStatus(const Json& job, Json status) {
  const Json current = field(job, "status").is_object() ? job["status"] : Json::object();
  Json merged = current;
  merged.merge_patch(status);
  if (merged == current) return {};  // nothing new: a repeated reconcile writes nothing
  const Json& metadata = job["metadata"];
  auto patched = client_.patch(ipuJobResource(), metadata.value("namespace", ""), metadata.value("name", ""),
                               kube::PatchType::kMerge, {{"status", std::move(status)}}, "status");
  if (!patched) return patched.error();
  return {};
}

Status IpuJobReconciler::setPhase(const Json& job, const std::string& phase, const std::string& reason,
                                  const std::string& message, Json extra) {
  const Json& status = field(job, "status");
  const int64_t generation = job["metadata"].value("generation", int64_t{0});
  const std::string now = formatTime(clock_.wallNow());
  extra["phase"] = phase;
  extra["launcherStatus"] = launcherStatusFor(phase);
  extra["lastMessage"] = message;
  extra["observedGeneration"] = generation;
  extra["conditions"] =
      conditionsForPhase(field(status, "conditions"), phase, reason, message, generation, now);
  const bool changed = phaseOf(job) != phase;
  if (auto patched = patchStatus(job, std::move(extra)); !patched) return patched;
  if (changed) {
    const bool warning = phase == kPhaseFailed;
    const std::string eventReason = phase == kPhaseQueued      ? "Queued"
                                    : phase == kPhaseFailed    ? "Failed"
                                    : phase == kPhaseSucceeded ? "Succeeded"
                                                               : reason;
    events_.record(kube::referenceTo(job), warning ? kube::EventType::kWarning : kube::EventType::kNormal,
                   eventReason, message);
    log::info("IPUJob phase changed", {{"job", kube::objectKey(job)}, {"phase", phase}, {"reason", reason}});
  }
  return {};
}

}  // namespace ipu::controllers
