#pragma once

#include "kube/store.h"
#include "metrics/scrape_gauges.h"

// The IPUJob figures /metrics serves, counted from the controllers' caches when it is scraped
// (metrics::ScrapeGauges). Pure functions of a cache: the binary decides where they are served.
namespace ipu::controllers {

// ipu_operator_ipujobs{phase}: every phase, zero included (a job without a phase yet is Pending).
metrics::GaugeSamples jobsByPhase(const kube::Store& jobs);
// ipu_operator_ipus_held{controller}: IPUs in the partitions jobs hold, by V-IPU controller.
metrics::GaugeSamples ipusHeldByController(const kube::Store& jobs);
// ipu_operator_waiting_jobs: jobs waiting for admission.
metrics::GaugeSamples waitingJobs(const kube::Store& jobs);

}  // namespace ipu::controllers
