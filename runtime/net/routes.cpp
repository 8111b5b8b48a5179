#include "net/routes.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <sstream>

#include <arpa/inet.h>
#include <net/route.h>
#include <netdb.h>

namespace ipu::runtime::net {
namespace {

// A 32-bit field the kernel prints in hexadecimal (%08X, flags %04X).
std::optional<std::uint32_t> hexField(std::string_view text) {
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (text.empty() || text.size() > 8 || error != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

std::optional<std::uint32_t> decimalField(std::string_view text) {
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The kernel prints each address as the 32-bit word it holds in network byte order.
std::uint32_t hostOrder(std::uint32_t printed) {
  return ntohl(printed);
}

bool isLoopback(const std::string& interface) {
  return interface == "lo";
}

}  // namespace

std::vector<Route> parseRouteTable(std::string_view text) {
  std::vector<Route> routes;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string interface, destination, gateway, flags, refcnt, use, metric, mask;
    if (!(fields >> interface >> destination >> gateway >> flags >> refcnt >> use >> metric >> mask))
      continue;
    const auto dest = hexField(destination);
    const auto netmask = hexField(mask);
    const auto routeFlags = hexField(flags);
    const auto routeMetric = decimalField(metric);
    if (!dest || !netmask || !routeFlags || !routeMetric) continue;  // the header, or not a route
    if ((*routeFlags & RTF_UP) == 0) continue;
    routes.push_back({interface, hostOrder(*dest), hostOrder(*netmask), *routeMetric});
  }
  return routes;
}

std::optional<std::string> interfaceTo(const std::vector<Route>& routes, std::uint32_t address) {
  const Route* best = nullptr;
  for (const Route& route : routes) {
    if ((address & route.mask) != (route.destination & route.mask)) continue;
    if (best == nullptr) {
      best = &route;
      continue;
    }
    const int length = std::popcount(route.mask);
    const int bestLength = std::popcount(best->mask);
    if (length > bestLength || (length == bestLength && route.metric < best->metric)) best = &route;
  }
  if (best == nullptr) return std::nullopt;
  return best->interface;
}

std::vector<std::string> interfacesToPeers(const std::vector<Route>& routes,
                                           const std::vector<std::uint32_t>& peers) {
  std::vector<std::string> interfaces;
  for (std::uint32_t peer : peers) {
    const auto interface = interfaceTo(routes, peer);
    if (!interface || isLoopback(*interface)) continue;
    if (std::find(interfaces.begin(), interfaces.end(), *interface) == interfaces.end())
      interfaces.push_back(*interface);
  }
  return interfaces;
}

std::vector<std::uint32_t> ipv4AddressesOf(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::vector<std::uint32_t> addresses;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return addresses;
  for (const addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    const auto* address = reinterpret_cast<const sockaddr_in*>(entry->ai_addr);
    addresses.push_back(ntohl(address->sin_addr.s_addr));
  }
  freeaddrinfo(found);
  return addresses;
}

}  // namespace ipu::runtime::net
