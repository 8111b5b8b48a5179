#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include <sys/types.h>

// Idle reclaim of an interactive worker (docs/user-guide.md, "Idle reclaim"): every `period` the runtime
// looks at its container (observe.h) and compares with the last look (activity.h); when nothing counted as
// activity for `idleFor`, it ends the command (SIGTERM to its process group, SIGKILL after `stopGrace`), and
// the runtime then reports the worker reclaimed (contract::kIdleReclaimedMessage) instead of the command's
// exit status.
namespace ipu::runtime::idle {

struct IdleOptions {
  std::chrono::seconds idleFor{0};
  std::chrono::seconds period{5};
  std::chrono::seconds stopGrace{10};
  // The container's processes may use this share of one CPU between looks and still be idle.
  double idleCpuShare = 0.02;
};

class IdleWatch {
 public:
  // Starts watching the command `commandPid` (the leader of its process group). Start it from a thread that
  // blocks the signals the supervisor reads, so that the watch's thread blocks them too.
  IdleWatch(IdleOptions options, pid_t commandPid);
  ~IdleWatch();
  IdleWatch(const IdleWatch&) = delete;
  IdleWatch& operator=(const IdleWatch&) = delete;

  // Whether the watch ended the command; then what the job's status says why.
  bool reclaimed() const { return reclaimed_.load(); }
  std::string reason() const;

 private:
  void run();
  // Waits up to `wait` unless the watch is stopped; true when stopped.
  bool stopWithin(std::chrono::steady_clock::duration wait);

  const IdleOptions options_;
  const pid_t commandPid_;
  std::atomic<bool> reclaimed_{false};
  mutable std::mutex mutex_;
  std::condition_variable stopped_;
  bool stopping_ = false;
  std::string reason_;
  std::thread thread_;
};

}  // namespace ipu::runtime::idle
