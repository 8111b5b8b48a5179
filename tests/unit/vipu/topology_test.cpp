#include "vipu/topology.h"

#include <array>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <openssl/sha.h>

#include "common/stable_hash.h"
#include "vipu/backoff.h"
#include "vipu/ipu_block.h"
#include "vipu/partition_id.h"
#include "vipu/poplar_target_options.h"
#include "vipu/topology_discovery.h"

namespace ipu::vipu {
namespace {

TEST(VipuTopologyTest, PodPresets) {
  const Topology pod16 = *Topology::forPod("pod16", "c");
  EXPECT_EQ(pod16.ildCount(), 1u);
  EXPECT_EQ(pod16.ildSize(), 16u);
  EXPECT_EQ(pod16.machinesPerIld(), 4u);
  const Topology pod128 = *Topology::forPod("pod128", "c");
  EXPECT_EQ(pod128.totalIpus(), 128u);
  EXPECT_EQ(pod128.maxPartitionSize(), 128u);
  const Topology pod256 = *Topology::forPod("pod256", "c");
  EXPECT_EQ(pod256.ildCount(), 4u);
  EXPECT_EQ(pod256.ildOf(200), 3u);
  EXPECT_EQ(pod256.topologyIdOf(200), 8u);
  EXPECT_EQ(pod256.machineOf(200), 2u);
  EXPECT_EQ(pod256.globalIpu(3, 8), 200u);
  EXPECT_EQ(pod256.describe(), "cluster 'c': 4 ILDs x 64 IPUs (256 IPUs)");

  Result<Topology> unknown = Topology::forPod("pod32", "c");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("pod16, pod64, pod128 or pod256"), std::string::npos);
}

TEST(VipuTopologyTest, RejectsImpossibleShapes) {
  EXPECT_FALSE(Topology::create("", 1, 16));
  EXPECT_FALSE(Topology::create("c", 0, 16));
  EXPECT_FALSE(Topology::create("c", Topology::kMaxIlds + 1, 16));
  EXPECT_FALSE(Topology::create("c", 1, 0));
  EXPECT_FALSE(Topology::create("c", 1, 2));   // less than one IPU-Machine
  EXPECT_FALSE(Topology::create("c", 1, 24));  // not a power of two
  EXPECT_FALSE(Topology::create("c", 1, 512));
  Result<Topology> odd = Topology::create("c", 1, 24);
  EXPECT_EQ(odd.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(odd.error().message.find("got 24"), std::string::npos);
  EXPECT_EQ(Topology::create("c", 3, 16)->maxPartitionSize(), 32u);
}

TEST(VipuIpuBlockTest, ListsIpusWithRoutingIds) {
  const Topology pod128 = *Topology::forPod("pod128", "c");
  const auto ipus = ipusOfBlock(pod128, IpuBlock{96, 4});
  ASSERT_EQ(ipus.size(), 4u);
  EXPECT_EQ(ipus[0], (PartitionIpu{1, 0, 32, 0}));
  EXPECT_EQ(ipus[3], (PartitionIpu{1, 0, 35, 3}));
  EXPECT_EQ(describeBlock(pod128, IpuBlock{96, 4}), "ILD 1 IPUs 32-35");
  EXPECT_EQ(describeBlock(pod128, IpuBlock{0, 128}), "ILDs 0-1 (128 IPUs)");
  EXPECT_EQ(describeBlock(pod128, IpuBlock{5, 1}), "ILD 0 IPU 5");
}

TEST(VipuIpuBlockTest, AcceptsOnlyAlignedContiguousFreeFormBlocks) {
  const Topology pod128 = *Topology::forPod("pod128", "c");
  Result<IpuBlock> whole = blockOfIpus(pod128, ipusOfBlock(pod128, IpuBlock{0, 128}));
  ASSERT_TRUE(whole);
  EXPECT_EQ(*whole, (IpuBlock{0, 128}));
  // Order does not matter.
  auto reversed = ipusOfBlock(pod128, IpuBlock{8, 8});
  std::reverse(reversed.begin(), reversed.end());
  EXPECT_EQ(*blockOfIpus(pod128, reversed), (IpuBlock{8, 8}));

  struct Case {
    std::vector<PartitionIpu> ipus;
    std::string expected;
  };
  const std::vector<Case> cases{
      {{}, "empty"},
      {{{0, 0, 0, 0}, {0, 0, 1, 0}, {0, 0, 2, 0}}, "power-of-two"},
      {{{0, 0, 0, 0}, {0, 0, 0, 1}}, "listed twice"},
      {{{0, 0, 0, 0}, {0, 0, 2, 1}}, "not contiguous"},
      {{{0, 0, 1, 0}, {0, 0, 2, 1}}, "must start at a multiple of 2"},
      {{{2, 0, 0, 0}}, "outside"},
      {{{0, 0, 64, 0}}, "outside"},
      {{{0, 0, 62, 0}, {0, 0, 63, 1}, {1, 0, 0, 2}, {1, 0, 1, 3}}, "must start at a multiple of 4"},
  };
  for (const Case& c : cases) {
    Result<IpuBlock> block = blockOfIpus(pod128, c.ipus);
    ASSERT_FALSE(block) << c.expected;
    EXPECT_EQ(block.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(block.error().message.find(c.expected), std::string::npos) << block.error().message;
  }
}

TEST(VipuPartitionIdTest, ValidatesCharactersAndLength) {
  EXPECT_TRUE(validatePartitionId("team-a_job.1_0"));
  EXPECT_TRUE(validatePartitionId(std::string(kMaxPartitionIdLength, 'a')));
  EXPECT_FALSE(validatePartitionId(""));
  EXPECT_FALSE(validatePartitionId(std::string(kMaxPartitionIdLength + 1, 'a')));
  EXPECT_FALSE(validatePartitionId("-leading-dash"));
  EXPECT_FALSE(validatePartitionId("has space"));
  EXPECT_FALSE(validatePartitionId("slash/ed"));
  EXPECT_FALSE(validatePartitionId(std::string("nul\0byte", 8)));
  EXPECT_NE(validatePartitionId("x/y").error().message.find("[A-Za-z0-9._-]"), std::string::npos);
}

TEST(VipuPartitionIdTest, DerivesUniqueBoundedIds) {
  EXPECT_EQ(derivePartitionId("ns", "job", 3), "ns_job_3");
  // '-' and '.' inside names cannot make two jobs collide: '_' separates the parts.
  EXPECT_NE(derivePartitionId("a-b", "c", 0), derivePartitionId("a", "b-c", 0));
  const std::string longJob(200, 'j');
  const std::string first = derivePartitionId("team", longJob, 0);
  const std::string second = derivePartitionId("team", longJob, 1);
  EXPECT_EQ(first.size(), kMaxPartitionIdLength);
  EXPECT_NE(first, second);
  EXPECT_TRUE(validatePartitionId(first));
  EXPECT_EQ(first, derivePartitionId("team", longJob, 0));  // stable
  EXPECT_EQ(derivePartitionId("ns", longJob, 0, 36).size(), 36u);
}

// A shortened id used to end in 48 bits of FNV-1a: a birthday search over job names finds two names with one
// id in about 2^24 tries (Brent's cycle finding over name -> tail, so in constant memory, about a second).
// The same two names get different ids now, whose tail is SHA-256 as OpenSSL computes it; the earlier form
// is still derived exactly as it was, for the jobs admitted with it.
TEST(VipuPartitionIdTest, TheOldTailCollidesOnPurposeAndTheNewOneDoesNot) {
  const std::string ns(60, 'n');
  const auto jobName = [](std::uint64_t x) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string name = "j";
    for (int shift = 44; shift >= 0; shift -= 4) name.push_back(kHex[(x >> shift) & 0xf]);
    return name;
  };
  // FNV-1a of "<ns>_<jobName(x)>_0", low 48 bits: the state after "<ns>_j" once, then x's 12 hex digits and
  // "_0", byte by byte without building the name.
  constexpr std::uint64_t kPrime = 1099511628211ull;
  const auto mix = [](std::uint64_t hash, unsigned char byte) { return (hash ^ byte) * kPrime; };
  std::uint64_t prefixState = 14695981039346656037ull;
  for (char c : ns + "_j") prefixState = mix(prefixState, static_cast<unsigned char>(c));
  const auto tail = [&](std::uint64_t x) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::uint64_t hash = prefixState;
    for (int shift = 44; shift >= 0; shift -= 4) hash = mix(hash, kHex[(x >> shift) & 0xf]);
    return mix(mix(hash, '_'), '0') & 0xffffffffffffull;
  };
  std::uint64_t first = 0, second = 0;
  for (std::uint64_t start = 1; first == second; ++start) {
    std::uint64_t power = 1, length = 1, tortoise = start, hare = tail(start);
    while (tortoise != hare) {
      if (power == length) {
        tortoise = hare;
        power *= 2;
        length = 0;
      }
      hare = tail(hare);
      ++length;
    }
    tortoise = hare = start;
    for (std::uint64_t i = 0; i < length; ++i) hare = tail(hare);
    while (tortoise != hare) {  // they meet where the path joins the cycle: the step before is the collision
      first = tortoise;
      second = hare;
      tortoise = tail(tortoise);
      hare = tail(hare);
    }
  }
  const std::string a = jobName(first), b = jobName(second);
  ASSERT_NE(a, b);
  EXPECT_EQ(derivePartitionIdFnv48(ns, a, 0), derivePartitionIdFnv48(ns, b, 0)) << a << " " << b;
  EXPECT_NE(derivePartitionId(ns, a, 0), derivePartitionId(ns, b, 0)) << a << " " << b;

  const std::string full = ns + "_" + a + "_0";
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(full.data()), full.size(), digest.data());
  std::string hex;
  for (unsigned char byte : digest)
    hex += std::string{"0123456789abcdef"[byte >> 4], "0123456789abcdef"[byte & 0xf]};
  const std::string id = derivePartitionId(ns, a, 0);
  EXPECT_EQ(id.size(), kMaxPartitionIdLength);
  EXPECT_EQ(id, full.substr(0, kMaxPartitionIdLength - 25) + "_" + hex.substr(0, 24));
  // Ids short enough to stay whole are the same in both forms: jobs admitted before keep them.
  EXPECT_EQ(derivePartitionId("team", "bert", 3), derivePartitionIdFnv48("team", "bert", 3));
  EXPECT_EQ(derivePartitionIdFnv48(ns, a, 0),
            full.substr(0, kMaxPartitionIdLength - 13) + "_" + stableHashHex(full, 12));
}

TEST(VipuPoplarTargetOptionsTest, FollowsTheDocumentedRules) {
  const Topology pod64 = *Topology::forPod("pod64", "c");
  Partition whole;
  whole.spec.ipus = ipusOfBlock(pod64, IpuBlock{0, 64});
  whole.spec.ipuLinkRouting = IpuLinkRouting::kSwnc;
  EXPECT_EQ(poplarTargetOptions(whole, pod64),
            R"({"ipuLinkDomainSize":"64","ipuLinkConfiguration":"slidingWindow","ipuLinkTopology":"torus",)"
            R"("gatewayMode":"true","instanceSize":"64"})");

  const Topology pod16 = *Topology::forPod("pod16", "c");
  Partition small;
  small.spec.ipus = ipusOfBlock(pod16, IpuBlock{4, 4});
  const auto options = nlohmann::json::parse(poplarTargetOptions(small, pod16));
  EXPECT_EQ(options["ipuLinkDomainSize"], "4");
  EXPECT_EQ(options["ipuLinkConfiguration"], "default");
  EXPECT_EQ(options["ipuLinkTopology"], "mesh");
  EXPECT_EQ(options["gatewayMode"], "false");
  EXPECT_EQ(options["instanceSize"], "4");

  const Topology pod128 = *Topology::forPod("pod128", "c");
  Partition spanning;
  spanning.spec.ipus = ipusOfBlock(pod128, IpuBlock{0, 128});
  spanning.spec.ipuLinkRouting = IpuLinkRouting::kBtnc;
  const auto big = nlohmann::json::parse(poplarTargetOptions(spanning, pod128));
  EXPECT_EQ(big["ipuLinkDomainSize"], "64");
  EXPECT_EQ(big["ipuLinkConfiguration"], "barleyTwist");
  EXPECT_EQ(big["gatewayMode"], "true");
  EXPECT_EQ(big["instanceSize"], "128");
}

AgentIpuAttributes agentWith(const std::string& name, const std::string& cluster, std::uint32_t ild,
                             std::uint32_t firstId, std::uint32_t count) {
  AgentIpuAttributes agent{name, {}};
  for (std::uint32_t id = firstId; id < firstId + count; ++id) {
    agent.ipus[ild * 1000 + id] = {
        {"cluster_id", cluster}, {"ild_id", std::to_string(ild)}, {"topology_id", std::to_string(id)}};
  }
  return agent;
}

TEST(VipuTopologyDiscoveryTest, ReadsIldsFromAttributes) {
  std::vector<AgentIpuAttributes> agents;
  for (std::uint32_t ild = 0; ild < 2; ++ild) {
    for (std::uint32_t machine = 0; machine < 4; ++machine) {
      agents.push_back(agentWith("ag", "pod-a", ild, machine * 4, 4));
    }
  }
  Result<Topology> topology = topologyFromAttributes(agents);
  ASSERT_TRUE(topology) << topology.error().toString();
  EXPECT_EQ(*topology, *Topology::create("pod-a", 2, 16));
}

TEST(VipuTopologyDiscoveryTest, ExplainsWhatIsMissingOrInconsistent) {
  EXPECT_NE(topologyFromAttributes({}).error().message.find("no IPUs"), std::string::npos);
  AgentIpuAttributes bare{"ag", {{0, {{"cluster_id", "c"}}}}};
  EXPECT_NE(topologyFromAttributes({bare}).error().message.find("'ild_id'"), std::string::npos);
  AgentIpuAttributes text{"ag", {{0, {{"cluster_id", "c"}, {"ild_id", "x"}, {"topology_id", "0"}}}}};
  EXPECT_NE(topologyFromAttributes({text}).error().message.find("not a number"), std::string::npos);
  EXPECT_NE(topologyFromAttributes({agentWith("a", "c", 0, 0, 4), agentWith("b", "d", 1, 0, 4)})
                .error()
                .message.find("several clusters"),
            std::string::npos);
  EXPECT_NE(topologyFromAttributes({agentWith("a", "c", 0, 0, 4), agentWith("b", "c", 2, 0, 4)})
                .error()
                .message.find("ILD 1 is missing"),
            std::string::npos);
  EXPECT_NE(topologyFromAttributes({agentWith("a", "c", 0, 0, 4), agentWith("b", "c", 1, 0, 8)})
                .error()
                .message.find("expected 4 IPUs"),
            std::string::npos);
  EXPECT_NE(topologyFromAttributes({agentWith("a", "c", 0, 0, 4), agentWith("b", "c", 0, 2, 1)})
                .error()
                .message.find("twice"),
            std::string::npos);
}

TEST(VipuBackoffTest, GrowsExponentiallyUpToTheCap) {
  Backoff backoff(BackoffPolicy{std::chrono::milliseconds(100), std::chrono::milliseconds(500), 2.0});
  EXPECT_EQ(backoff.next().count(), 100);
  EXPECT_EQ(backoff.next().count(), 200);
  EXPECT_EQ(backoff.next().count(), 400);
  EXPECT_EQ(backoff.next().count(), 500);
  EXPECT_EQ(backoff.next().count(), 500);
  backoff.reset();
  EXPECT_EQ(backoff.next().count(), 100);
}

}  // namespace
}  // namespace ipu::vipu
