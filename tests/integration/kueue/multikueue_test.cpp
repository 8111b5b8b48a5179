// MultiKueue on two local clusters: a manager, where users create IPUJobs (spec.managedBy
// kueue.x-k8s.io/multikueue) and Kueue dispatches them, and a worker that owns the IPU-POD, with vipu-sim
// behind it. Each is a control plane of tools/cluster.sh with Kueue and an operator of its own: the worker's
// places and runs the copy MultiKueue makes there; the manager's keeps the job's Workload and runs nothing.
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kueue/workload.h"
#include "kueue_objects.h"
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

class MultiKueueTest : public OperatorTest {
 protected:
  // The worker is the cluster of the fixture (IPU_TEST_CLUSTER_DIR): OperatorTest starts its operator and
  // vipu-sim (POD64); the manager gets its own of each.
  void SetUp() override {
    OperatorTest::SetUp();
    if (HasFatalFailure()) return;
    manager_ = std::make_unique<TestCluster>(TestCluster::at(IPU_MULTIKUEUE_MANAGER_DIR));
    static const std::string crdsFailure = [this] {
      try {
        manager_->installCrds();
        return std::string();
      } catch (const std::exception& e) {
        return std::string(e.what());
      }
    }();
    ASSERT_EQ(crdsFailure, "") << "the CRDs could not be installed on the manager";
    ASSERT_TRUE(onManager({"create", "namespace", ns()}).ok());
    id_ = "mk-" + ns().substr(ns().rfind('-') + 1);

    // The worker's queue: a LocalQueue of the same name as the manager's, its flavor on the POD's hosts.
    create(flavorYaml("  nodeLabels: {ipu.graphcore.ai/ipu-pod: pod64}\n") + clusterQueueYaml(id_, id_, 64) +
           localQueueYaml("team", id_));

    // The manager's: MultiKueue's AdmissionCheck on its ClusterQueue, sending to the worker through a
    // kubeconfig (with its certificates inline, as Kueue requires) in a Secret of Kueue's namespace.
    const std::string kubeconfig = directory_ + "/worker.kubeconfig";
    const RunResult flattened = cluster().kubectl({"config", "view", "--raw", "--flatten", "--minify"});
    ASSERT_TRUE(flattened.ok()) << flattened.describe();
    std::ofstream(kubeconfig) << flattened.out;
    const RunResult secret = onManager(
        {"-n", "kueue-system", "create", "secret", "generic", id_, "--from-file=kubeconfig=" + kubeconfig});
    ASSERT_TRUE(secret.ok()) << secret.describe();
    const std::string managerObjects =
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueCluster\nmetadata: {name: " + id_ +
        "}\nspec: {clusterSource: {kubeConfig: {locationType: Secret, location: " + id_ +
        "}}}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueConfig\nmetadata: {name: " + id_ +
        "}\nspec: {clusters: [" + id_ +
        "]}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: " + id_ +
        "}\nspec:\n  controllerName: kueue.x-k8s.io/multikueue\n  parameters: {apiGroup: kueue.x-k8s.io, "
        "kind: "
        "MultiKueueConfig, name: " +
        id_ + "}\n---\n" + flavorYaml("") +
        clusterQueueYaml(id_, id_, 64,
                         "  admissionChecksStrategy: {admissionChecks: [{name: " + id_ + "}]}\n") +
        localQueueYaml("team", id_);
    const RunResult applied =
        onManager({"-n", ns(), "apply", "-f", "-"}, RunOptions{.input = managerObjects});
    ASSERT_TRUE(applied.ok()) << applied.describe();

    startVipuSim("pod16", {}, managerSim_, managerVipu_);
    if (HasFatalFailure()) return;
    managerOperator_ = std::make_unique<BackgroundProcess>(std::vector<std::string>{
        operatorBinary_, "--kubeconfig", manager_->kubeconfig(), "--log-level", "debug",
        "--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--vipu-controller",
        "pod16=" + managerSim_->endpoint(), "--leader-election-namespace", ns()});
  }

  void TearDown() override {
    if (manager_) {
      onManager({"-n", ns(), "delete", "ipujobs", "--all", "--timeout", "60s"});
      if (managerOperator_) {
        EXPECT_EQ(managerOperator_->stop(), 0) << "the manager's ipu-operator exit status";
        if (HasFailure() || std::getenv("IPU_TEST_VERBOSE"))
          std::cerr << "---- the manager's ipu-operator log ----\n" << managerOperator_->stderrText();
      }
      if (managerSim_) managerSim_->stop();
      onManager({"delete", "namespace", ns(), "--wait=false"});
      onManager({"delete", "clusterqueue", id_, "--ignore-not-found", "--wait=false"});
      onManager({"delete", "admissioncheck,multikueueconfig,multikueuecluster,resourceflavor", id_,
                 "--ignore-not-found", "--wait=false"});
      onManager({"-n", "kueue-system", "delete", "secret", id_, "--ignore-not-found"});
    }
    if (operator_) kubectl({"delete", "ipujobs", "--all", "--timeout", "60s"});
    cluster().kubectl({"delete", "clusterqueue", id_, "--ignore-not-found", "--wait=false"});
    cluster().kubectl({"delete", "resourceflavor", id_, "--ignore-not-found", "--wait=false"});
    OperatorTest::TearDown();
  }

  std::string flavorYaml(const std::string& spec) const {
    return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: " + id_ +
           "}\nspec:\n" + (spec.empty() ? "  {}\n" : spec) + "---\n";
  }

  RunResult onManager(const std::vector<std::string>& args, const RunOptions& options = {}) const {
    return manager_->kubectl(args, options);
  }

  // With its managedFields: who wrote what.
  Json onManagerJson(const std::string& resource, const std::string& name) const {
    const RunResult got = onManager(
        {"-n", ns(), "get", resource, name, "-o", "json", "--ignore-not-found", "--show-managed-fields"});
    return got.ok() && !got.out.empty() ? Json::parse(got.out) : Json();
  }

  std::string phaseOnManager(const std::string& job) const {
    const Json object = onManagerJson("ipujob", job);
    return object.is_object() ? object.value("status", Json::object()).value("phase", "") : "";
  }

  // The user's 4-IPU manifest for MultiKueue: in the LocalQueue "team", managed by MultiKueue, its simulated
  // worker running for `runFor`.
  static std::string dispatched(const std::string& name, const std::string& runFor) {
    return withLabel(
        withName(manifestExitingWith(0, "  managedBy: kueue.x-k8s.io/multikueue\n", runFor), name), "team");
  }

  void createOnManager(const std::string& manifest) const {
    const RunResult created = onManager({"-n", ns(), "create", "-f", "-"}, RunOptions{.input = manifest});
    ASSERT_TRUE(created.ok()) << created.describe();
  }

  // "<type> <message>" of the manager's first Event on `job` with `reason` ("" while there is none).
  std::string managerEvent(const std::string& job, const std::string& reason) const {
    const RunResult listed = onManager(
        {"-n", ns(), "get", "events", "--field-selector", "involvedObject.name=" + job, "-o", "json"});
    if (!listed.ok()) return "";
    for (const Json& event : Json::parse(listed.out).value("items", Json::array())) {
      if (event.value("reason", "") == reason)
        return event.value("type", "") + " " + event.value("message", "");
    }
    return "";
  }

  std::unique_ptr<TestCluster> manager_;
  std::unique_ptr<vipu::testing::SimProcess> managerSim_;
  std::unique_ptr<vipu::VipuClient> managerVipu_;
  std::unique_ptr<BackgroundProcess> managerOperator_;
  std::string id_;  // the name of the cluster-scoped objects of the test on both clusters
};

// A job created on the manager runs on the worker under the Workload MultiKueue copied there, its status
// copied back; nothing of it runs on the manager; one in no LocalQueue is refused in an Event; deleted on
// the manager, a job is gone from the worker.
TEST_F(MultiKueueTest, AJobOnTheManagerRunsOnTheWorkerWithItsStatusCopiedBackAndGoesWithIt) {
  createOnManager(dispatched("runs", "15s"));
  const Json onManagerJob = onManagerJson("ipujob", "runs");
  ASSERT_TRUE(onManagerJob.is_object());
  const std::string workload =
      controllers::workloadNameFor({ns(), "runs", onManagerJob["metadata"].value("uid", "")});
  // The manager's operator makes the Workload; MultiKueue copies it to the worker and, once the worker's
  // Kueue admits it, the job.
  ASSERT_TRUE(eventually([&] { return onManagerJson("workload", workload).is_object(); }, 30s))
      << onManagerJob.dump();
  ASSERT_TRUE(reachesPhase("runs", "Running", 120s))
      << "the manager's Workload: " << onManagerJson("workload", workload).dump();
  const RunResult copied = kubectl({"get", "ipujob", "runs", "-o", "json", "--show-managed-fields"});
  ASSERT_TRUE(copied.ok()) << copied.describe();
  const Json copy = Json::parse(copied.out);
  EXPECT_EQ(copy["metadata"]["annotations"].value(controllers::kKueuePrebuiltWorkloadKey, ""), workload)
      << copy.dump();
  EXPECT_FALSE(copy["spec"].contains("managedBy")) << copy.dump();
  EXPECT_EQ(copy["status"]["kueue"].value("workload", ""), workload) << copy.dump();
  EXPECT_GE(countIf(copy["metadata"]["managedFields"],
                    [](const Json& fields) { return fields.value("manager", "") == "ipu-operator"; }),
            1)
      << "the worker's operator writes its copy (its finalizer, its status): "
      << copy["metadata"]["managedFields"].dump();
  // The worker's operator adopted the copied Workload rather than making one of its own.
  const Json adopted = getJson("workload", workload);
  ASSERT_TRUE(adopted.is_object());
  EXPECT_EQ(adopted["metadata"]["ownerReferences"].back().value("uid", ""), copy["metadata"].value("uid", ""))
      << adopted.dump();
  EXPECT_EQ(adopted["metadata"]["labels"].value(controllers::kKueueJobUidLabel, ""),
            copy["metadata"].value("uid", ""));
  const RunResult workloads = kubectl({"get", "workloads", "-o", "name"});
  EXPECT_EQ(workloads.out, "workload.kueue.x-k8s.io/" + workload + "\n") << workloads.describe();

  // Its status comes back to the manager, whose Workload the manager's operator marks PodsReady.
  EXPECT_TRUE(eventually([&] { return phaseOnManager("runs") == "Running"; }, 60s))
      << onManagerJson("ipujob", "runs").dump();
  EXPECT_TRUE(eventually(
      [&] { return conditionOf(onManagerJson("workload", workload), "PodsReady") == "True/Started"; }, 30s))
      << onManagerJson("workload", workload).dump();
  // Nothing of it on the manager: no pod, no partition, no finalizer.
  const RunResult managerPods = onManager({"-n", ns(), "get", "pods", "-o", "name"});
  EXPECT_TRUE(managerPods.ok() && managerPods.out.empty()) << managerPods.describe();
  auto managerPartitions = managerVipu_->listPartitions("");
  ASSERT_TRUE(managerPartitions.ok());
  EXPECT_TRUE(managerPartitions->empty());
  const Json managerJob = onManagerJson("ipujob", "runs");
  EXPECT_FALSE(managerJob["metadata"].contains("finalizers"));
  // Its status there is MultiKueue's copy: no write of the operator's (its user agent names its fields).
  for (const Json& fields : managerJob["metadata"].value("managedFields", Json::array()))
    EXPECT_EQ(fields.value("manager", "").rfind("ipu-operator", 0), std::string::npos) << fields.dump();

  // The end comes back too: the manager's job Succeeded, its Workload Finished; MultiKueue then deletes the
  // worker's copy, whose operator released its partition.
  EXPECT_TRUE(eventually([&] { return phaseOnManager("runs") == "Succeeded"; }, 90s))
      << onManagerJson("ipujob", "runs").dump();
  EXPECT_TRUE(eventually(
      [&] { return conditionOf(onManagerJson("workload", workload), "Finished") == "True/Succeeded"; }, 30s))
      << onManagerJson("workload", workload).dump();
  EXPECT_TRUE(eventually([&] { return getJson("ipujob", "runs").is_null(); }, 60s));
  EXPECT_TRUE(partitions().empty());

  // Managed by MultiKueue but in no LocalQueue: nothing dispatches it, which a Warning Event says (its status
  // is not the operator's to write); no Workload is made.
  std::string unqueued =
      withName(manifestExitingWith(0, "  managedBy: kueue.x-k8s.io/multikueue\n"), "unqueued");
  createOnManager(unqueued);
  EXPECT_TRUE(eventually([&] { return !managerEvent("unqueued", "NoLocalQueue").empty(); }, 30s));
  EXPECT_NE(managerEvent("unqueued", "NoLocalQueue").find("Warning"), std::string::npos);
  const RunResult managerWorkloads = onManager({"-n", ns(), "get", "workloads", "-o", "name"});
  ASSERT_TRUE(managerWorkloads.ok()) << managerWorkloads.describe();
  EXPECT_EQ(managerWorkloads.out.find("unqueued"), std::string::npos) << managerWorkloads.out;

  // Deleted on the manager while it runs: gone from the worker, its IPUs released.
  createOnManager(dispatched("deleted", "600s"));
  ASSERT_TRUE(reachesPhase("deleted", "Running", 120s));
  EXPECT_EQ(partitions().size(), 1u);
  ASSERT_TRUE(onManager({"-n", ns(), "delete", "ipujob", "deleted", "--timeout", "60s"}).ok());
  EXPECT_TRUE(eventually([&] { return getJson("ipujob", "deleted").is_null(); }, 60s))
      << getJson("ipujob", "deleted").dump();
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s));
}

}  // namespace
}  // namespace ipu::testing
