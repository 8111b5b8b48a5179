#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contender.h"

namespace ipu::bench {

// The steady state at growing numbers of jobs, on one cluster filled point by point (each point's jobs
// added to the last's): how a contender's cost grows with what it manages.
struct CurveScenario {
  std::string name;
  int workersPerJob = 8;
  std::vector<int> points;  // total jobs at each point, ascending
};

// At each point: the new jobs created at once and every job Running (the fill: its seconds, the contender's
// CPU seconds and reconcile passes in it, its requests per new job, its peak RSS), then a minute with
// nothing to do (CPU seconds, RSS after it), then a restart (seconds until ready, CPU seconds until then,
// RSS 10 s later). The cluster and the contender are sized for the last point (`ipus` of the POD, kwok
// nodes for its pods). Returns {"scenario", "contender", "complete", "points": [...], "growth": {...}}; a
// point that does not finish within `timeoutPerPoint` ends the curve ("complete": false, "error").
nlohmann::json measureScaleCurve(Contender& contender, const CurveScenario& scenario,
                                 const std::string& clusterDir, std::chrono::seconds timeoutPerPoint);

}  // namespace ipu::bench
