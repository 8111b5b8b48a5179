// The V-IPU proxy's decisions: who a caller is (its address against the worker pod cache, its job from the
// IPUJob cache) and what it may call. Pure; the caches are built from objects as their watches deliver them.
#include <gtest/gtest.h>

#include "ipujob/orphan_partitions.h"
#include "job_store.h"
#include "proxy_objects.h"
#include "vipu_proxy/caller_address.h"
#include "vipu_proxy/pods_by_address.h"
#include "vipu_proxy/proxy_policy.h"

namespace ipu::controllers {
namespace {

using ipu::testing::ipuJobObject;
using ipu::testing::partitionRecord;
using ipu::testing::put;
using ipu::testing::workerPodObject;

const PartitionIdPrefixes kPrefixes{"ipuop", "legacy"};

std::string idOf(const std::string& ns, const std::string& job, std::uint32_t instance,
                 const std::string& prefix = kPrefixes.current) {
  return partitionIdFor(prefix, ns, job, instance);
}

// Two jobs of two tenants, one worker each: team-a/job-a at 10.0.0.1, team-b/job-b at 10.0.0.2.
class VipuProxyPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    put(jobs_, ipuJobObject("team-a", "job-a", "uid-a",
                            Json::array({partitionRecord(idOf("team-a", "job-a", 0), 0, "pod1"),
                                         partitionRecord(idOf("team-a", "job-a", 1), 1, "pod1")})));
    put(jobs_, ipuJobObject("team-b", "job-b", "uid-b",
                            Json::array({partitionRecord(idOf("team-b", "job-b", 0), 0, "pod1")})));
    addPod(workerPodObject("team-a", "job-a-worker-0", "job-a", "uid-a", "10.0.0.1"));
    addPod(workerPodObject("team-b", "job-b-worker-0", "job-b", "uid-b", "10.0.0.2"));
  }

  void addPod(Json pod) { put(pods_, std::move(pod)); }

  Result<ProxyCaller> identify(const std::string& address) {
    return identifyCaller(address, index_.podsAt(address), jobs_, kPrefixes);
  }

  // The reason `address` is not identified ("" when it is).
  std::string refusal(const std::string& address) {
    const Result<ProxyCaller> caller = identify(address);
    if (caller) return "";
    EXPECT_EQ(caller.error().code, ErrorCode::kPermissionDenied);
    return caller.error().message;
  }

  kube::Store pods_;
  testing::JobStore jobs_;
  PodsByAddress index_{pods_};
};

TEST_F(VipuProxyPolicyTest, AWorkerIsItsJobsAndMayUseItsDerivedHeldPartitions) {
  const Result<ProxyCaller> caller = identify("10.0.0.1");
  ASSERT_TRUE(caller) << caller.error().message;
  EXPECT_EQ(caller->pod, "team-a/job-a-worker-0");
  EXPECT_EQ(caller->job, "team-a/job-a");
  EXPECT_EQ(caller->controller, "pod1");
  EXPECT_EQ(caller->partitions,
            (std::vector<std::string>{idOf("team-a", "job-a", 0), idOf("team-a", "job-a", 1)}));
}

TEST_F(VipuProxyPolicyTest, CallersThatAreNoLiveWorkerOfAJobAreNotIdentified) {
  Json finished = workerPodObject("team-a", "job-a-worker-1", "job-a", "uid-a", "10.0.0.4");
  finished["status"]["phase"] = "Failed";
  addPod(finished);
  Json succeeded = workerPodObject("team-a", "job-a-worker-2", "job-a", "uid-a", "10.0.0.5");
  succeeded["status"]["phase"] = "Succeeded";
  addPod(succeeded);
  Json deleting = workerPodObject("team-a", "job-a-worker-3", "job-a", "uid-a", "10.0.0.6");
  deleting["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  addPod(deleting);
  // Another tenant's pod naming job-a (its name and uid) as its controller, from its own namespace.
  addPod(workerPodObject("team-b", "job-a-worker-0", "job-a", "uid-a", "10.0.0.7"));
  Json notController = workerPodObject("team-a", "not-controlled", "job-a", "uid-a", "10.0.0.8");
  notController["metadata"]["ownerReferences"][0]["controller"] = false;
  addPod(notController);
  Json unlabelled = workerPodObject("team-a", "unlabelled", "job-a", "uid-a", "10.0.0.9");
  unlabelled["metadata"]["labels"].erase("graphcore.ai/attempt");
  addPod(unlabelled);
  addPod(workerPodObject("team-a", "earlier-job-a", "job-a", "uid-of-an-earlier-job-a", "10.0.0.10"));
  Json hostNetwork = workerPodObject("team-a", "on-the-node", "job-a", "uid-a", "192.0.2.1");
  addPod(hostNetwork);
  Json otherOwner = workerPodObject("team-a", "of-a-deployment", "job-a", "uid-a", "10.0.0.11");
  otherOwner["metadata"]["ownerReferences"][0]["kind"] = "ReplicaSet";
  otherOwner["metadata"]["ownerReferences"][0]["apiVersion"] = "apps/v1";
  addPod(otherOwner);
  // Two live pods with one address (pods on their node's network, or a stale cache): neither is identified.
  addPod(workerPodObject("team-a", "twin-a", "job-a", "uid-a", "10.0.0.3"));
  addPod(workerPodObject("team-b", "twin-b", "job-b", "uid-b", "10.0.0.3"));

  const struct {
    std::string address;
    std::string because;
  } cases[] = {
      {"10.9.9.9", "no worker pod of an IPUJob has address 10.9.9.9"},
      {"10.0.0.3", "address 10.0.0.3 is shared by 2 pods (team-a/twin-a, team-b/twin-b): it identifies none"},
      {"10.0.0.4", "was pod team-a/job-a-worker-1's, which has finished"},
      {"10.0.0.5", "was pod team-a/job-a-worker-2's, which has finished"},
      {"10.0.0.6", "was pod team-a/job-a-worker-3's, which is being deleted"},
      {"10.0.0.7",
       "pod team-b/job-a-worker-0 names IPUJob team-b/job-a as its controller, which does not exist"},
      {"10.0.0.8", "pod team-a/not-controlled at 10.0.0.8 is not controlled by an IPUJob"},
      {"10.0.0.9",
       "pod team-a/unlabelled is not a worker of IPUJob team-a/job-a: it has no graphcore.ai/attempt"},
      {"10.0.0.10", "pod team-a/earlier-job-a is not a worker of IPUJob team-a/job-a: its ownerReference"},
      {"192.0.2.1", "pod team-a/on-the-node uses its node's network"},
      {"10.0.0.11", "pod team-a/of-a-deployment at 10.0.0.11 is not controlled by an IPUJob"},
  };
  for (const auto& [address, because] : cases) {
    const std::string why = refusal(address);
    EXPECT_NE(why.find(because), std::string::npos) << address << ": " << why;
  }
}

TEST_F(VipuProxyPolicyTest, ALivePodTakesAnAddressFromAFinishedOne) {
  Json finished = workerPodObject("team-b", "job-b-worker-9", "job-b", "uid-b", "10.0.0.1");
  finished["status"]["phase"] = "Succeeded";
  addPod(finished);
  const Result<ProxyCaller> caller = identify("10.0.0.1");
  ASSERT_TRUE(caller) << caller.error().message;
  EXPECT_EQ(caller->pod, "team-a/job-a-worker-0");
}

TEST_F(VipuProxyPolicyTest, OnlyHeldPartitionsTheJobsIdentityDerivesAreGranted) {
  put(jobs_, ipuJobObject("team-a", "job-a", "uid-a",
                          Json::array({partitionRecord(idOf("team-a", "job-a", 0), 0, "pod1"),
                                       // job-b's partition, written into job-a's status (by hand, say)
                                       partitionRecord(idOf("team-b", "job-b", 0), 1, "pod1"),
                                       // job-a's own id, under another installation's prefix
                                       partitionRecord(idOf("team-a", "job-a", 2, "other"), 2, "pod1"),
                                       // recorded for another instance than its id says
                                       partitionRecord(idOf("team-a", "job-a", 3), 4, "pod1"),
                                       partitionRecord(idOf("team-a", "job-a", 5, "legacy"), 5, "pod1"),
                                       partitionRecord(idOf("team-a", "job-a", 6), 6, "pod1", "Released"),
                                       // on another controller than the job's first partition
                                       partitionRecord(idOf("team-a", "job-a", 7), 7, "pod2")})));
  const Result<ProxyCaller> caller = identify("10.0.0.1");
  ASSERT_TRUE(caller) << caller.error().message;
  EXPECT_EQ(caller->partitions,
            (std::vector<std::string>{idOf("team-a", "job-a", 0), idOf("team-a", "job-a", 5, "legacy")}));
  const Status stolen = authorizeCall(*caller, VipuCall::kGetPartitionStatus, idOf("team-b", "job-b", 0));
  ASSERT_FALSE(stolen);
  EXPECT_EQ(stolen.error().code, ErrorCode::kPermissionDenied);
}

TEST_F(VipuProxyPolicyTest, EachCallIsDecidedForTheCallersOwnPartitionsOnly) {
  const Result<ProxyCaller> caller = identify("10.0.0.1");
  ASSERT_TRUE(caller);
  const std::string own = idOf("team-a", "job-a", 0);
  const std::string others = idOf("team-b", "job-b", 0);
  const struct {
    VipuCall call;
    std::string partition;
    bool allowed;
  } cases[] = {
      {VipuCall::kListPartitions, "", true},          {VipuCall::kListIpuAttributes, "", true},
      {VipuCall::kGetPartitionStatus, own, true},     {VipuCall::kGetPartitionIpuofConfig, own, true},
      {VipuCall::kResetPartition, own, true},         {VipuCall::kCreatePartition, own, false},
      {VipuCall::kRemovePartition, own, false},       {VipuCall::kCreatePartition, "new-one", false},
      {VipuCall::kGetPartitionStatus, others, false}, {VipuCall::kGetPartitionIpuofConfig, others, false},
      {VipuCall::kResetPartition, others, false},     {VipuCall::kRemovePartition, others, false},
      {VipuCall::kGetPartitionStatus, "", false},
  };
  for (const auto& [call, partition, allowed] : cases) {
    const Status decided = authorizeCall(*caller, call, partition);
    EXPECT_EQ(static_cast<bool>(decided), allowed) << vipuCallName(call) << " " << partition;
    if (decided) continue;
    EXPECT_EQ(decided.error().code, ErrorCode::kPermissionDenied);
    EXPECT_NE(decided.error().message.find("'" + partition + "'"), std::string::npos)
        << decided.error().message;
    EXPECT_NE(decided.error().message.find("pod team-a/job-a-worker-0"), std::string::npos)
        << decided.error().message;
  }
}

TEST_F(VipuProxyPolicyTest, ACallersTextIsBoundedInMessages) {
  const Result<ProxyCaller> caller = identify("10.0.0.1");
  ASSERT_TRUE(caller);
  const Status decided =
      authorizeCall(*caller, VipuCall::kResetPartition, std::string(1000, 'x') + "\n\x1b[31m");
  ASSERT_FALSE(decided);
  EXPECT_LT(decided.error().message.size(), 300u);
  EXPECT_EQ(decided.error().message.find('\n'), std::string::npos);
}

TEST_F(VipuProxyPolicyTest, AJobHoldingNoPartitionsListsNothingAndHasNoControllerToAsk) {
  put(jobs_, ipuJobObject("team-a", "job-a", "uid-a",
                          Json::array({partitionRecord(idOf("team-a", "job-a", 0), 0, "pod1", "Released")})));
  const Result<ProxyCaller> caller = identify("10.0.0.1");
  ASSERT_TRUE(caller);
  EXPECT_EQ(caller->controller, "");
  EXPECT_TRUE(authorizeCall(*caller, VipuCall::kListPartitions, ""));
  EXPECT_FALSE(authorizeCall(*caller, VipuCall::kListIpuAttributes, ""));
  EXPECT_FALSE(authorizeCall(*caller, VipuCall::kGetPartitionStatus, idOf("team-a", "job-a", 0)));
}

TEST_F(VipuProxyPolicyTest, TheAddressIndexFollowsTheCache) {
  EXPECT_EQ(index_.podsAt("10.0.0.42").size(), 0u);
  addPod(workerPodObject("team-a", "job-a-worker-1", "job-a", "uid-a", "10.0.0.42"));
  ASSERT_EQ(index_.podsAt("10.0.0.42").size(), 1u);
  pods_.apply(kube::WatcherEvent{kube::WatcherEvent::Kind::kDelete, *index_.podsAt("10.0.0.42").front()});
  EXPECT_EQ(index_.podsAt("10.0.0.42").size(), 0u);
}

TEST(PodAddresses, ArePodIpAndEveryPodIpsEntryOnce) {
  const Json pod = {{"status",
                     {{"podIP", "10.0.0.7"},
                      {"podIPs", Json::array({{{"ip", "10.0.0.7"}}, {{"ip", "fd00::7"}}, 3, {{"ip", 4}}})}}}};
  EXPECT_EQ(addressesOf(pod), (std::vector<std::string>{"10.0.0.7", "fd00::7"}));
  EXPECT_TRUE(addressesOf(Json::object()).empty());
  EXPECT_TRUE(addressesOf(Json("pod")).empty());
}

TEST(CallerAddress, IsThePeersIpAsKubernetesWritesIt) {
  EXPECT_EQ(callerAddressOf("ipv4:10.0.0.7:51234"), "10.0.0.7");
  EXPECT_EQ(callerAddressOf("ipv6:[fd00::7]:51234"), "fd00::7");
  EXPECT_EQ(callerAddressOf("ipv6:%5Bfd00::7%5D:51234"), "fd00::7");
  EXPECT_EQ(callerAddressOf("ipv6:[::ffff:10.0.0.7]:51234"), "10.0.0.7");
  EXPECT_EQ(callerAddressOf("ipv6:[::1]:51234"), "::1");
  for (const char* unidentified : {"unix:/tmp/socket", "", "ipv4:", "ipv4::80", "ipv6:[]:80", "ipv6:fd00::7",
                                   "ipv6:[fd00::7", "10.0.0.7:80"}) {
    EXPECT_EQ(callerAddressOf(unidentified), std::nullopt) << unidentified;
  }
}

}  // namespace
}  // namespace ipu::controllers
