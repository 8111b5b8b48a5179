#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "admission/plan_inputs.h"
#include "common/result.h"

// The IPUQueue's status (graphcore.ai/v1alpha1, cluster-scoped, one object named "ipu-operator"): the
// admission plan's inputs as the operator last read them, so that `kubectl ipu fit` and `kubectl ipu why`
// run the operator's own plan and start estimate for users who may not read other namespaces. It is
// anonymised: a namespace is an opaque id (a salted digest, new with every leadership term), a job its uid;
// no name of a job, a namespace or an IPUQuota is in it. Written by the leader only
// (pod_map/pod_map_publisher.h); the CRD is crds/ipuqueues.graphcore.ai.yaml.
namespace ipu::controllers {

// The status for `inputs`, waiting jobs in queue order; `namespaceId` maps a namespace to its published id.
nlohmann::json queueStatusOf(const PlanInputs& inputs,
                             const std::function<std::string(const std::string&)>& namespaceId);

// A job read back from the status: its request, keyed so that the published queue order is kept.
// PlanInputs::queue's requests have `ns` = the namespace id and `uid` = the job's uid.
// InvalidArgument for a status that cannot be planned from (a controller without a topology, an IPU outside
// it).
Result<PlanInputs> planInputsFromQueueStatus(const nlohmann::json& status);

}  // namespace ipu::controllers
