#pragma once

#include <string>
#include <vector>

#include "admission/vipu_inventory.h"
#include "api/ipupod.h"
#include "api/job_summary.h"
#include "kube/store.h"

namespace ipu::controllers {

// The partition id prefixes of this installation (ReconcilerOptions::partitionIdPrefix and the legacy one).
struct OwnPrefixes {
  std::string current;
  std::string legacy;  // may be empty
};

// IPUPod.status of one V-IPU controller, from the inventory's view of it (null: never read) and the IPUJobs'
// summaries.
// A partition is a job's only when the job holds it in its status and the job's identity derives its id (the
// rule every step acts by), so a status edited by hand claims nothing. Holders are ordered by their first IPU
// and hold IPUs merged across their partitions, so equal pictures give equal statuses (the publisher writes
// only on change). Pure.
api::IpuPodStatus ipuPodStatusOf(const std::string& controller, const VipuInventory::View* view,
                                 const std::vector<std::shared_ptr<const api::JobSummary>>& jobs,
                                 const OwnPrefixes& prefixes);

// The IPUPod object (apiVersion, kind, metadata, status) for server-side apply. `name` is the controller's.
api::Json ipuPodObject(const std::string& name, const api::IpuPodStatus& status);

}  // namespace ipu::controllers
