#include "kubectl-ipu/top_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "api/ipujob_status.h"
#include "common/json_access.h"
#include "common/time_format.h"
#include "kubectl-ipu/terminal_map.h"
#include "kubectl-ipu/text_table.h"

namespace ipu::kubectl_ipu {

TopReport topReportOf(const std::vector<Json>& jobs, const std::vector<api::IpuPodStatus>& pods,
                      const VisibleJobs& visible) {
  TopReport report;
  std::map<std::string, NamespaceUse> namespaces;
  for (const Json& job : jobs) {
    const api::IpuJobStatus status = api::parseIpuJobStatus(member(job, "status"));
    const std::vector<api::PartitionRecord> held = status.heldPartitions();
    if (held.empty()) continue;
    const Json& metadata = member(job, "metadata");
    JobUse use{stringMember(metadata, "namespace"), stringMember(metadata, "name"), status.phase};
    for (const api::PartitionRecord& record : held) use.ipus += record.size;
    use.partitions = static_cast<int>(held.size());
    use.since = parseTime(status.admittedAt());
    NamespaceUse& ns = namespaces[use.ns];
    ns.ns = use.ns;
    ns.ipus += use.ipus;
    ++ns.jobs;
    report.jobs.push_back(std::move(use));
  }
  std::set<std::string> hidden;
  for (const api::IpuPodStatus& pod : pods) {
    report.totalIpus += pod.totalIpus;
    for (const api::IpuPodHolder& holder : pod.holders) {
      if (holder.kind != api::kHolderJob || visible.contains(holder.jobUid)) continue;
      hidden.insert(holder.jobUid);
      report.hiddenIpus += holder.ipuCount;
    }
  }
  report.hiddenJobs = static_cast<int>(hidden.size());
  std::sort(report.jobs.begin(), report.jobs.end(), [](const JobUse& a, const JobUse& b) {
    return std::tie(b.ipus, a.ns, a.job) < std::tie(a.ipus, b.ns, b.job);
  });
  for (auto& [name, use] : namespaces) report.namespaces.push_back(use);
  std::sort(report.namespaces.begin(), report.namespaces.end(),
            [](const NamespaceUse& a, const NamespaceUse& b) {
              return std::tie(b.ipus, a.ns) < std::tie(a.ipus, b.ns);
            });
  return report;
}

std::string renderTopReport(const TopReport& report, int width, Clock::WallTime now) {
  std::vector<std::vector<std::string>> rows;
  for (const NamespaceUse& ns : report.namespaces) {
    rows.push_back({ns.ns, std::to_string(ns.ipus), std::to_string(ns.jobs)});
  }
  if (report.hiddenJobs > 0) {
    rows.push_back(
        {"(other namespaces)", std::to_string(report.hiddenIpus), std::to_string(report.hiddenJobs)});
  }
  std::string text;
  if (rows.empty()) {
    text += "No job holds IPUs.\n";
  } else {
    text += renderTable({"NAMESPACE", "IPUS", "JOBS"}, rows, width);
  }
  if (report.totalIpus > 0) {
    int held = report.hiddenIpus;
    for (const NamespaceUse& ns : report.namespaces) held += ns.ipus;
    text += std::to_string(held) + " of " + std::to_string(report.totalIpus) + " IPUs held\n";
  }
  if (report.jobs.empty()) return text;
  rows.clear();
  for (const JobUse& job : report.jobs) {
    rows.push_back({job.ns, job.job, std::to_string(job.ipus), std::to_string(job.partitions), job.phase,
                    job.since ? formatElapsed(now - *job.since) : ""});
  }
  return text + "\n" + renderTable({"NAMESPACE", "JOB", "IPUS", "PARTITIONS", "PHASE", "HELD"}, rows, width);
}

Json toJson(const TopReport& report, Clock::WallTime now) {
  Json json{{"namespaces", Json::array()},
            {"jobs", Json::array()},
            {"otherNamespaces", {{"ipus", report.hiddenIpus}, {"jobs", report.hiddenJobs}}},
            {"totalIPUs", report.totalIpus}};
  for (const NamespaceUse& ns : report.namespaces) {
    json["namespaces"].push_back({{"namespace", ns.ns}, {"ipus", ns.ipus}, {"jobs", ns.jobs}});
  }
  for (const JobUse& job : report.jobs) {
    Json entry{{"namespace", job.ns},
               {"name", job.job},
               {"ipus", job.ipus},
               {"partitions", job.partitions},
               {"phase", job.phase}};
    if (job.since) {
      entry["since"] = formatTime(*job.since);
      entry["heldSeconds"] = std::chrono::duration_cast<std::chrono::seconds>(now - *job.since).count();
    }
    json["jobs"].push_back(entry);
  }
  return json;
}

}  // namespace ipu::kubectl_ipu
