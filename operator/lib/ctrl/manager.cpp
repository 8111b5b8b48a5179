#include "ctrl/manager.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>
#include <utility>

#include <sys/resource.h>

#include "common/log.h"

namespace ipu::ctrl {
namespace {

bool sameConfig(const kube::WatcherConfig& a, const kube::WatcherConfig& b) {
  return a.labelSelector == b.labelSelector && a.fieldSelector == b.fieldSelector &&
         a.pageSize == b.pageSize && a.skipItemFields == b.skipItemFields;
}

bool sameResource(const kube::ResourceRef& a, const kube::ResourceRef& b) {
  return a.group == b.group && a.version == b.version && a.resource == b.resource;
}

void exitOnLostLeadership() {
  std::cerr << "ipu-operator: lost the leader election lease; exiting\n";
  std::_Exit(1);
}

std::string fixed3(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

double processCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

ControllerBuilder& ControllerBuilder::forResource(const kube::ResourceRef& resource, OwnerKind kind,
                                                  const kube::WatcherConfig& config) {
  primary_ = &manager_.informer(resource, config);
  kind_ = std::move(kind);
  return *this;
}

ControllerBuilder& ControllerBuilder::owns(const kube::ResourceRef& resource,
                                           const kube::WatcherConfig& config, Batching batching) {
  // Mapped once the kind is known.
  watches_.push_back({&manager_.informer(resource, config), nullptr, std::move(batching)});
  return *this;
}

ControllerBuilder& ControllerBuilder::watches(const kube::ResourceRef& resource, KeysFor keysFor,
                                              const kube::WatcherConfig& config) {
  watches_.push_back({&manager_.informer(resource, config), std::move(keysFor), {}});
  return *this;
}

ControllerBuilder& ControllerBuilder::withOptions(ControllerOptions options) {
  options_ = std::move(options);
  return *this;
}

Controller& ControllerBuilder::complete(Reconciler& reconciler) {
  if (primary_ == nullptr) {
    throw std::logic_error("controller " + name_ + ": forResource() was not called");  // a wiring bug
  }
  auto controller = std::make_unique<Controller>(name_, primary_->store(), reconciler, std::move(options_),
                                                 manager_.clock());
  controller->watchPrimary(*primary_);
  for (auto& watch : watches_) {
    KeysFor keysFor = watch.keysFor;
    if (!keysFor) {
      keysFor = [kind = kind_](const kube::ObjectPtr& old, const kube::ObjectPtr& current) {
        auto owner = controllerOwnerKey(current ? *current : *old, kind);
        return owner ? std::vector<std::string>{*owner} : std::vector<std::string>{};
      };
    }
    controller->watch(*watch.informer, std::move(keysFor), std::move(watch.batching));
  }
  manager_.controllers_.push_back(std::move(controller));
  return *manager_.controllers_.back();
}

Manager::Manager(kube::RestClient& client, ManagerOptions options, Clock& clock)
    : client_(client), options_(std::move(options)), clock_(clock) {
  if (!options_.onLeadershipLost) options_.onLeadershipLost = exitOnLostLeadership;
}

Manager::~Manager() {
  for (auto& controller : controllers_) controller->stop();
  stopCaches();
}

kube::Informer& Manager::informer(const kube::ResourceRef& resource, const kube::WatcherConfig& config) {
  for (auto& shared : informers_) {
    if (sameResource(shared.resource, resource) && sameConfig(shared.config, config)) return *shared.informer;
  }
  informers_.push_back(
      {resource, config, std::make_unique<kube::Informer>(client_, resource, "", config, clock_)});
  return *informers_.back().informer;
}

void Manager::add(std::string name, RunnableGroup group, Runnable runnable) {
  runnables_.push_back({std::move(name), group, std::move(runnable)});
}

Status Manager::run(std::stop_token stop) {
  std::vector<std::jthread> always;
  for (auto& runnable : runnables_) {
    if (runnable.group == RunnableGroup::kAlways) always.emplace_back(runnable.run);
  }
  Status result;
  if (!options_.leaderElection) {
    result = lead(stop);
  } else {
    auto elector = kube::LeaderElector::create(client_, *options_.leaderElection, clock_);
    if (!elector) return elector.error();
    // A failure to lead (caches that never sync) ends the election too, so the process can exit and restart.
    std::stop_source ended;
    std::stop_callback forward(stop, [&ended] { ended.request_stop(); });
    const auto outcome = (*elector)->run(
        ended.get_token(), kube::LeaderCallbacks{
                               .onStartedLeading =
                                   [&](std::stop_token leadingToken) {
                                     log::info("leading", {{"identity", (*elector)->identity()}});
                                     result = lead(leadingToken);
                                     if (!result) ended.request_stop();
                                   },
                               .onStoppedLeading =
                                   [&] {
                                     if (!stop.stop_requested() && result.ok()) options_.onLeadershipLost();
                                   },
                               .onNewLeader =
                                   [](const std::string& identity) {
                                     log::info("leader", {{"identity", identity}});
                                   },
                           });
    if (outcome == kube::LeaderElector::Outcome::kLost && result.ok()) {
      result = makeError(ErrorCode::kUnavailable, "lost the leader election lease");
    }
  }
  for (auto& thread : always) thread.request_stop();
  return result;
}

Status Manager::lead(std::stop_token stop) {
  leading_ = true;
  for (const auto& observer : leadingObservers_) observer(true);
  Status started = startCaches(stop);
  if (started && !stop.stop_requested()) {
    for (auto& runnable : runnables_) {
      if (runnable.group != RunnableGroup::kWarmup || stop.stop_requested()) continue;
      log::info("warm-up", {{"runnable", runnable.name}});
      runnable.run(stop);
    }
    for (auto& controller : controllers_) controller->start();
    std::vector<std::jthread> leaderElected;
    for (auto& runnable : runnables_) {
      if (runnable.group == RunnableGroup::kLeaderElected) leaderElected.emplace_back(runnable.run);
    }
    clock_.sleepUntil(Clock::TimePoint::max(), stop);
    log::info("stopping the controllers");
    for (auto& controller : controllers_) controller->stop();
    for (auto& thread : leaderElected) thread.request_stop();
    leaderElected.clear();  // joins
  }
  stopCaches();
  leading_ = false;
  for (const auto& observer : leadingObservers_) observer(false);
  return started;
}

Status Manager::startCaches(std::stop_token stop) {
  const auto started = std::chrono::steady_clock::now();
  for (auto& shared : informers_) shared.informer->start();
  const auto deadline = started + options_.cacheSyncTimeout;
  for (auto& shared : informers_) {
    // In slices, so that a stop while an API server does not answer is not held up by the sync timeout.
    while (!shared.informer->waitForSync(std::chrono::milliseconds(100))) {
      if (stop.stop_requested()) return {};  // a stop while starting is a clean stop, not a failure
      if (std::chrono::steady_clock::now() < deadline) continue;
      log::error("informer cache did not sync", {{"resource", shared.resource.resource}});
      return makeError(ErrorCode::kDeadlineExceeded,
                       "the cache of " + shared.resource.resource + " did not sync within " +
                           std::to_string(options_.cacheSyncTimeout.count() / 1000) + " s");
    }
  }
  synced_ = true;
  // With the CPU the whole process has used so far: against the seconds, whether the sync waited for the
  // API server or for this process's own parsing.
  log::info(
      "caches synced",
      {{"seconds", fixed3(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count())},
       {"process_cpu_seconds", fixed3(processCpuSeconds())}});
  if (options_.onCachesSynced) options_.onCachesSynced();
  return {};
}

void Manager::stopCaches() {
  synced_ = false;
  for (auto& shared : informers_) shared.informer->stop();
}

}  // namespace ipu::ctrl
