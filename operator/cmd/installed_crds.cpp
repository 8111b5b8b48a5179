#include "cmd/installed_crds.h"

#include <string>
#include <utility>

#include "api/resources.h"
#include "kube/rest_client.h"
#include "kueue/workload.h"

namespace ipu::cmd {

Status requireInstalledCrds(kube::RestClient& client) {
  for (const auto& [resource, kind] :
       {std::pair{api::ipuJobResource(), "IPUJob"}, std::pair{api::ipuQuotaResource(), "IPUQuota"}}) {
    kube::ListOptions one;
    one.limit = 1;
    auto listed = client.list(resource, "", one);
    if (!listed && listed.error().code == ErrorCode::kNotFound) {
      return makeError(ErrorCode::kFailedPrecondition,
                       std::string("the ") + kind + " CRD is not installed (the API server does not serve " +
                           resource.resource + "." + resource.group + "/" + resource.version +
                           "): install the CRDs with `kubectl apply -f crds/` (or the Helm chart) first");
    }
  }
  return {};
}

Result<bool> kueueInstalled(kube::RestClient& client) {
  kube::ListOptions one;
  one.limit = 1;
  auto listed = client.list(controllers::workloadResource(), "", one);
  if (listed) return true;
  if (listed.error().code == ErrorCode::kNotFound) return false;
  return listed.error();
}

}  // namespace ipu::cmd
