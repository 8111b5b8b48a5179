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

#include "kube/rest_client.h"

// When each pod of a namespace first existed and first ran, from a watch of the bench's own (the list and
// watch are not counted against any contender): the clock a user watching `kubectl get pods -w` would read.
namespace ipu::bench {

using Clock = std::chrono::steady_clock;

enum class PodRole { kWorker, kLauncher, kOther };

struct PodTimes {
  PodRole role = PodRole::kOther;
  Clock::time_point seen;
  std::optional<Clock::time_point> running;
};

struct RoleProgress {
  int exist = 0;
  int running = 0;
  Clock::time_point lastSeen{}, lastRunning{};
};

class PodTimeline {
 public:
  using RoleOf = std::function<PodRole(const nlohmann::json& pod)>;
  // Starts watching pods in `ns` at once (list, then watch from the list's version).
  PodTimeline(kube::RestClient& client, std::string ns, RoleOf roleOf);
  ~PodTimeline();
  PodTimeline(const PodTimeline&) = delete;
  PodTimeline& operator=(const PodTimeline&) = delete;

  RoleProgress progress(PodRole role) const;
  // The watch's last error ("" while it works): a bench that waits forever on a dead watch would lie.
  std::string error() const;

 private:
  void observe(const nlohmann::json& pod);
  void run(std::stop_token stop);

  kube::RestClient& client_;
  std::string ns_;
  RoleOf roleOf_;
  mutable std::mutex mutex_;
  std::map<std::string, PodTimes> pods_;
  std::string error_;
  std::jthread thread_;
};

}  // namespace ipu::bench
