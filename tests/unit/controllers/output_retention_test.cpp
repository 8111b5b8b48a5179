// Worker 0 keeping spec.outputs after its command ends (pure): the pod it is built as, its command judged
// apart from the retention container, how long it keeps them, and that the end of the job spares it.
#include "ipujob/output_retention.h"

#include <gtest/gtest.h>

#include "common/time_format.h"
#include "contract/runtime_contract.h"
#include "ipujob/worker_observation.h"
#include "ipujob/worker_pod.h"
#include "ipujob/worker_pod_cache.h"
#include "yaml_json.h"

namespace ipu::controllers {
namespace {

namespace contract = runtime::contract;
using testing::yamlToJson;

const RuntimeOptions kRuntime{"localhost/ipu-runtime:test", "Never"};

api::IpuJob jobWith(const std::string& extra, const std::string& container =
                                                  "{name: main, image: busybox, "
                                                  "command: [sh, -c, work]}") {
  auto job = api::parseIpuJob(yamlToJson(R"(
apiVersion: graphcore.ai/v1alpha1
kind: IPUJob
metadata: {name: prof, namespace: ml, uid: u1}
spec:
  ipusPerJobInstance: "4"
  jobInstances: 2
)" + extra + "\n  workers: {template: {spec: {containers: [" +
                                         container + "]}}}\n"));
  EXPECT_TRUE(job.ok()) << job.error().toString();
  return *job;
}

WorkerPodOptions withRuntime() {
  WorkerPodOptions options;
  options.runtime = kRuntime;
  return options;
}

const Json* containerNamed(const Json& pod, const std::string& name) {
  for (const Json& container : pod["spec"]["containers"]) {
    if (container["name"] == name) return &container;
  }
  return nullptr;
}

TEST(OutputRetention, WorkerZeroSharesTheDirectoryWithARetentionContainerOthersAreUntouched) {
  const api::IpuJob job = jobWith("  outputs: {path: /work/profiles, retainSeconds: 120}");
  auto zero = tryBuildWorkerPod(job, 0, {}, withRuntime());
  ASSERT_TRUE(zero.ok()) << zero.error().toString();
  const Json* keeper = containerNamed(*zero, contract::kRetentionContainer);
  ASSERT_NE(keeper, nullptr);
  EXPECT_EQ((*keeper)["image"], kRuntime.image);
  EXPECT_EQ((*keeper)["command"], Json({"/ipu-runtime", "retain", "--lock", contract::kWorkerLockFile,
                                        "--seconds", "120", "--path", "/work/profiles"}));
  EXPECT_EQ((*keeper)["volumeMounts"][0],
            Json({{"name", "ipu-outputs"}, {"mountPath", "/work/profiles"}, {"readOnly", true}}));
  EXPECT_EQ((*keeper)["securityContext"]["runAsUser"], 0) << "reads what a root worker wrote";
  EXPECT_EQ((*keeper)["securityContext"]["capabilities"]["drop"], Json({"ALL"}));
  EXPECT_FALSE((*keeper).contains("env")) << "no partition, no IPUOF_*: it holds no IPUs";
  const Json& worker = (*zero)["spec"]["containers"][0];
  bool mounted = false;
  for (const Json& mount : worker["volumeMounts"]) mounted |= mount["mountPath"] == "/work/profiles";
  EXPECT_TRUE(mounted);
  bool lockEnv = false;
  for (const Json& env : worker["env"])
    lockEnv |= env["name"] == contract::kEnvWorkerLock && env["value"] == contract::kWorkerLockFile;
  EXPECT_TRUE(lockEnv);
  EXPECT_EQ((*zero)["metadata"]["annotations"]["graphcore.ai/outputs-retain-seconds"], "120");
  EXPECT_EQ((*zero)["metadata"]["annotations"]["graphcore.ai/outputs-path"], "/work/profiles");

  auto one = tryBuildWorkerPod(job, 1, {}, withRuntime());
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(containerNamed(*one, contract::kRetentionContainer), nullptr) << "worker 0 only";
}

TEST(OutputRetention, TheRetentionRunsAsTheWorkersUserOrTheImagesWhenRootIsRefused) {
  const api::IpuJob asUser =
      jobWith("  outputs: {path: /o}",
              "{name: main, image: x, command: [run], securityContext: {runAsUser: 1000, "
              "runAsGroup: 100}}");
  auto pod = tryBuildWorkerPod(asUser, 0, {}, withRuntime());
  ASSERT_TRUE(pod.ok());
  const Json& context = (*containerNamed(*pod, contract::kRetentionContainer))["securityContext"];
  EXPECT_EQ(context["runAsUser"], 1000);
  EXPECT_EQ(context["runAsGroup"], 100);

  const api::IpuJob nonRoot =
      jobWith("  outputs: {path: /o}",
              "{name: main, image: x, command: [run], securityContext: {runAsNonRoot: true}}");
  auto imageUser = tryBuildWorkerPod(nonRoot, 0, {}, withRuntime());
  ASSERT_TRUE(imageUser.ok());
  EXPECT_FALSE(
      (*containerNamed(*imageUser, contract::kRetentionContainer))["securityContext"].contains("runAsUser"));
}

TEST(OutputRetention, WithoutTheRuntimeOrACommandNothingIsKeptAndTheMessageSaysWhy) {
  const api::IpuJob job = jobWith("  outputs: {path: /o}");
  auto plain = tryBuildWorkerPod(job, 0, {}, WorkerPodOptions{});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(containerNamed(*plain, contract::kRetentionContainer), nullptr);
  EXPECT_NE(outputsNotRetainedMessage(job.spec, {}).value_or("").find("without --runtime-image"),
            std::string::npos);
  EXPECT_EQ(outputsNotRetainedMessage(job.spec, kRuntime), std::nullopt);

  const api::IpuJob entrypoint = jobWith("  outputs: {path: /o}", "{name: main, image: x, args: [train]}");
  EXPECT_NE(outputsNotRetainedMessage(entrypoint.spec, kRuntime).value_or("").find("has no command"),
            std::string::npos);
  auto pod = tryBuildWorkerPod(entrypoint, 0, {}, withRuntime());
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(containerNamed(*pod, contract::kRetentionContainer), nullptr);
  EXPECT_EQ(outputsNotRetainedMessage(jobWith("").spec, {}), std::nullopt)
      << "no spec.outputs, nothing to say";
}

TEST(OutputRetention, APathThatCollidesWithAMountIsRefusedNamingIt) {
  const api::IpuJob mounted =
      jobWith("  outputs: {path: /data}",
              "{name: main, image: x, command: [run], volumeMounts: [{name: scratch, mountPath: /data}]}");
  auto pod = tryBuildWorkerPod(mounted, 0, {}, withRuntime());
  ASSERT_FALSE(pod.ok());
  EXPECT_NE(pod.error().message.find("mounts volume \"scratch\" at /data"), std::string::npos);
  auto runtimeDir =
      tryBuildWorkerPod(jobWith("  outputs: {path: /opt/ipu-runtime/out}"), 0, {}, withRuntime());
  ASSERT_FALSE(runtimeDir.ok());
  EXPECT_NE(runtimeDir.error().message.find("which ipu-runtime uses"), std::string::npos);
}

TEST(OutputRetention, LimitsGiveTheDefaultForZeroAndCutLongerOnes) {
  const RetentionLimits limits{std::chrono::seconds(600), std::chrono::seconds(3600)};
  EXPECT_EQ(retainFor({"/o", 0}, limits).seconds, std::chrono::seconds(600));
  EXPECT_FALSE(retainFor({"/o", 0}, limits).capped);
  EXPECT_EQ(retainFor({"/o", 60}, limits).seconds, std::chrono::seconds(60));
  EXPECT_EQ(retainFor({"/o", 7200}, limits).seconds, std::chrono::seconds(3600));
  EXPECT_TRUE(retainFor({"/o", 7200}, limits).capped);
}

// Worker 0's pod as the kubelet reports it: the command container in `command`, the retention container in
// `keeper` (each a containerStatuses state), the pod in `phase`.
kube::ObjectPtr workerZero(const std::string& phase, const Json& command, const Json& keeper,
                           const std::string& retain = "120") {
  return std::make_shared<const Json>(
      Json{{"metadata",
            {{"name", "prof-worker-0"},
             {"labels", {{"graphcore.ai/attempt", "0"}}},
             {"annotations",
              {{"graphcore.ai/outputs-path", "/work/profiles"},
               {"graphcore.ai/outputs-retain-seconds", retain}}}}},
           {"spec",
            {{"containers",
              {{{"name", "main"}},
               {{"name", contract::kRetentionContainer},
                {"volumeMounts",
                 {{{"name", "ipu-outputs"}, {"mountPath", "/work/profiles"}},
                  {{"name", "ipu-runtime"}, {"mountPath", contract::kInstallDir}}}}}}}}},
           {"status",
            {{"phase", phase},
             {"containerStatuses",
              {{{"name", "main"}, {"state", command}},
               {{"name", contract::kRetentionContainer}, {"state", keeper}}}}}}});
}

const Json kRunning = {{"running", {{"startedAt", "2026-11-28T12:00:00Z"}}}};
Json ended(int code) {
  return {{"terminated", {{"exitCode", code}, {"finishedAt", "2026-11-28T12:05:00Z"}}}};
}

TEST(OutputRetention, TheCommandIsJudgedApartFromTheRetentionContainer) {
  EXPECT_EQ(commandPhase(*workerZero("Running", kRunning, kRunning)), "Running");
  EXPECT_EQ(commandPhase(*workerZero("Running", ended(0), kRunning)), "Succeeded");
  EXPECT_EQ(commandPhase(*workerZero("Running", ended(3), kRunning)), "Failed");
  EXPECT_EQ(commandPhase(*workerZero("Succeeded", ended(0), ended(0))), "Succeeded");
  EXPECT_EQ(commandPhase(*workerZero("Pending", Json::object(), Json::object())), "Pending");

  api::IpuJob job = jobWith("  outputs: {path: /work/profiles}");
  job.spec.jobInstances = 1;
  WorkerPods pods;
  pods.current.emplace("prof-worker-0", workerZero("Running", ended(3), kRunning));
  const WorkerObservation seen = observeWorkers(job, pods, true);
  ASSERT_EQ(seen.outcomes.size(), 1u);
  EXPECT_EQ(seen.outcomes[0].state, WorkerOutcome::State::kFailed);
  EXPECT_EQ(seen.outcomes[0].exitCode, 3);
  EXPECT_EQ(seen.running, 0) << "the pod runs; the worker does not";
}

TEST(OutputRetention, APodKeepsItsOutputsFromTheCommandsEndForTheRecordedRetention) {
  const auto kept = keptOutputs(*workerZero("Running", ended(0), kRunning, "120"));
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->path, "/work/profiles");
  EXPECT_EQ(formatTime(kept->until), "2026-11-28T12:07:00Z");
  EXPECT_FALSE(keptOutputs(*workerZero("Running", kRunning, kRunning))) << "the command still runs";
  EXPECT_FALSE(keptOutputs(*workerZero("Succeeded", ended(0), ended(0)))) << "the retention ended";
  EXPECT_FALSE(keptOutputs(*workerZero("Running", ended(0), ended(137)))) << "the retention container died";
}

TEST(OutputRetention, WhatTheOperatorsPodCacheKeepsIsEnoughToJudgeIt) {
  Json trimmed = *workerZero("Running", ended(0), kRunning, "120");
  trimmed["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"] = "main";
  trimWorkerPodForCache(trimmed);
  EXPECT_FALSE(trimmed.contains("spec"));
  EXPECT_EQ(trimmed["metadata"]["annotations"].size(), 2u) << trimmed.dump();
  EXPECT_EQ(commandPhase(trimmed), "Succeeded");
  const auto kept = keptOutputs(trimmed);
  ASSERT_TRUE(kept);
  EXPECT_EQ(formatTime(kept->until), "2026-11-28T12:07:00Z");
}

TEST(OutputRetention, TheEndOfTheJobSparesTheKeptPodWhateverTheCleanPodPolicy) {
  const auto zero = workerZero("Running", ended(0), kRunning);
  const auto peer = std::make_shared<const Json>(
      Json{{"metadata", {{"name", "prof-worker-1"}}}, {"status", {{"phase", "Succeeded"}}}});
  const auto doomed = podsToRemoveAtEnd({zero, peer}, api::CleanPodPolicy::kAll, "prof", "prof-worker-0");
  ASSERT_EQ(doomed.size(), 1u);
  EXPECT_EQ((*doomed[0])["metadata"]["name"], "prof-worker-1");
  const auto overdue = podsToRemoveAtEnd({zero, peer}, api::CleanPodPolicy::kNone, "prof");
  ASSERT_EQ(overdue.size(), 1u) << "no longer kept, a pod still running goes whatever the policy";
  EXPECT_EQ((*overdue[0])["metadata"]["name"], "prof-worker-0");
}

}  // namespace
}  // namespace ipu::controllers
