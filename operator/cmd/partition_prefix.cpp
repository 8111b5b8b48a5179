#include "cmd/partition_prefix.h"

#include <cctype>
#include <condition_variable>
#include <mutex>

#include "common/json_access.h"
#include "common/log.h"

namespace ipu::cmd {

std::string prefixForClusterUid(const std::string& uid) {
  std::string digits;
  for (char c : uid) {
    if (std::isxdigit(static_cast<unsigned char>(c)) == 0) continue;
    digits += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (digits.size() == 8) break;
  }
  return std::string(kLegacyPartitionIdPrefix) + "-" + digits;
}

Result<PartitionPrefixes> resolvePartitionPrefixes(const std::string& flagValue, kube::RestClient& client,
                                                   std::stop_token stop,
                                                   std::chrono::milliseconds retryEvery) {
  if (!flagValue.empty()) return PartitionPrefixes{flagValue, ""};
  for (;;) {
    auto ns = client.get(kube::ResourceRef::namespaces(), "", "kube-system");
    if (ns) {
      const std::string uid = stringMember(member(*ns, "metadata"), "uid");
      if (prefixForClusterUid(uid).size() < std::string(kLegacyPartitionIdPrefix).size() + 1 + 8) {
        return makeError(ErrorCode::kFailedPrecondition,
                         "the kube-system namespace has no usable uid (\"" + uid +
                             "\") to derive the partition id prefix from: set --partition-id-prefix");
      }
      PartitionPrefixes prefixes{prefixForClusterUid(uid), kLegacyPartitionIdPrefix};
      log::info("partition id prefix derived from the kube-system namespace's uid",
                {{"prefix", prefixes.current}, {"legacyPrefix", prefixes.legacy}});
      return prefixes;
    }
    if (ns.error().retryClass() != RetryClass::kTransient) {
      return makeError(
          ns.error().code,
          "cannot read the kube-system namespace to derive the partition id prefix from its uid (" +
              ns.error().message +
              "): grant get on namespaces/kube-system (the Helm chart does), or set "
              "--partition-id-prefix");
    }
    log::warning("cannot read the kube-system namespace yet; trying again", {{"error", ns.error().message}});
    std::mutex mutex;
    std::condition_variable_any wake;
    std::unique_lock lock(mutex);
    if (wake.wait_for(lock, stop, retryEvery, [] { return false; }) || stop.stop_requested())
      return makeError(ErrorCode::kCancelled, "stopped before the API server answered");
  }
}

}  // namespace ipu::cmd
