#include "ipujob/worker_steps.h"

#include "common/failpoint.h"
#include "common/json_access.h"
#include "common/log.h"
#include "common/time_format.h"
#include "ipujob/agent_network_policy.h"
#include "ipujob/child_ownership.h"
#include "ipujob/runtime_injection.h"
#include "tls/pki.h"
#include "vipu/poplar_target_options.h"

namespace ipu::controllers {

Result<ChildrenState> WorkerSteps::createMissing(JobPass& pass, const api::IpuJob& job,
                                                 const WorkerPods& pods, const QueuePlacement& placement,
                                                 const PartitionsState& partitions) {
  const std::string& uid = job.identity.uid;
  const int attempt = pass.attempt();
  const auto held = pass.status.heldPartitions();
  // A pod of the attempt exists only once its Service did: it was created before the attempt's first pod.
  bool sharedChildrenExist = !pods.current.empty() || expectations_.sharedChildrenMadeFor(uid, attempt);
  std::optional<api::RuntimeSecretRecord> runtimeSecret;
  ChildrenState state;
  int created = 0;
  for (int k = 0; k < job.spec.workerCount(); ++k) {
    const std::string name = workerPodName(job.identity.name, k);
    if (pods.current.contains(name)) {
      expectations_.podSeen(uid, attempt, name);
      continue;
    }
    if (const auto left = expectations_.awaiting(uid, attempt, name)) {
      keepSooner(state.recheckIn, left);
      continue;
    }
    if (!runtimeSecret) {
      auto secret = runtimeSecretFor(pass, job, pods);
      if (!secret) return secret.error();
      if (!*secret) return ChildrenState{ChildrenState::Kind::kSecretRecorded, "", std::nullopt};
      runtimeSecret = **secret;
    }
    if (!sharedChildrenExist) {
      auto service = createChild(kube::ResourceRef::services(), job, buildHeadlessService(job));
      if (!service || service->kind != ChildrenState::Kind::kCreated) return service;
      if (needsRuntimeSecret(job)) {
        // Before the agents listen: only the job's own pods may reach them.
        auto policy = createChild(kube::ResourceRef::networkPolicies(), job, buildAgentNetworkPolicy(job));
        if (!policy || policy->kind != ChildrenState::Kind::kCreated) return policy;
      }
      expectations_.sharedChildrenMade(uid, attempt);
      sharedChildrenExist = true;
    }
    const auto& partition =
        partitions.byId.at(held.at(static_cast<std::size_t>(k / job.spec.workersPerJobInstance)).id);
    const VipuTarget& target = *partitions.target;
    const WorkerAssignment assignment{partition.id,
                                      target.name,
                                      target.host,
                                      target.port,
                                      vipu::poplarTargetOptions(partition, partitions.planner->topology()),
                                      attempt,
                                      *runtimeSecret,
                                      partitions.kind == PartitionsState::Kind::kActive,
                                      placement.nodeSelector,
                                      placement.tolerations};
    auto built = tryBuildWorkerPod(job, k, assignment, options_);
    if (!built) return ChildrenState{ChildrenState::Kind::kInvalidSpec, built.error().message, std::nullopt};
    auto pod = createChild(kube::ResourceRef::pods(), job, *built);
    if (!pod || pod->kind != ChildrenState::Kind::kCreated) return pod;
    expectations_.podCreated(uid, attempt, name);
    ++created;
  }
  if (created > 0) {
    // Logged, not an Event: the pods themselves and the job's status show it (see PartitionSteps::create).
    log::info("created worker pods", {{"job", pass.key}, {"count", std::to_string(created)}});
    failpoint("ipujob/after-pods-created");
  }
  return state;
}

bool WorkerSteps::needsRuntimeSecret(const api::IpuJob& job) const {
  return !options_.runtime.image.empty() && needsRuntimeCredentials(job.spec);
}

Status WorkerSteps::issueRuntimeSecret(JobPass& pass, const api::IpuJob& job) {
  if (!needsRuntimeSecret(job) || pass.status.runtimeSecret) return {};
  // One CA and key pair for the job's life: every attempt's pods mount the same Secret.
  const runtime::pki::JobCredentials credentials =
      runtime::pki::issueJobCredentials(runtimeIdentity(job.identity), kRuntimeCredentialValidity);
  // Created under a generated name, never one known in advance: nobody can have created it first, so the
  // operator needs no right to read Secrets to know the one it mounts is its own.
  auto created =
      client_.create(kube::ResourceRef::secrets(), job.identity.ns, buildRuntimeSecret(job, credentials));
  if (!created) return created.error();
  const std::string name = stringMember(member(*created, "metadata"), "name");
  if (name.empty())
    return makeError(ErrorCode::kInternal,
                     "the API server answered the runtime Secret's creation without its name");
  pass.status.runtimeSecret = runtimeSecretRecord(name, credentials);
  log::info("created the runtime Secret", {{"job", pass.key}, {"secret", name}});
  return {};
}

Result<std::optional<api::RuntimeSecretRecord>> WorkerSteps::runtimeSecretFor(JobPass& pass,
                                                                              const api::IpuJob& job,
                                                                              const WorkerPods& pods) {
  if (!needsRuntimeSecret(job)) return std::optional(api::RuntimeSecretRecord{});
  if (pass.status.runtimeSecret) return std::optional(*pass.status.runtimeSecret);
  // Pods of this attempt made before status.runtimeSecret existed mount the Secret by its derived name:
  // the rest of their instance must mount the same one.
  if (!pods.current.empty())
    return std::optional(api::RuntimeSecretRecord{legacyRuntimeSecretName(job.identity), ""});
  if (Status issued = issueRuntimeSecret(pass, job); !issued) return issued.error();
  return std::optional<api::RuntimeSecretRecord>();
}

Result<ChildrenState> WorkerSteps::createChild(const kube::ResourceRef& resource, const api::IpuJob& job,
                                               const Json& child) {
  using Kind = ChildrenState::Kind;
  const Status created = client_.createDiscardingReply(resource, job.identity.ns, child);
  if (created) return ChildrenState{};
  if (created.error().code != ErrorCode::kAlreadyExists) return created.error();
  // A name is not proof of ownership: a job deleted and created again under its name, or a user's own
  // object, may hold it. Only this job's own child counts as created.
  const std::string name = stringMember(child["metadata"], "name");
  const std::string what = stringMember(child, "kind") + " " + job.identity.ns + "/" + name;
  auto existing = client_.get(resource, job.identity.ns, name);
  if (!existing) {
    if (existing.error().code != ErrorCode::kNotFound) return existing.error();
    return ChildrenState{Kind::kBlocked, what + " was being deleted; creating it again", std::nullopt};
  }
  switch (holderOf(*existing, job.identity)) {
    case ChildHolder::kThisJob:
      return ChildrenState{};
    case ChildHolder::kEarlierJob:
      return ChildrenState{Kind::kBlocked,
                           "Waiting for " + what + " of an earlier IPUJob named " + job.identity.name +
                               " to be deleted (the garbage collector removes it)",
                           std::nullopt};
    case ChildHolder::kSomebodyElse:
      break;
  }
  return ChildrenState{Kind::kNameTaken,
                       what +
                           " already exists and does not belong to this job: delete it or "
                           "give the job another name",
                       std::nullopt};
}

Status WorkerSteps::remove(const std::vector<kube::ObjectPtr>& pods) {
  for (const kube::ObjectPtr& pod : pods) {
    const Json& metadata = (*pod)["metadata"];
    if (!member(metadata, "deletionTimestamp").is_null()) continue;  // already going
    kube::DeleteOptions options;
    options.preconditionUid = metadata.value("uid", "");  // never a newer pod of the same name
    auto removed = client_.remove(kube::ResourceRef::pods(), metadata.value("namespace", ""),
                                  metadata.value("name", ""), options);
    if (!removed && removed.error().code != ErrorCode::kNotFound &&
        removed.error().code != ErrorCode::kConflict) {
      return removed.error();
    }
  }
  return {};
}

Result<std::optional<Clock::Duration>> WorkerSteps::forceRemoveOverdue(
    const JobPass& pass, const std::vector<kube::ObjectPtr>& pods, Clock::Duration grace) {
  std::optional<Clock::Duration> next;
  if (grace <= Clock::Duration::zero()) return next;
  for (const kube::ObjectPtr& pod : pods) {
    const Json& metadata = (*pod)["metadata"];
    const auto deadline = parseTime(stringMember(metadata, "deletionTimestamp"));
    if (!deadline) continue;
    if (!deletionOverdue(*pod, pass.now, grace)) {
      const auto left = std::chrono::duration_cast<Clock::Duration>(*deadline + grace - pass.now);
      if (!next || left < *next) next = left;
      continue;
    }
    kube::DeleteOptions options;
    options.preconditionUid = stringMember(metadata, "uid");
    options.gracePeriodSeconds = 0;
    auto removed = client_.remove(kube::ResourceRef::pods(), stringMember(metadata, "namespace"),
                                  stringMember(metadata, "name"), options);
    if (!removed && removed.error().code != ErrorCode::kNotFound &&
        removed.error().code != ErrorCode::kConflict) {
      return removed.error();
    }
    events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, "WorkerPodForceDeleted",
                   "Force-deleted worker pod " + stringMember(metadata, "name") +
                       ": its node did not confirm its deletion within " +
                       std::to_string(std::chrono::duration_cast<std::chrono::seconds>(grace).count()) +
                       " s of the deadline, and the IPUs it could reach were reset or released first");
  }
  return next;
}

}  // namespace ipu::controllers
