#pragma once

#include "kube/resource.h"

// The names the operator and its users share: the resources it serves, its finalizer, and the labels on
// what it creates. One home, so that every controller, the binary and the tools agree.
namespace ipu::api {

inline kube::ResourceRef ipuJobResource() {
  return {"graphcore.ai", "v1alpha1", "ipujobs", true};
}
inline kube::ResourceRef ipuQuotaResource() {
  return {"graphcore.ai", "v1alpha1", "ipuquotas", true};
}
// Cluster-scoped, one per V-IPU controller, written by the operator only (api/ipupod.h).
inline kube::ResourceRef ipuPodResource() {
  return {"graphcore.ai", "v1alpha1", "ipupods", false};
}

// IPUQueue (cluster-scoped): the admission plan's inputs, anonymised, for `kubectl ipu fit` and `why`.
inline kube::ResourceRef ipuQueueResource() {
  return {"graphcore.ai", "v1alpha1", "ipuqueues", false};
}
// The one IPUQueue an operator writes.
inline constexpr const char* kIpuQueueName = "ipu-operator";

// The finalizer that keeps a deleted IPUJob until its partitions are released.
inline constexpr const char* kCleanupFinalizer = "graphcore.ai/ipujob-cleanup";

// Labels on everything the operator creates for a job; the selectors and indexes use them.
inline constexpr const char* kJobNameLabel = "graphcore.ai/ipujob";
inline constexpr const char* kInstanceLabel = "graphcore.ai/job-instance";
inline constexpr const char* kWorkerIndexLabel = "graphcore.ai/worker-index";
// The job's restart count when the pod was made: pods of an earlier attempt are replaced, never reused.
inline constexpr const char* kAttemptLabel = "graphcore.ai/attempt";
// Worker 0 of a job with spec.outputs: the directory it keeps and for how many seconds after its command
// ends, as the pod was made (the job's spec may change later; the pod does not).
inline constexpr const char* kOutputsPathAnnotation = "graphcore.ai/outputs-path";
inline constexpr const char* kOutputsRetainAnnotation = "graphcore.ai/outputs-retain-seconds";
// Nodes of one IPU-POD carry the name of the V-IPU controller that partitions its IPUs; worker pods select
// the nodes of the controller their partition is on.
inline constexpr const char* kVipuControllerNodeLabel = "ipu.graphcore.ai/vipu-controller";

}  // namespace ipu::api
