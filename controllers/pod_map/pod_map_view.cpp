#include "pod_map/pod_map_view.h"

#include "common/json_access.h"
#include "common/time_format.h"

namespace ipu::controllers {
namespace {

char jobMark(std::size_t index) {
  static constexpr std::string_view kMarks = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return index < kMarks.size() ? kMarks[index] : kOverflowMark;
}

MapHolder holderOf(const api::IpuPodHolder& published, const VisibleJobs& visible, std::size_t& jobsSoFar) {
  MapHolder holder;
  holder.kind = published.kind;
  holder.ipuCount = published.ipuCount;
  holder.partitions = published.partitions;
  if (published.kind == api::kHolderUnowned) {
    holder.mark = kUnownedMark;
    holder.label = "ipu-operator, no job (being removed)";
  } else if (published.kind == api::kHolderExternal) {
    holder.mark = kExternalMark;
    holder.label = "outside ipu-operator";
  } else {
    holder.mark = jobMark(jobsSoFar++);
    if (const auto job = visible.find(published.jobUid); job != visible.end()) {
      holder.job = job->second;
      holder.label = job->second.ns + "/" + job->second.name;
    } else {
      holder.label = kHiddenJobLabel;
    }
    holder.since = parseTime(published.since);
  }
  return holder;
}

}  // namespace

VisibleJobs visibleJobsOf(const std::vector<nlohmann::json>& jobs) {
  VisibleJobs visible;
  for (const nlohmann::json& job : jobs) {
    const nlohmann::json& metadata = member(job, "metadata");
    visible[stringMember(metadata, "uid")] = {stringMember(metadata, "namespace"),
                                              stringMember(metadata, "name")};
  }
  return visible;
}

PodMapView podMapViewOf(const api::IpuPodStatus& status, const VisibleJobs& visible) {
  PodMapView view;
  view.status = status;
  const std::uint32_t total = status.totalIpus > 0 ? static_cast<std::uint32_t>(status.totalIpus) : 0;
  view.holderOfIpu.assign(total, -1);
  std::size_t jobs = 0;
  for (const api::IpuPodHolder& published : status.holders) {
    const int index = static_cast<int>(view.holders.size());
    view.holders.push_back(holderOf(published, visible, jobs));
    auto ipus = api::parseIpuRanges(published.ipus, total);
    if (!ipus) {
      view.problems.push_back(view.holders.back().label + ": " + ipus.error().message);
      continue;
    }
    for (const std::uint32_t ipu : *ipus) view.holderOfIpu[ipu] = index;
  }
  return view;
}

}  // namespace ipu::controllers
