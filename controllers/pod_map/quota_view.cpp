#include "pod_map/quota_view.h"

#include <algorithm>
#include <tuple>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "api/ipuquota.h"
#include "api/job_lifecycle.h"
#include "common/json_access.h"

namespace ipu::controllers {

using Json = nlohmann::json;
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

}  // namespace ipu::controllers
