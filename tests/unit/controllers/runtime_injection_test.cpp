#include "ipujob/runtime_injection.h"

#include <gtest/gtest.h>

#include "common/stable_hash.h"
#include "container_env.h"
#include "ipujob/worker_pod.h"
#include "yaml_json.h"

namespace ipu::controllers {
namespace {

using testing::envValue;

using testing::yamlFileToJson;
using testing::yamlToJson;

const WorkerAssignment kPartition{
    "p0", "pod64", "vipu.example", 8090, "", 0, {"j-ipu-runtime-a1b2c", "c0ffee"}};
const char* kBinary = "/opt/ipu-runtime/ipu-runtime";

api::IpuJob jobFrom(const Json& object, const std::string& name = "j") {
  auto job = api::parseIpuJob(object);
  EXPECT_TRUE(job.ok()) << job.error().toString();
  job->identity = {"ml", name, "uid-7"};
  return *job;
}

// A job of `instances` x `workers` whose worker runs `python3 train.py --fast`.
api::IpuJob shapedJob(int instances, int workers, const std::string& extraSpec = "") {
  return jobFrom(yamlToJson(R"(
apiVersion: graphcore.ai/v1alpha1
kind: IPUJob
metadata: {name: j}
spec:
  jobInstances: )" + std::to_string(instances) +
                            R"(
  ipusPerJobInstance: "4"
  workersPerJobInstance: ")" +
                            std::to_string(workers) + R"("
)" + extraSpec + R"(
  workers:
    template:
      spec:
        containers:
        - name: train
          image: trainer
          command: [python3, train.py]
          args: [--fast]
        - name: sidecar
          image: logger
          command: [tail, -f, /dev/null]
)"));
}

WorkerPodOptions withRuntime() {
  WorkerPodOptions options;
  options.runtime.image = "registry.example/ipu-runtime:1";
  return options;
}

int countNamed(const Json& list, const std::string& name) {
  int count = 0;
  for (const auto& entry : list) count += entry.value("name", "") == name ? 1 : 0;
  return count;
}

TEST(RuntimeInjectionTest, ASingleWorkerRunsItsCommandUnderExecWithTheRuntimeInstalledFirst) {
  Json pod = buildWorkerPod(shapedJob(1, 1), 0, kPartition, withRuntime());
  const Json& spec = pod["spec"];
  EXPECT_EQ(pod["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"], "train")
      << "kubectl logs <pod> shows the worker, not a question about the init container";
  ASSERT_EQ(spec["initContainers"].size(), 1u);
  const Json& install = spec["initContainers"][0];
  EXPECT_EQ(install["image"], "registry.example/ipu-runtime:1");
  EXPECT_EQ(install["command"], Json::array({"/ipu-runtime", "install", "/opt/ipu-runtime"}));
  EXPECT_EQ(install["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(countNamed(spec["volumes"], "ipu-runtime"), 1);
  EXPECT_EQ(countNamed(spec["volumes"], "ipu-runtime-tls"), 0)
      << "one worker per instance needs no credentials";

  const Json& worker = spec["containers"][0];
  EXPECT_EQ(worker["command"], Json::array({kBinary, "exec", "--", "python3", "train.py", "--fast"}));
  EXPECT_FALSE(worker.contains("args"));
  EXPECT_EQ(countNamed(worker["volumeMounts"], "ipu-runtime"), 1);
  EXPECT_EQ(envValue(worker, "IPU_RUNTIME_PEERS"), "j-worker-0.j");
  EXPECT_EQ(envValue(worker, "IPU_RUNTIME_TERMINATION_LOG"), "/dev/termination-log");
  EXPECT_EQ(envValue(worker, "OMPI_MCA_plm_rsh_agent"), "/opt/ipu-runtime/ipu-runtime rsh");
  EXPECT_EQ(envValue(worker, "IPUJOB_REPLICAS_PER_WORKER"), "1");

  const Json& sidecar = spec["containers"][1];
  EXPECT_EQ(sidecar["command"], Json::array({"tail", "-f", "/dev/null"})) << "sidecars are left alone";
  EXPECT_EQ(countNamed(sidecar.value("volumeMounts", Json::array()), "ipu-runtime"), 0);
}

// Delivered as an image volume, the runtime image is mounted read-only and run from there: no init
// container for the kubelet to wait on, the emptyDir still writable for the lock and the hostfile.
TEST(RuntimeInjectionTest, AnImageVolumeDeliversTheRuntimeWithoutAnInitContainer) {
  WorkerPodOptions options = withRuntime();
  options.runtime.delivery = RuntimeDelivery::kImageVolume;
  options.runtime.imagePullPolicy = "Never";
  const char* imageBinary = "/opt/ipu-runtime-image/ipu-runtime";
  const api::IpuJob job = shapedJob(1, 2);
  const Json launch = buildWorkerPod(job, 0, kPartition, options)["spec"];
  const Json agent = buildWorkerPod(job, 1, kPartition, options)["spec"];
  for (const Json& spec : {launch, agent}) {
    EXPECT_FALSE(spec.contains("initContainers")) << spec.dump();
    Json image;
    for (const auto& volume : spec["volumes"])
      if (volume["name"] == "ipu-runtime-image") image = volume;
    EXPECT_EQ(image,
              (Json{{"name", "ipu-runtime-image"},
                    {"image", {{"reference", "registry.example/ipu-runtime:1"}, {"pullPolicy", "Never"}}}}));
    EXPECT_EQ(countNamed(spec["volumes"], "ipu-runtime"), 1) << "the writable emptyDir stays";
    const Json& worker = spec["containers"][0];
    Json mounts;
    for (const auto& mount : worker["volumeMounts"]) mounts[mount["name"].get<std::string>()] = mount;
    EXPECT_EQ(
        mounts["ipu-runtime-image"],
        (Json{{"name", "ipu-runtime-image"}, {"mountPath", "/opt/ipu-runtime-image"}, {"readOnly", true}}));
    EXPECT_EQ(mounts["ipu-runtime"],
              (Json{{"name", "ipu-runtime"}, {"mountPath", "/opt/ipu-runtime"}, {"readOnly", false}}));
    EXPECT_EQ(envValue(worker, "OMPI_MCA_plm_rsh_agent"), std::string(imageBinary) + " rsh");
    EXPECT_TRUE(runsUnderRuntime(worker));
    EXPECT_EQ(countNamed(spec["containers"][1].value("volumeMounts", Json::array()), "ipu-runtime-image"), 0)
        << "sidecars are left alone";
  }
  EXPECT_EQ(launch["containers"][0]["command"],
            Json::array({imageBinary, "launch", "--", "python3", "train.py", "--fast"}));
  EXPECT_EQ(agent["containers"][0]["command"], Json::array({imageBinary, "agent"}));
  // The same job under the default delivery differs only in where the binary comes from.
  EXPECT_EQ(buildWorkerPod(job, 1, kPartition, withRuntime())["spec"]["containers"][0]["command"],
            Json::array({kBinary, "agent"}));
}

TEST(RuntimeInjectionTest, APodMadeWhileItsPartitionActivatesHasItsLeaderWaitForIt) {
  WorkerPodOptions options = withRuntime();
  options.partitionStatusBase = "http://proxy.ipu-system.svc:8091";
  WorkerAssignment activating = kPartition;
  activating.partitionActive = false;
  const api::IpuJob job = shapedJob(1, 2);
  const Json leader = buildWorkerPod(job, 0, activating, options)["spec"]["containers"][0];
  EXPECT_EQ(envValue(leader, "IPU_RUNTIME_PARTITION_STATUS_URL"),
            "http://proxy.ipu-system.svc:8091/v1/partitions/p0");
  const Json agent = buildWorkerPod(job, 1, activating, options)["spec"]["containers"][0];
  EXPECT_EQ(envValue(agent, "IPU_RUNTIME_PARTITION_STATUS_URL"), "<unset>")
      << "an agent runs what the launch starts, once the launch has waited";
  const Json single = buildWorkerPod(shapedJob(1, 1), 0, activating, options)["spec"]["containers"][0];
  EXPECT_EQ(envValue(single, "IPU_RUNTIME_PARTITION_STATUS_URL"),
            "http://proxy.ipu-system.svc:8091/v1/partitions/p0");
  EXPECT_EQ(envValue(buildWorkerPod(job, 0, kPartition, options)["spec"]["containers"][0],
                     "IPU_RUNTIME_PARTITION_STATUS_URL"),
            "<unset>")
      << "a partition active when the pod is made is not waited for";
  EXPECT_TRUE(startsWhileActivating(options));
  options.runtime.image.clear();
  EXPECT_FALSE(startsWhileActivating(options)) << "without the runtime, nothing in the pod would wait";
  EXPECT_EQ(envValue(buildWorkerPod(job, 0, activating, options)["spec"]["containers"][0],
                     "IPU_RUNTIME_PARTITION_STATUS_URL"),
            "<unset>");
  EXPECT_FALSE(startsWhileActivating(withRuntime())) << "without the proxy's HTTP face, nothing to ask";
}

TEST(RuntimeInjectionTest, TheDeliveriesHaveTheirFlagNames) {
  EXPECT_EQ(parseRuntimeDelivery("init-container"), RuntimeDelivery::kInitContainer);
  EXPECT_EQ(parseRuntimeDelivery("image-volume"), RuntimeDelivery::kImageVolume);
  EXPECT_EQ(parseRuntimeDelivery("ImageVolume"), std::nullopt);
  EXPECT_EQ(parseRuntimeDelivery(""), std::nullopt);
  for (auto delivery : {RuntimeDelivery::kInitContainer, RuntimeDelivery::kImageVolume})
    EXPECT_EQ(parseRuntimeDelivery(runtimeDeliveryName(delivery)), delivery);
}

TEST(RuntimeInjectionTest, EachInstancesWorkerZeroLaunchesAndItsPeersServe) {
  api::IpuJob job = shapedJob(2, 2);
  std::vector<Json> workers;
  for (int k = 0; k < 4; ++k) workers.push_back(buildWorkerPod(job, k, kPartition, withRuntime())["spec"]);
  EXPECT_EQ(workers[0]["containers"][0]["command"],
            Json::array({kBinary, "launch", "--", "python3", "train.py", "--fast"}));
  EXPECT_EQ(workers[1]["containers"][0]["command"], Json::array({kBinary, "agent"}));
  EXPECT_EQ(workers[2]["containers"][0]["command"], workers[0]["containers"][0]["command"]);
  EXPECT_EQ(workers[3]["containers"][0]["command"], Json::array({kBinary, "agent"}));
  EXPECT_EQ(envValue(workers[1]["containers"][0], "IPU_RUNTIME_PEERS"), "j-worker-0.j,j-worker-1.j");
  EXPECT_EQ(envValue(workers[3]["containers"][0], "IPU_RUNTIME_PEERS"), "j-worker-2.j,j-worker-3.j");
  for (const Json& spec : workers) {
    EXPECT_EQ(countNamed(spec["volumes"], "ipu-runtime-tls"), 1);
    for (const auto& volume : spec["volumes"]) {
      if (volume["name"] == "ipu-runtime-tls") {
        // The recorded Secret, readable by the container's own user only.
        EXPECT_EQ(volume["secret"], (Json{{"secretName", "j-ipu-runtime-a1b2c"}, {"defaultMode", 0400}}));
      }
    }
    EXPECT_EQ(envValue(spec["containers"][0], "IPU_RUNTIME_CA_SHA256"), "c0ffee") << "the CA is pinned";
    const Json& mounts = spec["containers"][0]["volumeMounts"];
    bool mounted = false;
    for (const auto& mount : mounts)
      mounted = mounted || mount.value("mountPath", "") == "/etc/ipu-runtime/tls";
    EXPECT_TRUE(mounted) << mounts.dump();
  }
}

TEST(RuntimeInjectionTest, ALauncherRunsInWorkerZeroWithItsEnvironment) {
  api::IpuJob job = shapedJob(1, 2, R"(  launcher:
    command: [mpirun, -np, "2", python3, train.py]
    env: [{name: MODE, value: launcher}]
)");
  Json launcher = buildWorkerPod(job, 0, kPartition, withRuntime())["spec"]["containers"][0];
  EXPECT_EQ(launcher["command"], Json::array({kBinary, "launch", "--launcher", "--", "mpirun", "-np", "2",
                                              "python3", "train.py"}));
  EXPECT_EQ(envValue(launcher, "MODE"), "launcher");
  Json peer = buildWorkerPod(job, 1, kPartition, withRuntime())["spec"]["containers"][0];
  EXPECT_EQ(envValue(peer, "MODE"), "<unset>") << "the launcher's environment is the launcher's";

  api::IpuJob single =
      shapedJob(1, 1, "  launcher: {command: [poprun, --num-instances, \"1\", python3, x.py]}\n");
  EXPECT_EQ(buildWorkerPod(single, 0, kPartition, withRuntime())["spec"]["containers"][0]["command"][1],
            "launch");
  EXPECT_EQ(
      countNamed(buildWorkerPod(single, 0, kPartition, withRuntime())["spec"]["volumes"], "ipu-runtime-tls"),
      0);
}

TEST(RuntimeInjectionTest, UsersManifestsKeepTheirScriptWordForWord) {
  for (const char* file :
       {IPU_EXAMPLES_DIR "/bert-training-multi-ipu.yaml", IPU_EXAMPLES_DIR "/bert-poprun-64ipus.yaml"}) {
    Json manifest = yamlFileToJson(file);
    api::IpuJob job = jobFrom(manifest, "bert");
    Json container = buildWorkerPod(job, 0, kPartition, withRuntime())["spec"]["containers"][0];
    const Json& original = manifest["spec"]["workers"]["template"]["spec"]["containers"][0];
    Json expected = Json::array({kBinary, "exec", "--"});
    for (const auto& part : original["command"]) expected.push_back(part);
    for (const auto& part : original["args"]) expected.push_back(part);
    EXPECT_EQ(container["command"], expected) << file;
    EXPECT_EQ(countNamed(container["volumeMounts"], "devshm"), 1) << "the user's own /dev/shm is kept";
  }
}

TEST(RuntimeInjectionTest, WhatTheUserSetIsKept) {
  api::IpuJob job = jobFrom(yamlToJson(R"(
apiVersion: graphcore.ai/v1alpha1
kind: IPUJob
metadata: {name: j}
spec:
  jobInstances: 1
  ipusPerJobInstance: "1"
  workers:
    template:
      spec:
        containers:
        - name: train
          image: trainer
          terminationMessagePath: /tmp/why
          env: [{name: OMPI_MCA_plm_rsh_agent, value: ssh}]
)"));
  Json container = buildWorkerPod(job, 0, kPartition, withRuntime())["spec"]["containers"][0];
  EXPECT_FALSE(container.contains("command"))
      << "no command: the image's entrypoint runs, with the environment";
  EXPECT_EQ(envValue(container, "IPU_RUNTIME_TERMINATION_LOG"), "/tmp/why");
  EXPECT_EQ(envValue(container, "OMPI_MCA_plm_rsh_agent"), "ssh");
}

TEST(RuntimeInjectionTest, WithoutARuntimeImageNothingIsInjected) {
  Json spec = buildWorkerPod(shapedJob(1, 2), 0, kPartition)["spec"];
  EXPECT_FALSE(spec.contains("initContainers"));
  EXPECT_EQ(spec["containers"][0]["command"], Json::array({"python3", "train.py"}));
  EXPECT_EQ(envValue(spec["containers"][0], "IPU_RUNTIME_PEERS"), "<unset>");
}

TEST(RuntimeInjectionTest, TheSecretHoldsTheJobsCredentialsAndIsOwnedByIt) {
  api::IpuJob job = shapedJob(1, 2);
  const runtime::pki::JobCredentials credentials{"CA", "CERT", "KEY"};
  Json secret = buildRuntimeSecret(job, credentials);
  EXPECT_EQ(secret["metadata"]["generateName"], "j-ipu-runtime-");
  EXPECT_FALSE(secret["metadata"].contains("name"));
  EXPECT_EQ(secret["metadata"]["namespace"], "ml");
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["uid"], "uid-7");
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(secret["type"], "kubernetes.io/tls");
  EXPECT_EQ(secret["immutable"], true);
  EXPECT_EQ(secret["stringData"], (Json{{"ca.crt", "CA"}, {"tls.crt", "CERT"}, {"tls.key", "KEY"}}));
  // SHA-256("CA"), as `printf CA | sha256sum` gives it.
  EXPECT_EQ(runtimeSecretRecord("j-ipu-runtime-a1b2c", credentials),
            (api::RuntimeSecretRecord{"j-ipu-runtime-a1b2c",
                                      "4b650e5c4785025dee7bd65e3c5c527356717d7a1c0bfef5b4ada8ca1e9cbe17"}));
  EXPECT_EQ(runtimeIdentity(job.identity), "ml/j/uid-7");
  EXPECT_TRUE(needsRuntimeCredentials(job.spec));
  EXPECT_FALSE(needsRuntimeCredentials(shapedJob(2, 1).spec));
}

TEST(RuntimeInjectionTest, AWorkerRunningAsAnotherUserWithoutFsGroupIsRefusedBeforeItRuns) {
  // Worker 0 of a job of `workers` per instance, with these securityContexts for the pod and its worker.
  const auto build = [](int workers, const Json& podContext, const Json& workerContext) {
    api::IpuJob job = shapedJob(1, workers);
    job.spec.workerTemplate["spec"]["securityContext"] = podContext;
    if (!workerContext.is_null())
      job.spec.workerTemplate["spec"]["containers"][0]["securityContext"] = workerContext;
    return tryBuildWorkerPod(job, 0, kPartition, withRuntime());
  };
  auto refused = build(2, {{"runAsUser", 1000}}, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("runs as user 1000 and the pod sets no securityContext.fsGroup"),
            std::string::npos)
      << refused.error().message;
  EXPECT_FALSE(build(2, {{"runAsUser", 0}}, {{"runAsUser", 7}}).ok()) << "the container's own user wins";
  EXPECT_TRUE(build(2, {{"runAsUser", 1000}, {"fsGroup", 1000}}, nullptr).ok());
  EXPECT_TRUE(build(2, {{"runAsUser", 1000}}, {{"runAsUser", 0}}).ok());
  EXPECT_TRUE(build(1, {{"runAsUser", 1000}}, nullptr).ok()) << "one worker per instance: no key to read";
}

TEST(RuntimeInjectionTest, ALauncherThatCannotRunIsExplained) {
  RuntimeOptions none;
  RuntimeOptions injected{"rt:1", "IfNotPresent"};
  EXPECT_EQ(launcherNotRunMessage(shapedJob(1, 1).spec, none), std::nullopt);
  EXPECT_EQ(launcherNotRunMessage(shapedJob(1, 2).spec, injected), std::nullopt);
  auto message = launcherNotRunMessage(shapedJob(1, 2, "  launcher: {command: [poprun]}\n").spec, none);
  ASSERT_TRUE(message);
  EXPECT_NE(
      message->find("launcher.command is set and workersPerJobInstance is 2, but the operator runs without "
                    "--runtime-image"),
      std::string::npos)
      << *message;
  api::IpuJob noCommand = jobFrom(yamlToJson(R"(
apiVersion: graphcore.ai/v1alpha1
kind: IPUJob
metadata: {name: j}
spec:
  jobInstances: 1
  ipusPerJobInstance: "2"
  workersPerJobInstance: "2"
  workers: {template: {spec: {containers: [{name: t, image: i}]}}}
)"));
  message = launcherNotRunMessage(noCommand.spec, injected);
  ASSERT_TRUE(message);
  EXPECT_NE(message->find("the worker container has no command"), std::string::npos) << *message;
}

}  // namespace
}  // namespace ipu::controllers
