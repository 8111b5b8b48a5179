#include "ipujob/release_steps.h"

#include "api/resources.h"
#include "common/failpoint.h"
#include "common/log.h"
#include "common/time_format.h"
#include "ipujob/output_retention.h"

namespace ipu::controllers {
namespace {

// How long after its end a retention container may still run before its pod is removed anyway (its own timer
// starts when the command's processes are gone, a moment after the kubelet's finishedAt).
constexpr Clock::Duration kRetentionGrace = std::chrono::seconds(30);

std::string failureReason(const api::IpuJobStatus& status) {
  const api::Condition* failed = status.condition(kPhaseFailed);
  return failed ? failed->reason : "";
}

}  // namespace

StepOutcome ReleaseSteps::readmit(JobPass& pass) {
  // The job never ran; its edited spec gets a fresh start (the old failure stays in the Event history).
  const std::string reason = failureReason(pass.status);
  auto& status = pass.status;
  status.phase = kPhasePending;
  status.launcherStatus = launcherStatusFor(kPhasePending);
  status.lastMessage = "The spec changed: the job is admitted again";
  status.conditions.clear();
  status.forgetPartitions();
  status.completionTime.reset();
  status.startTime.reset();
  status.restartCount.reset();
  status.queuePosition.reset();
  status.interactive.reset();
  status.outputs.reset();
  events_.record(kube::referenceTo(pass.object), kube::EventType::kNormal, "SpecChanged",
                 "The spec changed after the job failed with " + reason + ": admitting it again");
  return StepOutcome::decided(StepOutcome::Decision::kReadmitted, Action::requeueNow());
}

StepOutcome ReleaseSteps::finished(JobPass& pass) {
  const std::vector<kube::ObjectPtr> pods = pods_.of(pass);
  const auto retained = retainedOutputs(pass, pods);
  const std::string keep = retained ? retained->pod : "";
  if (pass.holdsPartitions()) {
    // Workers still running when the job's verdict came (the others of a failed one) stop first.
    auto stopping = stopWorkers(pass, pods, keep);
    if (!stopping) return stopping.error();
    if (*stopping) return Action::requeue(**stopping);
    failpoint("ipujob/before-release");
    if (auto released = partitions_.release(pass); !released) return released.error();
  }
  if (Status released = admission_.releaseQuota(pass); !released) return released.error();
  const auto held = retained ? std::optional(holdOutputs(pass, *retained)) : std::nullopt;
  const auto doomed = podsToRemoveAtEnd(pods, pass.specOrDefaults().cleanPodPolicy, pass.identity.name, keep);
  if (auto removed = workers_.remove(doomed); !removed) return removed.error();
  // The partitions are released: pods whose node stopped answering can be force-deleted.
  auto forced = workers_.forceRemoveOverdue(pass, pods, options_.podDeletionTimeout);
  if (!forced) return forced.error();
  StepOutcome outcome = removeAfterTtl(pass);
  for (const auto& soonest : {*forced, held}) {
    if (outcome.next && soonest && (!outcome.next->requeueAfter || *soonest < *outcome.next->requeueAfter))
      outcome.next->requeueAfter = *soonest;
  }
  return outcome;
}

Result<std::optional<Action>> ReleaseSteps::deleted(JobPass& pass) {
  const std::vector<kube::ObjectPtr> pods = pods_.of(pass);
  if (pass.holdsPartitions()) {
    auto stopping = stopWorkers(pass, pods);
    if (!stopping) return stopping.error();
    if (*stopping) return std::optional(Action::requeue(**stopping));
  }
  if (auto released = partitions_.release(pass); !released) return released.error();
  // The rest of its pods go with the job (garbage collector); those of a node that stopped answering never
  // would.
  if (auto forced = workers_.forceRemoveOverdue(pass, pods, options_.podDeletionTimeout); !forced)
    return forced.error();
  return std::optional<Action>();
}

std::vector<kube::ObjectPtr> ReleaseSteps::stillRunning(const JobPass& pass,
                                                        const std::vector<kube::ObjectPtr>& pods,
                                                        const std::string& keep) const {
  std::vector<kube::ObjectPtr> running;
  for (const kube::ObjectPtr& pod : pods) {
    if (stringMember(member(*pod, "metadata"), "name") == keep) continue;
    if (releaseWaitsFor(*pod, pass.now, options_.podDeletionTimeout)) running.push_back(pod);
  }
  return running;
}

Result<std::optional<Clock::Duration>> ReleaseSteps::stopWorkers(const JobPass& pass,
                                                                 const std::vector<kube::ObjectPtr>& pods,
                                                                 const std::string& keep) {
  const std::vector<kube::ObjectPtr> running = stillRunning(pass, pods, keep);
  if (running.empty()) return std::optional<Clock::Duration>();
  if (Status removed = workers_.remove(running); !removed) return removed.error();
  return std::optional(options_.podDeletionPoll);
}

std::optional<ReleaseSteps::RetainedOutputs> ReleaseSteps::retainedOutputs(
    const JobPass& pass, const std::vector<kube::ObjectPtr>& pods) {
  const std::string name = workerPodName(pass.identity.name, 0);
  for (const kube::ObjectPtr& pod : pods) {
    if (stringMember(member(*pod, "metadata"), "name") != name) continue;
    auto kept = keptOutputs(*pod);
    if (!kept || pass.now >= kept->until + kRetentionGrace) return std::nullopt;
    return RetainedOutputs{name, std::move(*kept)};
  }
  return std::nullopt;
}

Clock::Duration ReleaseSteps::holdOutputs(JobPass& pass, const RetainedOutputs& retained) {
  const KeptOutputs& kept = retained.kept;
  const api::OutputsStatus record{kept.path, formatTime(kept.until)};
  if (pass.status.outputs != record) {
    if (!pass.observed.outputs) {
      events_.record(kube::referenceTo(pass.object), kube::EventType::kNormal, "OutputsRetained",
                     retained.pod + " keeps " + kept.path + " until " + record.retainedUntil +
                         " (its command ended; the job's IPUs are released): kubectl ipu cp " +
                         pass.identity.name + ":" + kept.path + " DEST");
    }
    pass.status.outputs = record;
  }
  return std::chrono::duration_cast<Clock::Duration>(kept.until + kRetentionGrace - pass.now);
}

StepOutcome ReleaseSteps::removeAfterTtl(const JobPass& pass) {
  const auto ttl = api::ttlSecondsAfterFinished(member(pass.object, "spec"));
  const auto completed = parseTime(pass.status.completionTime.value_or(""));
  if (!ttl || !completed) return Action::awaitChange();
  const auto expiry = *completed + std::chrono::seconds(*ttl);
  if (pass.now < expiry)
    return Action::requeue(std::chrono::duration_cast<Clock::Duration>(expiry - pass.now));
  kube::DeleteOptions options;
  options.propagationPolicy = "Background";
  options.preconditionUid = pass.identity.uid;
  auto removed = client_.remove(api::ipuJobResource(), pass.identity.ns, pass.identity.name, options);
  if (!removed && removed.error().code != ErrorCode::kNotFound) return removed.error();
  log::info("deleted a finished IPUJob after ttlSecondsAfterFinished", {{"job", pass.key}});
  return Action::awaitChange();
}

std::optional<StepOutcome> ReleaseSteps::letGo(JobPass& pass) {
  const std::vector<kube::ObjectPtr> pods = pods_.of(pass);
  if (auto removed = workers_.remove(pods); !removed) return StepOutcome(removed.error());
  if (pass.holdsPartitions() && !stillRunning(pass, pods).empty())
    return StepOutcome(Action::requeue(options_.podDeletionPoll));
  if (auto released = partitions_.release(pass); !released) return StepOutcome(released.error());
  if (Status released = admission_.releaseQuota(pass); !released) return StepOutcome(released.error());
  if (auto forced = workers_.forceRemoveOverdue(pass, pods, options_.podDeletionTimeout); !forced)
    return StepOutcome(forced.error());
  pass.status.forgetPartitions();
  pass.status.currentReplicas = 0;
  pass.status.startTime.reset();
  pass.status.interactive.reset();  // resumed, an interactive job is a new session
  return std::nullopt;
}

StepOutcome ReleaseSteps::suspend(JobPass& pass) {
  if (auto waiting = letGo(pass)) return *waiting;
  pass.setPhase(kPhaseSuspended, "Suspended", "The job is suspended");
  return Action::awaitChange();
}

StepOutcome ReleaseSteps::evict(JobPass& pass, const std::string& reason, const std::string& message) {
  if (auto waiting = letGo(pass)) return *waiting;
  if (pass.status.kueue) {
    pass.status.kueue->admitted = false;
    pass.status.kueue->awaitingPlacement = false;
  }
  pass.setPhase(kPhaseQueued, reason, message);
  return Action::awaitChange();  // the pods' deletions and the Workload's changes bring the next passes
}

// Edited while suspended, then resumed before any operator saw the suspension: its pods and partitions are of
// the old shape, so they all go and the job is admitted again; pods of the new shape never run on partitions
// of the old.
StepOutcome ReleaseSteps::reshape(JobPass& pass, const std::string& drift) {
  if (auto waiting = letGo(pass)) return *waiting;
  pass.setPhase(kPhasePending, "SpecChanged",
                "The job's shape changed (" + drift + ") since it was admitted: admitting it again");
  return Action::requeueNow();
}

}  // namespace ipu::controllers
