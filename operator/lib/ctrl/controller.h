#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "ctrl/reconciler.h"
#include "ctrl/work_queue.h"
#include "ctrl/worker_pool.h"
#include "kube/informer.h"

namespace ipu::ctrl {

using Json = nlohmann::json;

// The keys ("ns/name") of the primary objects a change of another object concerns. `old` is null for an
// addition, `current` is null for a deletion (then `old` is the deleted object).
using KeysFor =
    std::function<std::vector<std::string>(const kube::ObjectPtr& old, const kube::ObjectPtr& current)>;

// How a watch's changes are batched: each is queued `window` later (zero: at once), so that the changes
// within one window share one reconcile; a change `passesAtOnce` accepts (a child's end, say) is queued at
// once whatever the window.
struct Batching {
  Clock::Duration window{};
  std::function<bool(const kube::ObjectPtr& old, const kube::ObjectPtr& current)> passesAtOnce;
};

// The kind a controller drives, as children's ownerReferences name it.
struct OwnerKind {
  std::string apiGroup;  // "graphcore.ai"; "" for the core group
  std::string kind;      // "IPUJob"
};

// The key of the object that controls `child`: its ownerReference with controller=true, if that owner is of
// `owner`'s kind (same namespace: a namespaced object's owner is in its namespace). Labels are not trusted:
// anyone can set them, while ownerReferences to a uid are the garbage collector's contract.
std::optional<std::string> controllerOwnerKey(const Json& child, const OwnerKind& owner);

// Observes each reconcile (for metrics): whether it succeeded and how long it took.
using ReconcileObserver = std::function<void(bool ok, double seconds)>;

struct ControllerOptions {
  int workers = 2;
  ReconcileObserver observer;
};

// Informers feed keys into a work queue; workers reconcile them (controller-runtime's Controller, small).
// One switch decides what happens after a reconcile (process()):
//   success: forget the key's backoff; requeueAfter -> add it again after that time;
//   error: the reconciler's error policy -> backoff (rate-limited add) or wait for the next change.
// A key whose object is no longer in the primary cache is dropped: it was deleted (finalizers run while the
// object still exists, with a deletionTimestamp). The informers belong to the caller (the Manager), who
// starts them: their stores are the reconciler's caches.
class Controller {
 public:
  Controller(std::string name, const kube::Store& primary, Reconciler& reconciler,
             ControllerOptions options = {}, Clock& clock = Clock::real());
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Before start(): every change of the primary informer's objects queues the object's own key.
  void watchPrimary(kube::Informer& primary);
  // Before start(): every change of the informer's objects queues the keys `keysFor` gives, the batching's
  // window later (see ControllerBuilder::owns), those `passesAtOnce` accepts at once.
  void watch(kube::Informer& informer, KeysFor keysFor, Batching batching = {});

  // Starts the workers. The caller has waited for the informers to sync.
  void start();
  // Lets reconciles in progress finish and stops the workers. Idempotent.
  void stop();

  const std::string& name() const { return name_; }
  // Queues a key now (e.g. a job whose admission a pass decided).
  void enqueue(const std::string& key) { queue_.add(key); }
  WorkQueue& queue() { return queue_; }
  const std::vector<const kube::Informer*>& informers() const { return informers_; }

  // One key through the reconciler and the retry switch, on the caller's thread; the workers call this.
  // Public so that tests can drive a controller step by step.
  void process(const std::string& key);

 private:
  std::string name_;
  const kube::Store& primary_;
  Reconciler& reconciler_;
  ControllerOptions options_;
  Clock& clock_;
  WorkQueue queue_;
  std::vector<const kube::Informer*> informers_;
  std::unique_ptr<WorkerPool> pool_;
};

// "ns/name" -> {ns, name}; a key without '/' is a cluster-scoped name.
std::pair<std::string, std::string> splitKey(const std::string& key);

}  // namespace ipu::ctrl
