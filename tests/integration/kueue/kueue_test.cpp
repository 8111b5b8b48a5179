// IPUJobs queued by the real Kueue: Kueue's quota admits (cohort borrowing, preemption), the operator places
// and runs, and the Workload protocol keeps the two in step. The cluster runs Kueue (tools/cluster.sh up
// --kueue) over a simulated POD128, so two ClusterQueues of 64 IPUs in one cohort own the whole POD.
#include <gtest/gtest.h>

#include "kueue/workload.h"
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

class KueueTest : public OperatorTest {
 protected:
  std::string vipuPod() const override { return "pod128"; }

  void SetUp() override {
    OperatorTest::SetUp();
    if (HasFatalFailure()) return;
    flavor_ = "ipu-" + ns();
    teamA_ = ns() + "-a";
    teamB_ = ns() + "-b";
    // The flavor's node label puts the workers on the POD's hosts: the operator applies it to their pods.
    create(kueueObjects());
  }

  void TearDown() override {
    // The jobs first (the operator releases what they hold), then Kueue's cluster-scoped objects.
    if (operator_) kubectl({"delete", "ipujobs", "--all", "--timeout", "60s"});
    cluster().kubectl({"delete", "clusterqueue", teamA_, teamB_, "--ignore-not-found", "--wait=false"});
    cluster().kubectl({"delete", "resourceflavor", flavor_, "--ignore-not-found", "--wait=false"});
    OperatorTest::TearDown();
  }

  std::string clusterQueue(const std::string& name) const {
    return R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: )" +
           name + R"(}
spec:
  namespaceSelector: {}
  cohortName: )" +
           ns() + R"(
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [graphcore.ai/ipu, cpu, memory]
    flavors:
    - name: )" +
           flavor_ + R"(
      resources:
      - {name: graphcore.ai/ipu, nominalQuota: 64}
      - {name: cpu, nominalQuota: 1000}
      - {name: memory, nominalQuota: 10Ti}
---
)";
  }

  std::string kueueObjects() const {
    return R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: )" +
           flavor_ + R"(}
spec: {nodeLabels: {ipu.graphcore.ai/ipu-pod: pod128}}
---
)" + clusterQueue(teamA_) +
           clusterQueue(teamB_) +
           R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-a}
spec: {clusterQueue: )" +
           teamA_ + R"(}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-b}
spec: {clusterQueue: )" +
           teamB_ + R"(}
)";
  }

  // The user's 64-IPU manifest, unchanged but for the LocalQueue label and kwok's run time and exit code.
  std::string sixtyFourIpus(const std::string& name, const std::string& queue, const std::string& runFor) {
    std::string manifest = withLabel(manifestWith(kSixtyFourIpuManifest,
                                                  "ipu-operator.dev/simulate-exit-code: \"0\", "
                                                  "ipu-operator.dev/simulate-run-duration: \"" +
                                                      runFor + "\""),
                                     queue);
    const std::string generated = "generateName: bert-poprun-64ipus-";
    const auto at = manifest.find(generated);
    return at == std::string::npos ? "" : manifest.replace(at, generated.size(), "name: " + name);
  }

  static std::string withLabel(std::string manifest, const std::string& queue) {
    if (queue.empty()) return manifest;
    const std::string anchor = "\nmetadata:\n";
    const auto at = manifest.find(anchor);
    if (at == std::string::npos) return "";
    return manifest.insert(at + anchor.size(), std::string("  labels: {") +
                                                   controllers::kKueueQueueNameLabel + ": " + queue + "}\n");
  }

  Json workloadOf(const std::string& job) {
    const std::string name = jobStatus(job).value("kueue", Json::object()).value("workload", "");
    return name.empty() ? Json() : getJson("workload", name);
  }

  static std::string conditionOf(const Json& workload, const std::string& type) {
    if (!workload.is_object()) return "";
    for (const Json& condition :
         workload.value("status", Json::object()).value("conditions", Json::array())) {
      if (condition.value("type", "") == type)
        return condition.value("status", "") + "/" + condition.value("reason", "");
    }
    return "";
  }

  std::set<std::string> partitionIds() {
    std::set<std::string> ids;
    for (const auto& partition : partitions()) ids.insert(partition.id);
    return ids;
  }

  std::string flavor_, teamA_, teamB_;
};

// Kueue's quota admits within the ClusterQueue and borrows from the idle one of the cohort; the lender's job
// makes Kueue preempt the borrower, which lets go of its pods and partitions and runs to the end once
// re-admitted; every Workload ends Finished, and a deleted job's Workload goes with it.
TEST_F(KueueTest, QuotaBorrowingAndPreemptionAreKueuesPlacementIsTheOperators) {
  create(sixtyFourIpus("a-within", "team-a", "60s"));
  ASSERT_TRUE(reachesPhase("a-within", "Running"));
  EXPECT_EQ(conditionOf(workloadOf("a-within"), "PodsReady"), "True/Started");
  const Json status = jobStatus("a-within");
  EXPECT_EQ(status["kueue"].value("clusterQueue", ""), teamA_) << status.dump();
  EXPECT_EQ(status["kueue"].value("localQueue", ""), "team-a") << status.dump();
  // The flavor's node label is on the workers, beside the V-IPU controller's.
  const Json pods = podsOf("a-within");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]["spec"]["nodeSelector"].value("ipu.graphcore.ai/ipu-pod", ""), "pod128") << pods.dump();

  // Beyond team-a's 64 IPUs: borrowed from team-b, idle.
  create(sixtyFourIpus("a-borrowing", "team-a", "20s"));
  ASSERT_TRUE(reachesPhase("a-borrowing", "Running"));
  const Json borrowing = workloadOf("a-borrowing");
  EXPECT_EQ(borrowing["status"]["admission"].value("clusterQueue", ""), teamA_) << borrowing.dump();
  const std::string borrowedPartition = defaultPartitionId("a-borrowing");
  EXPECT_TRUE(partitionIds().contains(borrowedPartition));

  // team-b wants its IPUs back: Kueue preempts the borrower.
  create(sixtyFourIpus("b-lender", "team-b", "5s"));
  EXPECT_TRUE(eventually([&] { return !eventWithReason("a-borrowing", "EvictedByKueue").empty(); }, 60s))
      << jobStatus("a-borrowing").dump();
  EXPECT_NE(eventWithReason("a-borrowing", "EvictedByKueue").find("Preempted"), std::string::npos);
  EXPECT_EQ(phaseOf("a-borrowing"), "Queued");
  // Its workers and partition go; the lender runs on the IPUs it freed, and the victim never runs beside it.
  ASSERT_TRUE(reachesPhase("b-lender", "Running")) << "the victim: " << jobStatus("a-borrowing").dump()
                                                   << "\nits Workload: " << workloadOf("a-borrowing").dump();
  EXPECT_TRUE(podsOf("a-borrowing").empty()) << podsOf("a-borrowing").dump();
  EXPECT_FALSE(partitionIds().contains(borrowedPartition));
  EXPECT_NE(phaseOf("a-borrowing"), "Running");
  ASSERT_TRUE(reachesPhase("b-lender", "Succeeded"));
  EXPECT_TRUE(
      eventually([&] { return conditionOf(workloadOf("b-lender"), "Finished") == "True/Succeeded"; }, 30s))
      << workloadOf("b-lender").dump();

  // Re-admitted once the lender is done, the victim runs to its end.
  ASSERT_TRUE(reachesPhase("a-borrowing", "Succeeded", 120s));
  const Json victim = workloadOf("a-borrowing");
  EXPECT_EQ(conditionOf(victim, "Finished"), "True/Succeeded") << victim.dump();
  EXPECT_EQ(conditionOf(victim, "Requeued").substr(0, 4), "True") << victim.dump();

  // Deleting a job deletes its Workload (its owner reference), after the operator released its partition.
  const std::string workload = jobStatus("a-within")["kueue"].value("workload", "");
  ASSERT_TRUE(kubectl({"delete", "ipujob", "a-within", "--timeout", "60s"}).ok());
  EXPECT_TRUE(eventually([&] { return getJson("workload", workload).is_null(); }, 60s));
  EXPECT_FALSE(partitionIds().contains(defaultPartitionId("a-within")));
}

// A job without the label is the operator's alone (no Workload); one the worker pod profile forbids fails
// before it gets one; with --kueue=false a labelled job runs under the operator's own queue, saying so.
TEST_F(KueueTest, JobsKueueDoesNotQueueRunUnderTheOperatorsOwnQueue) {
  create(sixtyFourIpus("unlabelled", "", "2s"));
  ASSERT_TRUE(reachesPhase("unlabelled", "Succeeded"));
  EXPECT_FALSE(jobStatus("unlabelled").contains("kueue")) << jobStatus("unlabelled").dump();
  const auto workloads = kubectl({"get", "workloads", "-o", "name"});
  EXPECT_EQ(workloads.out, "") << workloads.describe();

  // The namespace's worker pod profile applies before Kueue: a forbidden template gets no Workload.
  std::string forbidden = sixtyFourIpus("forbidden", "team-a", "2s");
  forbidden.replace(forbidden.find("        containers:\n"), 0, "        hostNetwork: true\n");
  create(forbidden);
  ASSERT_TRUE(reachesPhase("forbidden", "Failed"));
  EXPECT_EQ(jobStatus("forbidden")["conditions"].dump().find("ForbiddenPodSpec") != std::string::npos, true)
      << jobStatus("forbidden").dump();
  EXPECT_FALSE(jobStatus("forbidden").contains("kueue"));
  EXPECT_EQ(kubectl({"get", "workloads", "-o", "name"}).out, "");

  ASSERT_EQ(operator_->stop(), 0);
  startOperator({"--kueue=false"});
  create(sixtyFourIpus("labelled", "team-a", "2s"));
  ASSERT_TRUE(reachesPhase("labelled", "Succeeded"));
  EXPECT_FALSE(jobStatus("labelled").contains("kueue")) << jobStatus("labelled").dump();
  EXPECT_NE(eventWithReason("labelled", "KueueNotUsed").find("--kueue=false"), std::string::npos);
  EXPECT_EQ(kubectl({"get", "workloads", "-o", "name"}).out, "");
}

// The label kueue.x-k8s.io/priority-class names a WorkloadPriorityClass whose value the Workload takes; one
// that does not exist keeps the job out of Kueue, saying why, until it does.
TEST_F(KueueTest, AWorkloadPriorityClassFromTheJobsLabelGivesTheWorkloadItsPriority) {
  const std::string className = ns() + "-high";
  std::string manifest = sixtyFourIpus("prioritised", "team-a", "2s");
  manifest.replace(
      manifest.find("  labels: {"), std::string("  labels: {").size(),
      std::string("  labels: {") + controllers::kKueuePriorityClassLabel + ": " + className + ", ");
  create(manifest);
  ASSERT_TRUE(saysInLastMessage("prioritised", "WorkloadPriorityClass " + className));
  EXPECT_EQ(phaseOf("prioritised"), "Queued");
  ASSERT_TRUE(
      cluster()
          .kubectl({"create", "-f", "-"},
                   RunOptions{.input = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
                                       "metadata: {name: " +
                                       className + "}\nvalue: 1000\n"})
          .ok());
  ASSERT_TRUE(reachesPhase("prioritised", "Succeeded", 60s));
  const Json workload = workloadOf("prioritised");
  EXPECT_EQ(workload["spec"].value("priority", 0), 1000) << workload.dump();
  EXPECT_EQ(workload["spec"]["priorityClassRef"].value("name", ""), className) << workload.dump();
  cluster().kubectl({"delete", "workloadpriorityclass", className, "--ignore-not-found"});
}

}  // namespace
}  // namespace ipu::testing
