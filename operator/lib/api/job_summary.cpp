#include "api/job_summary.h"

#include "api/job_lifecycle.h"
#include "common/json_access.h"
#include "kube/informer.h"

namespace ipu::api {

JobAsk askOf(const IpuJob& job, std::string creationTimestamp) {
  return {job.spec.priority,
          std::move(creationTimestamp),
          static_cast<std::uint32_t>(job.spec.jobInstances),
          static_cast<std::uint32_t>(job.spec.ipusPerJobInstance),
          pinnedVipuController(job.spec),
          job.spec.activeDeadlineSeconds};
}

JobSummary summarizeJob(const nlohmann::json& job) {
  const nlohmann::json& metadata = member(job, "metadata");
  JobSummary summary;
  summary.key = kube::objectKey(job);
  summary.identity = identityOf(job);
  summary.generation = member(metadata, "generation").dump();
  summary.phase = phaseOf(job);
  summary.alive = isAlive(job);
  summary.suspended = member(member(job, "spec"), "suspend") == nlohmann::json(true);
  summary.waitsForAdmission = waitsForAdmission(job);
  summary.queuedByKueue = queuedByKueue(job);
  summary.manager = managerOf(job);
  summary.held = heldPartitionsOf(job);
  summary.latestEnd = latestEndOf(job);
  summary.activeDeadlineSeconds = activeDeadlineOf(job);
  summary.admittedAt = parseIpuJobStatus(member(job, "status")).admittedAt();
  if (summary.waitsForAdmission) {
    if (auto parsed = parseIpuJob(job))
      summary.ask = askOf(*parsed, stringMember(metadata, "creationTimestamp"));
  }
  return summary;
}

void keepJobsPackedAndSummarized(kube::Informer& jobs) {
  jobs.setStoreLayout(kube::StoreLayout::kPacked);
  jobs.setSummary<JobSummary>(summarizeJob);
}

void keepJobsPackedAndSummarized(kube::Store& jobs) {
  jobs.setLayout(kube::StoreLayout::kPacked);
  jobs.setSummary<JobSummary>(summarizeJob);
}

}  // namespace ipu::api
