#pragma once

#include <nlohmann/json.hpp>

namespace ipu::controllers {

// What the IPUJob controller's pod cache keeps of a worker pod: the fields its steps read (identity and
// ownership, the job's labels, deletion, the status fields workers are judged by: phase, reason and
// message, the scheduling and disruption conditions, each container's current state; and the pod's
// addresses, by which the V-IPU proxy knows its callers). The spec and
// everything else go: at thousands of pods the cache is most of the operator's memory, and a cached pod is
// never written back. A step that reads another pod field must add it here (worker_pod_cache_test.cpp
// checks the judgements on a full pod and on its trimmed copy agree).
void trimWorkerPodForCache(nlohmann::json& pod);

// Whether the pod cache keeps `pod` at all: an ownerReference of it names an IPUJob (the watch's label
// selector matches any pod anyone labels; a pod no IPUJob owns is never a worker and costs nothing). An
// ownerReference is namespace-local: one naming a uid its namespace does not hold is removed by the garbage
// collector, and until then, like a pod without the controller flag, WorkerPodsOfJob reports it on the job
// (PodConflict) and never counts it as a worker.
bool ownedByAnIpuJob(const nlohmann::json& pod);

}  // namespace ipu::controllers
