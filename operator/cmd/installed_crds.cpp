#include "cmd/installed_crds.h"

#include <string>
#include <utility>

#include "ipujob/ipujob_reconciler.h"
#include "quota/quota_ledger.h"

namespace ipu::cmd {

Status requireInstalledCrds(kube::RestClient& client) {
  for (const auto& [resource, kind] : {std::pair{controllers::ipuJobResource(), "IPUJob"},
                                       std::pair{controllers::ipuQuotaResource(), "IPUQuota"}}) {
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

}  // namespace ipu::cmd
