// The IPUJob CustomResourceDefinition (crds/ipujobs.graphcore.ai.yaml) as kubectl users meet it.
#include <filesystem>

#include <gtest/gtest.h>

#include "crd_test.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class IpuJobCrdTest : public CrdTest {
 protected:
  // A valid job with `spec` lines added (YAML, two-space indented under spec).
  static std::string job(
      const std::string& name, const std::string& specLines,
      const std::string& workers =
          "  workers: {template: {spec: {containers: [{name: main, image: busybox}]}}}\n") {
    return "apiVersion: graphcore.ai/v1alpha1\nkind: IPUJob\nmetadata: {name: " + name + "}\nspec:\n" +
           specLines + workers;
  }
};

TEST_F(IpuJobCrdTest, UsersManifestsApplyUnchanged) {
  for (const auto& entry : fs::directory_iterator(IPU_FIXTURES_DIR)) {
    auto created = kubectl({"create", "-f", entry.path().string(), "-o", "name"});
    ASSERT_TRUE(created.ok()) << entry.path() << ": " << created.describe();
    std::string name = created.out.substr(created.out.find('/') + 1);
    name.erase(name.find_last_not_of('\n') + 1);
    auto job = getJson("ipujob", name);
    ASSERT_FALSE(job.is_null());
    // What the user wrote is kept as written; defaults fill only what was left out.
    EXPECT_TRUE(job["spec"]["ipusPerJobInstance"].is_string());
    EXPECT_EQ(job["spec"]["workersPerJobInstance"], "1");
    EXPECT_EQ(job["spec"]["restartPolicy"]["type"], "Never");
    EXPECT_EQ(job["spec"]["restartPolicy"]["backOffLimit"], 3);
    EXPECT_EQ(job["spec"]["cleanPodPolicy"], "None");
    EXPECT_EQ(job["spec"]["workers"]["template"]["spec"]["hostIPC"], true)
        << "the pod template must be kept whole";
    EXPECT_EQ(job["spec"]["workers"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"], "10Gi");
  }
}

TEST_F(IpuJobCrdTest, InvalidJobsAreRefusedWithReadableMessages) {
  expectRejected(
      job("three", "  ipusPerJobInstance: \"3\"\n"),
      "ipusPerJobInstance must be a power of two from 1 to 1024 written as a string (like \"4\"), not \"3\"");
  expectRejected(job("letters", "  ipusPerJobInstance: \"four\"\n"), "must be a power of two");
  expectRejected(job("number", "  ipusPerJobInstance: 4\n"),
                 "spec.ipusPerJobInstance in body must be of type string");
  expectRejected(job("none", "  ipusPerJobInstance: \"4\"\n  jobInstances: 0\n"),
                 "spec.jobInstances in body should be greater than or equal to 1");
  expectRejected(job("noworkers", "  ipusPerJobInstance: \"4\"\n", ""), "spec.workers: Required value");
  expectRejected(job("nocontainers", "  ipusPerJobInstance: \"4\"\n",
                     "  workers: {template: {spec: {containers: []}}}\n"),
                 "spec.workers.template.spec.containers in body should have at least 1 items");
  expectRejected(job("nospec", "  ipusPerJobInstance: \"4\"\n", "  workers: {template: {metadata: {}}}\n"),
                 "spec.workers.template.spec: Required value");
  expectRejected(job("noimage", "  ipusPerJobInstance: \"4\"\n",
                     "  workers: {template: {spec: {containers: [{name: main}]}}}\n"),
                 "spec.workers.template.spec.containers[0].image: Required value");
  expectRejected(
      job("codes", "  ipusPerJobInstance: \"4\"\n  restartPolicy: {type: ExitCode, exitCodes: \"1,a\"}\n"),
      "exitCodes must be exit codes and ranges separated by commas, like \"1,3-5\", not \"1,a\"");
  expectRejected(job("nocodes", "  ipusPerJobInstance: \"4\"\n  restartPolicy: {type: ExitCode}\n"),
                 "restartPolicy.type ExitCode needs restartPolicy.exitCodes");
  expectRejected(job("policy", "  ipusPerJobInstance: \"4\"\n  restartPolicy: {type: Sometimes}\n"),
                 "Unsupported value: \"Sometimes\"");
  expectRejected(job("clean", "  ipusPerJobInstance: \"4\"\n  cleanPodPolicy: Everything\n"),
                 "Unsupported value: \"Everything\"");
  expectRejected(job("workers", "  ipusPerJobInstance: \"4\"\n  workersPerJobInstance: \"0\"\n"),
                 "spec.workersPerJobInstance in body should match");
  expectRejected(
      job("replicas", "  ipusPerJobInstance: \"4\"\n  jobInstances: 2\n",
          "  workers: {replicas: 3, template: {spec: {containers: [{name: main, image: busybox}]}}}\n"),
      "workers.replicas, when given, must equal jobInstances x workersPerJobInstance");
  // Numbers the controller does arithmetic with have bounds, so no manifest can overflow it.
  expectRejected(
      job("deadline", "  ipusPerJobInstance: \"4\"\n  activeDeadlineSeconds: 9223372036854775807\n"),
      "spec.activeDeadlineSeconds: Invalid value: 9223372036854775807: spec.activeDeadlineSeconds in body "
      "should be less than or equal to 31536000");
  expectRejected(job("ttl", "  ipusPerJobInstance: \"4\"\n  ttlSecondsAfterFinished: 31536001\n"),
                 "should be less than or equal to 31536000");
  expectRejected(job("priority", "  ipusPerJobInstance: \"4\"\n  priority: 1000000001\n"),
                 "spec.priority in body should be less than or equal to 1000000000");
  expectRejected(job("lowpriority", "  ipusPerJobInstance: \"4\"\n  priority: -1000000001\n"),
                 "spec.priority in body should be greater than or equal to -1000000000");
  expectRejected(job("backoff", "  ipusPerJobInstance: \"4\"\n  restartPolicy: {backOffLimit: 2147483648}\n"),
                 "spec.restartPolicy.backOffLimit in body should be less than or equal to 2147483647");
  EXPECT_TRUE(getJson("ipujobs", "three").is_null());
}

// Worker pods are named <job>-worker-<index> (at most 253): the name's limit depends on the last index.
TEST_F(IpuJobCrdTest, JobNamesAreRefusedOnlyWhenTheirWorkerPodNamesCannotFit) {
  const std::string atLimit(244, 'a');
  const std::string oneWorker = "  ipusPerJobInstance: \"1\"\n";
  const std::string elevenWorkers = "  ipusPerJobInstance: \"1\"\n  jobInstances: 11\n";
  const std::string message =
      "metadata.name is too long: worker pods are named <name>-worker-<index> and a pod name has at most 253 "
      "characters";
  EXPECT_TRUE(kubectl({"create", "-f", "-"}, RunOptions{.input = job(atLimit, oneWorker)}).ok());
  expectRejected(job(atLimit + "b", oneWorker), message);
  expectRejected(job(std::string(253, 'c'), oneWorker), message);
  // With 11 workers the last is <name>-worker-10: one character less.
  EXPECT_TRUE(
      kubectl({"create", "-f", "-"}, RunOptions{.input = job(std::string(243, 'd'), elevenWorkers)}).ok());
  expectRejected(job(std::string(244, 'e'), elevenWorkers), message);
  // Names Kubernetes allows for objects but not for every child (a leading digit, dots) are accepted.
  for (const char* name : {"1-leading-digit", "with.dots.in.it"}) {
    auto created = kubectl({"create", "-f", "-"}, RunOptions{.input = job(name, oneWorker)});
    EXPECT_TRUE(created.ok()) << name << ": " << created.describe();
  }
}

TEST_F(IpuJobCrdTest, ShapeChangesOnlyWhileSuspended) {
  create(job("resize", "  ipusPerJobInstance: \"4\"\n  jobInstances: 2\n"));
  auto refused =
      kubectl({"patch", "ipuj", "resize", "--type", "merge", "-p", R"({"spec":{"ipusPerJobInstance":"8"}})"});
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.err.find("ipusPerJobInstance cannot change while the job is not suspended"),
            std::string::npos)
      << refused.err;
  auto scale = kubectl({"scale", "ipuj", "resize", "--replicas", "3"});
  EXPECT_FALSE(scale.ok()) << "a running job cannot be rescaled";
  EXPECT_NE(scale.err.find("jobInstances cannot change while the job is not suspended"), std::string::npos)
      << scale.err;
  auto immutable = kubectl(
      {"patch", "ipuj", "resize", "--type", "merge", "-p", R"({"spec":{"workersPerJobInstance":"2"}})"});
  EXPECT_FALSE(immutable.ok());

  auto suspended = kubectl({"patch", "ipuj", "resize", "--type", "merge", "-p",
                            R"({"spec":{"suspend":true,"ipusPerJobInstance":"8","jobInstances":4}})"});
  ASSERT_TRUE(suspended.ok()) << suspended.describe();
  EXPECT_EQ(getJson("ipuj", "resize")["spec"]["ipusPerJobInstance"], "8");
}

TEST_F(IpuJobCrdTest, PrinterColumnsAndShortName) {
  create(job("shown", "  ipusPerJobInstance: \"16\"\n"));
  auto table = kubectl({"get", "ipuj"});
  ASSERT_TRUE(table.ok()) << table.describe();
  std::string header = table.out.substr(0, table.out.find('\n'));
  for (const char* column : {"NAME", "STATUS", "IPUS", "CURRENT", "DESIRED", "LASTMESSAGE", "AGE"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column << " missing from: " << header;
  }
  EXPECT_NE(table.out.find("shown"), std::string::npos);
  auto wide = kubectl({"get", "ipujobs.graphcore.ai", "-o", "wide"});
  ASSERT_TRUE(wide.ok());
  EXPECT_NE(wide.out.find("PHASE"), std::string::npos);
  EXPECT_NE(wide.out.find("QUEUE"), std::string::npos);
  EXPECT_NE(wide.out.find("EXPIRES"), std::string::npos)
      << "an interactive job's status.interactive.expiresAt";
}

}  // namespace
}  // namespace ipu::testing
