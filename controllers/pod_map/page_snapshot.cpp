#include "pod_map/page_snapshot.h"

#include <set>

#include "api/job_lifecycle.h"
#include "api/resources.h"
#include "common/json_access.h"
#include "pod_map/pod_map_publisher.h"

namespace ipu::controllers {
namespace {

const api::Json& objectOf(const api::Json& object) {
  return object;
}
const api::Json& objectOf(const kube::ObjectPtr& object) {
  return *object;
}

// Every job named by uid, and the quota report of the quotas and the jobs waiting for admission: the same
// from the leader's caches (ObjectPtr) and from a standby's lists (Json).
template <typename Jobs, typename Quotas>
void addJobsAndQuotas(PageSnapshot& snapshot, const Jobs& jobs, const Quotas& quotas) {
  std::vector<api::Json> waiting;
  for (const auto& item : jobs) {
    const api::Json& job = objectOf(item);
    const api::Json& metadata = member(job, "metadata");
    snapshot.jobs[stringMember(metadata, "uid")] = {stringMember(metadata, "namespace"),
                                                    stringMember(metadata, "name")};
    if (api::waitsForAdmission(job)) waiting.push_back(job);
  }
  std::vector<api::Json> quotaObjects;
  for (const auto& quota : quotas) quotaObjects.push_back(objectOf(quota));
  snapshot.quotas = quotaReportOf(quotaObjects, waiting);
}

}  // namespace

PageSnapshot pageSnapshotOf(const VipuInventory& inventory, const kube::Store& jobs,
                            const kube::Store& quotas, const std::vector<std::string>& controllers,
                            const OwnPrefixes& prefixes, Clock::WallTime now) {
  PageSnapshot snapshot{.at = now};
  const auto summaries = jobs.summaries<api::JobSummary>();
  std::set<std::string> names;
  for (const std::string& controller : controllers) {
    if (!names.insert(ipuPodNameFor(controller)).second) continue;  // as the publisher: one map per name
    const auto view = inventory.view(controller);
    snapshot.pods.push_back(ipuPodStatusOf(controller, view.get(), summaries, prefixes));
  }
  addJobsAndQuotas(snapshot, jobs.list(), quotas.list());
  return snapshot;
}

Result<PageSnapshot> pageSnapshotFromApi(kube::RestClient& client, Clock::WallTime now,
                                         std::stop_token stop) {
  PageSnapshot snapshot{.at = now};
  auto pods = client.listAll(api::ipuPodResource(), "", {.skipItemFields = {"metadata.managedFields"}}, stop);
  if (!pods) return pods.error();
  for (const api::Json& pod : arrayMember(*pods, "items"))
    snapshot.pods.push_back(api::parseIpuPodStatus(member(pod, "status")));
  auto jobs = client.listAll(api::ipuJobResource(), "", {.skipItemFields = {"metadata.managedFields"}}, stop);
  if (!jobs) return jobs.error();
  auto quotas =
      client.listAll(api::ipuQuotaResource(), "", {.skipItemFields = {"metadata.managedFields"}}, stop);
  if (!quotas) return quotas.error();
  addJobsAndQuotas(snapshot, arrayMember(*jobs, "items"), arrayMember(*quotas, "items"));
  return snapshot;
}

}  // namespace ipu::controllers
