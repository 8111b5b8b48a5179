#include <gtest/gtest.h>

#include "common/json_access.h"
#include "kueue/workload.h"

namespace ipu::controllers {
namespace {

Json jobObject(int instances, int ipus, int workers, Json labels = Json::object()) {
  Json container = {{"name", "m"}, {"image", "i"}};
  container["resources"]["limits"]["cpu"] = "2";
  Json workerTemplate;
  workerTemplate["metadata"] = {{"name", "dropped"}, {"labels", {{"app", "bert"}}}};
  workerTemplate["spec"]["containers"] = Json::array({container});
  Json spec = {{"jobInstances", instances},
               {"ipusPerJobInstance", std::to_string(ipus)},
               {"workersPerJobInstance", std::to_string(workers)}};
  spec["workers"]["template"] = workerTemplate;
  Json object = {{"apiVersion", "graphcore.ai/v1alpha1"}, {"kind", "IPUJob"}, {"spec", spec}};
  object["metadata"] = {{"name", "train"}, {"namespace", "team-a"}, {"uid", "uid-1"}, {"labels", labels}};
  return object;
}

api::IpuJob parsed(const Json& object) {
  auto job = api::parseIpuJob(object);
  EXPECT_TRUE(job.ok()) << job.error().message;
  return *job;
}

TEST(KueueWorkload, OnePodSetOfEveryWorkerWithItsShareOfTheInstancesIpus) {
  const Json object = jobObject(2, 16, 4, {{kKueueQueueNameLabel, "team-a"}});
  const Json workload = desiredWorkload(object, parsed(object), {"", 7});
  EXPECT_EQ(workload["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(workload["metadata"]["name"], workloadNameFor({"team-a", "train", "uid-1"}));
  EXPECT_EQ(workload["metadata"]["labels"][kKueueJobUidLabel], "uid-1");
  const Json& owner = workload["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "IPUJob");
  EXPECT_EQ(owner["uid"], "uid-1");
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(workload["spec"]["queueName"], "team-a");
  EXPECT_EQ(workload["spec"]["priority"], 7);
  EXPECT_FALSE(workload["spec"].contains("priorityClassRef"));
  const Json& podSets = workload["spec"]["podSets"];
  ASSERT_EQ(podSets.size(), 1u);
  EXPECT_EQ(podSets[0]["name"], "workers");
  EXPECT_EQ(podSets[0]["count"], 8);
  // 16 IPUs over 4 workers; the user's own requests kept; only labels and annotations of the metadata.
  const Json& container = podSets[0]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["resources"]["requests"][kIpuResourceName], "4");
  EXPECT_EQ(container["resources"]["limits"]["cpu"], "2");
  EXPECT_EQ(podSets[0]["template"]["metadata"], (Json{{"labels", {{"app", "bert"}}}}));
}

TEST(KueueWorkload, AWorkloadPriorityClassIsReferencedWithItsValue) {
  const Json object = jobObject(1, 4, 1, {{kKueueQueueNameLabel, "q"}, {kKueuePriorityClassLabel, "high"}});
  EXPECT_EQ(workloadPriorityClassOf(object), "high");
  const Json workload = desiredWorkload(object, parsed(object), {"high", 1000});
  EXPECT_EQ(workload["spec"]["priority"], 1000);
  EXPECT_EQ(workload["spec"]["priorityClassRef"],
            (Json{{"group", "kueue.x-k8s.io"}, {"kind", "WorkloadPriorityClass"}, {"name", "high"}}));
}

TEST(KueueWorkload, NamesFitAndDifferForAJobMadeAgainUnderItsName) {
  const std::string name = workloadNameFor({"ns", "train", "uid-1"});
  EXPECT_EQ(name.rfind("ipujob-train-", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("ipujob-train-").size() + 5);
  EXPECT_NE(name, workloadNameFor({"ns", "train", "uid-2"}));
  EXPECT_EQ(workloadNameFor({"ns", std::string(300, 'x'), "uid-1"}).size(), 253u);
}

// `conditions` a vector: a braced list of one Json would initialise a Json as that element itself (clang).
Json workloadWith(std::vector<Json> conditions, Json admission = nullptr, std::vector<Json> checks = {}) {
  Json workload = {{"metadata",
                    {{"name", "ipujob-train-1a2b3"},
                     {"namespace", "team-a"},
                     {"uid", "wl-uid"},
                     {"resourceVersion", "42"},
                     {"generation", 2},
                     {"ownerReferences", {{{"kind", "IPUJob"}, {"uid", "uid-1"}, {"controller", true}}}}}},
                   {"spec", {{"queueName", "team-a"}}},
                   {"status", {{"conditions", Json(std::move(conditions))}}}};
  if (!admission.is_null()) workload["status"]["admission"] = std::move(admission);
  if (!checks.empty()) workload["status"]["admissionChecks"] = Json(std::move(checks));
  return workload;
}

Json condition(const std::string& type, const std::string& status, const std::string& reason = "R",
               const std::string& message = "") {
  return {{"type", type},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"lastTransitionTime", "2026-11-28T10:00:00Z"}};
}

TEST(KueueWorkload, AViewSaysWhetherKueueAdmittedEvictedOrWhyItWaits) {
  const WorkloadView pending = viewOf(workloadWith(
      {condition("QuotaReserved", "False", "Pending", "couldn't assign flavors: insufficient quota")}));
  EXPECT_EQ(pending.ownerUid, "uid-1");
  EXPECT_FALSE(pending.quotaReserved);
  EXPECT_FALSE(pending.admitted);
  EXPECT_EQ(pending.waiting, "couldn't assign flavors: insufficient quota");

  const Json admission = {
      {"clusterQueue", "gold"},
      {"podSetAssignments",
       {{{"name", "workers"}, {"flavors", {{kIpuResourceName, "pod-a"}, {"cpu", "pod-a"}}}}}}};
  const WorkloadView checking =
      viewOf(workloadWith({condition("QuotaReserved", "True")}, admission,
                          {{{"name", "ipu-placement"}, {"state", "Pending"}, {"message", "needs 64 IPUs"}}}));
  EXPECT_TRUE(checking.quotaReserved);
  EXPECT_FALSE(checking.admitted);
  EXPECT_EQ(checking.clusterQueue, "gold");
  EXPECT_EQ(checking.waiting, "admission check ipu-placement Pending: needs 64 IPUs");
  EXPECT_EQ(checking.flavors.at("workers"), std::vector<std::string>{"pod-a"});

  const WorkloadView evicted =
      viewOf(workloadWith({condition("QuotaReserved", "True"), condition("Admitted", "True"),
                           condition("Evicted", "True", "Preempted", "Preempted to accommodate a workload")},
                          admission));
  EXPECT_TRUE(evicted.admitted);
  EXPECT_TRUE(evicted.evicted);
  EXPECT_EQ(evicted.evictedReason, "Preempted");
}

TEST(KueueWorkload, GivingTheReservationBackClearsTheAdmissionAndRequeuesAPreemptedWorkload) {
  const Json admission = {{"clusterQueue", "gold"}, {"podSetAssignments", Json::array()}};
  const Json workload = workloadWith(
      {condition("QuotaReserved", "True"), condition("Admitted", "True"),
       condition("Evicted", "True", "Preempted", "to make room"), condition("PodsReady", "True", "Started")},
      admission);
  const Json patch = clearedAdmissionPatch(workload, "2026-11-28T11:00:00Z");
  EXPECT_EQ(patch["metadata"]["resourceVersion"], "42") << "conditional on the Workload as read";
  EXPECT_TRUE(patch["status"]["admission"].is_null());
  std::map<std::string, Json> byType;
  for (const Json& c : patch["status"]["conditions"]) byType[c["type"]] = c;
  EXPECT_EQ(byType.at("QuotaReserved")["status"], "False");
  EXPECT_EQ(byType.at("QuotaReserved")["reason"], "Pending");
  EXPECT_EQ(byType.at("QuotaReserved")["message"], "to make room");
  EXPECT_EQ(byType.at("QuotaReserved")["lastTransitionTime"], "2026-11-28T11:00:00Z");
  EXPECT_EQ(byType.at("Admitted")["status"], "False");
  EXPECT_EQ(byType.at("Requeued")["status"], "True");
  EXPECT_EQ(byType.at("Requeued")["reason"], "Preempted");
  EXPECT_EQ(byType.at("PodsReady")["status"], "False");
  // Kueue's own conditions are kept as they were (a merge patch replaces the whole list).
  EXPECT_EQ(byType.at("Evicted")["lastTransitionTime"], "2026-11-28T10:00:00Z");

  // Evicted for another reason (a deactivation, a PodsReady timeout): not requeued by the job's side.
  const Json deactivated = workloadWith(
      {condition("QuotaReserved", "True"), condition("Evicted", "True", "Deactivated", "spec.active false")},
      admission);
  const Json cleared = clearedAdmissionPatch(deactivated, "2026-11-28T11:00:00Z");
  for (const Json& c : cleared["status"]["conditions"]) {
    if (c["type"] == "Requeued") {
      EXPECT_EQ(c["status"], "False");
    }
  }
}

TEST(KueueWorkload, AConditionIsAppliedAloneUnderTheWorkloadsIdentity) {
  const Json body = workloadConditionApply(workloadWith({}), "PodsReady", true, "Started",
                                           "All pods reached readiness", "2026-11-28T11:00:00Z");
  EXPECT_EQ(body["kind"], "Workload");
  EXPECT_EQ(body["metadata"]["uid"], "wl-uid") << "never applied to a Workload made again under the name";
  ASSERT_EQ(body["status"]["conditions"].size(), 1u);
  EXPECT_EQ(body["status"]["conditions"][0]["type"], "PodsReady");
  EXPECT_EQ(body["status"]["conditions"][0]["observedGeneration"], 2);
  EXPECT_FALSE(body.contains("spec")) << "never Kueue's spec (spec.active is Kueue's to flip)";
}

TEST(KueueWorkload, TheWorkersGoWhereTheAssignedFlavorsNodeLabelsAndTolerationsSay) {
  WorkloadView view;
  view.flavors = {{"workers", {"pod-a", "spot"}}, {"other", {"pod-a"}}};
  FlavorLookup lookup;
  lookup.flavors["pod-a"] = {{"spec", {{"nodeLabels", {{"ipu.graphcore.ai/ipu-pod", "pod-a"}}}}}};
  lookup.flavors["spot"] = {
      {"spec", {{"tolerations", {{{"key", "spot"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}}}}};
  std::string missing;
  const auto placement = placementFrom(view, lookup, missing);
  ASSERT_TRUE(placement.has_value());
  EXPECT_EQ(placement->nodeSelector,
            (std::map<std::string, std::string>{{"ipu.graphcore.ai/ipu-pod", "pod-a"}}));
  EXPECT_EQ(placement->tolerations.size(), 1u);

  lookup.flavors.erase("spot");
  EXPECT_FALSE(placementFrom(view, lookup, missing).has_value());
  EXPECT_EQ(missing, "spot");
}

TEST(KueueWorkload, ThePlacementCheckIsTheEntryOfAnAdmissionCheckTheOperatorAnswers) {
  const Json admission = {{"clusterQueue", "gold"}, {"podSetAssignments", Json::array()}};
  const Json workload = workloadWith({condition("QuotaReserved", "True")}, admission,
                                     {{{"name", "provisioning"}, {"state", "Ready"}, {"message", ""}},
                                      {{"name", "ipu-placement"}, {"state", "Pending"}, {"message", ""}}});
  const auto check = placementCheckOf(viewOf(workload), {"ipu-placement"});
  ASSERT_TRUE(check.has_value());
  EXPECT_EQ(check->name, "ipu-placement");
  EXPECT_EQ(check->state, "Pending");
  EXPECT_FALSE(placementCheckOf(viewOf(workload), {"another"}).has_value());
}

TEST(KueueWorkload, AnAnswerAppliesItsOwnEntryAndKeepsItsTimeWhileTheStateStands) {
  Json workload = workloadWith({condition("QuotaReserved", "True")}, nullptr,
                               {{{"name", "ipu-placement"},
                                 {"state", "Pending"},
                                 {"message", "Cannot be placed now"},
                                 {"lastTransitionTime", "2026-11-28T10:00:00Z"}}});
  const Json pending =
      admissionCheckApply(workload, "ipu-placement", "Pending", "still not", "2026-11-28T11:00:00Z");
  ASSERT_EQ(pending["status"]["admissionChecks"].size(), 1u);
  EXPECT_EQ(pending["status"]["admissionChecks"][0]["lastTransitionTime"], "2026-11-28T10:00:00Z");
  EXPECT_EQ(pending["status"]["admissionChecks"][0]["message"], "still not");
  EXPECT_EQ(pending["metadata"]["uid"], "wl-uid");
  const Json ready =
      admissionCheckApply(workload, "ipu-placement", "Ready", "Placed", "2026-11-28T11:00:00Z");
  EXPECT_EQ(ready["status"]["admissionChecks"][0]["state"], "Ready");
  EXPECT_EQ(ready["status"]["admissionChecks"][0]["lastTransitionTime"], "2026-11-28T11:00:00Z");
}

TEST(KueueWorkload, AnAdmissionCheckOfTheOperatorsControllerNameIsMarkedActiveOncePerGeneration) {
  Json check = {{"metadata", {{"name", "ipu-placement"}, {"generation", 1}}},
                {"spec", {{"controllerName", kIpuPlacementCheckController}}}};
  EXPECT_TRUE(answersCheck(check));
  const auto patch = activePatch(check, "2026-11-28T11:00:00Z");
  ASSERT_TRUE(patch.has_value());
  const Json& active = (*patch)["status"]["conditions"][0];
  EXPECT_EQ(active["type"], "Active");
  EXPECT_EQ(active["status"], "True");
  EXPECT_EQ(active["observedGeneration"], 1);
  check["status"] = (*patch)["status"];
  EXPECT_FALSE(activePatch(check, "2026-11-28T11:00:05Z").has_value()) << "nothing to write again";
  check["metadata"]["generation"] = 2;
  EXPECT_TRUE(activePatch(check, "2026-11-28T11:00:05Z").has_value());

  const Json provisioning = {{"spec", {{"controllerName", "kueue.x-k8s.io/provisioning-request"}}}};
  EXPECT_FALSE(answersCheck(provisioning));
}

// MultiKueue's copy of a job on a worker cluster names the manager's Workload; the worker's operator makes it
// the job's, keeping whoever else owns it.
TEST(KueueWorkload, APrebuiltWorkloadIsNamedByItsAnnotationAndAdoptedUnderItsVersion) {
  Json object = jobObject(1, 4, 1, {{kKueueQueueNameLabel, "q"}});
  EXPECT_EQ(prebuiltWorkloadOf(object), "");
  object["metadata"]["labels"][kKueuePrebuiltWorkloadKey] = "from-label";
  EXPECT_EQ(prebuiltWorkloadOf(object), "from-label");
  object["metadata"]["annotations"][kKueuePrebuiltWorkloadKey] = "ipujob-train-abcde";
  EXPECT_EQ(prebuiltWorkloadOf(object), "ipujob-train-abcde");

  Json workload = {{"metadata", {{"name", "ipujob-train-abcde"}, {"resourceVersion", "41"}}}};
  workload["metadata"]["ownerReferences"] = Json::array();
  workload["metadata"]["ownerReferences"].push_back({{"kind", "ConfigMap"}, {"uid", "cm"}});
  const Json patch = adoptionPatch(workload, object);
  EXPECT_EQ(patch["metadata"]["resourceVersion"], "41");
  EXPECT_EQ(patch["metadata"]["labels"][kKueueJobUidLabel], "uid-1");
  const Json& owners = patch["metadata"]["ownerReferences"];
  ASSERT_EQ(owners.size(), 2u) << patch.dump();
  EXPECT_EQ(owners[0]["uid"], "cm");
  EXPECT_EQ(owners[1]["uid"], "uid-1");
  EXPECT_EQ(owners[1]["controller"], true);
  EXPECT_EQ(owners[1]["kind"], "IPUJob");
}

// The pod sets Kueue admitted must be the job's: names, counts and every container's requests and limits,
// whatever form Kueue's client wrote the quantities back in; the rest of the template is not compared (the
// API server prunes what the Workload's schema does not know).
TEST(KueueWorkload, APrebuiltWorkloadsPodSetsMustBeTheJobsInWhatKueueAdmitted) {
  const Json object = jobObject(2, 16, 4);
  const Json desired = workloadPodSets(parsed(object).spec);
  ASSERT_EQ(desired[0]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"], "2");
  Json stored = desired;
  Json& container = stored[0]["template"]["spec"]["containers"][0];
  container["resources"]["limits"]["cpu"] = 2;  // the same amount
  container["resources"]["requests"][kIpuResourceName] = "4";
  container["imagePullPolicy"] = "IfNotPresent";
  stored[0]["template"]["metadata"] = {{"creationTimestamp", nullptr}};
  EXPECT_TRUE(podSetsMatch(desired, stored)) << stored.dump();

  Json moreWorkers = stored;
  moreWorkers[0]["count"] = 9;
  EXPECT_FALSE(podSetsMatch(desired, moreWorkers));
  Json otherShare = stored;
  otherShare[0]["template"]["spec"]["containers"][0]["resources"]["requests"][kIpuResourceName] = "8";
  EXPECT_FALSE(podSetsMatch(desired, otherShare));
  Json moreCpu = stored;
  moreCpu[0]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "2500m";
  EXPECT_FALSE(podSetsMatch(desired, moreCpu));
  Json extraRequest = stored;
  extraRequest[0]["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"] = "1Gi";
  EXPECT_FALSE(podSetsMatch(desired, extraRequest));
  Json renamed = stored;
  renamed[0]["name"] = "main";
  EXPECT_FALSE(podSetsMatch(desired, renamed));
  Json twoSets = stored;
  twoSets.push_back(stored[0]);
  EXPECT_FALSE(podSetsMatch(desired, twoSets));
  EXPECT_FALSE(podSetsMatch(desired, Json()));
}

}  // namespace
}  // namespace ipu::controllers
