#include "quota/quota_metrics.h"

#include "common/json_access.h"

namespace ipu::controllers {

metrics::GaugeSamples perQuota(const kube::Store& quotas, const char* field, bool fromSpec) {
  metrics::GaugeSamples samples;
  for (const auto& quota : quotas.list()) {
    const nlohmann::json& value = member(member(*quota, fromSpec ? "spec" : "status"), field);
    if (!value.is_number()) continue;
    const nlohmann::json& metadata = member(*quota, "metadata");
    samples.push_back(
        {{stringMember(metadata, "namespace"), stringMember(metadata, "name")}, value.get<double>()});
  }
  return samples;
}

}  // namespace ipu::controllers
