#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "kube/resource.h"
#include "kube/rest_client.h"

// When each object of a kind in a namespace first existed and first said it runs, from a watch of the bench's
// own (the list and watch are not counted against any contender): the clock a user watching `kubectl get
// pods -w` (or the jobs) would read.
namespace ipu::bench {

using Clock = std::chrono::steady_clock;

enum class PodRole { kWorker, kLauncher, kOther };

struct ObjectTimes {
  PodRole role = PodRole::kOther;
  Clock::time_point seen;
  std::optional<Clock::time_point> running;
};

struct RoleProgress {
  int exist = 0;
  int running = 0;
  Clock::time_point lastSeen{}, lastRunning{};
};

class ObjectTimeline {
 public:
  using RoleOf = std::function<PodRole(const nlohmann::json& object)>;
  using IsRunning = std::function<bool(const nlohmann::json& object)>;
  // Starts watching `resource` in `ns` at once (list, then watch from the list's version).
  ObjectTimeline(kube::RestClient& client, kube::ResourceRef resource, std::string ns, RoleOf roleOf,
                 IsRunning isRunning);
  // Pods: running in phase Running.
  static std::unique_ptr<ObjectTimeline> pods(kube::RestClient& client, std::string ns, RoleOf roleOf);
  ~ObjectTimeline();
  ObjectTimeline(const ObjectTimeline&) = delete;
  ObjectTimeline& operator=(const ObjectTimeline&) = delete;

  RoleProgress progress(PodRole role) const;
  // The watch's last error ("" while it works): a bench that waits forever on a dead watch would lie.
  std::string error() const;

 private:
  void observe(const nlohmann::json& object);
  void run(std::stop_token stop);

  kube::RestClient& client_;
  kube::ResourceRef resource_;
  std::string ns_;
  RoleOf roleOf_;
  IsRunning isRunning_;
  mutable std::mutex mutex_;
  std::map<std::string, ObjectTimes> objects_;
  std::string error_;
  std::jthread thread_;
};

}  // namespace ipu::bench
