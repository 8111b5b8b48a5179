#include "idle/idle_watch.h"

#include <csignal>
#include <cstdio>
#include <exception>

#include <unistd.h>

#include "idle/observe.h"

namespace ipu::runtime::idle {
namespace {

std::uint64_t ticksOf(std::chrono::seconds period, double share) {
  return static_cast<std::uint64_t>(static_cast<double>(period.count()) *
                                    static_cast<double>(::sysconf(_SC_CLK_TCK)) * share);
}

}  // namespace

IdleWatch::IdleWatch(IdleOptions options, pid_t commandPid)
    : options_(options), commandPid_(commandPid), thread_([this] { run(); }) {}

IdleWatch::~IdleWatch() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stopped_.notify_all();
  thread_.join();
}

std::string IdleWatch::reason() const {
  std::lock_guard lock(mutex_);
  return reason_;
}

bool IdleWatch::stopWithin(std::chrono::steady_clock::duration wait) {
  std::unique_lock lock(mutex_);
  return stopped_.wait_for(lock, wait, [this] { return stopping_; });
}

void IdleWatch::run() {
  const ActivityRules rules{static_cast<int>(::getpid()), static_cast<int>(commandPid_),
                            ticksOf(options_.period, options_.idleCpuShare)};
  std::fprintf(stderr,
               "ipu-runtime: idle reclaim on: the command ends after %lld s without a kubectl exec process, "
               "port-forward traffic or CPU use above %.0f%% of a core\n",
               static_cast<long long>(options_.idleFor.count()), options_.idleCpuShare * 100);
  Look before;
  try {
    before = lookAtContainer();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ipu-runtime: idle reclaim off: %s\n", error.what());
    return;
  }
  auto lastActive = std::chrono::steady_clock::now();
  std::string lastSaid;
  while (!stopWithin(options_.period)) {
    Look now;
    try {
      now = lookAtContainer();
    } catch (const std::exception& error) {
      std::fprintf(stderr,
                   "ipu-runtime: idle reclaim: cannot look at the container (%s); counted as active\n",
                   error.what());
      lastActive = std::chrono::steady_clock::now();
      continue;
    }
    if (const Activity activity = activityBetween(before, now, rules); activity.any()) {
      // Said when its kinds differ from the last said, or after a quiet spell: the log shows what keeps the
      // worker without a line every few seconds.
      const std::string kinds = std::string(activity.exec ? "exec " : "") + (activity.cpu ? "cpu " : "") +
                                (activity.portForward ? "port-forward" : "");
      if (kinds != lastSaid || std::chrono::steady_clock::now() - lastActive >= 2 * options_.period) {
        std::fprintf(stderr, "ipu-runtime: activity: %s\n", activity.what.c_str());
        lastSaid = kinds;
      }
      lastActive = std::chrono::steady_clock::now();
    }
    before = std::move(now);
    if (std::chrono::steady_clock::now() - lastActive < options_.idleFor) continue;
    {
      std::lock_guard lock(mutex_);
      reason_ = "no kubectl exec process, no port-forward traffic and no CPU use above " +
                std::to_string(static_cast<int>(options_.idleCpuShare * 100)) + "% of a core for " +
                std::to_string(options_.idleFor.count()) + " s";
    }
    reclaimed_ = true;
    std::fprintf(stderr, "ipu-runtime: idle: ending the command\n");
    ::kill(-commandPid_, SIGTERM);
    if (!stopWithin(options_.stopGrace)) ::kill(-commandPid_, SIGKILL);
    return;
  }
}

}  // namespace ipu::runtime::idle
