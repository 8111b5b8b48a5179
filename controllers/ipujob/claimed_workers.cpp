#include "ipujob/claimed_workers.h"

#include "api/resources.h"
#include "common/json_access.h"
#include "common/log.h"
#include "ipujob/child_ownership.h"

namespace ipu::controllers {
namespace {

// Why `pod` is not one of the job's workers; "" when it is.
std::string notAWorker(const nlohmann::json& pod, const api::ObjectIdentity& job) {
  const nlohmann::json& metadata = member(pod, "metadata");
  if (stringMember(metadata, "namespace") != job.ns) return "it is in another namespace";
  if (holderOf(pod, job) != ChildHolder::kThisJob)
    return "its ownerReference to the job is not an IPUJob controller reference";
  if (!member(member(metadata, "labels"), api::kAttemptLabel).is_string())
    return std::string("it has no ") + api::kAttemptLabel + " label";
  return "";
}

}  // namespace

ClaimedPods claimPods(const std::vector<kube::ObjectPtr>& ownedByUid, const api::ObjectIdentity& job) {
  ClaimedPods claimed;
  for (const kube::ObjectPtr& pod : ownedByUid) {
    if (std::string why = notAWorker(*pod, job); why.empty()) {
      claimed.workers.push_back(pod);
    } else {
      claimed.impostors.push_back({pod, std::move(why)});
    }
  }
  return claimed;
}

std::vector<kube::ObjectPtr> WorkerPodsOfJob::of(const JobPass& pass) {
  const api::ObjectIdentity& job = pass.identity;
  ClaimedPods claimed = claimPods(pods_.listOwnedBy(job.uid), job);
  for (const ClaimedPods::Impostor& impostor : claimed.impostors) {
    const nlohmann::json& metadata = member(*impostor.pod, "metadata");
    const std::string pod = stringMember(metadata, "namespace") + "/" + stringMember(metadata, "name");
    {
      std::lock_guard lock(mutex_);
      const std::string uid = stringMember(metadata, "uid");
      if (reported_.find(uid) != nullptr) continue;
      reported_.put(uid, true);
    }
    log::warning("a pod claims an IPUJob but is not its worker",
                 {{"job", job.ns + "/" + job.name}, {"pod", pod}, {"why", impostor.why}});
    events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, "PodConflict",
                   "Pod " + pod + " names this job as its owner but is not one of its workers (" +
                       impostor.why + "); it is ignored");
  }
  return std::move(claimed.workers);
}

}  // namespace ipu::controllers
