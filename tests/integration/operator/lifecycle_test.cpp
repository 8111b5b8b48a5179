// After the job: cleanPodPolicy, ttlSecondsAfterFinished; during it: activeDeadlineSeconds; a job that could
// never run admitted again once its spec is fixed; no write conflicts for jobs nobody else touches; a
// launcher that is not run yet said so; workers the API server refuses for good end the job (and it runs
// once allowed and edited); a deleted job's partition kept until its worker has stopped.
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

using LifecycleTest = OperatorTest;

TEST_F(LifecycleTest, CleanPodPolicyAllAndTtlRemovePodsThenTheJob) {
  const std::string job =
      createJob(manifestExitingWith(0, "  cleanPodPolicy: All\n  ttlSecondsAfterFinished: 4\n", "1s"));
  ASSERT_TRUE(reachesPhase(job, "Succeeded"));
  EXPECT_TRUE(eventually([&] { return podsOf(job).empty(); }, 30s)) << "pods kept: " << podsOf(job).dump();
  EXPECT_TRUE(eventually([&] { return getJson("ipujob", job).is_null(); }, 60s)) << "job kept after its TTL";
  EXPECT_TRUE(partitions().empty());
}

TEST_F(LifecycleTest, CleanPodPolicyWorkersKeepsWorkerZeroForItsLogs) {
  std::string manifest = manifestExitingWith(0, "  cleanPodPolicy: Workers\n", "1s");
  const auto at = manifest.find("jobInstances: 1");
  ASSERT_NE(at, std::string::npos);
  manifest.replace(at, 15, "jobInstances: 2");
  const std::string job = createJob(manifest);
  ASSERT_TRUE(reachesPhase(job, "Succeeded"));
  EXPECT_TRUE(eventually([&] { return podsOf(job).size() == 1; }, 30s)) << podsOf(job).dump();
  EXPECT_TRUE(getJson("pod", job + "-worker-0").is_object());
}

TEST_F(LifecycleTest, ActiveDeadlineStopsARunningJob) {
  // The user's manifest, which never ends on kwok, with a deadline.
  const std::string job = createJob(manifestWith(kFourIpuManifest, "", "  activeDeadlineSeconds: 4\n"));
  ASSERT_TRUE(reachesPhase(job, "Running"));
  ASSERT_TRUE(reachesPhase(job, "Failed", 60s));
  const Json status = jobStatus(job);
  EXPECT_NE(status.value("lastMessage", "").find("activeDeadlineSeconds (4 s)"), std::string::npos)
      << status.dump();
  EXPECT_EQ(countIf(status["conditions"],
                    [](const Json& c) {
                      return c.value("type", "") == "Failed" && c.value("reason", "") == "DeadlineExceeded";
                    }),
            1)
      << status.dump();
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s));
  EXPECT_TRUE(eventually([&] { return podsOf(job).empty(); }, 60s)) << "the running worker was not stopped";
}

TEST_F(LifecycleTest, WorkersRefusedByPodSecurityFailTheJobAndReleaseItsIpus) {
  // A namespace whose Pod Security level refuses hostIPC: the admitted job's worker can never be created.
  ASSERT_TRUE(
      cluster().kubectl({"label", "namespace", ns(), "pod-security.kubernetes.io/enforce=baseline"}).ok());
  const std::string job = createJob(readFile(kFourIpuManifest));
  ASSERT_TRUE(reachesPhase(job, "Failed", 60s)) << jobStatus(job).dump();
  const Json status = jobStatus(job);
  EXPECT_EQ(status.value("lastMessage", "").rfind("The API server refused the job's workers: ", 0), 0u)
      << status.dump();
  EXPECT_NE(status.value("lastMessage", "").find("violates PodSecurity \"baseline:latest\""),
            std::string::npos)
      << status.dump();
  EXPECT_EQ(countIf(status["conditions"],
                    [](const Json& c) {
                      return c.value("type", "") == "Failed" && c.value("reason", "") == "WorkerRefused";
                    }),
            1)
      << status.dump();
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s)) << "the refused job kept its partition";
  EXPECT_TRUE(podsOf(job).empty());

  // The admin allows the namespace and the user edits the job: it never ran, so it gets a fresh start.
  ASSERT_TRUE(cluster()
                  .kubectl({"label", "--overwrite", "namespace", ns(),
                            "pod-security.kubernetes.io/enforce=privileged"})
                  .ok());
  ASSERT_TRUE(kubectl({"patch", "ipujob", job, "--type", "merge", "-p", R"({"spec":{"priority":1}})"}).ok());
  EXPECT_TRUE(reachesPhase(job, "Running", 60s)) << jobStatus(job).dump();
}

// Suspended, resized and resumed while no operator ran: the next operator sees a running job whose spec no
// longer matches its partitions, and admits it again instead of running 8-IPU pods on a 4-IPU partition.
TEST_F(LifecycleTest, AShapeChangedWhileNoOperatorRanIsAdmittedAgain) {
  const std::string job = createJob(readFile(kFourIpuManifest));
  ASSERT_TRUE(reachesPhase(job, "Running"));
  const std::string oldPod = getJson("pod", job + "-worker-0")["metadata"].value("uid", "");
  EXPECT_EQ(operator_->stop(), 0);

  for (const char* patch : {R"({"spec":{"suspend":true}})", R"({"spec":{"ipusPerJobInstance":"8"}})",
                            R"({"spec":{"suspend":false}})"}) {
    const auto patched = kubectl({"patch", "ipujob", job, "--type", "merge", "-p", patch});
    ASSERT_TRUE(patched.ok()) << patched.describe();
  }
  startOperator();
  ASSERT_TRUE(eventually(
      [&] {
        const Json status = jobStatus(job);
        return status.value("phase", "") == "Running" && status["partitions"][0].value("size", 0) == 8;
      },
      90s))
      << jobStatus(job).dump();
  const auto reasons = eventReasons(job);
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "SpecChanged"), reasons.end());
  EXPECT_NE(getJson("pod", job + "-worker-0")["metadata"].value("uid", ""), oldPod)
      << "the pod of the old shape was kept";
  const auto held = partitions();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].size(), 8u);
}

TEST_F(LifecycleTest, AnUnschedulableJobRunsOnceItsSpecIsFixed) {
  std::string manifest = readFile(kFourIpuManifest);
  const auto at = manifest.find("ipusPerJobInstance: \"4\"");
  ASSERT_NE(at, std::string::npos);
  manifest.replace(at, 23, "ipusPerJobInstance: \"128\"");
  const std::string job = createJob(manifest);
  ASSERT_TRUE(reachesPhase(job, "Failed", 30s));
  EXPECT_NE(jobStatus(job).value("lastMessage", "").find("largest possible partition is 64"),
            std::string::npos)
      << jobStatus(job).dump();

  // The size may only change while suspended (the CRD says so at apply); then resume.
  auto fixed = kubectl({"patch", "ipujob", job, "--type", "merge", "-p",
                        R"({"spec":{"suspend":true,"ipusPerJobInstance":"4"}})"});
  ASSERT_TRUE(fixed.ok()) << fixed.describe();
  ASSERT_TRUE(reachesPhase(job, "Suspended", 30s));
  ASSERT_TRUE(
      kubectl({"patch", "ipujob", job, "--type", "merge", "-p", R"({"spec":{"suspend":false}})"}).ok());
  EXPECT_TRUE(reachesPhase(job, "Running"));
  const auto reasons = eventReasons(job);
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "SpecChanged"), reasons.end());
}

TEST_F(LifecycleTest, JobsNobodyElseTouchesCostNoWriteConflict) {
  // Every decision is written conditionally on the version read; with the finalizer added in a pass of its
  // own, no write of a job's life is based on a version the operator itself made stale. One job after the
  // other: each has the operator to itself.
  for (int i = 0; i < 3; ++i) {
    const std::string job = createJob(manifestExitingWith(0, "", "1s"));
    ASSERT_TRUE(reachesPhase(job, "Succeeded"));
  }
  const std::string log = operatorLog_ + operator_->stderrText();
  EXPECT_EQ(log.find("Conflict:"), std::string::npos) << log;
}

// A deleted job's IPUs go back only once its workers have stopped: V-IPU may give them to the next job at
// once. With kwok (the node's agent) stopped, the deleted job's worker stays Running while it is being
// deleted, as on a node whose kubelet waits out the pod's grace period, and the partition stays with it; once
// the node confirms, the partition goes, then the job. (The chaos test once saw a deleted job's pods, left to
// the garbage collector across an API server restart, still running on IPUs already given to another job.)
TEST_F(LifecycleTest, ADeletedJobKeepsItsPartitionUntilItsWorkerHasStopped) {
  const std::string job = createJob(manifestExitingWith(0, "", "600s"));
  ASSERT_TRUE(reachesPhase(job, "Running"));
  ASSERT_EQ(partitions().size(), 1u);
  struct NodeAgentStopped {
    const TestCluster& cluster;
    bool stopped = true;
    void start() {
      if (std::exchange(stopped, false)) cluster.controlComponent("start", "kwok");
    }
    ~NodeAgentStopped() { start(); }
  } node{cluster()};
  cluster().controlComponent("stop", "kwok");
  ASSERT_TRUE(kubectl({"delete", "ipujob", job, "--wait=false"}).ok());

  // The operator deletes the worker itself while the job (its finalizer) is still there...
  const auto workerGoing = [&] {
    const Json pods = podsOf(job);
    return pods.is_array() && pods.size() == 1 && pods[0]["metadata"].contains("deletionTimestamp");
  };
  ASSERT_TRUE(eventually(workerGoing, 30s)) << podsOf(job).dump();
  EXPECT_TRUE(getJson("ipujob", job).is_object());
  // ...and keeps the partition for as long as nothing confirms that the worker stopped (here: 5 s of the
  // pod's 30 s grace period).
  const auto watchedUntil = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < watchedUntil) {
    ASSERT_EQ(partitions().size(), 1u) << "released while its worker still ran";
    std::this_thread::sleep_for(200ms);
  }
  EXPECT_EQ(podsOf(job).size(), 1u);

  node.start();
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 60s)) << "not released once the worker went";
  EXPECT_TRUE(eventually([&] { return getJson("ipujob", job).is_null(); }, 60s)) << "the finalizer stayed";
}

TEST_F(LifecycleTest, ALauncherThatIsNotRunYetIsAWarningEvent) {
  const std::string job = createJob(
      manifestWith(kFourIpuManifest, "", "  launcher:\n    command: [poprun, python3, train.py]\n"));
  ASSERT_TRUE(reachesPhase(job, "Running"));
  EXPECT_TRUE(eventually(
      [&] {
        const auto reasons = eventReasons(job);
        return std::find(reasons.begin(), reasons.end(), "LauncherNotRun") != reasons.end();
      },
      30s));
}

}  // namespace
}  // namespace ipu::testing
