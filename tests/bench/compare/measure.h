#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "contender.h"

namespace ipu::bench {

struct Scenario {
  std::string name;  // e.g. "500 jobs × 1 worker"
  int jobs = 0;
  int workersPerJob = 1;
  // Once every pod runs: a minute with nothing to do (the contender's CPU seconds in it, its RSS after),
  // then a restart of the contender (seconds until its caches have synced again, its RSS 10 s later).
  bool steadyState = false;
};

// One measurement on a fresh cluster: the contender started and ready, the scenario's jobs created at once
// by the bench's own client, until every worker pod (and launcher pod, if the contender makes them) is
// Running, then until it has sent nothing but Lease renewals for 5 s, so the writes that follow Running
// (status) are counted too. Returns the figures
// ("complete": false with "error" when the pods did not all run within `timeout`; nothing is thrown for
// that, so the other measurements still run).
nlohmann::json measure(Contender& contender, const Scenario& scenario, const std::string& clusterDir,
                       std::chrono::seconds timeout);

}  // namespace ipu::bench
