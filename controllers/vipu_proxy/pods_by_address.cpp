#include "vipu_proxy/pods_by_address.h"

#include <algorithm>

#include "common/json_access.h"

namespace ipu::controllers {

std::vector<std::string> addressesOf(const nlohmann::json& pod) {
  const nlohmann::json& status = member(pod, "status");
  std::vector<std::string> addresses;
  const auto add = [&addresses](std::string address) {
    if (!address.empty() && std::find(addresses.begin(), addresses.end(), address) == addresses.end())
      addresses.push_back(std::move(address));
  };
  add(stringMember(status, "podIP"));
  if (const nlohmann::json& ips = member(status, "podIPs"); ips.is_array()) {
    for (const nlohmann::json& ip : ips) add(stringMember(ip, "ip"));
  }
  return addresses;
}

std::vector<kube::ObjectPtr> PodsByAddress::podsAt(const std::string& address) {
  std::lock_guard lock(mutex_);
  // The revision is read before the pods: a change made while they are read moves it again, so the next
  // lookup builds anew and none is missed.
  const std::uint64_t revision = pods_.revision();
  if (builtAt_ != revision) {
    byAddress_.clear();
    for (const kube::ObjectPtr& pod : pods_.list()) {
      for (const std::string& podAddress : addressesOf(*pod)) byAddress_[podAddress].push_back(pod);
    }
    builtAt_ = revision;
  }
  const auto found = byAddress_.find(address);
  return found == byAddress_.end() ? std::vector<kube::ObjectPtr>() : found->second;
}

}  // namespace ipu::controllers
