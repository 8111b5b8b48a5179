// What the workers amount to (pure): pods split by attempt, missing pods before and after every worker ran,
// the pods removed at the end by cleanPodPolicy, and the message for a launcher that is not run.
#include "ipujob/worker_observation.h"

#include <gtest/gtest.h>

#include "common/time_format.h"

namespace ipu::controllers {
namespace {

kube::ObjectPtr pod(const std::string& name, const std::string& phase, const std::string& attempt = "0") {
  return std::make_shared<const Json>(
      Json{{"metadata", {{"name", name}, {"labels", {{"graphcore.ai/attempt", attempt}}}}},
           {"status", {{"phase", phase}}}});
}

api::IpuJob twoWorkers() {
  api::IpuJob job;
  job.identity = {"ml", "bert", "uid"};
  job.spec.jobInstances = 2;
  job.spec.ipusPerJobInstance = 4;
  return job;
}

std::vector<std::string> names(const std::vector<kube::ObjectPtr>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back((*p)["metadata"]["name"]);
  return out;
}

TEST(WorkerObservation, PodsOfAnotherAttemptAreStale) {
  const auto split =
      splitByAttempt({pod("bert-worker-0", "Running", "1"), pod("bert-worker-1", "Failed", "0"),
                      pod("bert-worker-1", "Running", "x")},
                     1);
  EXPECT_EQ(split.current.size(), 1u);
  EXPECT_EQ(split.stale.size(), 2u) << "an attempt label we did not write is never the current attempt";
}

TEST(WorkerObservation, AMissingPodIsBeingCreatedUntilEveryWorkerRan) {
  WorkerPods pods;
  pods.current.emplace("bert-worker-0", pod("bert-worker-0", "Running"));
  const auto starting = observeWorkers(twoWorkers(), pods, /*allStarted=*/false);
  EXPECT_EQ(starting.running, 1);
  EXPECT_EQ(starting.missing, 1);
  EXPECT_EQ(starting.outcomes[1].state, WorkerOutcome::State::kActive);
  EXPECT_FALSE(starting.allUp(2));
  const auto started = observeWorkers(twoWorkers(), pods, /*allStarted=*/true);
  EXPECT_EQ(started.outcomes[1].state, WorkerOutcome::State::kLost);
}

// A failed pod with this status, of attempt 0.
kube::ObjectPtr failedPod(const std::string& name, Json status) {
  status["phase"] = "Failed";
  return std::make_shared<const Json>(
      Json{{"metadata", {{"name", name}, {"labels", {{"graphcore.ai/attempt", "0"}}}}}, {"status", status}});
}

WorkerOutcome outcomeOfOnlyWorker(const kube::ObjectPtr& failed) {
  api::IpuJob job = twoWorkers();
  job.spec.jobInstances = 1;
  WorkerPods pods;
  pods.current.emplace("bert-worker-0", failed);
  return observeWorkers(job, pods, true).outcomes.at(0);
}

// Evicted or preempted pods did not fail by their program: lost, whatever exit code the kill left.
TEST(WorkerObservation, EvictedAndDisruptedPodsAreLostNotFailed) {
  const WorkerOutcome evicted = outcomeOfOnlyWorker(failedPod(
      "bert-worker-0",
      {{"reason", "Evicted"},
       {"message", "The node was low on resource: memory."},
       {"containerStatuses", {{{"name", "main"}, {"state", {{"terminated", {{"exitCode", 137}}}}}}}}}));
  EXPECT_EQ(evicted.state, WorkerOutcome::State::kLost);
  EXPECT_EQ(evicted.detail, "Evicted: The node was low on resource: memory.");
  const WorkerOutcome preempted = outcomeOfOnlyWorker(failedPod(
      "bert-worker-0",
      {{"conditions",
        {{{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "PreemptionByScheduler"}}}},
       {"containerStatuses", {{{"name", "main"}, {"state", {{"terminated", {{"exitCode", 143}}}}}}}}}));
  EXPECT_EQ(preempted.state, WorkerOutcome::State::kLost);
  // ExitCode restarts on a lost worker, even when its code is not listed.
  api::IpuJobSpec spec;
  spec.restartType = api::RestartType::kExitCode;
  spec.restartExitCodes = {{3, 3}};
  EXPECT_EQ(judgeWorkers(spec, 0, {evicted}).kind, WorkerVerdict::Kind::kRestart);
  // An ordinary failure with 137 is the program's (or its OOM kill): judged by its code.
  const WorkerOutcome killed = outcomeOfOnlyWorker(failedPod(
      "bert-worker-0",
      {{"containerStatuses", {{{"name", "main"}, {"state", {{"terminated", {{"exitCode", 137}}}}}}}}}));
  EXPECT_EQ(killed.state, WorkerOutcome::State::kFailed);
  EXPECT_EQ(killed.exitCode, 137);
  EXPECT_EQ(judgeWorkers(spec, 0, {killed}).kind, WorkerVerdict::Kind::kFail);
}

// A failed init container is why the pod failed: its exit code is the one the ExitCode policy reads.
TEST(WorkerObservation, AFailedInitContainersExitCodeIsThePods) {
  const WorkerOutcome init = outcomeOfOnlyWorker(failedPod(
      "bert-worker-0", {{"initContainerStatuses",
                         {{{"name", "fetch-data"},
                           {"state", {{"terminated", {{"exitCode", 3}, {"message", "no dataset\n"}}}}}}}},
                        {"containerStatuses",
                         {{{"name", "main"}, {"state", {{"waiting", {{"reason", "PodInitializing"}}}}}}}}}));
  EXPECT_EQ(init.state, WorkerOutcome::State::kFailed);
  EXPECT_EQ(init.exitCode, 3);
  EXPECT_EQ(init.detail, "init container fetch-data: no dataset");
  api::IpuJobSpec spec;
  spec.restartType = api::RestartType::kExitCode;
  spec.restartExitCodes = {{3, 3}};
  spec.backOffLimit = 1;
  const WorkerVerdict verdict = judgeWorkers(spec, 0, {init});
  EXPECT_EQ(verdict.kind, WorkerVerdict::Kind::kRestart);
  EXPECT_NE(verdict.message.find("exit code 3"), std::string::npos) << verdict.message;
  EXPECT_NE(verdict.message.find("init container fetch-data: no dataset"), std::string::npos)
      << verdict.message;
}

kube::ObjectPtr podWithStatus(const std::string& created, Json status) {
  return std::make_shared<const Json>(Json{{"metadata",
                                            {{"name", "bert-worker-0"},
                                             {"creationTimestamp", created},
                                             {"labels", {{"graphcore.ai/attempt", "0"}}}}},
                                           {"status", status}});
}

TEST(WorkerObservation, APodThatCannotStartFailsAfterItsLimitWithItsOwnReason) {
  const Json pulling = {
      {"phase", "Pending"},
      {"containerStatuses",
       {{{"name", "main"},
         {"state", {{"waiting", {{"reason", "ErrImagePull"}, {"message", "pull access denied"}}}}}}}}};
  EXPECT_EQ(cannotStartReason(*podWithStatus("2026-01-01T00:00:00Z", pulling)),
            "ErrImagePull: pull access denied (container main)");
  const Json unschedulable = {
      {"phase", "Pending"},
      {"conditions",
       {{{"type", "PodScheduled"},
         {"status", "False"},
         {"reason", "Unschedulable"},
         {"message", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."}}}}};
  EXPECT_EQ(cannotStartReason(*podWithStatus("2026-01-01T00:00:00Z", unschedulable)),
            "Unschedulable: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.");
  const Json creating = {{"phase", "Pending"},
                         {"containerStatuses",
                          {{{"name", "main"}, {"state", {{"waiting", {{"reason", "ContainerCreating"}}}}}}}}};
  EXPECT_EQ(cannotStartReason(*podWithStatus("2026-01-01T00:00:00Z", creating)), std::nullopt)
      << "a slow pull is not stuck";
  EXPECT_EQ(cannotStartReason(*podWithStatus("2026-01-01T00:00:00Z", {{"phase", "Running"}})), std::nullopt);

  api::IpuJob job = twoWorkers();
  job.spec.jobInstances = 1;
  WorkerPods pods;
  pods.current.emplace("bert-worker-0", podWithStatus("2026-01-01T00:00:00Z", pulling));
  const auto created = *parseTime("2026-01-01T00:00:00Z");
  const auto early = observeWorkers(
      job, pods, false, PodLimits{created + std::chrono::seconds(100), std::chrono::seconds(300)});
  EXPECT_EQ(early.outcomes.at(0).state, WorkerOutcome::State::kActive);
  EXPECT_EQ(early.nextCheck, std::optional<Clock::Duration>(std::chrono::seconds(200)));
  const auto due = observeWorkers(job, pods, false,
                                  PodLimits{created + std::chrono::seconds(300), std::chrono::seconds(300)});
  EXPECT_EQ(due.outcomes.at(0).state, WorkerOutcome::State::kFailed);
  EXPECT_EQ(due.outcomes.at(0).detail,
            "could not start within 300 s: ErrImagePull: pull access denied (container main)");
  EXPECT_EQ(observeWorkers(job, pods, false).outcomes.at(0).state, WorkerOutcome::State::kActive)
      << "without a limit a stuck pod waits";
}

TEST(WorkerObservation, APodWhoseDeletionItsNodeNeverConfirmsIsLostAfterTheGrace) {
  api::IpuJob job = twoWorkers();
  job.spec.jobInstances = 1;
  Json stuck = *podWithStatus("2026-01-01T00:00:00Z", {{"phase", "Running"}});
  stuck["metadata"]["deletionTimestamp"] = "2026-01-01T01:00:00Z";  // the deadline, grace period included
  WorkerPods pods;
  pods.current.emplace("bert-worker-0", std::make_shared<const Json>(stuck));
  const auto deadline = *parseTime("2026-01-01T01:00:00Z");
  const auto limits = [&](int secondsPast) {
    return PodLimits{deadline + std::chrono::seconds(secondsPast), {}, std::chrono::seconds(120)};
  };
  const auto early = observeWorkers(job, pods, true, limits(20));
  EXPECT_EQ(early.outcomes.at(0).state, WorkerOutcome::State::kActive);
  EXPECT_EQ(early.nextCheck, std::optional<Clock::Duration>(std::chrono::seconds(100)));
  const auto overdue = observeWorkers(job, pods, true, limits(120));
  EXPECT_EQ(overdue.outcomes.at(0).state, WorkerOutcome::State::kLost);
  EXPECT_EQ(overdue.outcomes.at(0).detail,
            "still terminating 120 s after its deletion deadline: its node is not answering");
  EXPECT_TRUE(deletionOverdue(stuck, deadline + std::chrono::seconds(120), std::chrono::seconds(120)));
  EXPECT_FALSE(deletionOverdue(stuck, deadline + std::chrono::seconds(119), std::chrono::seconds(120)));
  EXPECT_FALSE(deletionOverdue(*podWithStatus("2026-01-01T00:00:00Z", {{"phase", "Running"}}),
                               deadline + std::chrono::hours(9), std::chrono::seconds(120)))
      << "a pod nobody deletes is never overdue";
  PodLimits unbounded = limits(9999);
  unbounded.deletionGrace = {};
  EXPECT_EQ(observeWorkers(job, pods, true, unbounded).outcomes.at(0).state, WorkerOutcome::State::kActive);
}

// A job's partitions are released once its workers have stopped, but a tenant's long grace period (or a node
// that stopped answering) holds them back no longer than the timeout after the deletion was asked.
TEST(WorkerObservation, AReleaseWaitsForAWorkerUntilItStopsButNoLongerThanTheTimeoutAfterItsDeletion) {
  const auto asked = *parseTime("2026-01-01T01:00:00Z");
  const auto timeout = std::chrono::seconds(120);
  Json running = *podWithStatus("2026-01-01T00:00:00Z", {{"phase", "Running"}});
  EXPECT_TRUE(releaseWaitsFor(running, asked + std::chrono::hours(9), timeout)) << "not deleted: it runs";
  EXPECT_FALSE(
      releaseWaitsFor(*podWithStatus("2026-01-01T00:00:00Z", {{"phase", "Succeeded"}}), asked, timeout));
  EXPECT_FALSE(
      releaseWaitsFor(*podWithStatus("2026-01-01T00:00:00Z", {{"phase", "Failed"}}), asked, timeout));

  Json going = running;  // deleted with the default grace period: gone long before the timeout
  going["metadata"]["deletionTimestamp"] = "2026-01-01T01:00:30Z";
  going["metadata"]["deletionGracePeriodSeconds"] = 30;
  EXPECT_TRUE(releaseWaitsFor(going, asked + std::chrono::seconds(30), timeout));
  EXPECT_TRUE(releaseWaitsFor(going, asked + std::chrono::seconds(119), timeout));
  EXPECT_FALSE(releaseWaitsFor(going, asked + std::chrono::seconds(120), timeout));

  Json hostile = running;  // a year's grace period in the tenant's template
  hostile["metadata"]["deletionTimestamp"] = "2027-01-01T01:00:00Z";
  hostile["metadata"]["deletionGracePeriodSeconds"] = 31536000;
  EXPECT_TRUE(releaseWaitsFor(hostile, asked + std::chrono::seconds(119), timeout));
  EXPECT_FALSE(releaseWaitsFor(hostile, asked + std::chrono::seconds(120), timeout))
      << "the tenant's grace period held the IPUs";

  EXPECT_TRUE(releaseWaitsFor(going, asked + std::chrono::seconds(29), {})) << "no timeout: its deadline";
  EXPECT_FALSE(releaseWaitsFor(going, asked + std::chrono::seconds(30), {}));
}

TEST(WorkerObservation, CleanPodPolicyDecidesWhatGoesAtTheEnd) {
  const std::vector<kube::ObjectPtr> pods = {pod("bert-worker-0", "Succeeded"),
                                             pod("bert-worker-1", "Failed"), pod("bert-worker-2", "Running")};
  EXPECT_EQ(names(podsToRemoveAtEnd(pods, api::CleanPodPolicy::kNone, "bert")),
            std::vector<std::string>{"bert-worker-2"})
      << "a worker still running goes whatever the policy";
  EXPECT_EQ(names(podsToRemoveAtEnd(pods, api::CleanPodPolicy::kWorkers, "bert")),
            (std::vector<std::string>{"bert-worker-1", "bert-worker-2"}));
  EXPECT_EQ(podsToRemoveAtEnd(pods, api::CleanPodPolicy::kAll, "bert").size(), 3u);
}

}  // namespace
}  // namespace ipu::controllers
