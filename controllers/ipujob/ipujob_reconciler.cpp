#include "ipujob/ipujob_reconciler.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "common/failpoint.h"
#include "common/json_access.h"
#include "common/log.h"
#include "common/time_format.h"
#include "ipujob/job_status.h"
#include "ipujob/orphan_partitions.h"
#include "vipu/poplar_target_options.h"

namespace ipu::controllers {
namespace {

// Failed jobs that an edit of the spec (a new generation) sends back to admission: nothing ran yet.
const std::set<std::string> kReadmittableReasons = {"InvalidSpec", "Unschedulable"};

int restartCountOf(const Json& job) {
  const Json& count = member(member(job, "status"), "restartCount");
  return count.is_number_integer() ? count.get<int>() : 0;
}

bool holdsPartitions(const Json& job) {
  return !heldPartitions(job).empty();
}

// The reason of the job's Failed condition ("" when it has none).
std::string failureReason(const Json& job) {
  const Json& conditions = member(member(job, "status"), "conditions");
  if (!conditions.is_array()) return "";
  for (const Json& condition : conditions) {
    if (condition.value("type", "") == kPhaseFailed) return condition.value("reason", "");
  }
  return "";
}

// Graphcore's operator shows these in STATUS; keep its words.
std::string launcherStatusFor(const std::string& phase) {
  if (phase == kPhaseRunning) return "Running";
  if (phase == kPhaseSucceeded) return "Completed";
  if (phase == kPhaseFailed) return "Failed";
  if (phase == kPhaseSuspended) return "Suspended";
  if (phase == kPhaseRestarting) return "Restarting";
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

std::string podPhase(const Json& pod) {
  return stringMember(member(pod, "status"), "phase");
}

bool podFinished(const Json& pod) {
  return podPhase(pod) == "Succeeded" || podPhase(pod) == "Failed";
}

int attemptOf(const Json& pod) {
  const std::string label = stringMember(member(member(pod, "metadata"), "labels"), kAttemptLabel);
  try {
    return label.empty() ? 0 : std::stoi(label);
  } catch (const std::exception&) {
    return -1;  // not one we wrote: never the current attempt
  }
}

// A finished worker pod as restartPolicy sees it.
WorkerOutcome outcomeOf(const std::string& name, const Json& pod) {
  WorkerOutcome outcome{name, WorkerOutcome::State::kActive, 0, {}};
  const std::string phase = podPhase(pod);
  if (phase == "Succeeded") outcome.state = WorkerOutcome::State::kSucceeded;
  if (phase != "Failed") return outcome;
  outcome.state = WorkerOutcome::State::kFailed;
  const Json& statuses = member(member(pod, "status"), "containerStatuses");
  if (statuses.is_array()) {
    for (const Json& status : statuses) {
      const Json& code = member(member(member(status, "state"), "terminated"), "exitCode");
      if (code.is_number_integer() && code.get<int>() != 0) {
        outcome.exitCode = code.get<int>();
        break;
      }
    }
  }
  if (outcome.exitCode == 0) {
    const std::string reason = stringMember(member(pod, "status"), "reason");
    const std::string message = stringMember(member(pod, "status"), "message");
    outcome.detail = reason + (!reason.empty() && !message.empty() ? ": " : "") + message;
  }
  return outcome;
}

bool isNotFound(const Error& error) {
  return error.code == ErrorCode::kNotFound;
}

// The recorded partitions, marked released (after RemovePartition).
Json releasedPartitions(const Json& job) {
  Json partitions = recordedPartitions(job);
  for (Json& partition : partitions) partition["state"] = kPartitionReleased;
  return partitions;
}

std::string jobSelector(const Json& job) {
  return std::string(kJobNameLabel) + "=" + stringMember(job["metadata"], "name");
}

double secondsSince(const Json& job, const char* timestampField, Clock::WallTime now) {
  const auto since = parseTime(stringMember(member(job, "metadata"), timestampField));
  if (!since) return -1;
  return std::chrono::duration<double>(now - *since).count();
}

}  // namespace

IpuJobReconciler::IpuJobReconciler(kube::RestClient& client, const kube::Store& jobs, const kube::Store& pods,
                                   VipuControllers& controllers, Admitter& admitter,
                                   kube::EventRecorder& events, Clock& clock, ReconcilerOptions options)
    : client_(client),
      jobs_(jobs),
      pods_(pods),
      controllers_(controllers),
      admitter_(admitter),
      events_(events),
      clock_(clock),
      options_(std::move(options)),
      finalizer_(client, ipuJobResource(), kCleanupFinalizer) {}

Result<Action> IpuJobReconciler::reconcile(const kube::ObjectPtr& job) {
  return finalizer_.run(
      *job, [this](const Json& current) { return apply(current); },
      [this](const Json& current) { return cleanup(current); });
}

ctrl::Retry IpuJobReconciler::onError(const kube::ObjectPtr& job, const Error& error) {
  const ctrl::Retry retry = ctrl::defaultRetry(error);
  if (retry == ctrl::Retry::kAfterChange && error.code != ErrorCode::kCancelled) {
    events_.record(kube::referenceTo(*job), kube::EventType::kWarning, "ReconcileError",
                   "Retrying cannot fix this error; the job waits for a change: " + error.toString());
  }
  return retry;
}

Result<Action> IpuJobReconciler::apply(const Json& job) {
  const std::string phase = phaseOf(job);
  if (isTerminalPhase(phase)) {
    const auto generation = job["metadata"].value("generation", int64_t{0});
    const auto observed = member(job, "status").value("observedGeneration", int64_t{0});
    if (phase == kPhaseFailed && generation != observed &&
        kReadmittableReasons.contains(failureReason(job))) {
      return readmit(job);
    }
    return finished(job);
  }

  auto parsed = api::parseIpuJob(job);
  if (!parsed) {
    if (holdsPartitions(job)) {
      // Only an older CRD could let this through while running: stop it cleanly rather than strand IPUs.
      return fail(job, "InvalidSpec", parsed.error().message);
    }
    if (auto status = setPhase(job, kPhaseFailed, "InvalidSpec", parsed.error().message); !status) {
      return status.error();
    }
    return Action{};  // retrying cannot help until the user edits the job, which triggers a reconcile
  }
  if (parsed->spec.suspend) return suspend(job, *parsed);
  if (!holdsPartitions(job)) return admit(job, *parsed);
  return runJob(job, *parsed);
}

Result<Action> IpuJobReconciler::cleanup(const Json& job) {
  if (auto status = removeRecordedPartitions(job); !status) return status.error();
  log::info("released the partitions of a deleted IPUJob", {{"job", kube::objectKey(job)}});
  return Action::awaitChange();
}

Result<Action> IpuJobReconciler::readmit(const Json& job) {
  // The job never ran; its edited spec gets a fresh start (the old failure stays in the Event history).
  Json reset = {{"phase", kPhasePending},
                {"launcherStatus", launcherStatusFor(kPhasePending)},
                {"lastMessage", "The spec changed: the job is admitted again"},
                {"conditions", nullptr},
                {"partitions", nullptr},
                {"completionTime", nullptr},
                {"startTime", nullptr},
                {"restartCount", nullptr},
                {"queuePosition", nullptr}};
  if (auto status = patchStatus(job, std::move(reset), /*conditional=*/true); !status) return status.error();
  events_.record(kube::referenceTo(job), kube::EventType::kNormal, "SpecChanged",
                 "The spec changed after the job failed with " + failureReason(job) + ": admitting it again");
  return Action{std::chrono::milliseconds(0)};
}

Status IpuJobReconciler::removeRecordedPartitions(const Json& job) {
  for (const Json& partition : heldPartitions(job)) {
    const std::string id = partition.value("id", "");
    const std::string controller = partition.value("controller", "");
    const VipuTarget* target = controllers_.find(controller);
    if (target == nullptr) {
      return makeError(ErrorCode::kNotFound,
                       "cannot release partition " + id + ": " +
                           unknownControllerMessage(controller, controllers_.targets()));
    }
    auto removed = target->api->removePartition(id, /*force=*/true);
    if (!removed && !isNotFound(removed.error())) return removed.error();
    log::info("removed partition", {{"job", kube::objectKey(job)}, {"partition", id}});
  }
  return {};
}

Status IpuJobReconciler::deletePods(const std::vector<kube::ObjectPtr>& pods) {
  for (const kube::ObjectPtr& pod : pods) {
    if (!member(member(*pod, "metadata"), "deletionTimestamp").is_null()) continue;  // already going
    kube::DeleteOptions options;
    options.preconditionUid = (*pod)["metadata"].value("uid", "");  // never a newer pod of the same name
    auto removed = client_.remove(kube::ResourceRef::pods(), (*pod)["metadata"].value("namespace", ""),
                                  (*pod)["metadata"].value("name", ""), options);
    if (!removed && !isNotFound(removed.error()) && removed.error().code != ErrorCode::kConflict) {
      return removed.error();
    }
  }
  return {};
}

Result<Action> IpuJobReconciler::finished(const Json& job) {
  if (holdsPartitions(job)) {
    failpoint("ipujob/before-release");
    if (auto status = removeRecordedPartitions(job); !status) return status.error();
    if (auto status = patchStatus(job, {{"partitions", releasedPartitions(job)}}); !status)
      return status.error();
  }

  // Workers still running (the others of a failed job) go first: they would hold nothing but a dead
  // partition.
  const std::string uid = job["metadata"].value("uid", "");
  const auto spec = api::parseIpuJobSpec(member(job, "spec"));
  const auto cleanPolicy = spec ? spec->cleanPodPolicy : api::CleanPodPolicy::kNone;
  const std::string keep = workerPodName(job["metadata"].value("name", ""), 0);  // the launcher's logs
  std::vector<kube::ObjectPtr> doomed;
  for (const kube::ObjectPtr& pod : pods_.listOwnedBy(uid)) {
    const bool workerZero = (*pod)["metadata"].value("name", "") == keep;
    if (!podFinished(*pod) || cleanPolicy == api::CleanPodPolicy::kAll ||
        (cleanPolicy == api::CleanPodPolicy::kWorkers && !workerZero)) {
      doomed.push_back(pod);
    }
  }
  if (auto status = deletePods(doomed); !status) return status.error();

  const Json& ttl = member(member(job, "spec"), "ttlSecondsAfterFinished");
  const auto completed = parseTime(stringMember(member(job, "status"), "completionTime"));
  if (!ttl.is_number_integer() || !completed) return Action{};
  const auto expiry = *completed + std::chrono::seconds(ttl.get<int64_t>());
  const auto now = clock_.wallNow();
  if (now < expiry) return Action{std::chrono::duration_cast<Clock::Duration>(expiry - now)};
  kube::DeleteOptions options;
  options.propagationPolicy = "Background";
  options.preconditionUid = uid;
  auto removed = client_.remove(ipuJobResource(), job["metadata"].value("namespace", ""),
                                job["metadata"].value("name", ""), options);
  if (!removed && !isNotFound(removed.error())) return removed.error();
  log::info("deleted a finished IPUJob after ttlSecondsAfterFinished", {{"job", kube::objectKey(job)}});
  return Action{};
}

Result<Action> IpuJobReconciler::suspend(const Json& job, const api::IpuJob& parsed) {
  if (auto status = deletePods(pods_.listOwnedBy(parsed.identity.uid)); !status) return status.error();
  if (auto status = removeRecordedPartitions(job); !status) return status.error();
  if (auto status = setPhase(job, kPhaseSuspended, "Suspended", "The job is suspended",
                             {{"partitions", Json::array()}, {"currentReplicas", 0}, {"startTime", nullptr}});
      !status) {
    return status.error();
  }
  return Action{};
}

Result<Action> IpuJobReconciler::admit(const Json& job, const api::IpuJob& parsed) {
  AdmissionDecision::Kind kind = AdmissionDecision::Kind::kWait;
  bool decided = false;
  auto acted = admitter_.admit(
      kube::objectKey(job),
      [&](const AdmissionDecision& decision, const vipu::PartitionPlanner* planner) -> Status {
        kind = decision.kind;
        decided = true;
        switch (decision.kind) {
          case AdmissionDecision::Kind::kAdmit:
            return recordAdmission(job, parsed, decision, *planner);
          case AdmissionDecision::Kind::kNeverFits:
            return setPhase(job, kPhaseFailed, "Unschedulable", decision.message);
          case AdmissionDecision::Kind::kWait:
            break;
        }
        const std::string position = "position " + std::to_string(decision.position) + " in the queue";
        return setPhase(
            job, kPhaseQueued, decision.reason,
            decision.reason == "InsufficientCapacity"
                ? "Waiting for capacity (" + position + "): " + decision.message
                : "Waiting (" + position + "): " + decision.message,
            {{"queuePosition", decision.position}, {"desiredReplicas", parsed.spec.workerCount()}});
      });
  if (!acted) {
    if (decided) return acted.error();  // writing the decision failed (e.g. a stale cache): retry
    // V-IPU could not be asked: the user sees why nothing happens; the controller retries with backoff.
    if (auto status = setPhase(job, kPhaseQueued, "VipuUnavailable", acted.error().message); !status) {
      log::warning("could not write status",
                   {{"job", kube::objectKey(job)}, {"error", status.error().toString()}});
    }
    return acted.error();
  }
  if (!*acted) return Action{std::chrono::seconds(1)};  // the cache is behind a change; its event follows
  if (kind == AdmissionDecision::Kind::kAdmit) return Action{options_.activationPoll};
  if (kind == AdmissionDecision::Kind::kWait) return Action{options_.queuedRetry};
  return Action{};
}

Status IpuJobReconciler::recordAdmission(const Json& job, const api::IpuJob& parsed,
                                         const AdmissionDecision& decision,
                                         const vipu::PartitionPlanner& planner) {
  const VipuTarget* target = controllers_.find(decision.controller);
  const auto size = static_cast<std::uint32_t>(parsed.spec.ipusPerJobInstance);
  Json recorded = Json::array();
  for (std::uint32_t instance = 0; instance < decision.placements.size(); ++instance) {
    recorded.push_back({{"id", partitionIdFor(options_.partitionIdPrefix, parsed.identity.ns,
                                              parsed.identity.name, instance)},
                        {"instance", instance},
                        {"size", size},
                        {"controller", decision.controller},
                        {"ipus", describeIpus(planner.topology(), decision.placements[instance].block)},
                        {"state", kPartitionPlanned}});
  }
  const auto now = clock_.wallNow();
  // Ids go into status before any partition exists (and only if the job is still the version this pass
  // planned), so a crash after CreatePartition leaves nothing that status does not name.
  if (auto status =
          setPhase(job, kPhaseCreating, "Admitted",
                   "Admitted to " + decision.controller + ": creating " + std::to_string(recorded.size()) +
                       " partition(s) of " + std::to_string(size) + " IPUs",
                   {{"partitions", recorded},
                    {"desiredReplicas", parsed.spec.workerCount()},
                    {"currentReplicas", 0},
                    {"startTime", formatTime(now)},
                    {"completionTime", nullptr}},
                   /*conditional=*/true);
      !status) {
    return status;
  }
  failpoint("ipujob/after-admission-recorded");
  warnIfLauncherNotRun(job, parsed.spec);
  if (options_.hooks.admitted) options_.hooks.admitted(secondsSince(job, "creationTimestamp", now));
  std::vector<const Json*> partitions;
  for (const Json& partition : recorded) partitions.push_back(&partition);
  return createPartitions(job, *target, partitions, planner, decision.placements);
}

void IpuJobReconciler::warnIfLauncherNotRun(const Json& job, const api::IpuJobSpec& spec) {
  // Parsed but not acted on: say so loudly rather than let the job look as if its launcher ran.
  std::string what;
  if (!spec.launcherCommand.empty()) what = "launcher.command is set";
  if (spec.workersPerJobInstance > 1) {
    what += (what.empty() ? "" : " and ") + std::string("workersPerJobInstance is ") +
            std::to_string(spec.workersPerJobInstance);
  }
  if (what.empty()) return;
  events_.record(kube::referenceTo(job), kube::EventType::kWarning, "LauncherNotRun",
                 what +
                     ", but this operator version does not run a launcher yet: each worker pod runs its own "
                     "container command, and no process starts the instance across its worker pods");
}

Status IpuJobReconciler::createPartitions(const Json& job, const VipuTarget& target,
                                          const std::vector<const Json*>& partitions,
                                          const vipu::PartitionPlanner& planner,
                                          const std::vector<vipu::InstancePlacement>& placements) {
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const std::string id = partitions[i]->value("id", "");
    auto created =
        target.api->createPartition(vipu::makePartitionRequest(id, planner.topology(), placements[i]));
    // ALREADY_EXISTS: ours, created by an earlier attempt whose answer was lost.
    if (!created && created.error().code != ErrorCode::kAlreadyExists) return created.error();
    events_.record(kube::referenceTo(job), kube::EventType::kNormal, "PartitionCreated",
                   "Created V-IPU partition " + id + " (" + std::to_string(partitions[i]->value("size", 0)) +
                       " IPUs) on " + target.name);
    failpoint("ipujob/after-partition-created");
  }
  return {};
}

Result<Action> IpuJobReconciler::runJob(const Json& job, const api::IpuJob& parsed) {
  const auto& spec = parsed.spec;
  Json recorded = recordedPartitions(job);
  const std::string controller = recorded.at(0).value("controller", "");
  const VipuTarget* target = controllers_.find(controller);
  if (target == nullptr) {
    return makeError(ErrorCode::kFailedPrecondition,
                     "the job holds partitions on a V-IPU controller the operator "
                     "is not configured with: " +
                         unknownControllerMessage(controller, controllers_.targets()));
  }
  auto planner = controllers_.planner(controller);
  if (!planner) return planner.error();
  const vipu::Topology& topology = (*planner)->topology();
  auto existing = target->api->listPartitions("");
  if (!existing) return existing.error();
  std::map<std::string, vipu::Partition> byId;
  for (const auto& partition : *existing) byId.emplace(partition.id, partition);

  // Recorded partitions V-IPU does not have: a crash between recording and creating them.
  std::vector<const Json*> missing;
  for (const Json& partition : recorded) {
    if (!byId.contains(partition.value("id", ""))) missing.push_back(&partition);
  }
  if (!missing.empty()) {
    const auto size = static_cast<std::uint32_t>(spec.ipusPerJobInstance);
    bool fits = true;
    auto status = admitter_.placeMissing(
        controller, static_cast<std::uint32_t>(missing.size()), size,
        [&](const vipu::PlanResult& plan, const vipu::PartitionPlanner& current) -> Status {
          fits = plan.placed();
          if (!fits) return {};
          return createPartitions(job, *target, missing, current, plan.placements);
        });
    if (!status) return status.error();
    if (!fits) {
      // Someone else took the IPUs while no process ran: give back what exists and return to the queue.
      if (auto released = removeRecordedPartitions(job); !released) return released.error();
      if (auto written = setPhase(job, kPhaseQueued, "InsufficientCapacity",
                                  "The capacity this job was admitted to has been taken; waiting again",
                                  {{"partitions", nullptr}});
          !written) {
        return written.error();
      }
      return Action{std::chrono::milliseconds(0)};
    }
    return Action{options_.activationPoll};
  }

  // Every partition active before any pod exists (gang or nothing).
  for (const Json& partition : recorded) {
    const auto& current = byId.at(partition.value("id", ""));
    if (current.readyState == vipu::ReadyState::kError) {
      return fail(job, "PartitionError", "V-IPU partition " + current.id + " is in error");
    }
    if (current.readyState != vipu::ReadyState::kActive) return Action{options_.activationPoll};
  }
  for (Json& partition : recorded) partition["state"] = kPartitionActive;

  const auto now = clock_.wallNow();
  std::optional<Clock::Duration> deadlineIn;
  if (spec.activeDeadlineSeconds) {
    const auto started = parseTime(stringMember(member(job, "status"), "startTime"));
    if (started) {
      const auto deadline = *started + std::chrono::seconds(*spec.activeDeadlineSeconds);
      if (now >= deadline) {
        return fail(job, "DeadlineExceeded",
                    "The job was active longer than activeDeadlineSeconds (" +
                        std::to_string(*spec.activeDeadlineSeconds) + " s)");
      }
      deadlineIn = std::chrono::duration_cast<Clock::Duration>(deadline - now);
    }
  }

  // This attempt's pods by name; pods of earlier attempts are replaced.
  const int attempt = restartCountOf(job);
  std::map<std::string, kube::ObjectPtr> pods;
  std::vector<kube::ObjectPtr> stale;
  for (const kube::ObjectPtr& pod : pods_.listOwnedBy(parsed.identity.uid)) {
    if (attemptOf(*pod) == attempt) {
      pods.emplace((*pod)["metadata"].value("name", ""), pod);
    } else {
      stale.push_back(pod);
    }
  }
  const std::string phase = phaseOf(job);
  if (phase == kPhaseRestarting) return restart(job, parsed, *target, stale);
  // Leftovers of an earlier attempt outside a restart (a cache that was behind): they only go.
  if (auto status = deletePods(stale); !status) return status.error();

  // Until every worker has run once, missing pods are being created; after that, a missing pod was lost.
  const bool allStarted = phase == kPhaseRunning;
  int created = 0;
  if (!allStarted) {
    for (int k = 0; k < spec.workerCount(); ++k) {
      const std::string podName = workerPodName(parsed.identity.name, k);
      if (pods.contains(podName)) continue;
      if (created == 0) {
        auto service =
            client_.create(kube::ResourceRef::services(), parsed.identity.ns, buildHeadlessService(parsed));
        if (!service && service.error().code != ErrorCode::kAlreadyExists) return service.error();
      }
      const Json& partition = recorded.at(static_cast<std::size_t>(k / spec.workersPerJobInstance));
      const auto& current = byId.at(partition.value("id", ""));
      const PartitionAssignment assignment{
          current.id, target->name, target->host, target->port, vipu::poplarTargetOptions(current, topology),
          attempt};
      auto pod = client_.create(kube::ResourceRef::pods(), parsed.identity.ns,
                                buildWorkerPod(parsed, k, assignment, options_.pods));
      if (!pod && pod.error().code != ErrorCode::kAlreadyExists) return pod.error();
      ++created;
    }
    if (created > 0) {
      events_.record(kube::referenceTo(job), kube::EventType::kNormal, "PodsCreated",
                     "Created " + std::to_string(created) + " worker pod(s)");
      failpoint("ipujob/after-pods-created");
    }
  }

  std::vector<WorkerOutcome> outcomes;
  int running = 0;
  int done = 0;
  for (int k = 0; k < spec.workerCount(); ++k) {
    const std::string podName = workerPodName(parsed.identity.name, k);
    auto pod = pods.find(podName);
    if (pod == pods.end()) {
      outcomes.push_back({podName, allStarted ? WorkerOutcome::State::kLost : WorkerOutcome::State::kActive,
                          0, "the pod was deleted"});
      continue;
    }
    outcomes.push_back(outcomeOf(podName, *pod->second));
    if (podPhase(*pod->second) == "Running") ++running;
    if (podPhase(*pod->second) == "Succeeded") ++done;
  }
  const int workers = spec.workerCount();
  Json counts = {{"currentReplicas", running},
                 {"desiredReplicas", workers},
                 {"currentInstances", spec.jobInstances},
                 {"partitions", recorded}};

  const WorkerVerdict verdict = judgeWorkers(spec, attempt, outcomes);
  switch (verdict.kind) {
    case WorkerVerdict::Kind::kFail:
      return fail(job, verdict.reason, verdict.message);
    case WorkerVerdict::Kind::kSucceed: {
      counts["completionTime"] = formatTime(now);
      if (auto status = setPhase(job, kPhaseSucceeded, verdict.reason, verdict.message, counts); !status) {
        return status.error();
      }
      return Action{std::chrono::milliseconds(0)};  // finished(): partitions, cleanPodPolicy, TTL
    }
    case WorkerVerdict::Kind::kRestart: {
      counts["restartCount"] = attempt + 1;
      counts["currentReplicas"] = 0;
      if (auto status = setPhase(job, kPhaseRestarting, verdict.reason, verdict.message, counts, true);
          !status) {
        return status.error();
      }
      failpoint("ipujob/after-restart-recorded");
      return Action{std::chrono::milliseconds(0)};
    }
    case WorkerVerdict::Kind::kContinue:
      break;
  }
  if (running + done == workers) {
    if (phase != kPhaseRunning && attempt == 0 && options_.hooks.running) {
      options_.hooks.running(secondsSince(job, "creationTimestamp", now));
    }
    if (auto status = setPhase(job, kPhaseRunning, "Running", "All worker pods are running", counts);
        !status) {
      return status.error();
    }
    return Action{deadlineIn};
  }
  const std::string message = "Waiting for worker pods: " + std::to_string(running + done) + " of " +
                              std::to_string(workers) + " running";
  if (auto status = setPhase(job, kPhaseCreating, "PodsStarting", message, counts); !status)
    return status.error();
  return Action{deadlineIn};
}

Result<Action> IpuJobReconciler::restart(const Json& job, const api::IpuJob& parsed, const VipuTarget& target,
                                         const std::vector<kube::ObjectPtr>& stalePods) {
  // Old pods first (their names are the new pods' names), then a reset of every partition, so the new
  // attempt starts on clean IPUs; only then the next attempt's pods.
  if (!stalePods.empty()) {
    if (auto status = deletePods(stalePods); !status) return status.error();
    failpoint("ipujob/after-restart-pods-deleted");
    return Action{options_.podDeletionPoll};
  }
  for (const Json& partition : recordedPartitions(job)) {
    const std::string id = partition.value("id", "");
    if (auto reset = target.api->resetPartition(id); !reset) return reset.error();
    events_.record(kube::referenceTo(job), kube::EventType::kNormal, "PartitionReset",
                   "Reset V-IPU partition " + id + " for restart " + std::to_string(restartCountOf(job)));
  }
  failpoint("ipujob/after-partitions-reset");
  if (auto status = setPhase(job, kPhaseCreating, "Restarted",
                             "Restart " + std::to_string(restartCountOf(job)) + ": creating worker pods",
                             {{"desiredReplicas", parsed.spec.workerCount()}}, /*conditional=*/true);
      !status) {
    return status.error();
  }
  return Action{std::chrono::milliseconds(0)};
}

Result<Action> IpuJobReconciler::fail(const Json& job, const std::string& reason,
                                      const std::string& message) {
  // The verdict first: finished() then stops the workers still running, releases the partitions and applies
  // cleanPodPolicy and TTL, whichever process gets there.
  if (auto status = setPhase(job, kPhaseFailed, reason, message,
                             {{"currentReplicas", 0}, {"completionTime", formatTime(clock_.wallNow())}});
      !status) {
    return status.error();
  }
  return Action{std::chrono::milliseconds(0)};
}

Status IpuJobReconciler::patchStatus(const Json& job, Json status, bool conditional) {
  const Json current = member(job, "status").is_object() ? job["status"] : Json::object();
  Json merged = current;
  merged.merge_patch(status);
  if (merged == current && !conditional) return {};  // nothing new: a repeated reconcile writes nothing
  const Json& metadata = job["metadata"];
  Json patch = {{"status", std::move(status)}};
  // With resourceVersion the API server refuses (409) a write based on a stale read: decisions that must be
  // made once (admission, a restart) cannot be made twice from an old cache.
  if (conditional) patch["metadata"] = {{"resourceVersion", metadata.value("resourceVersion", "")}};
  auto patched = client_.patch(ipuJobResource(), metadata.value("namespace", ""), metadata.value("name", ""),
                               kube::PatchType::kMerge, patch, "status");
  if (!patched) return patched.error();
  return {};
}

Status IpuJobReconciler::setPhase(const Json& job, const std::string& phase, const std::string& reason,
                                  const std::string& message, Json extra, bool conditional) {
  const Json& status = member(job, "status");
  const int64_t generation = job["metadata"].value("generation", int64_t{0});
  const std::string now = formatTime(clock_.wallNow());
  extra["phase"] = phase;
  extra["launcherStatus"] = launcherStatusFor(phase);
  extra["lastMessage"] = message;
  extra["observedGeneration"] = generation;
  extra["selector"] = jobSelector(job);
  if (!extra.contains("queuePosition")) extra["queuePosition"] = nullptr;  // only waiting jobs have one
  extra["conditions"] =
      conditionsForPhase(member(status, "conditions"), phase, reason, message, generation, now);
  const bool changed = phaseOf(job) != phase;
  if (auto patched = patchStatus(job, std::move(extra), conditional); !patched) return patched;
  if (changed) {
    const bool warning = phase == kPhaseFailed || phase == kPhaseRestarting;
    const std::string eventReason = phase == kPhaseQueued       ? "Queued"
                                    : phase == kPhaseFailed     ? "Failed"
                                    : phase == kPhaseSucceeded  ? "Succeeded"
                                    : phase == kPhaseRestarting ? "Restarting"
                                                                : reason;
    events_.record(kube::referenceTo(job), warning ? kube::EventType::kWarning : kube::EventType::kNormal,
                   eventReason, message);
    log::info("IPUJob phase changed", {{"job", kube::objectKey(job)}, {"phase", phase}, {"reason", reason}});
  }
  return {};
}

}  // namespace ipu::controllers
