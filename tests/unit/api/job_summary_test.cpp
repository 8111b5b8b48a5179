#include "api/job_summary.h"

#include <gtest/gtest.h>

#include "api/job_lifecycle.h"
#include "kube/store.h"

namespace ipu::api {
namespace {

using Json = nlohmann::json;

Json job(const std::string& name) {
  return {{"apiVersion", "graphcore.ai/v1alpha1"},
          {"kind", "IPUJob"},
          {"metadata",
           {{"namespace", "ns"},
            {"name", name},
            {"uid", "uid-" + name},
            {"resourceVersion", "7"},
            {"generation", 3},
            {"creationTimestamp", "2026-12-01T10:00:00Z"}}},
          {"spec",
           {{"jobInstances", 2},
            {"ipusPerJobInstance", "4"},
            {"activeDeadlineSeconds", 600},
            {"workers", {{"template", {{"spec", {{"containers", {{{"name", "m"}, {"image", "i"}}}}}}}}}}}}};
}

Json holdingOne(Json object) {
  object["status"] = {
      {"phase", "Running"},
      {"conditions",
       Json::array(
           {{{"type", "Admitted"}, {"status", "True"}, {"lastTransitionTime", "2026-12-01T10:00:05Z"}}})},
      {"partitions",
       Json::array(
           {{{"id", "p-1"}, {"instance", 0}, {"size", 4}, {"controller", "pod64"}, {"state", "Active"}}})}};
  return object;
}

TEST(JobSummaryTest, AWaitingJobAsksForItsGangFromItsSpec) {
  const JobSummary summary = summarizeJob(job("a"));
  EXPECT_EQ(summary.key, "ns/a");
  EXPECT_EQ(summary.identity.uid, "uid-a");
  EXPECT_EQ(summary.generation, "3");
  EXPECT_EQ(summary.phase, "");
  EXPECT_TRUE(summary.alive);
  EXPECT_FALSE(summary.suspended);
  EXPECT_TRUE(summary.waitsForAdmission);
  EXPECT_FALSE(summary.queuedByKueue);
  EXPECT_EQ(summary.manager, kDefaultControllerName);
  EXPECT_TRUE(summary.held.empty());
  ASSERT_TRUE(summary.ask);
  EXPECT_EQ(summary.ask->instances, 2u);
  EXPECT_EQ(summary.ask->ipusPerInstance, 4u);
  EXPECT_EQ(summary.ask->ipus(), 8);
  EXPECT_EQ(summary.ask->creationTimestamp, "2026-12-01T10:00:00Z");
  EXPECT_EQ(summary.ask->activeDeadlineSeconds, 600);
  EXPECT_EQ(summary.ask->pinnedController, "");
}

TEST(JobSummaryTest, AJobHoldingPartitionsAsksForNothingMore) {
  const JobSummary summary = summarizeJob(holdingOne(job("a")));
  EXPECT_EQ(summary.phase, "Running");
  EXPECT_FALSE(summary.waitsForAdmission);
  ASSERT_EQ(summary.held.size(), 1u);
  EXPECT_EQ(summary.held.front().id, "p-1");
  EXPECT_EQ(summary.held.front().size, 4);
  EXPECT_EQ(summary.admittedAt, "2026-12-01T10:00:05Z");
  EXPECT_EQ(summary.activeDeadlineSeconds, 600) << "a held job's deadline is read too (its start estimate)";
  EXPECT_FALSE(summary.ask) << "only a waiting job's spec is read for what it asks";
}

TEST(JobSummaryTest, AWaitingJobWhoseSpecDoesNotParseAsksForNothing) {
  Json bad = job("bad");
  bad["spec"]["ipusPerJobInstance"] = "3";  // not a power of two: its own reconcile fails it
  const JobSummary summary = summarizeJob(bad);
  EXPECT_TRUE(summary.waitsForAdmission);
  EXPECT_FALSE(summary.ask);
  Json suspended = job("s");
  suspended["spec"]["suspend"] = true;
  EXPECT_TRUE(summarizeJob(suspended).suspended);
  EXPECT_FALSE(summarizeJob(suspended).waitsForAdmission);
}

TEST(JobSummaryTest, TheCacheKeepsJobsPackedAndItsSummariesReadBackWhatTheJobsSay) {
  kube::Store store;
  keepJobsPackedAndSummarized(store);
  keepJobsPackedAndSummarized(store);  // every controller that shares the cache asks for the same
  store.apply({kube::WatcherEvent::Kind::kApply, job("a")});
  store.apply({kube::WatcherEvent::Kind::kApply, holdingOne(job("b"))});
  const auto summaries = store.summaries<JobSummary>();
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(*summaries[0], summarizeJob(job("a")));
  EXPECT_EQ(*summaries[1], summarizeJob(holdingOne(job("b"))));
  EXPECT_NE(store.get("ns/a"), store.get("ns/a")) << "packed: each read decodes a job of its own";
  EXPECT_EQ(*store.get("ns/a"), job("a"));
}

}  // namespace
}  // namespace ipu::api
