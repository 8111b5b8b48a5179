// What the workers amount to (pure): pods split by attempt, missing pods before and after every worker ran,
// the pods removed at the end by cleanPodPolicy, and the message for a launcher that is not run.
#include "ipujob/worker_observation.h"

#include <gtest/gtest.h>

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
