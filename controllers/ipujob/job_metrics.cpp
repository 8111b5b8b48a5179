#include "ipujob/job_metrics.h"

#include <map>
#include <string>

#include "api/ipujob_status.h"
#include "api/job_lifecycle.h"
#include "api/job_summary.h"

namespace ipu::controllers {

metrics::GaugeSamples jobsByPhase(const kube::Store& jobs) {
  std::map<std::string, double> byPhase;
  for (const char* phase :
       {api::kPhasePending, api::kPhaseQueued, api::kPhaseCreating, api::kPhaseRunning, api::kPhaseRestarting,
        api::kPhaseSucceeded, api::kPhaseFailed, api::kPhaseSuspended}) {
    byPhase[phase] = 0;
  }
  for (const auto& job : jobs.summaries<api::JobSummary>()) {
    ++byPhase[job->phase.empty() ? api::kPhasePending : job->phase];
  }
  metrics::GaugeSamples samples;
  for (const auto& [phase, count] : byPhase) samples.push_back({{phase}, count});
  return samples;
}

metrics::GaugeSamples ipusHeldByController(const kube::Store& jobs) {
  std::map<std::string, double> byController;
  for (const auto& job : jobs.summaries<api::JobSummary>()) {
    for (const auto& partition : job->held) byController[partition.controller] += partition.size;
  }
  metrics::GaugeSamples samples;
  for (const auto& [controller, ipus] : byController) samples.push_back({{controller}, ipus});
  return samples;
}

metrics::GaugeSamples waitingJobs(const kube::Store& jobs) {
  double waiting = 0;
  for (const auto& job : jobs.summaries<api::JobSummary>()) waiting += job->waitsForAdmission ? 1 : 0;
  return {{{}, waiting}};
}

}  // namespace ipu::controllers
