#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pod_map/quota_view.h"

namespace ipu::kubectl_ipu {

using Json = nlohmann::json;

// `kubectl ipu quota`: each IPUQuota's use against its limits, and the jobs waiting for admission
// (controllers/pod_map/quota_view.h, which the POD map page shows too).
using controllers::QuotaReport;
using controllers::quotaReportOf;
using controllers::QuotaRow;
using controllers::WaitingJob;

std::string renderQuotaReport(const QuotaReport& report, int width);
Json toJson(const QuotaReport& report);

}  // namespace ipu::kubectl_ipu
