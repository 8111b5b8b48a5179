#pragma once

#include "kube/store.h"
#include "metrics/scrape_gauges.h"

namespace ipu::controllers {

// ipu_operator_quota_*{namespace, quota}: one number of each IPUQuota, from its spec or its status (the
// status the quota controller keeps), counted from the cache when /metrics is scraped: what an admin alerts
// on.
metrics::GaugeSamples perQuota(const kube::Store& quotas, const char* field, bool fromSpec);

}  // namespace ipu::controllers
