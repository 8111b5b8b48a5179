#include "pod_map/page_snapshot.h"

#include <set>

#include "api/job_lifecycle.h"
#include "api/resources.h"
#include "common/json_access.h"
#include "pod_map/pod_map_publisher.h"

namespace ipu::controllers {

PageSnapshot pageSnapshotOf(const VipuInventory& inventory, const kube::Store& jobs,
                            const kube::Store& quotas, const std::vector<std::string>& controllers,
                            const OwnPrefixes& prefixes, Clock::WallTime now) {
  PageSnapshot snapshot{.at = now};
  const std::vector<kube::ObjectPtr> allJobs = jobs.list();
  std::set<std::string> names;
  for (const std::string& controller : controllers) {
    if (!names.insert(ipuPodNameFor(controller)).second) continue;  // as the publisher: one map per name
    const auto view = inventory.view(controller);
    snapshot.pods.push_back(ipuPodStatusOf(controller, view.get(), allJobs, prefixes));
  }
  std::vector<api::Json> waiting;
  for (const kube::ObjectPtr& job : allJobs) {
    const api::Json& metadata = member(*job, "metadata");
    snapshot.jobs[stringMember(metadata, "uid")] = {stringMember(metadata, "namespace"),
                                                    stringMember(metadata, "name")};
    if (api::waitsForAdmission(*job)) waiting.push_back(*job);
  }
  std::vector<api::Json> quotaObjects;
  for (const kube::ObjectPtr& quota : quotas.list()) quotaObjects.push_back(*quota);
  snapshot.quotas = quotaReportOf(quotaObjects, waiting);
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
  std::vector<api::Json> waiting;
  for (const api::Json& job : arrayMember(*jobs, "items")) {
    const api::Json& metadata = member(job, "metadata");
    snapshot.jobs[stringMember(metadata, "uid")] = {stringMember(metadata, "namespace"),
                                                    stringMember(metadata, "name")};
    if (api::waitsForAdmission(job)) waiting.push_back(job);
  }
  auto quotas =
      client.listAll(api::ipuQuotaResource(), "", {.skipItemFields = {"metadata.managedFields"}}, stop);
  if (!quotas) return quotas.error();
  std::vector<api::Json> quotaObjects;
  for (const api::Json& quota : arrayMember(*quotas, "items")) quotaObjects.push_back(quota);
  snapshot.quotas = quotaReportOf(quotaObjects, waiting);
  return snapshot;
}

}  // namespace ipu::controllers
