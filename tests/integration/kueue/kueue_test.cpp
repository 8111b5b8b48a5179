// IPUJobs queued by the real Kueue: Kueue's quota admits (cohort borrowing, preemption), the operator places
// and runs, and the Workload protocol keeps the two in step. The cluster runs Kueue (tools/cluster.sh up
// --kueue) over a simulated POD128, so two ClusterQueues of 64 IPUs in one cohort own the whole POD.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kueue/workload.h"
#include "kueue_objects.h"
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

  // A ClusterQueue of `ipus` IPUs of the test's flavor, in the test's cohort, preempting to take its IPUs
  // back; `spec` replaces those two for another kind of queue.
  std::string clusterQueue(const std::string& name, int ipus = 64, std::string spec = "") const {
    if (spec.empty()) {
      spec = "  cohortName: " + ns() +
             "\n  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}\n";
    }
    return clusterQueueYaml(name, flavor_, ipus, spec);
  }

  std::string kueueObjects() const {
    return R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: )" +
           flavor_ + R"(}
spec: {nodeLabels: {ipu.graphcore.ai/ipu-pod: pod128}}
---
)" + clusterQueue(teamA_) +
           clusterQueue(teamB_) + localQueueYaml("team-a", teamA_) + localQueueYaml("team-b", teamB_);
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

  // The same manifest asking for `ipus` IPUs (16 replicas of ipus/16).
  std::string withIpus(const std::string& name, const std::string& queue, const std::string& runFor,
                       int ipus) {
    std::string manifest = sixtyFourIpus(name, queue, runFor);
    const std::string field = "ipusPerJobInstance: \"64\"";
    return manifest.replace(manifest.find(field), field.size(),
                            "ipusPerJobInstance: \"" + std::to_string(ipus) + "\"");
  }

  Json workloadOf(const std::string& job) {
    const std::string name = jobStatus(job).value("kueue", Json::object()).value("workload", "");
    return name.empty() ? Json() : getJson("workload", name);
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
  // The job's Succeeded reaches its Workload in a write after the job's own, as for the lender above.
  EXPECT_TRUE(
      eventually([&] { return conditionOf(workloadOf("a-borrowing"), "Finished") == "True/Succeeded"; }, 30s))
      << workloadOf("a-borrowing").dump();
  const Json victim = workloadOf("a-borrowing");
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

// A ClusterQueue that lists the operator's IPU placement AdmissionCheck: Kueue's quota holds for a job the
// fragmented POD cannot place, and the check keeps Kueue from admitting it (Pending with the plan's words)
// while it holds nothing; once an ILD is free the check is Ready and the job runs. A job bigger than the POD
// is Rejected.
TEST_F(KueueTest, ThePlacementCheckHoldsKueuesAdmissionUntilThePartitionsCanBePlaced) {
  const std::string check = ns() + "-ipu-placement";
  const std::string queue = ns() + "-c";
  create(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: )" +
         check + R"(}
spec: {controllerName: graphcore.ai/ipu-operator}
---
)" + clusterQueue(queue, 512, "  admissionChecksStrategy: {admissionChecks: [{name: " + check + "}]}\n") +
         localQueueYaml("team-c", queue));
  const auto active = [&] {
    const auto got =
        cluster().kubectl({"get", "admissioncheck", check, "-o", "jsonpath={.status.conditions}"});
    return got.ok() && got.out.find("\"type\":\"Active\"") != std::string::npos &&
           got.out.find("\"status\":\"True\"") != std::string::npos;
  };
  ASSERT_TRUE(eventually(active, 30s)) << "the operator never marked its AdmissionCheck Active";

  // Fragment the POD128: four 32-IPU jobs of the operator's own queue fill it; one of each ILD goes.
  for (const char* name : {"f1", "f2", "f3", "f4"}) create(withIpus(name, "", "600s", 32));
  for (const char* name : {"f1", "f2", "f3", "f4"}) ASSERT_TRUE(reachesPhase(name, "Running"));
  std::map<std::string, std::vector<std::string>> byIld;
  for (const char* name : {"f1", "f2", "f3", "f4"}) {
    const std::string ipus = jobStatus(name)["partitions"][0].value("ipus", "");
    byIld[ipus.substr(0, ipus.find(':'))].push_back(name);
  }
  ASSERT_EQ(byIld.size(), 2u) << "expected two 32-IPU jobs in each ILD";
  std::vector<std::string> kept;
  for (auto& [ild, jobs] : byIld) {
    ASSERT_EQ(jobs.size(), 2u);
    ASSERT_TRUE(kubectl({"delete", "ipujob", jobs[0], "--timeout", "60s"}).ok());
    kept.push_back(jobs[1]);
  }

  // 64 IPUs free, but no aligned block of 64: Kueue's quota holds, the check does not let it admit.
  create(withIpus("placed", "team-c", "3s", 64));
  ASSERT_TRUE(eventually(
      [&] { return checkOf(workloadOf("placed"), check).find("aligned block of 64") != std::string::npos; },
      60s))
      << workloadOf("placed").dump();
  const Json waiting = workloadOf("placed");
  EXPECT_EQ(conditionOf(waiting, "QuotaReserved"), "True/QuotaReserved") << waiting.dump();
  EXPECT_NE(conditionOf(waiting, "Admitted").substr(0, 4), "True") << waiting.dump();
  EXPECT_EQ(checkOf(waiting, check).substr(0, 9), "Pending: ") << waiting.dump();
  EXPECT_EQ(jobStatus("placed")["kueue"].value("awaitingPlacement", false), true)
      << jobStatus("placed").dump();
  // Never half-started: nothing held, no pod, no partition.
  EXPECT_FALSE(jobStatus("placed").contains("partitions")) << jobStatus("placed").dump();
  EXPECT_TRUE(podsOf("placed").empty());
  EXPECT_FALSE(partitionIds().contains(defaultPartitionId("placed")));

  // An ILD freed: placed, the check Ready, Kueue admits, the job runs to its end.
  ASSERT_TRUE(kubectl({"delete", "ipujob", kept[0], "--timeout", "60s"}).ok());
  ASSERT_TRUE(reachesPhase("placed", "Succeeded", 90s));
  const Json done = workloadOf("placed");
  EXPECT_EQ(checkOf(done, check).substr(0, 14), "Ready: Placed:") << done.dump();
  EXPECT_EQ(conditionOf(done, "Finished"), "True/Succeeded") << done.dump();

  // Within Kueue's quota (512) but bigger than the POD: Rejected, and the job fails saying why. The Workload
  // lets its quota go either way: Kueue answers a Rejected check by marking it for deactivation
  // (DeactivationTarget, reason AdmissionCheck) and then deactivating it, unless the failed job's Finished
  // condition reached it first, which ends it before Kueue looks (a race the operator may win by
  // milliseconds). What is looked at: the Workload let go by one or the other, for the rejection.
  create(withIpus("too-big", "team-c", "3s", 256));
  ASSERT_TRUE(reachesPhase("too-big", "Failed", 60s));
  EXPECT_NE(jobStatus("too-big")["conditions"].dump().find("Unschedulable"), std::string::npos);
  EXPECT_TRUE(eventually(
      [&] {
        const Json workload = workloadOf("too-big");
        if (!workload.is_object()) return false;
        const bool kueueActed = workload["spec"].value("active", true) == false ||
                                conditionOf(workload, "DeactivationTarget") == "True/AdmissionCheck";
        // Kueue resets the checks of a Workload it deactivates; one finished first keeps the rejection.
        const bool finishedRejected = conditionOf(workload, "Finished") == "True/Failed" &&
                                      checkOf(workload, check).substr(0, 9) == "Rejected:";
        return kueueActed || finishedRejected;
      },
      30s))
      << workloadOf("too-big").dump();
  EXPECT_NE(operatorLog().find("\"job\":\"" + ns() + "/too-big\",\"check\":\"" + check +
                               "\",\"state\":\"Rejected\""),
            std::string::npos);

  cluster().kubectl({"delete", "clusterqueue", queue, "--ignore-not-found", "--wait=false"});
  cluster().kubectl({"delete", "admissioncheck", check, "--ignore-not-found", "--wait=false"});
}

}  // namespace
}  // namespace ipu::testing
