#include "api/worker_pod_profile.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "api/ipujob.h"
#include "yaml_json.h"

namespace ipu::api {
namespace {

using testing::yamlFileToJson;
using testing::yamlToJson;

std::optional<ProfileViolation> judge(const std::string& templateYaml,
                                      WorkerPodProfile profile = WorkerPodProfile::kIpuBaseline) {
  return profileViolation(yamlToJson(templateYaml), profile, "spec.workers.template");
}

std::string container(const std::string& extra) {
  return "{spec: {containers: [{name: main, image: busybox, " + extra + "}]}}";
}

TEST(WorkerPodProfileTest, EachWayPastBaselineIsNamedByItsField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {container("securityContext: {privileged: true}"),
       "spec.workers.template.spec.containers[0].securityContext.privileged"},
      {"{spec: {hostNetwork: true, containers: [{name: a, image: b}]}}",
       "spec.workers.template.spec.hostNetwork"},
      {"{spec: {hostPID: true, containers: [{name: a, image: b}]}}", "spec.workers.template.spec.hostPID"},
      {"{spec: {volumes: [{name: root, hostPath: {path: /}}], containers: [{name: a, image: b}]}}",
       "spec.workers.template.spec.volumes[0].hostPath"},
      {container("securityContext: {capabilities: {add: [IPC_LOCK, SYS_ADMIN]}}"),
       "spec.workers.template.spec.containers[0].securityContext.capabilities.add[1]"},
      {"{spec: {initContainers: [{name: i, image: b, securityContext: {privileged: true}}], "
       "containers: [{name: a, image: b}]}}",
       "spec.workers.template.spec.initContainers[0].securityContext.privileged"},
      {container("ports: [{containerPort: 80, hostPort: 80}]"),
       "spec.workers.template.spec.containers[0].ports[0].hostPort"},
      {container("securityContext: {procMount: Unmasked}"),
       "spec.workers.template.spec.containers[0].securityContext.procMount"},
      {container("securityContext: {seccompProfile: {type: Unconfined}}"),
       "spec.workers.template.spec.containers[0].securityContext.seccompProfile.type"},
      {"{spec: {securityContext: {appArmorProfile: {type: Unconfined}}, containers: [{name: a, image: b}]}}",
       "spec.workers.template.spec.securityContext.appArmorProfile.type"},
      {container("securityContext: {seLinuxOptions: {type: spc_t}}"),
       "spec.workers.template.spec.containers[0].securityContext.seLinuxOptions.type"},
      {container("securityContext: {seLinuxOptions: {user: root}}"),
       "spec.workers.template.spec.containers[0].securityContext.seLinuxOptions.user"},
      {container("securityContext: {windowsOptions: {hostProcess: true}}"),
       "spec.workers.template.spec.containers[0].securityContext.windowsOptions.hostProcess"},
      {"{spec: {securityContext: {sysctls: [{name: kernel.msgmax, value: \"1\"}]}, containers: [{name: a, "
       "image: b}]}}",
       "spec.workers.template.spec.securityContext.sysctls[0].name"},
      {"{metadata: {annotations: {container.apparmor.security.beta.kubernetes.io/main: unconfined}}, "
       "spec: {containers: [{name: a, image: b}]}}",
       "spec.workers.template.metadata.annotations.container.apparmor.security.beta.kubernetes.io/main"},
  };
  for (const auto& [podTemplate, field] : cases) {
    auto found = judge(podTemplate);
    ASSERT_TRUE(found.has_value()) << podTemplate;
    EXPECT_EQ(found->field, field) << podTemplate;
    EXPECT_FALSE(found->message.empty());
    // The privileged profile takes all of it, as the operator did before it checked.
    EXPECT_FALSE(judge(podTemplate, WorkerPodProfile::kPrivileged).has_value()) << podTemplate;
  }
}

TEST(WorkerPodProfileTest, WhatIpuWorkersNeedAndBaselineAllowsPasses) {
  EXPECT_FALSE(
      judge("{spec: {hostIPC: true, hostNetwork: false, volumes: [{name: shm, emptyDir: {medium: "
            "Memory}}], securityContext: {sysctls: [{name: net.ipv4.tcp_syncookies, value: \"1\"}], "
            "seccompProfile: {type: RuntimeDefault}}, containers: [{name: a, image: b, securityContext: "
            "{privileged: false, capabilities: {add: [IPC_LOCK, NET_BIND_SERVICE], drop: [ALL]}, "
            "seLinuxOptions: {type: container_t}}, ports: [{containerPort: 8888}]}]}}")
          .has_value());
  // The users' manifests, as they are.
  for (const char* file :
       {IPU_EXAMPLES_DIR "/bert-training-multi-ipu.yaml", IPU_EXAMPLES_DIR "/bert-poprun-64ipus.yaml"}) {
    auto job = parseIpuJob(yamlFileToJson(file));
    ASSERT_TRUE(job.ok()) << file;
    EXPECT_FALSE(profileViolation(job->spec.workerTemplate, WorkerPodProfile::kIpuBaseline, "t").has_value())
        << file;
  }
}

TEST(WorkerPodProfileTest, ProfilesHaveNames) {
  EXPECT_EQ(parseWorkerPodProfile("ipu-baseline"), WorkerPodProfile::kIpuBaseline);
  EXPECT_EQ(parseWorkerPodProfile("privileged"), WorkerPodProfile::kPrivileged);
  EXPECT_EQ(parseWorkerPodProfile("Privileged"), std::nullopt);
  EXPECT_EQ(profileName(WorkerPodProfile::kIpuBaseline), "ipu-baseline");
  EXPECT_EQ(profileName(WorkerPodProfile::kPrivileged), "privileged");
}

}  // namespace
}  // namespace ipu::api
