#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "ctrl/controller.h"
#include "kube/informer.h"
#include "kube/leader_elector.h"
#include "kube/rest_client.h"

namespace ipu::ctrl {

// Work the manager runs until its stop token fires.
using Runnable = std::function<void(std::stop_token stop)>;

// When a runnable runs (controller-runtime's runnable groups).
enum class RunnableGroup {
  kAlways,         // from run() on, on every replica (leading or not)
  kWarmup,         // on the leader, once caches have synced and before any controller starts; runs to its end
  kLeaderElected,  // on the leader, once controllers have started, until leadership ends
};

struct ManagerOptions {
  // nullopt: run without leader election (a single replica).
  std::optional<kube::LeaderElectionConfig> leaderElection;
  std::chrono::milliseconds cacheSyncTimeout{std::chrono::minutes(2)};
  // Leadership lost while running: another replica may lead already and nothing fences this one, so the
  // default exits the process at once (as controller-runtime does); the next process starts clean.
  std::function<void()> onLeadershipLost;
  // Called once the caches have synced (each time they start): the process's own policy at that moment (the
  // operator returns the pages the first lists freed to the system). May be empty.
  std::function<void()> onCachesSynced;
};

class Manager;

// Declares what one controller watches (controller-runtime's builder): For (the primary kind), Owns
// (children, mapped to their controller owner), Watches (any mapping), then complete() with the reconciler.
class ControllerBuilder {
 public:
  ControllerBuilder(Manager& manager, std::string name) : manager_(manager), name_(std::move(name)) {}

  ControllerBuilder& forResource(const kube::ResourceRef& resource, OwnerKind kind,
                                 const kube::WatcherConfig& config = {});
  // Children whose controller ownerReference is an object of the primary kind. `batching.window`: a child's
  // change queues its owner that much later, so that the changes of its children within that time (its pods
  // scheduled, started, one after another) make one reconcile rather than one each, as Kubernetes' Job
  // controller batches its pod events; a change `batching.passesAtOnce` accepts (a child ending) is queued
  // at once. Zero: every change at once. A change of the owner itself is never held.
  ControllerBuilder& owns(const kube::ResourceRef& resource, const kube::WatcherConfig& config = {},
                          Batching batching = {});
  ControllerBuilder& watches(const kube::ResourceRef& resource, KeysFor keysFor,
                             const kube::WatcherConfig& config = {});
  ControllerBuilder& withOptions(ControllerOptions options);
  // Creates the controller, owned by the manager, which starts it when it leads.
  Controller& complete(Reconciler& reconciler);

 private:
  struct Watch {
    kube::Informer* informer;
    KeysFor keysFor;
    Batching batching;
  };
  Manager& manager_;
  std::string name_;
  kube::Informer* primary_ = nullptr;
  OwnerKind kind_;
  std::vector<Watch> watches_;
  ControllerOptions options_;
};

// Runs controllers and the work around them (controller-runtime's Manager): shared informers (one watch per
// resource and selector), leader election, and start and stop in order:
//   run(): always-on runnables; then, once leading: informers -> wait for their sync -> warm-up runnables ->
//   controllers -> leader-elected runnables; when leadership or the process ends, the same in reverse
//   (controllers drain their reconciles first, informers stop last).
class Manager {
 public:
  Manager(kube::RestClient& client, ManagerOptions options = {}, Clock& clock = Clock::real());
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  kube::RestClient& client() { return client_; }
  Clock& clock() { return clock_; }
  // The shared informer of this resource and selector, created on first use; started while leading.
  kube::Informer& informer(const kube::ResourceRef& resource, const kube::WatcherConfig& config = {});
  ControllerBuilder controller(std::string name) { return ControllerBuilder(*this, std::move(name)); }
  void add(std::string name, RunnableGroup group, Runnable runnable);
  // Before run(): `observer` is called with true when this replica starts leading (before its caches start)
  // and with false once everything started for it has stopped (for metrics and readiness).
  void observeLeading(std::function<void(bool leading)> observer) {
    leadingObservers_.push_back(std::move(observer));
  }

  // Blocks until `stop` fires (ok), or fails: caches that never synced, leadership lost (after
  // onLeadershipLost returns, if it does).
  Status run(std::stop_token stop);

  // Whether this replica leads and its caches have synced (what /readyz waits for on the leader).
  bool leading() const { return leading_.load(); }
  bool cachesSynced() const { return synced_.load(); }

 private:
  friend class ControllerBuilder;
  struct NamedRunnable {
    std::string name;
    RunnableGroup group;
    Runnable run;
  };
  struct SharedInformer {
    kube::ResourceRef resource;
    kube::WatcherConfig config;
    std::unique_ptr<kube::Informer> informer;
  };

  Status lead(std::stop_token stop);
  Status startCaches(std::stop_token stop);
  void stopCaches();

  kube::RestClient& client_;
  ManagerOptions options_;
  Clock& clock_;
  std::vector<SharedInformer> informers_;
  std::vector<std::unique_ptr<Controller>> controllers_;
  std::vector<NamedRunnable> runnables_;
  std::vector<std::function<void(bool)>> leadingObservers_;
  std::atomic<bool> leading_{false};
  std::atomic<bool> synced_{false};
};

}  // namespace ipu::ctrl
