#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/ipupod.h"
#include "common/clock.h"

namespace ipu::controllers {

// A job the user may list, by uid: what an IPUPod's holder is shown as.
struct VisibleJob {
  std::string ns;
  std::string name;
};
using VisibleJobs = std::map<std::string, VisibleJob>;  // by metadata.uid

// The IPUJobs a list gave the user (as the API server returned them), by uid.
VisibleJobs visibleJobsOf(const std::vector<nlohmann::json>& jobs);

// One mark of the map and what it stands for.
struct MapHolder {
  char mark = '?';
  std::string kind;  // api::kHolderJob, kHolderUnowned, kHolderExternal
  // "team-a/bert" for a job the user may list; "another namespace" for one they may not.
  std::string label;
  std::optional<VisibleJob> job;  // the job, when the user may list it
  int ipuCount = 0;
  int partitions = 0;
  std::optional<Clock::WallTime> since;
};

// One V-IPU controller's IPU-POD ready to draw: each IPU's holder (an index into holders, or -1 for free).
struct PodMapView {
  api::IpuPodStatus status;
  std::vector<int> holderOfIpu;  // size status.totalIpus
  std::vector<MapHolder> holders;
  std::vector<std::string> problems;  // holders whose IPUs could not be read (an IPUPod of a newer version)
};

// Marks: jobs A-Z a-z 0-9 in the order of their first IPU, then '+' for any further job; '~' for the
// operator's partitions no job holds, 'x' for partitions made outside the operator, '.' free.
inline constexpr char kFreeMark = '.';
inline constexpr char kUnownedMark = '~';
inline constexpr char kExternalMark = 'x';
inline constexpr char kOverflowMark = '+';
inline constexpr const char* kHiddenJobLabel = "another namespace";

// Pure: the status as published and the jobs the user may list.
PodMapView podMapViewOf(const api::IpuPodStatus& status, const VisibleJobs& visible);

}  // namespace ipu::controllers
