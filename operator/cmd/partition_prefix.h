#pragma once

#include <chrono>
#include <stop_token>
#include <string>

#include "common/result.h"
#include "kube/rest_client.h"

namespace ipu::cmd {

// The partition id prefixes of this installation.
struct PartitionPrefixes {
  // Starts every partition id the operator makes, and the only prefix its orphan sweeps remove.
  std::string current;
  // Ids derived under it for a job's own identity are still the job's (jobs admitted by a version whose
  // default was the shared "k8s"); never swept, never used for a new partition. Empty: none.
  std::string legacy;
};

// The prefix every version before the per-cluster default used when --partition-id-prefix was not given.
inline constexpr const char* kLegacyPartitionIdPrefix = "k8s";

// "k8s-" and the first 8 hex digits of `uid` (the kube-system namespace's: random, fixed for the cluster's
// life), so that two clusters sharing a V-IPU controller never share a prefix by default. Pure.
std::string prefixForClusterUid(const std::string& uid);

// `flagValue` when the admin gave one (then no legacy prefix: an explicit prefix was always used as given);
// otherwise derived from the kube-system namespace's uid, read from the API server (retried while it is
// unreachable, until `stop`), with "k8s" as the legacy prefix. A refusal (no permission to get the
// namespace) is an error that says how to fix it.
Result<PartitionPrefixes> resolvePartitionPrefixes(
    const std::string& flagValue, kube::RestClient& client, std::stop_token stop,
    std::chrono::milliseconds retryEvery = std::chrono::seconds(2));

}  // namespace ipu::cmd
