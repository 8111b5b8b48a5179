#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ipu::runtime::net {

// One IPv4 route of the main table, addresses in host byte order.
struct Route {
  std::string interface;
  std::uint32_t destination = 0;
  std::uint32_t mask = 0;
  std::uint32_t metric = 0;
};

// The routes of /proc/net/route's text (the kernel's IPv4 main table: hexadecimal fields in network byte
// order) that are up. Lines that are not routes (the header, anything malformed) are skipped.
std::vector<Route> parseRouteTable(std::string_view text);

// The interface the table sends `address` (host byte order) through: the longest matching prefix, then the
// lowest metric, then the first listed. nullopt: no route.
std::optional<std::string> interfaceTo(const std::vector<Route>& routes, std::uint32_t address);

// The interfaces the table reaches `peers` through, each once in the order first needed, the loopback never
// (a peer that is this host is reached by every interface). Empty when no peer has a route. Pure.
std::vector<std::string> interfacesToPeers(const std::vector<Route>& routes,
                                           const std::vector<std::uint32_t>& peers);

// `host`'s IPv4 addresses (host byte order) by the system resolver; empty when it has none.
std::vector<std::uint32_t> ipv4AddressesOf(const std::string& host);

}  // namespace ipu::runtime::net
