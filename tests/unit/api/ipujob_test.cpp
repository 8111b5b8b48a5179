#include "api/ipujob.h"

#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "yaml_json.h"

namespace ipu::api {
namespace {

using testing::yamlFileToJson;
using testing::yamlToJson;

const std::string kContainers = "workers: {template: {spec: {containers: [{name: main, image: busybox}]}}}\n";

TEST(IpuJobTest, UsersManifestsParseWithDefaults) {
  auto multi = parseIpuJob(yamlFileToJson(IPU_EXAMPLES_DIR "/bert-training-multi-ipu.yaml"));
  ASSERT_TRUE(multi.ok()) << multi.error().toString();
  EXPECT_EQ(multi->spec.jobInstances, 1);
  EXPECT_EQ(multi->spec.ipusPerJobInstance, 4);
  EXPECT_EQ(multi->spec.workersPerJobInstance, 1);
  EXPECT_EQ(multi->spec.modelReplicasPerWorker, 1);
  EXPECT_EQ(multi->spec.ipusPerReplica(), 4);
  EXPECT_EQ(multi->spec.restartType, RestartType::kNever);
  EXPECT_EQ(multi->spec.backOffLimit, 3);
  EXPECT_EQ(multi->spec.cleanPodPolicy, CleanPodPolicy::kNone);

  auto poprun = parseIpuJob(yamlFileToJson(IPU_EXAMPLES_DIR "/bert-poprun-64ipus.yaml"));
  ASSERT_TRUE(poprun.ok()) << poprun.error().toString();
  EXPECT_EQ(poprun->spec.ipusPerJobInstance, 64);
  EXPECT_EQ(poprun->spec.modelReplicasPerWorker, 16);
  EXPECT_EQ(poprun->spec.ipusPerReplica(), 4);  // the --ipus-per-replica 4 the user passes to poprun
}

TEST(IpuJobTest, EveryFieldIsRead) {
  auto spec = parseIpuJobSpec(yamlToJson(R"(
jobInstances: 2
ipusPerJobInstance: "16"
workersPerJobInstance: "2"
modelReplicasPerWorker: "4"
launcher: {command: [python3, train.py], env: [{name: A, value: b}]}
restartPolicy: {type: ExitCode, backOffLimit: 5, exitCodes: " 1, 3-5 "}
cleanPodPolicy: Workers
suspend: true
ttlSecondsAfterFinished: 600
activeDeadlineSeconds: 3600
interactive: {ttl: 7200, idleSeconds: 600}
outputs: {path: /work/profiles, retainSeconds: 900}
priority: 10
)" + kContainers));
  ASSERT_TRUE(spec.ok()) << spec.error().toString();
  EXPECT_EQ(spec->workerCount(), 4);
  EXPECT_EQ(spec->replicasPerInstance(), 8);
  EXPECT_EQ(spec->ipusPerReplica(), 2);
  EXPECT_EQ(spec->launcherCommand, (std::vector<std::string>{"python3", "train.py"}));
  EXPECT_EQ(spec->restartType, RestartType::kExitCode);
  EXPECT_EQ(spec->backOffLimit, 5);
  EXPECT_EQ(spec->restartExitCodes, (std::vector<ExitCodeRange>{{1, 1}, {3, 5}}));
  EXPECT_TRUE(spec->restartsOnExitCode(4));
  EXPECT_FALSE(spec->restartsOnExitCode(2));
  EXPECT_EQ(spec->cleanPodPolicy, CleanPodPolicy::kWorkers);
  EXPECT_TRUE(spec->suspend);
  EXPECT_EQ(spec->ttlSecondsAfterFinished, 600);
  EXPECT_EQ(spec->activeDeadlineSeconds, 3600);
  EXPECT_EQ(spec->interactive, (InteractiveSpec{7200, 600}));
  EXPECT_EQ(spec->outputs, (OutputsSpec{"/work/profiles", 900}));
  EXPECT_EQ(spec->priority, 10);
}

TEST(IpuJobTest, MalformedSpecsGiveMessagesNamingTheField) {
  struct Case {
    std::string yaml;
    std::string message;
  };
  for (const auto& c : std::vector<Case>{
           {kContainers, "spec.ipusPerJobInstance: is required"},
           {"ipusPerJobInstance: \"3\"\n" + kContainers, "must be a power of two from 1 to 1024, not 3"},
           {"ipusPerJobInstance: \"four\"\n" + kContainers,
            "must be a whole number from 1 to 1024, not \"four\""},
           {"ipusPerJobInstance: 4\n" + kContainers, "must be a number written as a string"},
           {"ipusPerJobInstance: \"2048\"\n" + kContainers, "from 1 to 1024"},
           {"ipusPerJobInstance: \"4\"\njobInstances: 0\n" + kContainers,
            "spec.jobInstances: must be from 1 to 1024"},
           {"ipusPerJobInstance: \"4\"\njobInstances: two\n" + kContainers,
            "spec.jobInstances: must be a whole number"},
           {"ipusPerJobInstance: \"4\"\nmodelReplicasPerWorker: \"3\"\n" + kContainers,
            "must divide ipusPerJobInstance"},
           {"ipusPerJobInstance: \"4\"\n", "spec.workers.template: is required"},
           {"ipusPerJobInstance: \"4\"\nworkers: {template: {spec: {containers: []}}}\n",
            "must list at least one container"},
           {"ipusPerJobInstance: \"4\"\nworkers: {template: {spec: {containers: [{name: x}]}}}\n",
            "needs a name and an image"},
           {"ipusPerJobInstance: \"4\"\njobInstances: 2\nworkers: {replicas: 3, template: {spec: "
            "{containers: [{name: a, image: b}]}}}\n",
            "must equal jobInstances x workersPerJobInstance (2)"},
           {"ipusPerJobInstance: \"4\"\nrestartPolicy: {type: Sometimes}\n" + kContainers,
            "must be Always, OnFailure, Never or ExitCode"},
           {"ipusPerJobInstance: \"4\"\nrestartPolicy: {type: ExitCode}\n" + kContainers,
            "is required with restartPolicy.type ExitCode"},
           {"ipusPerJobInstance: \"4\"\nrestartPolicy: {type: ExitCode, exitCodes: \"5-3\"}\n" + kContainers,
            "ascending ranges"},
           {"ipusPerJobInstance: \"4\"\nrestartPolicy: {type: ExitCode, exitCodes: \"1,,2\"}\n" + kContainers,
            "like \"1,3-5\""},
           {"ipusPerJobInstance: \"4\"\nrestartPolicy: {backOffLimit: -1}\n" + kContainers,
            "spec.restartPolicy.backOffLimit: must be from 0 to 2147483647, not -1"},
           {"ipusPerJobInstance: \"4\"\ncleanPodPolicy: Some\n" + kContainers,
            "must be None, All or Workers"},
           {"ipusPerJobInstance: \"4\"\nlauncher: {command: [1]}\n" + kContainers,
            "must be a list of strings"},
           {"ipusPerJobInstance: \"4\"\noutputs: /outputs\n" + kContainers,
            "spec.outputs: must be an object"},
           {"ipusPerJobInstance: \"4\"\noutputs: {retainSeconds: 5}\n" + kContainers,
            "spec.outputs.path: is required"},
           {"ipusPerJobInstance: \"4\"\noutputs: {path: outputs}\n" + kContainers,
            "spec.outputs.path: must be an absolute path"},
           {"ipusPerJobInstance: \"4\"\noutputs: {path: /}\n" + kContainers,
            "spec.outputs.path: must not be /"},
           {"ipusPerJobInstance: \"4\"\noutputs: {path: /work/../etc}\n" + kContainers,
            "must be a plain absolute path"},
           {"ipusPerJobInstance: \"4\"\noutputs: {path: /work//x}\n" + kContainers,
            "must be a plain absolute path"},
           {"ipusPerJobInstance: \"4\"\noutputs: {path: /work/}\n" + kContainers,
            "must be a plain absolute path"},
           {"ipusPerJobInstance: \"4\"\noutputs: {path: /proc/self}\n" + kContainers,
            "must not be under /proc"},
           {"ipusPerJobInstance: \"4\"\noutputs: {path: /dev}\n" + kContainers, "must not be under /dev"},
           {"ipusPerJobInstance: \"4\"\noutputs: {path: /o, retainSeconds: -1}\n" + kContainers,
            "spec.outputs.retainSeconds: must be from 0"},
       }) {
    auto spec = parseIpuJobSpec(yamlToJson(c.yaml));
    ASSERT_FALSE(spec.ok()) << c.yaml;
    EXPECT_EQ(spec.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(spec.error().message.find(c.message), std::string::npos)
        << "expected '" << c.message << "' in: " << spec.error().message;
    EXPECT_FALSE(spec.error().causes.empty());
  }
  EXPECT_FALSE(parseIpuJobSpec(nlohmann::json("not an object")).ok());
  EXPECT_FALSE(parseIpuJob(yamlToJson("kind: Pod\n")).ok());
}

TEST(IpuJobNumbersTest, OutOfRangeNumbersTheApiServerLetThroughAreRefusedNamingTheField) {
  auto parse = [](const std::string& field, const Json& value) {
    Json object = {
        {"apiVersion", "graphcore.ai/v1alpha1"},
        {"kind", "IPUJob"},
        {"spec",
         {{"ipusPerJobInstance", "4"},
          {"workers", {{"template", {{"spec", {{"containers", {{{"name", "m"}, {"image", "i"}}}}}}}}}},
          {field, value}}}};
    return parseIpuJob(object);
  };
  EXPECT_TRUE(parse("priority", 1000000000).ok());
  EXPECT_TRUE(parse("priority", -1000000000).ok());
  EXPECT_TRUE(parse("activeDeadlineSeconds", 31536000).ok());
  EXPECT_TRUE(parse("ttlSecondsAfterFinished", 0).ok());
  EXPECT_EQ(parse("interactive", Json::object())->spec.interactive, (InteractiveSpec{0, 0}))
      << "no ttl: the default";
  EXPECT_EQ(parse("interactive", {{"ttl", 0}})->spec.interactive, (InteractiveSpec{0, 0}));
  const std::vector<std::tuple<std::string, Json, std::string>> refused = {
      {"priority", 3000000000LL, "spec.priority: must be from -1000000000 to 1000000000, not 3000000000"},
      {"priority", -2147483649LL, "must be from -1000000000 to 1000000000"},
      {"activeDeadlineSeconds", 9223372036854775807LL,
       "spec.activeDeadlineSeconds: must be from 1 to 31536000"},
      {"activeDeadlineSeconds", 18446744073709551615ULL,
       "spec.activeDeadlineSeconds: must be a whole number"},
      {"activeDeadlineSeconds", 0, "must be from 1 to 31536000, not 0"},
      {"ttlSecondsAfterFinished", -1, "spec.ttlSecondsAfterFinished: must be from 0 to 31536000, not -1"},
      {"ttlSecondsAfterFinished", 1.5, "spec.ttlSecondsAfterFinished: must be a whole number"},
      {"priority", "high", "spec.priority: must be a whole number"},
      {"interactive", {{"ttl", -1}}, "spec.interactive.ttl: must be from 0 to 31536000, not -1"},
      {"interactive", 3600, "spec.interactive: must be an object, like {ttl: 3600}"},
      {"restartPolicy",
       {{"backOffLimit", 2147483648LL}},
       "spec.restartPolicy.backOffLimit: must be from 0 to 2147483647, not 2147483648"},
      {"restartPolicy", {{"backOffLimit", -1}}, "spec.restartPolicy.backOffLimit: must be from 0"},
      {"restartPolicy", {{"backOffLimit", "3"}}, "spec.restartPolicy.backOffLimit: must be a whole number"},
  };
  for (const auto& [field, value, message] : refused) {
    auto job = parse(field, value);
    ASSERT_FALSE(job.ok()) << field << "=" << value.dump();
    EXPECT_NE(job.error().message.find(message), std::string::npos) << job.error().message;
  }
}

// Fields of the wrong type (an object written around an older CRD, or by hand) are refused naming the field;
// they used to escape as nlohmann::json exceptions. Found by the ipujob fuzz target (tests/fuzz).
TEST(IpuJobTypesTest, FieldsOfTheWrongTypeAreRefusedNotThrown) {
  const Json spec = {
      {"ipusPerJobInstance", "4"},
      {"workers", {{"template", {{"spec", {{"containers", {{{"name", "m"}, {"image", "i"}}}}}}}}}}};
  auto withSpec = [&](const std::string& field, const Json& value) {
    Json object = {{"apiVersion", "graphcore.ai/v1alpha1"}, {"kind", "IPUJob"}, {"spec", spec}};
    object["spec"][field] = value;
    return object;
  };
  auto withMetadata = [&](const Json& metadata) {
    return Json{
        {"apiVersion", "graphcore.ai/v1alpha1"}, {"kind", "IPUJob"}, {"metadata", metadata}, {"spec", spec}};
  };
  const std::vector<std::pair<Json, std::string>> refused = {
      {withSpec("suspend", "true"), "spec.suspend: must be true or false"},
      {withSpec("restartPolicy", {{"type", 5}}),
       "spec.restartPolicy.type: must be Always, OnFailure, Never or ExitCode"},
      {withSpec("cleanPodPolicy", Json::array()), "spec.cleanPodPolicy: must be None, All or Workers"},
      {withMetadata("bert"), "metadata: must be an object"},
      {withMetadata({{"name", 7}}), "metadata.name: must be a string"},
      {withMetadata({{"namespace", false}}), "metadata.namespace: must be a string"},
      {withMetadata({{"uid", Json::object()}}), "metadata.uid: must be a string"},
      {withMetadata({{"generation", "3"}}), "metadata.generation: must be a whole number"},
      // Converting 1e300 to int64 was undefined behaviour.
      {withMetadata({{"generation", 1e300}}), "metadata.generation: must be a whole number"},
  };
  for (const auto& [object, message] : refused) {
    auto job = parseIpuJob(object);
    ASSERT_FALSE(job.ok()) << object.dump();
    EXPECT_EQ(job.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(job.error().message, message) << object.dump();
    EXPECT_FALSE(job.error().causes.empty());
  }
  EXPECT_FALSE(parseIpuJob(Json{{"kind", 5}}).ok());
  // A null ipusPerJobInstance was taken as 0 IPUs (0 passed the power-of-two check) and the job accepted.
  auto noIpus = parseIpuJob(withSpec("ipusPerJobInstance", nullptr));
  ASSERT_FALSE(noIpus.ok());
  EXPECT_EQ(noIpus.error().message, "spec.ipusPerJobInstance: is required");
  EXPECT_EQ(parseIpuJobSpec(yamlToJson("ipusPerJobInstance: ~\n" + kContainers)).error().message,
            "spec.ipusPerJobInstance: is required");
  // Null is absent, as for every other optional field.
  auto nulls = parseIpuJob(withMetadata({{"name", nullptr}, {"generation", nullptr}}));
  ASSERT_TRUE(nulls.ok()) << nulls.error().toString();
  EXPECT_EQ(nulls->identity.name, "");
  EXPECT_EQ(nulls->generation, 0);
  auto nullSpecFields = parseIpuJob(withSpec("suspend", nullptr));
  ASSERT_TRUE(nullSpecFields.ok()) << nullSpecFields.error().toString();
  EXPECT_FALSE(nullSpecFields->spec.suspend);
}

// Worker pods are <name>-worker-<index>, at most 253 characters: an older CRD (without the rule on
// metadata.name) could store a name whose pods can never exist. It is refused with the limit, not retried.
TEST(IpuJobNamesTest, ANameWhoseWorkerPodsCannotBeNamedIsRefusedWithTheLimit) {
  auto parse = [](const std::string& name, int instances) {
    Json object = {
        {"apiVersion", "graphcore.ai/v1alpha1"},
        {"kind", "IPUJob"},
        {"metadata", {{"name", name}, {"namespace", "team"}}},
        {"spec",
         {{"ipusPerJobInstance", "4"},
          {"jobInstances", instances},
          {"workers", {{"template", {{"spec", {{"containers", {{{"name", "m"}, {"image", "i"}}}}}}}}}}}}};
    return parseIpuJob(object);
  };
  EXPECT_EQ(maxJobNameLength(1), 244);
  EXPECT_EQ(maxJobNameLength(10), 244);
  EXPECT_EQ(maxJobNameLength(11), 243);
  EXPECT_EQ(maxJobNameLength(1024), 241);
  EXPECT_EQ(maxJobNameLength(0), 244);
  EXPECT_TRUE(parse(std::string(244, 'a'), 1).ok());
  EXPECT_TRUE(parse(std::string(243, 'a'), 11).ok());
  auto refused = parse(std::string(244, 'a'), 11);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("metadata.name is too long"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("with 11 workers the job's name may have at most 243 characters"),
            std::string::npos)
      << refused.error().message;
  EXPECT_FALSE(parse(std::string(253, 'a'), 1).ok());
}

}  // namespace
}  // namespace ipu::api
