#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "vipu/partition_planner.h"
#include "vipu/vipu_api.h"

namespace ipu::controllers {

// A V-IPU controller jobs get partitions from, and how pods reach it.
struct VipuTarget {
  std::string name;  // status.partitions[].controller; nodes of its IPU-POD carry it in a label
  std::string host;
  int port = 8090;
  vipu::VipuApi* api = nullptr;
};

// The configured V-IPU controllers, with each one's topology discovered once (ListIPUAttributes reads every
// agent, which is slow on a big POD) and read again after `topologyTtl` or when a caller finds it stale.
// Thread-safe.
class VipuControllers {
 public:
  explicit VipuControllers(std::vector<VipuTarget> targets, Clock& clock = Clock::real(),
                           Clock::Duration topologyTtl = std::chrono::minutes(5));

  const std::vector<VipuTarget>& targets() const { return targets_; }
  // nullptr when no controller has that name (e.g. one removed from the flags while jobs still use it).
  const VipuTarget* find(const std::string& name) const;
  // The controller's planner (and topology: planner->topology()). NotFound for an unknown name.
  Result<std::shared_ptr<const vipu::PartitionPlanner>> planner(const std::string& name);
  // Forget the cached topology: the next planner() call asks V-IPU again.
  void invalidate(const std::string& name);

 private:
  struct CachedPlanner {
    std::shared_ptr<const vipu::PartitionPlanner> planner;
    Clock::TimePoint fetched;
  };

  std::vector<VipuTarget> targets_;
  Clock& clock_;
  Clock::Duration topologyTtl_;
  std::mutex mutex_;
  std::map<std::string, CachedPlanner> planners_;
};

// "there is no V-IPU controller named 'x' (configured: a, b)"
std::string unknownControllerMessage(const std::string& name, const std::vector<VipuTarget>& targets);

}  // namespace ipu::controllers
