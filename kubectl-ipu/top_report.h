#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/ipupod.h"
#include "common/clock.h"
#include "kubectl-ipu/terminal_map.h"

namespace ipu::kubectl_ipu {

using Json = nlohmann::json;

// `kubectl ipu top`: who holds IPUs now, per job and per namespace, and for how long.
struct JobUse {
  std::string ns;
  std::string job;
  std::string phase;
  int ipus = 0;
  int partitions = 0;
  std::optional<Clock::WallTime> since;  // admitted at
};

struct NamespaceUse {
  std::string ns;
  int ipus = 0;
  int jobs = 0;
};

struct TopReport {
  std::vector<JobUse> jobs;              // most IPUs first
  std::vector<NamespaceUse> namespaces;  // most IPUs first
  // Jobs not shown (other namespaces' without -A, or ones the user may not list), from the IPUPods: counted,
  // never named.
  int hiddenIpus = 0;
  int hiddenJobs = 0;
  int totalIpus = 0;  // of every IPUPod read
};

// Pure: the jobs shown (as the API server returned them), the published IPUPods, and the shown jobs by uid.
TopReport topReportOf(const std::vector<Json>& jobs, const std::vector<api::IpuPodStatus>& pods,
                      const VisibleJobs& visible);
std::string renderTopReport(const TopReport& report, int width, Clock::WallTime now);
Json toJson(const TopReport& report, Clock::WallTime now);

}  // namespace ipu::kubectl_ipu
