#include "remote/peer_name.h"

#include <algorithm>

namespace ipu::runtime::remote {

std::string completePeerName(const std::string& host, const std::vector<std::string>& peers) {
  if (std::find(peers.begin(), peers.end(), host) != peers.end()) return host;
  for (const auto& peer : peers) {
    if (peer.size() > host.size() && peer.compare(0, host.size(), host) == 0 && peer[host.size()] == '.')
      return peer;
  }
  return host;
}

}  // namespace ipu::runtime::remote
