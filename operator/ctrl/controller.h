#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "ctrl/work_queue.h"
#include "ctrl/worker_pool.h"
#include "kube/informer.h"

namespace ipu::ctrl {

using Json = nlohmann::json;

// A reconcile's verdict on success: nullopt = done until something changes; a duration = look again then.
using RequeueAfter = std::optional<Clock::Duration>;
using Reconcile = std::function<Result<RequeueAfter>(const std::string& ns, const std::string& name)>;
// The key ("ns/name") of the primary object a related object (a pod, a service) belongs to, if any.
using KeyMapper = std::function<std::optional<std::string>(const Json& related)>;

// Informers feed keys into a work queue; workers reconcile them (controller-runtime's Controller, small):
//   error -> addRateLimited (backoff per key); requeueAfter -> forget + addAfter; done -> forget.
// The informers belong to the caller, who starts them (their stores are the reconciler's caches).
class Controller {
 public:
  Controller(std::string name, Reconcile reconcile, int workers, Clock& clock = Clock::real());
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Before start(): every change of the informer's objects queues the object's own key.
  void watchPrimary(kube::Informer& informer);
  // Before start(): every change of the informer's objects queues the key `mapper` gives (if any).
  void watchRelated(kube::Informer& informer, KeyMapper mapper);

  // Waits until every watched informer has synced, then starts the workers. false: not synced in time.
  bool start(std::chrono::milliseconds syncTimeout);
  // Lets reconciles in progress finish and stops the workers. Idempotent.
  void stop();

  WorkQueue& queue() { return queue_; }

 private:
  void process(const std::string& key);

  std::string name_;
  Reconcile reconcile_;
  int workers_;
  WorkQueue queue_;
  std::vector<kube::Informer*> informers_;
  std::unique_ptr<WorkerPool> pool_;
};

// "ns/name" -> {ns, name}; a key without '/' is a cluster-scoped name.
std::pair<std::string, std::string> splitKey(const std::string& key);

}  // namespace ipu::ctrl
