#include "ipujob/worker_pod.h"

#include <map>

#include <gtest/gtest.h>

#include "container_env.h"
#include "yaml_json.h"

namespace ipu::controllers {
namespace {

using testing::envValue;

using testing::yamlFileToJson;
using testing::yamlToJson;

const WorkerAssignment kPartition{
    "ml_bert_0", "pod64", "vipu.pod64.example", 8090, R"({"ipuLinkDomainSize":"64","instanceSize":"4"})", 2};

api::IpuJob jobFrom(const Json& object, const std::string& name = "bert") {
  auto job = api::parseIpuJob(object);
  EXPECT_TRUE(job.ok()) << job.error().toString();
  job->identity = {"ml", name, "uid-1"};
  return *job;
}

// How often each env var name occurs in the container.
std::map<std::string, int> envCounts(const Json& container) {
  std::map<std::string, int> counts;
  for (const auto& e : container["env"]) ++counts[e["name"].get<std::string>()];
  return counts;
}

TEST(WorkerPodTest, UsersManifestThatAlreadyAsksForEverythingGetsNothingTwice) {
  auto job = jobFrom(yamlFileToJson(IPU_EXAMPLES_DIR "/bert-training-multi-ipu.yaml"));
  Json pod = buildWorkerPod(job, 0, kPartition);
  const Json& spec = pod["spec"];
  EXPECT_EQ(spec["hostIPC"], true);
  ASSERT_EQ(spec["volumes"].size(), 1u) << spec["volumes"].dump();
  EXPECT_EQ(spec["volumes"][0]["emptyDir"]["sizeLimit"], "10Gi") << "the user's own /dev/shm is kept";
  const Json& container = spec["containers"][0];
  ASSERT_EQ(container["volumeMounts"].size(), 1u);
  ASSERT_EQ(container["securityContext"]["capabilities"]["add"], Json::array({"IPC_LOCK"}));
  for (const auto& [name, count] : envCounts(container)) EXPECT_EQ(count, 1) << name;
  EXPECT_EQ(container["resources"]["limits"]["memory"], "200Gi")
      << "the user's container is otherwise untouched";
  EXPECT_EQ(container["args"].size(), 1u);
}

TEST(WorkerPodTest, BareTemplateGetsEveryInjection) {
  auto job = jobFrom(yamlToJson(R"(
apiVersion: graphcore.ai/v1alpha1
kind: IPUJob
metadata: {name: bert}
spec:
  ipusPerJobInstance: "4"
  workers:
    template:
      metadata: {labels: {team: nlp}, annotations: {note: kept}}
      spec:
        restartPolicy: OnFailure
        containers:
        - {name: main, image: train:1}
        - {name: sidecar, image: logs:1, securityContext: {capabilities: {add: [NET_ADMIN]}}}
)"));
  Json pod = buildWorkerPod(job, 0, kPartition, WorkerPodOptions{.shmSizeLimit = "64Mi"});
  EXPECT_EQ(pod["metadata"]["name"], "bert-worker-0");
  EXPECT_EQ(pod["metadata"]["namespace"], "ml");
  EXPECT_EQ(pod["metadata"]["labels"]["team"], "nlp");
  EXPECT_EQ(pod["metadata"]["labels"][kJobNameLabel], "bert");
  EXPECT_EQ(pod["metadata"]["labels"][kAttemptLabel], "2");
  EXPECT_EQ(pod["metadata"]["annotations"]["note"], "kept");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["controller"], true);
  const Json& spec = pod["spec"];
  EXPECT_EQ(spec["hostIPC"], true);
  EXPECT_EQ(spec["restartPolicy"], "Never") << "restarts belong to the job";
  EXPECT_EQ(spec["subdomain"], "bert");
  EXPECT_EQ(spec["nodeSelector"], Json({{kVipuControllerNodeLabel, "pod64"}}));
  ASSERT_EQ(spec["volumes"].size(), 1u);
  EXPECT_EQ(spec["volumes"][0],
            Json::parse(R"({"name":"devshm","emptyDir":{"medium":"Memory","sizeLimit":"64Mi"}})"));
  for (const auto& container : spec["containers"]) {
    EXPECT_EQ(container["volumeMounts"], Json::parse(R"([{"name":"devshm","mountPath":"/dev/shm"}])"));
    EXPECT_EQ(envValue(container, "IPUOF_VIPU_API_HOST"), "vipu.pod64.example");
    EXPECT_EQ(envValue(container, "IPUOF_VIPU_API_PORT"), "8090");
    EXPECT_EQ(envValue(container, "IPUOF_VIPU_API_PARTITION_ID"), "ml_bert_0");
    EXPECT_EQ(envValue(container, "IPUOF_VIPU_API_GCD_ID"), "0");
    EXPECT_EQ(envValue(container, "IPUOF_VIPU_API_TIMEOUT"), "120");
    EXPECT_EQ(envValue(container, "POPLAR_TARGET_OPTIONS"), kPartition.poplarTargetOptions);
    EXPECT_EQ(envValue(container, "POPDIST_NUM_TOTAL_REPLICAS"), "1");
    EXPECT_EQ(envValue(container, "POPDIST_NUM_IPUS_PER_REPLICA"), "4");
  }
  EXPECT_EQ(spec["containers"][1]["securityContext"]["capabilities"]["add"],
            Json::array({"NET_ADMIN", "IPC_LOCK"}));
}

TEST(WorkerPodTest, UserEnvIsMergedNotDuplicated) {
  auto job = jobFrom(yamlToJson(R"(
kind: IPUJob
spec:
  ipusPerJobInstance: "8"
  workers:
    template:
      spec:
        containers:
        - name: main
          image: train:1
          env:
          - {name: IPUOF_VIPU_API_PARTITION_ID, value: stale-from-an-old-manifest}
          - {name: IPUOF_VIPU_API_TIMEOUT, value: "600"}
          - {name: POPDIST_NUM_IPUS_PER_REPLICA, value: "2"}
          - {name: MY_SETTING, value: x}
)"));
  Json pod = buildWorkerPod(job, 0, kPartition);
  const Json& container = pod["spec"]["containers"][0];
  for (const auto& [name, count] : envCounts(container)) EXPECT_EQ(count, 1) << name;
  EXPECT_EQ(envValue(container, "IPUOF_VIPU_API_PARTITION_ID"), "ml_bert_0")
      << "the partition is the operator's";
  EXPECT_EQ(envValue(container, "IPUOF_VIPU_API_TIMEOUT"), "600") << "a deliberate user setting wins";
  EXPECT_EQ(envValue(container, "POPDIST_NUM_IPUS_PER_REPLICA"), "2");
  EXPECT_EQ(envValue(container, "MY_SETTING"), "x");
}

TEST(WorkerPodTest, WorkersOfSeveralInstancesGetTheirTopology) {
  auto job = jobFrom(yamlToJson(R"(
kind: IPUJob
spec:
  jobInstances: 2
  ipusPerJobInstance: "16"
  workersPerJobInstance: "2"
  modelReplicasPerWorker: "4"
  workers: {template: {spec: {containers: [{name: main, image: train:1}]}}}
)"));
  Json pod = buildWorkerPod(job, 3, kPartition);  // instance 1, second worker in it
  EXPECT_EQ(pod["metadata"]["name"], "bert-worker-3");
  EXPECT_EQ(pod["metadata"]["labels"][kInstanceLabel], "1");
  EXPECT_EQ(pod["metadata"]["labels"][kWorkerIndexLabel], "3");
  const Json& container = pod["spec"]["containers"][0];
  EXPECT_EQ(envValue(container, "IPUJOB_INSTANCE"), "1");
  EXPECT_EQ(envValue(container, "IPUJOB_WORKER_IN_INSTANCE"), "1");
  EXPECT_EQ(envValue(container, "POPDIST_NUM_TOTAL_REPLICAS"), "8");
  EXPECT_EQ(envValue(container, "POPDIST_NUM_LOCAL_REPLICAS"), "4");
  EXPECT_EQ(envValue(container, "POPDIST_NUM_IPUS_PER_REPLICA"), "2");
  EXPECT_EQ(envValue(container, "POPDIST_REPLICA_INDEX_OFFSET"), "4");
}

TEST(WorkerPodTest, SameInputsSamePod) {
  auto job = jobFrom(yamlFileToJson(IPU_EXAMPLES_DIR "/bert-poprun-64ipus.yaml"));
  EXPECT_EQ(buildWorkerPod(job, 0, kPartition), buildWorkerPod(job, 0, kPartition));
}

TEST(WorkerPodTest, UsersNodeSelectorIsKeptAndNamesTheControllerItPins) {
  auto job = jobFrom(yamlToJson(R"(
kind: IPUJob
metadata: {name: bert}
spec:
  ipusPerJobInstance: "4"
  workers:
    template:
      spec:
        nodeSelector: {ipu.graphcore.ai/vipu-controller: pod64-b, disk: ssd}
        containers: [{name: main, image: train:1}]
)"));
  EXPECT_EQ(pinnedVipuController(job.spec), "pod64-b");
  const Json pod = buildWorkerPod(job, 0, kPartition);
  EXPECT_EQ(pod["spec"]["nodeSelector"], Json({{kVipuControllerNodeLabel, "pod64-b"}, {"disk", "ssd"}}));
  auto unpinned = jobFrom(yamlFileToJson(IPU_EXAMPLES_DIR "/bert-training-multi-ipu.yaml"));
  EXPECT_EQ(pinnedVipuController(unpinned.spec), "");
}

TEST(WorkerPodTest, KueuesFlavorPlacesTheWorkersBesideTheUsersSelectorAndTolerations) {
  auto job = jobFrom(yamlToJson(R"(
kind: IPUJob
metadata: {name: bert}
spec:
  ipusPerJobInstance: "4"
  workers:
    template:
      spec:
        nodeSelector: {disk: ssd, ipu.graphcore.ai/ipu-pod: users-choice}
        tolerations: [{key: maintenance, operator: Exists}]
        containers: [{name: main, image: train:1}]
)"));
  WorkerAssignment placed = kPartition;
  placed.queueNodeSelector = {{"ipu.graphcore.ai/ipu-pod", "pod-a"}, {"zone", "z1"}};
  placed.queueTolerations = Json::array(
      {{{"key", "spot"}, {"operator", "Exists"}}, {{"key", "maintenance"}, {"operator", "Exists"}}});
  const Json pod = buildWorkerPod(job, 0, placed);
  // Kueue only assigns a flavor whose labels the template's selector allows: the user's value stays.
  EXPECT_EQ(pod["spec"]["nodeSelector"], Json({{"disk", "ssd"},
                                               {"ipu.graphcore.ai/ipu-pod", "users-choice"},
                                               {"zone", "z1"},
                                               {kVipuControllerNodeLabel, "pod64"}}));
  EXPECT_EQ(pod["spec"]["tolerations"], Json::parse(R"([{"key": "maintenance", "operator": "Exists"},
                                                        {"key": "spot", "operator": "Exists"}])"));
}

TEST(HeadlessServiceTest, SelectsTheJobsWorkersAndPublishesUnreadyPeers) {
  auto job = jobFrom(yamlFileToJson(IPU_EXAMPLES_DIR "/bert-training-multi-ipu.yaml"));
  Json service = buildHeadlessService(job);
  EXPECT_EQ(service["metadata"]["name"], "bert");
  EXPECT_EQ(service["spec"]["clusterIP"], "None");
  EXPECT_EQ(service["spec"]["selector"][kJobNameLabel], "bert");
  EXPECT_EQ(service["spec"]["publishNotReadyAddresses"], true);
}

}  // namespace
}  // namespace ipu::controllers
