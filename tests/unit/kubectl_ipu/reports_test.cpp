// `kubectl ipu quota` and `kubectl ipu top` from objects as the API server returns them.
#include <gtest/gtest.h>

#include "common/time_format.h"
#include "kubectl-ipu/quota_report.h"
#include "kubectl-ipu/text_table.h"
#include "kubectl-ipu/top_report.h"
#include "pod_map_fixtures.h"

namespace ipu::kubectl_ipu {
namespace {

const Clock::WallTime kNow = *parseTime("2026-11-28T10:02:30Z");

Json quota(const std::string& ns, int maxIpus, int used, int reserved, int admitted, int waiting) {
  return {{"metadata", {{"namespace", ns}, {"name", "ipus"}}},
          {"spec", {{"maxIPUs", maxIpus}, {"maxJobs", 4}}},
          {"status",
           {{"usedIPUs", used},
            {"reservedIPUs", reserved},
            {"admittedJobs", admitted},
            {"waitingJobs", waiting}}}};
}

Json waitingJob(const std::string& ns, const std::string& name, int instances, const std::string& ipus,
                int position, const std::string& reason) {
  return {{"metadata", {{"namespace", ns}, {"name", name}, {"uid", "uid-" + name}}},
          {"spec",
           {{"jobInstances", instances},
            {"ipusPerJobInstance", ipus},
            {"workers", {{"template", {{"spec", {{"containers", {{{"name", "w"}, {"image", "x"}}}}}}}}}}}},
          {"status",
           {{"phase", "Queued"},
            {"queuePosition", position},
            {"lastMessage", "waiting: " + reason},
            {"conditions", {{{"type", "Admitted"}, {"status", "False"}, {"reason", reason}}}}}}};
}

TEST(QuotaReportTest, UseAgainstLimitsAndWaitingJobsInQueueOrder) {
  const QuotaReport report =
      quotaReportOf({quota("team-b", 32, 16, 0, 1, 0), quota("team-a", 64, 32, 16, 2, 2)},
                    {waitingJob("team-a", "later", 1, "16", 2, "QuotaExceeded"),
                     waitingJob("team-a", "next", 2, "8", 1, "InsufficientCapacity")});
  ASSERT_EQ(report.quotas.size(), 2u);
  EXPECT_EQ(report.quotas[0].ns, "team-a");
  ASSERT_EQ(report.waiting.size(), 2u);
  EXPECT_EQ(report.waiting[0].job, "next");
  EXPECT_EQ(report.waiting[0].ipus, 16);
  EXPECT_EQ(report.waiting[1].reason, "QuotaExceeded");
  EXPECT_EQ(renderQuotaReport(report, 200),
            "NAMESPACE  QUOTA  IPUS   STARTING  JOBS  WAITING\n"
            "team-a     ipus   48/64  16        2/4   2\n"
            "team-b     ipus   16/32  0         1/4   0\n"
            "\nWaiting:\n"
            "NAMESPACE  JOB    IPUS  POSITION  REASON                MESSAGE\n"
            "team-a     next   16    1         InsufficientCapacity  waiting: InsufficientCapacity\n"
            "team-a     later  16    2         QuotaExceeded         waiting: QuotaExceeded\n");
  EXPECT_EQ(toJson(report)["waiting"][0]["position"], 1);
}

TEST(QuotaReportTest, NothingToShowSaysSo) {
  EXPECT_EQ(renderQuotaReport(quotaReportOf({}, {}), 80), "No IPUQuotas.\nNo jobs waiting.\n");
}

TEST(TopReportTest, PerNamespaceAndPerJobWithOtherNamespacesCountedNotNamed) {
  testing::PodBuilder pod(1, 64);
  pod.job("team-a", "gpt", {{0, 16}, {16, 16}}, "2026-11-28T08:00:00Z")
      .job("team-a", "bert", {{32, 4}})
      .job("team-b", "vit", {{48, 8}});
  std::vector<Json> teamA;
  VisibleJobs visible;
  for (const auto& job : pod.jobs()) {
    if ((*job)["metadata"]["namespace"] != "team-a") continue;
    Json copy = *job;
    copy["status"]["phase"] = "Running";
    teamA.push_back(copy);
    visible[copy["metadata"]["uid"]] = {"team-a", copy["metadata"]["name"]};
  }
  const TopReport report = topReportOf(teamA, {pod.status()}, visible);
  EXPECT_EQ(report.hiddenIpus, 8);
  EXPECT_EQ(report.hiddenJobs, 1);
  const std::string text = renderTopReport(report, 200, kNow);
  EXPECT_EQ(text,
            "NAMESPACE           IPUS  JOBS\n"
            "team-a              36    2\n"
            "(other namespaces)  8     1\n"
            "44 of 64 IPUs held\n"
            "\n"
            "NAMESPACE  JOB   IPUS  PARTITIONS  PHASE    HELD\n"
            "team-a     gpt   32    2           Running  2h02m\n"
            "team-a     bert  4     1           Running  1h02m\n");
  EXPECT_EQ(text.find("vit"), std::string::npos);
  EXPECT_EQ(toJson(report, kNow)["jobs"][0]["heldSeconds"], 7350);
}

TEST(TextTableTest, CutsTheLastColumnToTheWidth) {
  EXPECT_EQ(renderTable({"A", "MESSAGE"}, {{"x", "a long message that does not fit"}, {"", "short"}}, 20),
            "A  MESSAGE\n"
            "x  a long message...\n"
            "-  short\n");
}

}  // namespace
}  // namespace ipu::kubectl_ipu
