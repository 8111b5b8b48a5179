#pragma once

#include <set>
#include <string>
#include <vector>

#include "api/ipupod.h"
#include "common/clock.h"
#include "pod_map/pod_map_view.h"
#include "pod_map/quota_view.h"

namespace ipu::controllers {

// The POD map page (docs/pod-map-page.md): every V-IPU controller's IPU-POD drawn as an SVG, IPUs coloured
// by the job holding them, the admission queue with its reasons, and the IPUQuotas, in one self-refreshing
// HTML document with no script and no external asset (clusters may have no internet).

// What the operator knows, read once for every viewer (page_snapshot.h).
struct PageSnapshot {
  Clock::WallTime at;
  std::vector<api::IpuPodStatus> pods;  // one per V-IPU controller, as the IPUPods publish them
  VisibleJobs jobs;                     // every IPUJob, by uid: what a holder is named as, where allowed
  QuotaReport quotas;                   // every namespace's IPUQuotas and waiting jobs
};

// Who looks, and which namespaces' job names, waiting jobs' messages and quotas they may see: the plugin's
// rule (docs/kubectl-ipu.md, "Who sees what"), where a namespace is visible when its IPUJobs may be listed.
struct PageViewer {
  std::string name;            // the user TokenReview named; "" on a loopback-bound page
  bool allNamespaces = false;  // may list IPUJobs cluster-wide (or the page is bound to loopback)
  std::set<std::string> namespaces;
  bool sees(const std::string& ns) const { return allNamespaces || namespaces.contains(ns); }
};

// The snapshot as `viewer` may see it: the jobs of other namespaces unnamed, their waiting jobs' messages
// dropped (a message may name a quota), their quotas counted, not shown.
struct PageModel {
  Clock::WallTime at;
  std::vector<PodMapView> pods;
  std::vector<WaitingJob> waiting;  // queue order; ns and job "" where hidden
  std::vector<QuotaRow> quotas;
  int hiddenQuotas = 0;
  std::string viewer;
};
PageModel pageModelOf(const PageSnapshot& snapshot, const PageViewer& viewer);

// A holder's colour: jobs by their place on the map (so neighbours differ), spread around the hue circle by
// the golden angle; the operator's partitions no job holds and partitions made outside it in greys.
std::string holderColour(const MapHolder& holder, int jobIndex);
inline constexpr const char* kFreeColour = "#e9ecef";

// The whole page. `refreshSeconds` > 0 makes the browser reload it that often. Pure.
std::string renderPodMapPage(const PageModel& model, int refreshSeconds);

}  // namespace ipu::controllers
