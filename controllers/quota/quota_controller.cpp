#include "quota/quota_controller.h"

#include <tuple>
#include <utility>

#include "api/ipujob.h"
#include "api/job_lifecycle.h"
#include "api/job_summary.h"
#include "api/resources.h"
#include "common/json_access.h"
#include "common/log.h"
#include "quota/quota_ledger.h"
#include "quota/quota_usage.h"

namespace ipu::controllers {
namespace {

// A resync now and then catches what no watch event announces (a job's entry whose removal failed).
constexpr auto kResync = std::chrono::minutes(1);

}  // namespace

IpuQuotaReconciler::IpuQuotaReconciler(kube::RestClient& client, const kube::Store& jobs,
                                       kube::EventRecorder& events)
    : client_(client), jobs_(jobs), events_(events) {}

Result<ctrl::Action> IpuQuotaReconciler::reconcile(const kube::ObjectPtr& object) {
  auto quota = api::parseIpuQuota(*object);
  if (!quota) {
    events_.record(kube::referenceTo(*object), kube::EventType::kWarning, "InvalidQuota",
                   "No job of the namespace is admitted until this is fixed: " + quota.error().message);
    return ctrl::Action::awaitChange();
  }
  const auto jobs = quotaJobsOf(jobs_.summariesInNamespace<api::JobSummary>(quota->identity.ns));
  const LedgerGaps gaps = ledgerGaps(jobs, quota->admissions);
  if (!gaps.missing.empty()) {
    auto adopted = adoptMissing(*object, gaps.missing);
    if (!adopted) return adopted.error();
    if (!*adopted) return ctrl::Action::requeueNow();  // the quota changed meanwhile: look again
    return ctrl::Action::awaitChange();                // the write's own watch event brings the next pass
  }
  auto removed = removeGone(*object, gaps.unknown, quota->admissions);
  if (!removed) return removed.error();
  if (!*removed) return ctrl::Action::requeueNow();  // the quota changed meanwhile: look again

  api::IpuQuotaStatus status = observeQuota(jobs, quota->admissions);
  status.observedGeneration = quota->generation;
  const Json counts = api::toJson(status);
  const Json& current = member(*object, "status");
  bool same = current.is_object();
  for (const auto& [field, value] : counts.items()) same = same && member(current, field) == value;
  if (!same) {
    auto written = client_.patch(ipuQuotaResource(), quota->identity.ns, quota->identity.name,
                                 kube::PatchType::kMerge, {{"status", counts}}, "status");
    if (!written && written.error().code != ErrorCode::kNotFound) return written.error();
  }
  return ctrl::Action::requeue(kResync);
}

Result<bool> IpuQuotaReconciler::adoptMissing(const Json& quota,
                                              const std::map<std::string, api::LedgerEntry>& missing) {
  const Json& metadata = member(quota, "metadata");
  Json entries = Json::object();
  for (const auto& [name, entry] : missing) entries[name] = ledgerEntryJson(entry);
  auto written =
      client_.patch(ipuQuotaResource(), stringMember(metadata, "namespace"), stringMember(metadata, "name"),
                    kube::PatchType::kMerge,
                    ledgerPatch(stringMember(metadata, "resourceVersion"), std::move(entries)), "status");
  if (written) {
    log::info("IPUQuota ledger: counted jobs that hold IPUs without an entry",
              {{"quota", kube::objectKey(quota)}, {"jobs", std::to_string(missing.size())}});
    return true;
  }
  if (written.error().code == ErrorCode::kConflict || written.error().code == ErrorCode::kNotFound)
    return false;
  return written.error();
}

Result<bool> IpuQuotaReconciler::removeGone(const Json& quota, const std::vector<std::string>& unknown,
                                            std::map<std::string, api::LedgerEntry>& ledger) {
  const Json& metadata = member(quota, "metadata");
  const std::string ns = stringMember(metadata, "namespace");
  // The jobs are read after the quota was: an entry written since the quota's version makes the removal
  // below conflict, so a claim made while this runs is never removed unseen.
  Json removals = Json::object();
  for (const std::string& name : unknown) {
    auto job = client_.get(api::ipuJobResource(), ns, name);
    if (!job && job.error().code != ErrorCode::kNotFound) return job.error();
    const bool gone =
        !job || api::identityOf(*job).uid != ledger.at(name).uid || !quotaJobOf(api::summarizeJob(*job));
    if (gone) removals[name] = nullptr;  // else the cache is behind: the job holds or asks for IPUs
  }
  if (removals.empty()) return true;
  auto removed =
      client_.patch(ipuQuotaResource(), ns, stringMember(metadata, "name"), kube::PatchType::kMerge,
                    ledgerPatch(stringMember(metadata, "resourceVersion"), removals), "status");
  if (!removed) {
    if (removed.error().code == ErrorCode::kConflict || removed.error().code == ErrorCode::kNotFound)
      return false;
    return removed.error();
  }
  for (const auto& [name, nothing] : removals.items()) ledger.erase(name);
  return true;
}

IpuQuotaController::IpuQuotaController(ctrl::Manager& manager, kube::EventRecorder& events)
    : quotas_(manager.informer(ipuQuotaResource())),
      jobs_(manager.informer(api::ipuJobResource())),
      reconciler_(manager.client(), jobs_.store(), events) {
  api::keepJobsPackedAndSummarized(jobs_);
  const kube::Store& quotas = quotas_.store();
  manager.controller("ipuquota")
      .forResource(ipuQuotaResource(), {api::kGroup, api::kQuotaKind})
      .watches(api::ipuJobResource(),
               [&quotas](const kube::ObjectPtr& old, const kube::ObjectPtr& current) {
                 std::vector<std::string> keys;
                 // Only what the counts read (without parsing specs on every event): a running job's pod
                 // counts or messages change nothing here.
                 const auto view = [](const kube::ObjectPtr& job) {
                   return std::tuple(api::heldPartitionsOf(*job), api::queuedByKueue(*job),
                                     api::waitsForAdmission(*job),
                                     member(member(*job, "metadata"), "generation"));
                 };
                 if (old && current && view(old) == view(current)) return keys;
                 const kube::ObjectPtr& job = current ? current : old;
                 for (const auto& quota : quotas.listNamespace(api::identityOf(*job).ns))
                   keys.push_back(kube::objectKey(*quota));
                 return keys;
               })
      .complete(reconciler_);
}

}  // namespace ipu::controllers
