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

// When planner() may ask V-IPU for a topology it already holds.
enum class TopologyRead {
  kIfUnknown,  // only when none is held (never read, or invalidated): what a job's pass asks for
  kIfDue,      // also when the held one is older than the TTL: what the inventory's poll asks for
};

// The configured V-IPU controllers, with each one's topology discovered once (ListIPUAttributes reads every
// agent, which is slow on a big POD: hundreds of milliseconds of parsing for 16,384 IPUs) and read again
// only when it can have changed: a caller found it stale (a partition on an IPU outside it, a create V-IPU
// refused), or the inventory's poll finds it older than `topologyTtl` (V-IPU announces no change;
// IPU-Machines added to a POD are seen no later than that). One read of a controller at a time: callers that
// find it being read wait for that read instead of starting their own. Thread-safe.
class VipuControllers {
 public:
  explicit VipuControllers(std::vector<VipuTarget> targets, Clock& clock = Clock::real(),
                           Clock::Duration topologyTtl = std::chrono::minutes(30));

  const std::vector<VipuTarget>& targets() const { return targets_; }
  // nullptr when no controller has that name (e.g. one removed from the flags while jobs still use it).
  const VipuTarget* find(const std::string& name) const;
  // The controller's planner (and topology: planner->topology()). NotFound for an unknown name. A re-read
  // that finds the same topology returns the planner held before.
  Result<std::shared_ptr<const vipu::PartitionPlanner>> planner(const std::string& name,
                                                                TopologyRead read = TopologyRead::kIfUnknown);
  // Forget the cached topology: the next planner() call asks V-IPU again.
  void invalidate(const std::string& name);

 private:
  struct CachedPlanner {
    std::shared_ptr<const vipu::PartitionPlanner> planner;
    Clock::TimePoint fetched;
  };

  // The held planner if `read` allows it; null otherwise.
  std::shared_ptr<const vipu::PartitionPlanner> held(const std::string& name, TopologyRead read);

  std::vector<VipuTarget> targets_;
  Clock& clock_;
  Clock::Duration topologyTtl_;
  std::mutex mutex_;
  std::map<std::string, CachedPlanner> planners_;
  std::map<std::string, std::unique_ptr<std::mutex>> reading_;  // per controller; fixed after construction
};

// "there is no V-IPU controller named 'x' (configured: a, b)"
std::string unknownControllerMessage(const std::string& name, const std::vector<VipuTarget>& targets);

}  // namespace ipu::controllers
