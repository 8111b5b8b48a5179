#include "ipujob/claimed_workers.h"

#include <gtest/gtest.h>

#include "ipujob/worker_pod_cache.h"

namespace ipu::controllers {
namespace {

const api::ObjectIdentity kJob{"ml", "bert", "uid-bert"};

Json ownerReference(const std::string& uid, bool controller, const std::string& kind = "IPUJob") {
  return {{"apiVersion", "graphcore.ai/v1alpha1"},
          {"kind", kind},
          {"name", "bert"},
          {"uid", uid},
          {"controller", controller}};
}

kube::ObjectPtr pod(const std::string& ns, const std::string& name, Json owner, bool attemptLabel = true) {
  Json labels = {{"graphcore.ai/ipujob", "bert"}};
  if (attemptLabel) labels["graphcore.ai/attempt"] = "0";
  return std::make_shared<const Json>(Json{
      {"metadata",
       {{"namespace", ns}, {"name", name}, {"labels", labels}, {"ownerReferences", Json::array({owner})}}}});
}

TEST(ClaimedWorkersTest, OnlyControlledPodsOfTheJobsNamespaceWithTheAttemptLabelAreWorkers) {
  const auto worker = pod("ml", "bert-worker-0", ownerReference("uid-bert", true));
  const ClaimedPods claimed =
      claimPods({worker, pod("other", "bert-worker-1", ownerReference("uid-bert", true)),
                 pod("ml", "not-controlled", ownerReference("uid-bert", false)),
                 pod("ml", "another-kind", ownerReference("uid-bert", true, "Job")),
                 pod("ml", "unlabelled", ownerReference("uid-bert", true), /*attemptLabel=*/false)},
                kJob);
  ASSERT_EQ(claimed.workers.size(), 1u);
  EXPECT_EQ(claimed.workers[0], worker);
  ASSERT_EQ(claimed.impostors.size(), 4u);
  EXPECT_EQ(claimed.impostors[0].why, "it is in another namespace");
  EXPECT_EQ(claimed.impostors[1].why, "its ownerReference to the job is not an IPUJob controller reference");
  EXPECT_EQ(claimed.impostors[2].why, "its ownerReference to the job is not an IPUJob controller reference");
  EXPECT_EQ(claimed.impostors[3].why, "it has no graphcore.ai/attempt label");
}

TEST(ClaimedWorkersTest, ThePodCacheKeepsOnlyPodsAnIpuJobOwns) {
  EXPECT_TRUE(ownedByAnIpuJob(*pod("ml", "w", ownerReference("uid-bert", true))));
  EXPECT_TRUE(ownedByAnIpuJob(*pod("ml", "w", ownerReference("uid-bert", false))))
      << "kept to be reported on the job it names";
  EXPECT_FALSE(ownedByAnIpuJob(*pod("ml", "w", ownerReference("uid-bert", true, "Job"))));
  Json noOwner = *pod("ml", "w", ownerReference("uid-bert", true));
  noOwner["metadata"].erase("ownerReferences");
  EXPECT_FALSE(ownedByAnIpuJob(noOwner)) << "a label alone costs nothing";
  Json otherGroup = *pod("ml", "w", ownerReference("uid-bert", true));
  otherGroup["metadata"]["ownerReferences"][0]["apiVersion"] = "evil.example/v1";
  EXPECT_FALSE(ownedByAnIpuJob(otherGroup));
}

TEST(ClaimedWorkersTest, TheCacheKeepsOnlyTheFourLabelsTheOperatorWrites) {
  Json labelled = *pod("ml", "w", ownerReference("uid-bert", true));
  for (int k = 0; k < 60; ++k) labelled["metadata"]["labels"]["graphcore.ai/x" + std::to_string(k)] = "v";
  labelled["metadata"]["labels"]["graphcore.ai/worker-index"] = "0";
  labelled["metadata"]["annotations"] = {{"a", std::string(4096, 'x')}};
  trimWorkerPodForCache(labelled);
  EXPECT_EQ(labelled["metadata"]["labels"], (Json{{"graphcore.ai/ipujob", "bert"},
                                                  {"graphcore.ai/attempt", "0"},
                                                  {"graphcore.ai/worker-index", "0"}}));
  EXPECT_FALSE(labelled["metadata"].contains("annotations"));
}

}  // namespace
}  // namespace ipu::controllers
