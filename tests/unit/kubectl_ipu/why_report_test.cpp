// `kubectl ipu why` for each reason a job waits, and for a job that holds its IPUs.
#include "kubectl-ipu/why_report.h"

#include <gtest/gtest.h>

#include "common/time_format.h"
#include "kubectl-ipu/terminal_map.h"
#include "pod_map_fixtures.h"

namespace ipu::kubectl_ipu {
namespace {

const Clock::WallTime kNow = *parseTime("2026-11-28T10:00:00Z");

Json waitingJob(int instances, int ipus, const std::string& reason, const std::string& message,
                std::optional<int> position = std::nullopt, int priority = 0) {
  Json job{{"metadata", {{"namespace", "team-a"}, {"name", "big"}, {"uid", "uid-big"}}},
           {"spec",
            {{"jobInstances", instances},
             {"ipusPerJobInstance", std::to_string(ipus)},
             {"priority", priority},
             {"workers", {{"template", {{"spec", {{"containers", {{{"name", "w"}, {"image", "x"}}}}}}}}}}}},
           {"status",
            {{"phase", "Queued"},
             {"lastMessage", message},
             {"conditions", {{{"type", "Admitted"}, {"status", "False"}, {"reason", reason}}}}}}};
  if (position) job["status"]["queuePosition"] = *position;
  return job;
}

Json quota(int maxIpus, int held, std::optional<int> maxJobs = std::nullopt, int admitted = 0,
           std::optional<int> maxPriority = std::nullopt) {
  Json quota{{"metadata", {{"namespace", "team-a"}, {"name", "team-a"}}},
             {"spec", {{"maxIPUs", maxIpus}}},
             {"status", {{"usedIPUs", held}, {"admittedJobs", admitted}}}};
  if (maxJobs) quota["spec"]["maxJobs"] = *maxJobs;
  if (maxPriority) quota["spec"]["maxPriority"] = *maxPriority;
  return quota;
}

// The listable jobs of the pod (team-a's), with their deadlines as the API server returns them.
std::vector<Json> teamAJobs(const testing::PodBuilder& pod, std::optional<int> deadlineSeconds) {
  std::vector<Json> jobs;
  for (const auto& job : pod.jobs()) {
    if ((*job)["metadata"]["namespace"] != "team-a") continue;
    Json copy = *job;
    copy["status"]["startTime"] = "2026-11-28T09:00:00Z";
    if (deadlineSeconds) copy["spec"]["activeDeadlineSeconds"] = *deadlineSeconds;
    jobs.push_back(copy);
  }
  return jobs;
}

std::string whyText(const Json& job, const testing::PodBuilder& pod, const std::vector<Json>& quotas,
                    const std::vector<Json>& visible) {
  return renderWhy(whyOf(job, {pod.status()}, quotas, visible, kNow));
}

TEST(WhyTest, InsufficientCapacityNamesTheNearestBlocksHoldersAndWhenTheirDeadlinesFreeIt) {
  testing::PodBuilder pod(1, 64);
  pod.job("team-a", "small", {{0, 4}}).job("team-b", "hidden", {{8, 8}}).job("team-a", "wide", {{32, 32}});
  const WhyReport report = whyOf(waitingJob(1, 64, "InsufficientCapacity", "Waiting for capacity"),
                                 {pod.status()}, {}, teamAJobs(pod, 4 * 3600), kNow);
  ASSERT_EQ(report.controllers.size(), 1u);
  EXPECT_EQ(report.controllers[0].freeBlocks, 0);
  EXPECT_EQ(report.controllers[0].blockIpus, "0-63");
  ASSERT_EQ(report.controllers[0].blockHolders.size(), 3u);
  EXPECT_EQ(report.controllers[0].blockHolders[1].label, kHiddenJobLabel);
  const std::string text = renderWhy(report);
  EXPECT_NE(text.find("needs    1 x 64 IPUs (64), on any V-IPU controller"), std::string::npos) << text;
  EXPECT_NE(text.find("free     vipu-a: 20 of 64 IPUs, largest free aligned block 16; 0 free blocks of 64"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "team-a/small holds 4 IPUs of it, for 1h00m (deadline 4h00m, ends by 2026-11-28T13:00:00Z, in "
          "3h00m)"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("another namespace holds 8 IPUs of it, for 1h00m;"), std::string::npos) << text;
  // A holder of another namespace has no deadline the tenant can read: no time is promised.
  EXPECT_EQ(text.find("Free by"), std::string::npos) << text;
  // With every holder's deadline known (an admin's view), the time the block is free at the latest.
  std::vector<Json> all = teamAJobs(pod, 4 * 3600);
  for (const auto& job : pod.jobs()) {
    if ((*job)["metadata"]["namespace"] == "team-b") {
      Json copy = *job;
      copy["spec"]["activeDeadlineSeconds"] = 7200;
      copy["status"]["startTime"] = "2026-11-28T09:30:00Z";
      all.push_back(copy);
    }
  }
  const std::string admin = whyText(waitingJob(1, 64, "InsufficientCapacity", "Waiting"), pod, {}, all);
  EXPECT_NE(admin.find("Free by 2026-11-28T13:00:00Z at the latest, by their deadlines"), std::string::npos)
      << admin;
}

TEST(WhyTest, WaitingInQueueSaysHowManyAreAhead) {
  testing::PodBuilder pod(1, 16);
  const std::string text =
      whyText(waitingJob(1, 4, "WaitingInQueue", "Waiting (position 3 in the queue)", 3), pod, {}, {});
  EXPECT_NE(text.find("team-a/big: Queued (WaitingInQueue), position 3 in the queue"), std::string::npos)
      << text;
  EXPECT_NE(text.find("to run   2 jobs ahead of it are admitted or leave the queue"), std::string::npos)
      << text;
  EXPECT_NE(text.find("4 free blocks of 4"), std::string::npos) << text;
}

TEST(WhyTest, QuotaExceededSaysWhichLimitAndWhatWouldLiftIt) {
  testing::PodBuilder pod(1, 64);
  const std::string noRoom =
      whyText(waitingJob(1, 16, "QuotaExceeded", "Waiting: quota"), pod, {quota(40, 32)}, {});
  EXPECT_NE(noRoom.find("quota    team-a: 32 of 40 IPUs held"), std::string::npos) << noRoom;
  EXPECT_NE(noRoom.find("holds it back: the job needs 16 IPUs and 8 are left under maxIPUs 40"),
            std::string::npos)
      << noRoom;
  EXPECT_NE(noRoom.find("to run   the namespace's running jobs give back IPUs (IPUQuota team-a)"),
            std::string::npos)
      << noRoom;
  const std::string never =
      whyText(waitingJob(1, 64, "QuotaExceeded", "Waiting: quota"), pod, {quota(40, 0)}, {});
  EXPECT_NE(never.find("the job's 64 IPUs exceed maxIPUs 40: it can never run under this quota"),
            std::string::npos)
      << never;
  EXPECT_NE(never.find("raises IPUQuota team-a's maxIPUs to at least 64"), std::string::npos) << never;
  const std::string jobs =
      whyText(waitingJob(1, 4, "QuotaExceeded", "Waiting"), pod, {quota(64, 8, 2, 2)}, {});
  EXPECT_NE(jobs.find("holds it back: 2 jobs are admitted, maxJobs is 2"), std::string::npos) << jobs;
}

TEST(WhyTest, PriorityNotAllowedSaysTheCap) {
  testing::PodBuilder pod(1, 16);
  const std::string text = whyText(waitingJob(1, 4, "PriorityNotAllowed", "Waiting", std::nullopt, 10), pod,
                                   {quota(16, 0, {}, 0, 5)}, {});
  EXPECT_NE(text.find("holds it back: priority 10 is above maxPriority 5"), std::string::npos) << text;
  EXPECT_NE(text.find("to run   spec.priority lowered to 5 or less"), std::string::npos) << text;
}

TEST(WhyTest, UnschedulableSaysTheLargestPartitionThePodCanMake) {
  testing::PodBuilder pod(1, 16);
  Json job = waitingJob(1, 64, "Unschedulable", "never fits");
  job["status"]["phase"] = "Failed";
  job["status"]["conditions"].push_back(
      {{"type", "Failed"}, {"status", "True"}, {"reason", "Unschedulable"}});
  const WhyReport failed = whyOf(job, {pod.status()}, {}, {}, kNow);
  EXPECT_EQ(failed.reason, "Unschedulable");
  EXPECT_TRUE(failed.controllers.empty()) << "an ended job is not placed";
  const std::string text = whyText(waitingJob(1, 32, "Unschedulable", "never fits"), pod, {}, {});
  EXPECT_NE(text.find("never a partition of 32 (at most 16)"), std::string::npos) << text;
  EXPECT_NE(text.find("to run   ipusPerJobInstance of at most 16"), std::string::npos) << text;
}

TEST(WhyTest, VipuUnavailableSaysTheControllerIsNotKnown) {
  api::IpuPodStatus unread;
  unread.controller = "vipu-b";
  unread.readError = "connection refused";
  const std::string text =
      renderWhy(whyOf(waitingJob(1, 4, "VipuUnavailable", "V-IPU does not answer"), {unread}, {}, {}, kNow));
  EXPECT_NE(text.find("free     vipu-b: not known (connection refused)"), std::string::npos) << text;
}

TEST(WhyTest, ARunningJobSaysWhatItHolds) {
  testing::PodBuilder pod(1, 16);
  pod.job("team-a", "big", {{0, 8}});
  Json job = *pod.jobs()[0];
  job["spec"] = waitingJob(1, 8, "", "")["spec"];
  job["status"]["phase"] = "Running";
  const WhyReport report = whyOf(job, {pod.status()}, {}, {}, kNow);
  ASSERT_EQ(report.held.size(), 1u);
  EXPECT_TRUE(report.controllers.empty());
  EXPECT_TRUE(report.unblock.empty());
  EXPECT_NE(renderWhy(report).find("holds    vipu-a: "), std::string::npos);
}

}  // namespace
}  // namespace ipu::kubectl_ipu
