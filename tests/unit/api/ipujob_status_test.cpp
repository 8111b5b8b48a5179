// IpuJobStatus: reading what the API server returns (including statuses written by the previous layout and
// malformed fields), writing it back, conditions, and the merge patch between two statuses.
#include "api/ipujob_status.h"

#include <gtest/gtest.h>

#include "api/job_lifecycle.h"

namespace ipu::api {
namespace {

// A status as the previous operator version wrote it for a running job.
const char* kRunningStatus = R"({
  "phase": "Running", "launcherStatus": "Running", "lastMessage": "All worker pods are running",
  "currentReplicas": 1, "desiredReplicas": 1, "currentInstances": 1, "restartCount": 0,
  "startTime": "2026-11-23T10:00:00Z", "observedGeneration": 1, "selector": "graphcore.ai/ipujob=bert",
  "conditions": [
    {"type": "Admitted", "status": "True", "reason": "Running", "message": "All worker pods are running",
     "observedGeneration": 1, "lastTransitionTime": "2026-11-23T10:00:00Z"},
    {"type": "Ready", "status": "True", "reason": "Running", "message": "All worker pods are running",
     "observedGeneration": 1, "lastTransitionTime": "2026-11-23T10:00:02Z"}],
  "partitions": [{"id": "k8s_ml_bert_0", "instance": 0, "size": 4, "controller": "pod64", "ipus": "ild0:0-3",
                  "state": "Active"}]})";

TEST(IpuJobStatus, ThePreviousLayoutReadsAndWritesBackUnchanged) {
  const Json written = Json::parse(kRunningStatus);
  const IpuJobStatus status = parseIpuJobStatus(written);
  EXPECT_EQ(status.phase, "Running");
  EXPECT_EQ(status.currentReplicas, 1);
  EXPECT_EQ(status.queuePosition, std::nullopt);
  ASSERT_EQ(status.partitions.size(), 1u);
  EXPECT_EQ(status.partitions[0].id, "k8s_ml_bert_0");
  EXPECT_TRUE(status.partitions[0].held());
  ASSERT_NE(status.condition("Ready"), nullptr);
  EXPECT_TRUE(status.condition("Ready")->isTrue());
  EXPECT_EQ(toJson(status), written);
  EXPECT_EQ(statusPatch(status, status), Json::object());
}

TEST(IpuJobStatus, NullAndMalformedFieldsReadAsAbsent) {
  EXPECT_EQ(parseIpuJobStatus(nullptr), IpuJobStatus{});
  EXPECT_EQ(parseIpuJobStatus(Json("text")), IpuJobStatus{});
  const IpuJobStatus status = parseIpuJobStatus(Json::parse(R"({
    "phase": 3, "currentReplicas": "two", "startTime": 5, "conditions": "none",
    "partitions": [42, {"id": "p", "size": "big"}]})"));
  EXPECT_EQ(status.phase, "");
  EXPECT_EQ(status.currentReplicas, std::nullopt);
  EXPECT_EQ(status.startTime, std::nullopt);
  EXPECT_TRUE(status.conditions.empty());
  ASSERT_EQ(status.partitions.size(), 1u);
  EXPECT_EQ(status.partitions[0].id, "p");
  EXPECT_EQ(status.partitions[0].size, 0);
}

TEST(IpuJobStatus, AnInteractiveSessionReadsAndWritesBackAndWithoutItsStartIsAbsent) {
  const Json written = Json::parse(R"({"phase": "Running", "interactive": {
    "runningSince": "2026-11-27T12:00:00Z", "ttlSeconds": 600, "expiresAt": "2026-11-27T12:10:00Z"}})");
  const IpuJobStatus status = parseIpuJobStatus(written);
  EXPECT_EQ(status.interactive, (InteractiveStatus{"2026-11-27T12:00:00Z", 600, "2026-11-27T12:10:00Z"}));
  EXPECT_EQ(toJson(status), written);
  EXPECT_EQ(parseIpuJobStatus(Json::parse(R"({"interactive": {"ttlSeconds": 600}})")).interactive,
            std::nullopt);
  EXPECT_EQ(parseIpuJobStatus(Json::parse(R"({"interactive": "soon"})")).interactive, std::nullopt);
}

TEST(IpuJobStatus, KeptOutputsReadAndWriteBack) {
  const Json written = Json::parse(R"({"phase": "Succeeded", "outputs": {
    "path": "/outputs", "retainedUntil": "2026-11-28T12:10:00Z"}})");
  const IpuJobStatus status = parseIpuJobStatus(written);
  EXPECT_EQ(status.outputs, (OutputsStatus{"/outputs", "2026-11-28T12:10:00Z"}));
  EXPECT_EQ(toJson(status), written);
  EXPECT_EQ(parseIpuJobStatus(Json::parse(R"({"outputs": "kept"})")).outputs, std::nullopt);
}

TEST(IpuJobStatus, KueueRecordReadsAndWritesBackAndDecidesWhoseQueueTheJobWaitsIn) {
  const Json written = Json::parse(R"({"phase": "Queued", "kueue": {"workload": "ipujob-train-1a2b3",
    "localQueue": "team-a", "clusterQueue": "gold", "admitted": true}})");
  const IpuJobStatus status = parseIpuJobStatus(written);
  EXPECT_EQ(status.kueue, (KueueStatus{"ipujob-train-1a2b3", "team-a", "gold", true}));
  EXPECT_EQ(toJson(status), written);

  // Kueue's until it admits: then the operator's queue places it.
  Json job = {{"metadata", {{"name", "train"}, {"namespace", "ns"}}}, {"status", written}};
  EXPECT_TRUE(queuedByKueue(job));
  EXPECT_TRUE(waitsForAdmission(job));
  job["status"]["kueue"]["admitted"] = false;
  EXPECT_FALSE(waitsForAdmission(job));
  job["status"].erase("kueue");
  EXPECT_FALSE(queuedByKueue(job));
  EXPECT_TRUE(waitsForAdmission(job));
}

TEST(IpuJobStatus, AJobWithoutManagedByBelongsToTheDefaultController) {
  EXPECT_EQ(managerOf(Json::parse(R"({"spec": {}})")), kDefaultControllerName);
  EXPECT_EQ(managerOf(Json::parse(R"({"spec": {"managedBy": "example.com/b"}})")), "example.com/b");
  EXPECT_EQ(managerOf(Json::parse(R"({"spec": {"managedBy": ""}})")), kDefaultControllerName);
}

TEST(IpuJobStatus, HeldPartitionsLeaveOutReleasedOnes) {
  IpuJobStatus status;
  status.partitions = {{"a", 0, 4, "pod64", "", "Active"},
                       {"b", 1, 4, "pod64", "", "Released"},
                       {"c", 2, 4, "pod64", "", "Planned"}};
  const auto held = status.heldPartitions();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].id, "a");
  EXPECT_EQ(held[1].id, "c");
}

// On MultiKueue's manager cluster a job's status is the copy of its worker cluster's job's: the partitions it
// names are that cluster's, and count as taken nowhere here.
TEST(IpuJobStatus, AJobMultiKueueDispatchesHoldsNoPartitionsOfThisCluster) {
  Json job = Json::parse(R"({"spec": {}, "status": {"partitions": [
      {"id": "a", "instance": 0, "size": 4, "controller": "pod64", "state": "Active"}]}})");
  EXPECT_EQ(heldPartitionsOf(job).size(), 1u);
  job["spec"]["managedBy"] = kMultiKueueControllerName;
  EXPECT_TRUE(heldPartitionsOf(job).empty());
}

TEST(IpuJobStatus, AConditionKeepsItsTransitionTimeUntilItFlips) {
  IpuJobStatus status;
  status.setCondition({"Ready", "False", "PodsStarting", "waiting", 1, ""}, "t1");
  status.setCondition({"Ready", "False", "PodsStarting", "still waiting", 1, ""}, "t2");
  ASSERT_EQ(status.conditions.size(), 1u);
  EXPECT_EQ(status.conditions[0].lastTransitionTime, "t1");
  EXPECT_EQ(status.conditions[0].message, "still waiting");
  status.setCondition({"Ready", "True", "Running", "running", 1, ""}, "t3");
  EXPECT_EQ(status.conditions[0].lastTransitionTime, "t3");
  status.setCondition({"Admitted", "True", "Running", "running", 1, ""}, "t4");
  EXPECT_EQ(status.conditions.size(), 2u);
}

TEST(IpuJobStatus, ThePatchNamesOnlyWhatChangedAndNullsWhatWent) {
  const IpuJobStatus before = parseIpuJobStatus(Json::parse(kRunningStatus));
  IpuJobStatus after = before;
  after.phase = "Succeeded";
  after.completionTime = "2026-11-23T11:00:00Z";
  after.startTime.reset();
  after.partitions[0].state = "Released";
  const Json patch = statusPatch(before, after);
  EXPECT_EQ(patch, Json::parse(R"({
    "phase": "Succeeded", "completionTime": "2026-11-23T11:00:00Z", "startTime": null,
    "partitions": [{"id": "k8s_ml_bert_0", "instance": 0, "size": 4, "controller": "pod64", "ipus": "ild0:0-3",
                    "state": "Released"}]})"));
}

TEST(IpuJobStatus, FieldsThisVersionDoesNotKnowAreNeverPatched) {
  Json written = Json::parse(kRunningStatus);
  written["aFieldFromANewerVersion"] = {{"x", 1}};
  const IpuJobStatus before = parseIpuJobStatus(written);
  IpuJobStatus after = before;
  after.lastMessage = "changed";
  EXPECT_EQ(statusPatch(before, after), Json::parse(R"({"lastMessage": "changed"})"));
}

}  // namespace
}  // namespace ipu::api
