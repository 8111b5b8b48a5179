#pragma once

#include <nlohmann/json.hpp>

namespace ipu::controllers {

// What the IPUJob controller's pod cache keeps of a worker pod: the fields its steps read (identity and
// ownership, the job's labels, deletion, and the status fields workers are judged by: phase, reason and
// message, the scheduling and disruption conditions, each container's current state). The spec and
// everything else go: at thousands of pods the cache is most of the operator's memory, and a cached pod is
// never written back. A step that reads another pod field must add it here (worker_pod_cache_test.cpp
// checks the judgements on a full pod and on its trimmed copy agree).
void trimWorkerPodForCache(nlohmann::json& pod);

}  // namespace ipu::controllers
