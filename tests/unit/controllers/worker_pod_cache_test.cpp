// The pod cache keeps what the controller reads: every judgement on a full worker pod (as the API server
// returns it, spec and managedFields included) is the same on its trimmed copy, and the copy is small.
#include "ipujob/worker_pod_cache.h"

#include <gtest/gtest.h>

#include "common/time_format.h"
#include "ipujob/child_ownership.h"
#include "ipujob/worker_observation.h"

namespace ipu::controllers {
namespace {

using namespace std::chrono_literals;

// A worker pod as the API server returns it, with `status` (merged over a running pod's).
Json fullPod(const std::string& name, const Json& status, const Json& metadata = Json::object()) {
  Json pod = Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "", "namespace": "ml", "uid": "pod-uid", "resourceVersion": "42",
      "creationTimestamp": "2024-01-01T00:00:00Z",
      "labels": {"graphcore.ai/ipujob": "bert", "graphcore.ai/attempt": "0", "graphcore.ai/worker-index": "0",
                 "team": "nlp"},
      "annotations": {"kubectl.kubernetes.io/default-container": "main"},
      "ownerReferences": [{"apiVersion": "graphcore.ai/v1alpha1", "kind": "IPUJob", "name": "bert",
                           "uid": "uid-bert", "controller": true, "blockOwnerDeletion": true}],
      "managedFields": [{"manager": "ipu-operator", "operation": "Update", "fieldsV1": {"f:spec": {}}}]},
    "spec": {"hostIPC": true, "containers": [{"name": "main", "image": "train:1",
      "env": [{"name": "IPUOF_VIPU_API_HOST", "value": "vipu"}], "command": ["python3", "train.py"]}]},
    "status": {"phase": "Running", "podIP": "10.0.0.7", "hostIP": "192.168.1.5",
      "podIPs": [{"ip": "10.0.0.7"}, {"ip": "fd00::7"}], "hostIPs": [{"ip": "192.168.1.5"}],
      "startTime": "2024-01-01T00:00:01Z",
      "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"},
                     {"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:02Z"}],
      "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0, "image": "train:1",
        "imageID": "sha256:0123", "containerID": "containerd://abc",
        "state": {"running": {"startedAt": "2024-01-01T00:00:02Z"}}}]}
  })");
  pod["metadata"]["name"] = name;
  pod["metadata"].merge_patch(metadata);
  pod["status"].merge_patch(status);
  return pod;
}

std::vector<Json> podsInEveryState() {
  const Json failed = Json::parse(R"({"phase": "Failed", "containerStatuses": [{"name": "main",
      "state": {"terminated": {"exitCode": 3, "reason": "Error", "message": "instance 0: exited with code 3\n",
                "startedAt": "2024-01-01T00:00:02Z", "finishedAt": "2024-01-01T00:00:05Z"}}}]})");
  const Json initFailed = Json::parse(R"({"phase": "Failed", "initContainerStatuses": [{"name": "fetch",
      "state": {"terminated": {"exitCode": 1, "message": "no data"}}}], "containerStatuses": null})");
  const Json evicted = Json::parse(R"({"phase": "Failed", "reason": "Evicted",
      "message": "The node was low on resource: memory.", "conditions": [{"type": "DisruptionTarget",
      "status": "True", "reason": "TerminationByKubelet"}]})");
  const Json unschedulable = Json::parse(R"({"phase": "Pending", "containerStatuses": null,
      "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                      "message": "0/3 nodes are available"}]})");
  const Json pulling = Json::parse(R"({"phase": "Pending", "containerStatuses": [{"name": "main",
      "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image train:1"}}}]})");
  return {fullPod("bert-worker-0", Json::object()),
          fullPod("bert-worker-0", Json::parse(R"({"phase": "Succeeded"})")),
          fullPod("bert-worker-0", failed),
          fullPod("bert-worker-0", initFailed),
          fullPod("bert-worker-0", evicted),
          fullPod("bert-worker-0", unschedulable),
          fullPod("bert-worker-0", pulling),
          fullPod("bert-worker-0", Json::object(),
                  {{"deletionTimestamp", "2024-01-01T00:01:00Z"}, {"deletionGracePeriodSeconds", 30}}),
          fullPod("bert-worker-0", Json::object(), {{"labels", {{"graphcore.ai/attempt", "1"}}}})};
}

Json trimmed(Json pod) {
  trimWorkerPodForCache(pod);
  return pod;
}

// One instance of one worker (the spec's defaults) on one IPU.
api::IpuJob oneWorker() {
  api::IpuJob job{.identity = {"ml", "bert", "uid-bert"}};
  job.spec.ipusPerJobInstance = 1;
  return job;
}

TEST(WorkerPodCache, EveryJudgementOnATrimmedPodIsTheSameAsOnTheFullPod) {
  const PodLimits limits{parseTime("2024-01-01T00:20:00Z").value(), 10min, 2min};
  for (const Json& full : podsInEveryState()) {
    const Json small = trimmed(full);
    SCOPED_TRACE(full["status"].dump());
    EXPECT_EQ(podPhase(small), podPhase(full));
    EXPECT_EQ(podFinished(small), podFinished(full));
    EXPECT_EQ(cannotStartReason(small), cannotStartReason(full));
    EXPECT_EQ(deletionOverdue(small, limits.now, 2min), deletionOverdue(full, limits.now, 2min));
    EXPECT_EQ(holderOf(small, oneWorker().identity), holderOf(full, oneWorker().identity));
    for (bool allStarted : {false, true}) {
      const auto observe = [&](const Json& pod) {
        return observeWorkers(oneWorker(), splitByAttempt({std::make_shared<const Json>(pod)}, 0), allStarted,
                              limits);
      };
      const WorkerObservation before = observe(full);
      const WorkerObservation after = observe(small);
      EXPECT_EQ(after.running, before.running);
      EXPECT_EQ(after.succeeded, before.succeeded);
      EXPECT_EQ(after.missing, before.missing);
      EXPECT_EQ(after.nextCheck, before.nextCheck);
      ASSERT_EQ(after.outcomes.size(), before.outcomes.size());
      for (std::size_t i = 0; i < before.outcomes.size(); ++i) {
        EXPECT_EQ(after.outcomes[i].state, before.outcomes[i].state);
        EXPECT_EQ(after.outcomes[i].exitCode, before.outcomes[i].exitCode);
        EXPECT_EQ(after.outcomes[i].detail, before.outcomes[i].detail);
      }
    }
  }
}

TEST(WorkerPodCache, KeepsIdentityOwnershipAndTheOperatorsLabelsAndDropsTheRest) {
  const Json small = trimmed(podsInEveryState()[0]);
  EXPECT_FALSE(small.contains("spec"));
  EXPECT_FALSE(small["metadata"].contains("managedFields"));
  EXPECT_FALSE(small["metadata"].contains("annotations"));
  EXPECT_EQ(small["metadata"]["labels"], (Json{{"graphcore.ai/ipujob", "bert"},
                                               {"graphcore.ai/attempt", "0"},
                                               {"graphcore.ai/worker-index", "0"}}));
  EXPECT_EQ(small["metadata"]["uid"], "pod-uid");
  EXPECT_EQ(small["metadata"]["ownerReferences"][0]["uid"], "uid-bert");
  EXPECT_FALSE(small["metadata"]["ownerReferences"][0].contains("blockOwnerDeletion"));
  EXPECT_EQ(small["status"]["conditions"].size(), 1u) << "Ready is not read";
  EXPECT_EQ(small["status"]["containerStatuses"][0],
            (Json{{"name", "main"}, {"state", {{"running", Json::object()}}}}));
  EXPECT_LT(small.dump().size() * 2, podsInEveryState()[0].dump().size()) << small.dump();
}

TEST(WorkerPodCache, KeepsTheAddressesTheVipuProxyKnowsCallersBy) {
  const Json small = trimmed(podsInEveryState()[0]);
  EXPECT_EQ(small["status"]["podIP"], "10.0.0.7");
  EXPECT_EQ(small["status"]["podIPs"], Json::parse(R"([{"ip": "10.0.0.7"}, {"ip": "fd00::7"}])"));
  EXPECT_EQ(small["status"]["hostIP"], "192.168.1.5");
  EXPECT_FALSE(small["status"].contains("hostIPs"));
  EXPECT_FALSE(small["status"].contains("startTime"));
}

TEST(WorkerPodCache, MalformedPodsAreTrimmedWithoutThrowing) {
  for (Json odd : {Json(nullptr), Json("pod"), Json::parse(R"({"metadata": 3, "status": []})"),
                   Json::parse(R"({"metadata": {"labels": [1], "ownerReferences": {"a": 1}},
                                   "status": {"conditions": [1, {"type": 2}], "containerStatuses": [7, {"state": 1}]}})")}) {
    EXPECT_NO_THROW(trimWorkerPodForCache(odd)) << odd.dump();
  }
}

}  // namespace
}  // namespace ipu::controllers
