// The IPUPod status the operator publishes (api/ipupod.h, controllers/pod_map/pod_map_status.h): who holds
// which IPUs, by rules a tenant cannot bend.
#include "api/ipupod.h"

#include <gtest/gtest.h>

#include "pod_map/pod_map_publisher.h"
#include "pod_map_fixtures.h"

namespace ipu::testing {
namespace {

TEST(IpuRangesTest, FormatsRunsAndReadsThemBack) {
  EXPECT_EQ(api::formatIpuRanges({8, 0, 1, 2, 3, 12, 13, 14, 15, 3}), "0-3,8,12-15");
  EXPECT_EQ(api::formatIpuRanges({}), "");
  auto ids = api::parseIpuRanges("0-3,8,12-15", 16);
  ASSERT_TRUE(ids);
  EXPECT_EQ(*ids, (std::vector<std::uint32_t>{0, 1, 2, 3, 8, 12, 13, 14, 15}));
  EXPECT_TRUE(api::parseIpuRanges("", 16));
  for (const char* bad : {"3-1", "0-16", "a", "1,", "-2", "1--2", "4294967296"}) {
    EXPECT_FALSE(api::parseIpuRanges(bad, 16)) << bad;
  }
}

TEST(IpuPodStatusTest, RoundTripsThroughJson) {
  PodBuilder pod(2, 64);
  pod.job("team-a", "llm", {{64, 64}}).partition("elsewhere", 0, 4);
  const api::IpuPodStatus status = pod.status();
  EXPECT_EQ(api::parseIpuPodStatus(api::toJson(status)), status);
  EXPECT_EQ(api::toJson(status)["totalIPUs"], 128);
}

TEST(IpuPodStatusTest, NamesJobsOnlyByUidAndMergesTheirPartitions) {
  PodBuilder pod(1, 16);
  pod.job("team-a", "bert", {{8, 4}, {0, 4}});
  const api::IpuPodStatus status = pod.status();
  ASSERT_EQ(status.holders.size(), 1u);
  EXPECT_EQ(status.holders[0].kind, api::kHolderJob);
  EXPECT_EQ(status.holders[0].jobUid, (*pod.jobs()[0])["metadata"]["uid"]);
  EXPECT_EQ(status.holders[0].ipus, "0-3,8-11");
  EXPECT_EQ(status.holders[0].ipuCount, 8);
  EXPECT_EQ(status.holders[0].partitions, 2);
  EXPECT_EQ(status.holders[0].since, "2026-11-28T09:00:00Z");
  EXPECT_EQ(status.freeIpus, 8);
  EXPECT_EQ(status.largestFreeBlock, 4);
  const std::string json = api::toJson(status).dump();
  EXPECT_EQ(json.find("team-a"), std::string::npos) << json;
  EXPECT_EQ(json.find("bert"), std::string::npos) << json;
}

TEST(IpuPodStatusTest, AStatusEditedToClaimAnotherJobsPartitionClaimsNothing) {
  PodBuilder pod(1, 16);
  pod.job("team-a", "bert", {{0, 8}});
  // team-b's job records team-a's partition in its own status (as a hand edit could).
  const auto forged = std::make_shared<const nlohmann::json>(
      nlohmann::json{{"metadata", {{"namespace", "team-b"}, {"name", "thief"}, {"uid", "uid-thief"}}},
                     {"status", {{"partitions", (*pod.jobs()[0])["status"]["partitions"]}}}});
  const api::IpuPodStatus both = pod.statusWith({forged, pod.jobs()[0]});
  ASSERT_EQ(both.holders.size(), 1u);
  EXPECT_EQ(both.holders[0].jobUid, (*pod.jobs()[0])["metadata"]["uid"]);
  // Without team-a's job, the operator's partition is held by no job: it is not the forger's.
  const api::IpuPodStatus forgedOnly = pod.statusWith({forged});
  ASSERT_EQ(forgedOnly.holders.size(), 1u);
  EXPECT_EQ(forgedOnly.holders[0].kind, api::kHolderUnowned);
  EXPECT_EQ(forgedOnly.holders[0].jobUid, "");
}

TEST(IpuPodStatusTest, PartitionsMadeOutsideTheOperatorAreExternalAndOtherClustersLeftOut) {
  PodBuilder pod(1, 16);
  pod.partition("made-with-vipu-admin", 0, 4).partition("on-another-cluster", 8, 4, "pod-b");
  const api::IpuPodStatus status = pod.status();
  ASSERT_EQ(status.holders.size(), 1u);
  EXPECT_EQ(status.holders[0].kind, api::kHolderExternal);
  EXPECT_EQ(status.holders[0].ipus, "0-3");
  EXPECT_EQ(status.freeIpus, 12);
}

TEST(IpuPodStatusTest, NeverReadAndUnreadableControllersSaySo) {
  EXPECT_EQ(controllers::ipuPodStatusOf("vipu-a", nullptr, {}, kPrefixes).readError, "not read yet");
  controllers::VipuInventory::View failed;
  failed.error = makeError(ErrorCode::kUnavailable, "connection refused");
  const api::IpuPodStatus status = controllers::ipuPodStatusOf("vipu-a", &failed, {}, kPrefixes);
  EXPECT_EQ(status.readError, "connection refused");
  EXPECT_EQ(status.ilds, 0);
}

TEST(IpuPodStatusTest, ControllerNamesBecomeObjectNames) {
  EXPECT_EQ(controllers::ipuPodNameFor("vipu-a"), "vipu-a");
  EXPECT_EQ(controllers::ipuPodNameFor("POD_64.lab"), "pod-64.lab");
}

}  // namespace
}  // namespace ipu::testing
