#pragma once

#include <stop_token>
#include <string>
#include <vector>

#include "admission/vipu_inventory.h"
#include "common/clock.h"
#include "common/result.h"
#include "kube/rest_client.h"
#include "kube/store.h"
#include "pod_map/pod_map_page.h"
#include "pod_map/pod_map_status.h"

namespace ipu::controllers {

// What the POD map page shows, read from a leader's caches: each configured controller's IPUPod status
// (the publisher's own function, so the page and `kubectl ipu status` agree), every job's name by uid, and
// the quota report of every namespace. Costs a pass over the caches and no request.
PageSnapshot pageSnapshotOf(const VipuInventory& inventory, const kube::Store& jobs,
                            const kube::Store& quotas, const std::vector<std::string>& controllers,
                            const OwnPrefixes& prefixes, Clock::WallTime now);

// The same from the API server, for a standby replica, which has no caches: the IPUPods as the leader
// published them, every IPUJob and every IPUQuota (three lists; their managed fields are left out as they are
// read).
Result<PageSnapshot> pageSnapshotFromApi(kube::RestClient& client, Clock::WallTime now,
                                         std::stop_token stop = {});

}  // namespace ipu::controllers
