#include "api/pod_template.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "api/ipujob.h"
#include "yaml_json.h"

namespace ipu::api {
namespace {

using testing::yamlToJson;

// A job whose worker template is `templateYaml` (flow style, one line).
Json jobWith(const std::string& templateYaml) {
  return yamlToJson("ipusPerJobInstance: \"1\"\nworkers: {template: " + templateYaml + "}\n");
}

constexpr const char* kWorker = "{name: main, image: busybox}";

std::string withContainer(const std::string& extra) {
  return "{spec: {containers: [{name: main, image: busybox, " + extra + "}]}}";
}

TEST(PodTemplateTest, MistypedFieldsAtEveryLevelTheOperatorReadsAreRefusedByPath) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{metadata: {labels: [a]}, spec: {containers: [" + std::string(kWorker) + "]}}",
       "spec.workers.template.metadata.labels: must be a map of strings to strings"},
      {"{metadata: {annotations: {a: {b: c}}}, spec: {containers: [" + std::string(kWorker) + "]}}",
       "spec.workers.template.metadata.annotations.a: must be a string"},
      {"{spec: {hostIPC: \"yes\", containers: [" + std::string(kWorker) + "]}}",
       "spec.workers.template.spec.hostIPC: must be true or false"},
      {"{spec: {nodeSelector: {a: 1}, containers: [" + std::string(kWorker) + "]}}",
       "spec.workers.template.spec.nodeSelector.a: must be a string"},
      {"{spec: {volumes: {a: b}, containers: [" + std::string(kWorker) + "]}}",
       "spec.workers.template.spec.volumes: must be a list"},
      {"{spec: {volumes: [{emptyDir: {}}], containers: [" + std::string(kWorker) + "]}}",
       "spec.workers.template.spec.volumes[0].name: is required"},
      {"{spec: {securityContext: {sysctls: [{name: a}]}, containers: [" + std::string(kWorker) + "]}}",
       "spec.workers.template.spec.securityContext.sysctls[0].value: is required"},
      {"{spec: {initContainers: [{name: 1, image: busybox}], containers: [" + std::string(kWorker) + "]}}",
       "spec.workers.template.spec.initContainers[0].name: must be a string"},
      {withContainer("securityContext: x"),
       "spec.workers.template.spec.containers[0].securityContext: must be an object"},
      {withContainer("env: [{name: 1}]"),
       "spec.workers.template.spec.containers[0].env[0].name: must be a string"},
      {withContainer("env: [{name: A, value: 1}]"),
       "spec.workers.template.spec.containers[0].env[0].value: must be a string"},
      {withContainer("env: {A: b}"), "spec.workers.template.spec.containers[0].env: must be a list"},
      {withContainer("command: echo"), "spec.workers.template.spec.containers[0].command: must be a list"},
      {withContainer("args: [1]"), "spec.workers.template.spec.containers[0].args[0]: must be a string"},
      {withContainer("volumeMounts: [{name: a}]"),
       "spec.workers.template.spec.containers[0].volumeMounts[0].mountPath: is required"},
      {withContainer("securityContext: {capabilities: {add: IPC_LOCK}}"),
       "spec.workers.template.spec.containers[0].securityContext.capabilities.add: must be a list"},
      {withContainer("securityContext: {privileged: \"true\"}"),
       "spec.workers.template.spec.containers[0].securityContext.privileged: must be true or false"},
      {withContainer("ports: [{hostPort: \"80\"}]"),
       "spec.workers.template.spec.containers[0].ports[0].hostPort: must be a whole number"},
      {withContainer("terminationMessagePath: [a]"),
       "spec.workers.template.spec.containers[0].terminationMessagePath: must be a string"},
  };
  for (const auto& [podTemplate, message] : cases) {
    auto parsed = parseIpuJobSpec(jobWith(podTemplate));
    ASSERT_FALSE(parsed.ok()) << podTemplate;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(parsed.error().message, message) << podTemplate;
    ASSERT_EQ(parsed.error().causes.size(), 1u);
  }
}

TEST(PodTemplateTest, WellTypedTemplatesAndFieldsTheOperatorDoesNotReadPass) {
  EXPECT_TRUE(
      parseIpuJobSpec(
          jobWith(withContainer(
              "env: [{name: A, value: b}, {name: B, valueFrom: {fieldRef: {fieldPath: metadata.name}}}], "
              "command: [bash, -c, x], volumeMounts: [{name: d, mountPath: /d, readOnly: true}], "
              "securityContext: {capabilities: {add: [IPC_LOCK]}, runAsUser: 1000}, "
              "livenessProbe: {exec: {command: [true]}}, somethingNew: 1")))
          .ok());
  // A YAML key left without a value arrives as null: as good as absent, as the API server takes it.
  EXPECT_TRUE(parseIpuJobSpec(jobWith(withContainer("env: null, securityContext: null"))).ok());
}

TEST(PodTemplateTest, ASpecOverTheByteBoundIsRefused) {
  Json spec = jobWith(withContainer("env: [{name: A, value: x}]"));
  spec["workers"]["template"]["spec"]["containers"][0]["env"][0]["value"] = std::string(kMaxSpecBytes, 'x');
  auto parsed = parseIpuJobSpec(spec);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("spec: is "), std::string::npos) << parsed.error().message;
  EXPECT_NE(parsed.error().message.find("at most 262144"), std::string::npos) << parsed.error().message;
  spec["workers"]["template"]["spec"]["containers"][0]["env"][0]["value"] = std::string(1000, 'x');
  EXPECT_TRUE(parseIpuJobSpec(spec).ok());
}

}  // namespace
}  // namespace ipu::api
