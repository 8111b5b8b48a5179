#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

// IPUPod (graphcore.ai/v1alpha1, cluster-scoped): one V-IPU controller's IPU-POD as the operator last read
// it, published for people who may not reach V-IPU themselves (`kubectl ipu status`, `kubectl get ipupods`).
// Only the operator writes it. It names no job: a holder is a job's uid, which tells nothing by itself;
// whoever may list the job's IPUJobs can match it to a name, and nobody else can (docs/kubectl-ipu.md, "Who
// sees what").
namespace ipu::api {

using Json = nlohmann::json;

// What holds a run of IPUs (IpuPodHolder::kind).
inline constexpr const char* kHolderJob = "Job";          // partitions an IPUJob holds
inline constexpr const char* kHolderUnowned = "Unowned";  // the operator's id, no job holds it: being removed
inline constexpr const char* kHolderExternal = "External";  // a partition made outside the operator

struct IpuPodHolder {
  std::string kind;    // Job, Unowned or External
  std::string jobUid;  // Job only
  std::string ipus;    // the IPUs it holds, global ids as ranges: "0-15,64-79" (formatIpuRanges)
  int ipuCount = 0;
  int partitions = 0;
  std::string since;  // Job only: when it was admitted (RFC 3339), "" when its status does not say
  bool operator==(const IpuPodHolder&) const = default;
};

// IPUPod.status. Global IPU ids are ild * ildSize + the IPU's id in its ILD; an IPU-Machine holds
// ipusPerMachine consecutive ids.
struct IpuPodStatus {
  std::string controller;  // the V-IPU controller's name in the operator's configuration
  std::string cluster;     // V-IPU's cluster id
  int ilds = 0;            // 0 while the topology was never read
  int ildSize = 0;
  int ipusPerMachine = 0;
  int totalIpus = 0;
  int freeIpus = 0;
  int largestFreeBlock = 0;  // the largest partition that could be made now
  std::string readError;     // the last read of the controller failed: what it said ("" when it did not)
  std::vector<IpuPodHolder> holders;
  bool operator==(const IpuPodStatus&) const = default;
};

Json toJson(const IpuPodStatus& status);
// Lenient, like every status read: a field of the wrong type reads as absent.
IpuPodStatus parseIpuPodStatus(const Json& status);

// "0-3,8,12-15" from ids (any order, duplicates ignored); "" for none.
std::string formatIpuRanges(std::vector<std::uint32_t> ids);
// The ids of formatIpuRanges' text, ascending; InvalidArgument for anything else, or an id >= `limit`.
Result<std::vector<std::uint32_t>> parseIpuRanges(std::string_view text, std::uint32_t limit);

}  // namespace ipu::api
