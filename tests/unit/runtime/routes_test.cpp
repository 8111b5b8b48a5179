// The interface ipu-runtime keeps OpenMPI on: the one that routes to the instance's peers, read from the
// kernel's IPv4 routing table as /proc/net/route prints it, for the tables pods really have.
#include "net/routes.h"

#include <cstdio>

#include <gtest/gtest.h>

namespace ipu::runtime::net {
namespace {

// a.b.c.d as /proc/net/route prints it: the network-order word in hexadecimal.
std::string printed(int a, int b, int c, int d) {
  char text[9];
  std::snprintf(text, sizeof text, "%02X%02X%02X%02X", d, c, b, a);
  return text;
}

std::uint32_t address(int a, int b, int c, int d) {
  return (static_cast<std::uint32_t>(a) << 24) | (b << 16) | (c << 8) | d;
}

const std::string kHeader =
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";

std::string line(const std::string& interface, const std::string& destination, const std::string& gateway,
                 const std::string& flags, int metric, const std::string& mask) {
  return interface + "\t" + destination + "\t" + gateway + "\t" + flags + "\t0\t0\t" +
         std::to_string(metric) + "\t" + mask + "\t0\t0\t0\n";
}

// A pod on a bridge network: its subnet on eth0 and a default route through the bridge.
const std::string kBridgePod =
    kHeader + line("eth0", printed(0, 0, 0, 0), printed(10, 220, 193, 1), "0003", 0, printed(0, 0, 0, 0)) +
    line("eth0", printed(10, 220, 193, 0), printed(0, 0, 0, 0), "0001", 0, printed(255, 255, 255, 0));

TEST(RoutesTest, ReadsTheKernelsTableInHostByteOrder) {
  const auto routes = parseRouteTable(kBridgePod);
  ASSERT_EQ(routes.size(), 2u) << "the header is no route";
  EXPECT_EQ(routes[1].interface, "eth0");
  EXPECT_EQ(routes[1].destination, address(10, 220, 193, 0));
  EXPECT_EQ(routes[1].mask, address(255, 255, 255, 0));
}

TEST(RoutesTest, ABridgePodReachesItsPeersOnEth0) {
  const auto routes = parseRouteTable(kBridgePod);
  EXPECT_EQ(interfacesToPeers(routes, {address(10, 220, 193, 7), address(10, 220, 193, 9)}),
            std::vector<std::string>{"eth0"});
  EXPECT_EQ(interfaceTo(routes, address(8, 8, 8, 8)), "eth0") << "the default route";
}

// Multus: the cluster network on eth0 (default route) and an RDMA network on net1: peers on the cluster
// network (by their Service names) go over eth0, not over whichever interface OpenMPI tries first.
TEST(RoutesTest, APodWithASecondNetworkUsesTheOneThatReachesThePeers) {
  const std::string table =
      kHeader + line("eth0", printed(0, 0, 0, 0), printed(10, 244, 1, 1), "0003", 0, printed(0, 0, 0, 0)) +
      line("eth0", printed(10, 244, 1, 0), printed(0, 0, 0, 0), "0001", 0, printed(255, 255, 255, 0)) +
      line("net1", printed(192, 168, 100, 0), printed(0, 0, 0, 0), "0001", 0, printed(255, 255, 255, 0));
  const auto routes = parseRouteTable(table);
  EXPECT_EQ(interfacesToPeers(routes, {address(10, 244, 2, 5), address(10, 244, 3, 6)}),
            std::vector<std::string>{"eth0"})
      << "peers on other nodes, through the default route";
  EXPECT_EQ(interfacesToPeers(routes, {address(192, 168, 100, 4), address(10, 244, 1, 9)}),
            (std::vector<std::string>{"net1", "eth0"}))
      << "each interface once, in the order first needed";
}

// Calico: one /32 route to a link-local gateway and the default route through it.
TEST(RoutesTest, ACalicoPodReachesEveryPeerThroughItsOneInterface) {
  const std::string table =
      kHeader + line("eth0", printed(0, 0, 0, 0), printed(169, 254, 1, 1), "0003", 0, printed(0, 0, 0, 0)) +
      line("eth0", printed(169, 254, 1, 1), printed(0, 0, 0, 0), "0005", 0, printed(255, 255, 255, 255));
  EXPECT_EQ(interfacesToPeers(parseRouteTable(table), {address(192, 168, 7, 3)}),
            std::vector<std::string>{"eth0"});
}

TEST(RoutesTest, TheLongestPrefixWinsThenTheLowestMetric) {
  const std::string table =
      kHeader + line("eth0", printed(0, 0, 0, 0), printed(10, 0, 0, 1), "0003", 0, printed(0, 0, 0, 0)) +
      line("net1", printed(10, 0, 0, 0), printed(0, 0, 0, 0), "0001", 0, printed(255, 0, 0, 0)) +
      line("eth1", printed(10, 1, 0, 0), printed(0, 0, 0, 0), "0001", 100, printed(255, 255, 0, 0)) +
      line("eth2", printed(10, 1, 0, 0), printed(0, 0, 0, 0), "0001", 50, printed(255, 255, 0, 0));
  const auto routes = parseRouteTable(table);
  EXPECT_EQ(interfaceTo(routes, address(10, 1, 2, 3)), "eth2") << "the /16s tie; the lower metric wins";
  EXPECT_EQ(interfaceTo(routes, address(10, 9, 2, 3)), "net1");
  EXPECT_EQ(interfaceTo(routes, address(11, 0, 0, 1)), "eth0");
}

TEST(RoutesTest, LoopbackRoutesThatAreDownAndUnreadableLinesAreNeverChosen) {
  const std::string table =
      kHeader + line("lo", printed(127, 0, 0, 0), printed(0, 0, 0, 0), "0001", 0, printed(255, 0, 0, 0)) +
      line("eth9", printed(10, 5, 0, 0), printed(0, 0, 0, 0), "0000", 0, printed(255, 255, 0, 0)) +
      "garbage line\n" + "eth0\tnothex\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
  const auto routes = parseRouteTable(table);
  ASSERT_EQ(routes.size(), 1u) << "only lo is up and readable";
  EXPECT_TRUE(interfacesToPeers(routes, {address(127, 0, 0, 1)}).empty()) << "a peer that is this host";
  EXPECT_FALSE(interfaceTo(routes, address(10, 5, 0, 1))) << "its route is down";
  EXPECT_TRUE(interfacesToPeers({}, {address(10, 0, 0, 1)}).empty()) << "no table: OpenMPI chooses";
}

}  // namespace
}  // namespace ipu::runtime::net
