#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kube/store.h"

namespace ipu::controllers {

// A pod's addresses: status.podIP and each of status.podIPs (a dual-stack pod has one of each family),
// without repeats. Pure.
std::vector<std::string> addressesOf(const nlohmann::json& pod);

// The worker pod cache's pods by address. Built again only when the cache changed (its revision moved), so a
// caller's lookup is a map search rather than a read of every cached pod (which the packed cache decodes one
// by one). Thread-safe.
class PodsByAddress {
 public:
  explicit PodsByAddress(const kube::Store& pods) : pods_(pods) {}

  // Every cached pod with that address, live or not (the caller judges them).
  std::vector<kube::ObjectPtr> podsAt(const std::string& address);

 private:
  const kube::Store& pods_;
  std::mutex mutex_;
  std::optional<std::uint64_t> builtAt_;  // the cache's revision the index was built from
  std::map<std::string, std::vector<kube::ObjectPtr>> byAddress_;
};

}  // namespace ipu::controllers
