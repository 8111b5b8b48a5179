#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "contender.h"

namespace ipu::bench {

struct Scenario {
  std::string name;  // e.g. "500 jobs × 1 worker"
  int jobs = 0;
  int workersPerJob = 1;
  // Once every job runs: a minute with nothing to do (the contender's CPU seconds in it, its RSS after), two
  // more (its RSS once its runtime gave memory back), then a restart of the contender (seconds until its
  // caches have synced again, less any wait for its predecessor's Lease; its RSS 10 s later).
  bool steadyState = false;
  // The client limits every contender of the scenario runs at (0: they differ): the lower bounds of "all
  // worker pods exist" are worked out from them, with the writes per job that must precede its pods
  // (ipu-operator's cleanup finalizer and admission record).
  double boundQps = 0;
  int boundBurst = 0;
  int writesBeforePods = 2;
};

// One measurement on a fresh cluster: the contender started and ready, the scenario's jobs created at once
// by the bench's own client, until every job's status says it runs (every worker pod, and launcher pod if
// the contender makes them, Running by then); its requests are counted up to that moment. Returns the
// figures
// ("complete": false with "error" when the pods did not all run within `timeout`; nothing is thrown for
// that, so the other measurements still run).
nlohmann::json measure(Contender& contender, const Scenario& scenario, const std::string& clusterDir,
                       std::chrono::seconds timeout);

}  // namespace ipu::bench
