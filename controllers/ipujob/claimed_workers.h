#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "api/ipujob.h"
#include "ipujob/job_pass.h"
#include "kube/event_recorder.h"
#include "kube/lru_cache.h"
#include "kube/store.h"

namespace ipu::controllers {

// The pods of the cache that name a job as an owner, split by whether they are its workers.
struct ClaimedPods {
  // In the job's namespace, with a controller ownerReference to the job's uid and kind, and the attempt label
  // the operator writes: the only pods ever judged, replaced or deleted as the job's workers.
  std::vector<kube::ObjectPtr> workers;
  // Anything else that names the job's uid (a pod of another namespace, one without the controller flag or
  // the attempt label), with why it is not a worker. The garbage collector removes most of them soon; until
  // then they are reported on the job and never acted on.
  struct Impostor {
    kube::ObjectPtr pod;
    std::string why;
  };
  std::vector<Impostor> impostors;
};

// Pure: splits `ownedByUid` (the cache's pods with an ownerReference to the job's uid).
ClaimedPods claimPods(const std::vector<kube::ObjectPtr>& ownedByUid, const api::ObjectIdentity& job);

// A job's worker pods from the pod cache, every pass's one way to them: the impostors among the pods that
// claim the job are reported on it, a Warning Event (PodConflict) naming each pod once.
class WorkerPodsOfJob {
 public:
  WorkerPodsOfJob(const kube::Store& pods, kube::EventRecorder& events) : pods_(pods), events_(events) {}

  std::vector<kube::ObjectPtr> of(const JobPass& pass);

 private:
  const kube::Store& pods_;
  kube::EventRecorder& events_;
  std::mutex mutex_;
  // Pod uids already reported (bounded: a report more after a flood is harmless, a memory that grows is not).
  kube::LruCache<std::string, bool> reported_{4096};
};

}  // namespace ipu::controllers
