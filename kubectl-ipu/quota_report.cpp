#include "kubectl-ipu/quota_report.h"

#include "kubectl-ipu/text_table.h"

namespace ipu::kubectl_ipu {

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
