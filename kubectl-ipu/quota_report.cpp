#include "kubectl-ipu/quota_report.h"

#include <algorithm>
#include <tuple>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "api/ipuquota.h"
#include "api/job_lifecycle.h"
#include "common/json_access.h"
#include "kubectl-ipu/text_table.h"

namespace ipu::kubectl_ipu {
namespace {

int requestedIpus(const Json& job) {
  auto spec = api::parseIpuJobSpec(member(job, "spec"));
  return spec ? spec->jobInstances * spec->ipusPerJobInstance : 0;
}

}  // namespace

QuotaReport quotaReportOf(const std::vector<Json>& quotas, const std::vector<Json>& jobs) {
  QuotaReport report;
  for (const Json& object : quotas) {
    const Json& metadata = member(object, "metadata");
    QuotaRow row{stringMember(metadata, "namespace"), stringMember(metadata, "name")};
    if (auto spec = api::parseIpuQuotaSpec(member(object, "spec"))) {
      row.maxIpus = spec->maxIpus;
      row.maxJobs = spec->maxJobs;
    }
    const api::IpuQuotaStatus counts = api::parseIpuQuotaStatus(member(object, "status"));
    row.usedIpus = counts.usedIpus;
    row.reservedIpus = counts.reservedIpus;
    row.admittedJobs = counts.admittedJobs;
    row.waitingJobs = counts.waitingJobs;
    report.quotas.push_back(std::move(row));
  }
  std::sort(report.quotas.begin(), report.quotas.end(), [](const QuotaRow& a, const QuotaRow& b) {
    return std::tie(a.ns, a.quota) < std::tie(b.ns, b.quota);
  });
  for (const Json& job : jobs) {
    if (!api::waitsForAdmission(job)) continue;
    const api::IpuJobStatus status = api::parseIpuJobStatus(member(job, "status"));
    const api::Condition* admitted = status.condition("Admitted");
    const Json& metadata = member(job, "metadata");
    report.waiting.push_back({stringMember(metadata, "namespace"), stringMember(metadata, "name"),
                              requestedIpus(job), status.queuePosition, admitted ? admitted->reason : "",
                              status.lastMessage});
  }
  std::sort(report.waiting.begin(), report.waiting.end(), [](const WaitingJob& a, const WaitingJob& b) {
    return std::tuple(a.ns, a.position.value_or(1 << 30), a.job) <
           std::tuple(b.ns, b.position.value_or(1 << 30), b.job);
  });
  return report;
}

std::string renderQuotaReport(const QuotaReport& report, int width) {
  std::string text;
  if (report.quotas.empty()) {
    text += "No IPUQuotas.\n";
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const QuotaRow& row : report.quotas) {
      rows.push_back(
          {row.ns, row.quota,
           std::to_string(row.usedIpus + row.reservedIpus) + "/" + std::to_string(row.maxIpus),
           std::to_string(row.reservedIpus),
           std::to_string(row.admittedJobs) + "/" + (row.maxJobs ? std::to_string(*row.maxJobs) : "-"),
           std::to_string(row.waitingJobs)});
    }
    text += renderTable({"NAMESPACE", "QUOTA", "IPUS", "STARTING", "JOBS", "WAITING"}, rows, width);
  }
  if (report.waiting.empty()) return text + "No jobs waiting.\n";
  std::vector<std::vector<std::string>> rows;
  for (const WaitingJob& job : report.waiting) {
    rows.push_back({job.ns, job.job, std::to_string(job.ipus),
                    job.position ? std::to_string(*job.position) : "", job.reason, job.message});
  }
  return text + "\nWaiting:\n" +
         renderTable({"NAMESPACE", "JOB", "IPUS", "POSITION", "REASON", "MESSAGE"}, rows, width);
}

Json toJson(const QuotaReport& report) {
  Json json{{"quotas", Json::array()}, {"waiting", Json::array()}};
  for (const QuotaRow& row : report.quotas) {
    Json quota{{"namespace", row.ns},           {"name", row.quota},
               {"usedIPUs", row.usedIpus},      {"reservedIPUs", row.reservedIpus},
               {"maxIPUs", row.maxIpus},        {"admittedJobs", row.admittedJobs},
               {"waitingJobs", row.waitingJobs}};
    if (row.maxJobs) quota["maxJobs"] = *row.maxJobs;
    json["quotas"].push_back(quota);
  }
  for (const WaitingJob& job : report.waiting) {
    Json waiting{{"namespace", job.ns},
                 {"name", job.job},
                 {"ipus", job.ipus},
                 {"reason", job.reason},
                 {"message", job.message}};
    if (job.position) waiting["position"] = *job.position;
    json["waiting"].push_back(waiting);
  }
  return json;
}

}  // namespace ipu::kubectl_ipu
