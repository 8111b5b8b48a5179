#include "quota/quota_usage.h"

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

using State = QuotaJob::State;

Json job(const std::string& name, int instances, int ipus, Json status = nullptr) {
  Json object = {
      {"apiVersion", "graphcore.ai/v1alpha1"},
      {"kind", "IPUJob"},
      {"metadata", {{"namespace", "team-a"}, {"name", name}, {"uid", "uid-" + name}}},
      {"spec",
       {{"jobInstances", instances},
        {"ipusPerJobInstance", std::to_string(ipus)},  // a string, as in Graphcore's CRD
        {"workers", {{"template", {{"spec", {{"containers", {{{"name", "m"}, {"image", "i"}}}}}}}}}}}}};
  if (!status.is_null()) object["status"] = std::move(status);
  return object;
}

Json holding(const std::string& phase, std::vector<std::pair<int, std::string>> partitions) {
  Json records = Json::array();
  int instance = 0;
  for (const auto& [size, state] : partitions) {
    records.push_back({{"id", "p" + std::to_string(instance)},
                       {"instance", instance},
                       {"size", size},
                       {"controller", "pod64"},
                       {"state", state}});
    ++instance;
  }
  return {{"phase", phase}, {"partitions", records}};
}

// What the quota reads of a job: its summary, as the IPUJob cache keeps it.
std::optional<QuotaJob> quotaOf(const Json& object) {
  return quotaJobOf(api::summarizeJob(object));
}
std::optional<QuotaJob> heldOf(const Json& object) {
  return heldQuotaJobOf(api::summarizeJob(object));
}

api::IpuQuota quota(std::int64_t maxIpus, std::optional<std::int64_t> maxJobs,
                    std::map<std::string, api::LedgerEntry> ledger) {
  return {{"team-a", "gold", "q-uid"}, 1, "7", {maxIpus, maxJobs, std::nullopt}, std::move(ledger)};
}

TEST(QuotaJobTest, WaitingAsksForItsGangAndHeldPartitionsAreWhatAJobHolds) {
  const auto waiting = quotaOf(job("w", 2, 4));
  ASSERT_TRUE(waiting.has_value());
  EXPECT_EQ(waiting->state, State::kWaiting);
  EXPECT_EQ(waiting->ipus, 8);
  EXPECT_EQ(waiting->uid, "uid-w");

  const auto reserved = quotaOf(job("r", 2, 4, holding("Creating", {{4, "Active"}, {4, "Planned"}})));
  ASSERT_TRUE(reserved.has_value());
  EXPECT_EQ(reserved->state, State::kReserved);
  EXPECT_EQ(reserved->ipus, 8);

  const auto running = quotaOf(job("a", 2, 4, holding("Running", {{4, "Active"}, {4, "Active"}})));
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->state, State::kRunning);

  EXPECT_FALSE(quotaOf(job("done", 1, 4, holding("Succeeded", {{4, "Released"}}))).has_value());
  Json suspended = job("s", 1, 4);
  suspended["spec"]["suspend"] = true;
  EXPECT_FALSE(quotaOf(suspended).has_value());
  EXPECT_FALSE(quotaOf(job("bad", 1, 3)).has_value()) << "an invalid spec is failed by its reconcile";
}

TEST(QuotaJobTest, AJobKueueQueuesIsNeverAnIpuQuotasWhetherWaitingOrHoldingIpus) {
  // Kueue's quota applies to it: counting it here too would charge its namespace twice.
  Json waiting =
      job("kueue-waiting", 1, 4, {{"kueue", {{"workload", "ipujob-w-12345"}, {"admitted", false}}}});
  EXPECT_FALSE(quotaOf(waiting).has_value());
  Json admitted =
      job("kueue-admitted", 1, 4, {{"kueue", {{"workload", "ipujob-a-12345"}, {"admitted", true}}}});
  EXPECT_FALSE(quotaOf(admitted).has_value());
  Json running = job("kueue-running", 1, 4, holding("Running", {{4, "Active"}}));
  running["status"]["kueue"] = {{"workload", "ipujob-r-12345"}, {"admitted", true}};
  EXPECT_FALSE(quotaOf(running).has_value());
  EXPECT_FALSE(heldOf(running).has_value());
}

TEST(QuotaJobTest, StatusCountsUsedReservedPendingAdmittedAndWaiting) {
  const std::vector<QuotaJob> jobs = {{"run", "u1", State::kRunning, 8},
                                      {"start", "u2", State::kReserved, 4},
                                      {"claimed", "u3", State::kWaiting, 2},
                                      {"wait", "u4", State::kWaiting, 16},
                                      {"wait2", "u5", State::kWaiting, 1}};
  // "claimed" waits with its claim written (its admission not recorded yet): the quota holds its IPUs.
  const auto status = observeQuota(jobs, {{"run", {"u1", 8}}, {"claimed", {"u3", 2}}, {"wait2", {"old", 1}}});
  EXPECT_EQ(status, (api::IpuQuotaStatus{8, 4 + 2, 16 + 1, 3, 2, std::nullopt}));
}

TEST(LedgerGapsTest, HeldJobsWithoutAnEntryAndEntriesWithoutTheirJob) {
  const std::vector<QuotaJob> jobs = {{"run", "u1", State::kRunning, 8},
                                      {"old-quota", "u2", State::kReserved, 4},
                                      {"renamed", "u3", State::kRunning, 2},
                                      {"waits", "u4", State::kWaiting, 16}};
  const auto gaps = ledgerGaps(
      jobs, {{"run", {"u1", 8}}, {"renamed", {"before", 2}}, {"gone", {"u9", 1}}, {"waits", {"u4", 16}}});
  EXPECT_EQ(gaps.missing, (std::map<std::string, api::LedgerEntry>{{"old-quota", {"u2", 4}}}));
  // "renamed": the entry is another uid's; which job has the name now, only the API server can say.
  EXPECT_EQ(gaps.unknown, std::vector<std::string>({"gone", "renamed"}));
}

TEST(CheckClaimTest, FitsUpToTheLimitAndNotOneIpuMore) {
  const std::vector<QuotaJob> jobs = {{"a", "ua", State::kRunning, 8}, {"new", "un", State::kWaiting, 8}};
  EXPECT_EQ(checkClaim(quota(16, std::nullopt, {{"a", {"ua", 8}}}), jobs, {"team-a", "new", "un", 8}).kind,
            ClaimCheck::Kind::kFits);
  const ClaimCheck over =
      checkClaim(quota(15, std::nullopt, {{"a", {"ua", 8}}}), jobs, {"team-a", "new", "un", 8});
  EXPECT_EQ(over.kind, ClaimCheck::Kind::kRefused);
  EXPECT_EQ(
      over.message,
      "the job needs 8 IPUs; IPUQuota team-a/gold allows 15 IPUs (maxIPUs) and the namespace holds 8 (7 "
      "free)");
}

TEST(CheckClaimTest, MaxJobsCountsEveryAdmittedJob) {
  const ClaimCheck full =
      checkClaim(quota(64, 2, {{"a", {"ua", 1}}, {"b", {"ub", 1}}}), {}, {"team-a", "c", "uc", 1});
  EXPECT_EQ(full.kind, ClaimCheck::Kind::kRefused);
  EXPECT_EQ(full.message, "IPUQuota team-a/gold allows 2 admitted jobs (maxJobs) and 2 are admitted");
}

TEST(CheckClaimTest, AJobAlreadyInTheLedgerIsNotCountedTwice) {
  const api::IpuQuota full = quota(8, std::nullopt, {{"new", {"un", 8, "v5"}}});
  EXPECT_EQ(checkClaim(full, {}, {"team-a", "new", "un", 8, "v5"}).kind, ClaimCheck::Kind::kRecorded);
  // The job changed since its claim: the claim is written again (a cache's entry may be gone at the server).
  EXPECT_EQ(checkClaim(full, {}, {"team-a", "new", "un", 8, "v7"}).kind, ClaimCheck::Kind::kFits);
  // An entry of an earlier job that had the name is a job gone: the claimant takes its place.
  const api::IpuQuota reused = quota(8, std::nullopt, {{"new", {"earlier", 8}}});
  EXPECT_EQ(checkClaim(reused, {}, {"team-a", "new", "un", 8}).kind, ClaimCheck::Kind::kFits);
  // Its own entry for an earlier size (edited while it waited with its claim written) is checked again.
  const api::IpuQuota resized = quota(8, std::nullopt, {{"new", {"un", 4}}});
  EXPECT_EQ(checkClaim(resized, {}, {"team-a", "new", "un", 8}).kind, ClaimCheck::Kind::kFits);
  EXPECT_EQ(checkClaim(resized, {}, {"team-a", "new", "un", 16}).kind, ClaimCheck::Kind::kRefused);
}

TEST(CheckClaimTest, JobsHoldingIpusWithoutAnEntryCountToo) {
  // Admitted before the quota existed: the controller adds them to the ledger; until it has, claims count
  // them.
  const std::vector<QuotaJob> jobs = {{"before", "ub", State::kRunning, 8}};
  const ClaimCheck check = checkClaim(quota(8, std::nullopt, {}), jobs, {"team-a", "new", "un", 1});
  EXPECT_EQ(check.kind, ClaimCheck::Kind::kRefused);
  EXPECT_NE(check.message.find("holds 8 (0 free)"), std::string::npos) << check.message;
  // A cache showing an older job of a name whose entry is another uid's: both count until it is sorted out.
  const ClaimCheck both =
      checkClaim(quota(12, std::nullopt, {{"before", {"newer", 4}}}), jobs, {"team-a", "new", "un", 1});
  EXPECT_EQ(both.kind, ClaimCheck::Kind::kRefused);
  EXPECT_NE(both.message.find("holds 12 (0 free)"), std::string::npos) << both.message;
}

}  // namespace
}  // namespace ipu::controllers
