#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "kube/cache_trim.h"
#include "kube/store.h"
#include "kube/watcher.h"

namespace ipu::kube {

struct EventHandlers {
  std::function<void(const ObjectPtr& added)> onAdd;
  std::function<void(const ObjectPtr& old, const ObjectPtr& current)> onUpdate;
  std::function<void(const ObjectPtr& deleted)> onDelete;
  // A watch event too large to hold (WatcherEvent::kOversized): the object's identity as far as it was
  // read (skimOversizedEvent) and its size. The cache is unchanged.
  std::function<void(const Json& identity, std::size_t bytes)> onOversized;
};

// A Watcher feeding a Store on its own thread, and fanning each change out to handlers (which should be
// quick: a controller's handler only enqueues a key). Handlers are added before start().
class Informer {
 public:
  Informer(RestClient& client, ResourceRef resource, std::string ns = "", WatcherConfig config = {},
           Clock& clock = Clock::real());
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void addHandlers(EventHandlers handlers);
  // What the cache keeps of each object, after stripBookkeeping (which it always applies). Set before
  // start(). One per informer: the cache is shared by everyone who watches the resource, so the transform
  // must keep every field any of them reads.
  void setTransform(CacheTransform transform) { transform_ = std::move(transform); }
  // Which objects the cache keeps at all, judged after the transform; set before start(). An object that
  // stops passing is removed as if deleted; one that never passed is never seen by the store or handlers.
  // For a watch whose selector others can match (a label anyone may set): what fails costs nothing.
  void setFilter(CacheFilter filter) { filter_ = std::move(filter); }
  // How the cache keeps the objects (StoreLayout); set before start().
  void setStoreLayout(StoreLayout layout) { store_.setLayout(layout); }
  // What the cache keeps beside each object for readers that walk them all (Store::setSummary); set before
  // start().
  template <class T>
  void setSummary(std::function<T(const Json&)> summarize) {
    store_.setSummary<T>(std::move(summarize));
  }
  void start();
  void stop();

  const Store& store() const { return store_; }
  const ResourceRef& resource() const { return resource_; }
  bool hasSynced() const { return store_.hasSynced(); }
  // Blocks until the first list is in the store, the timeout passes or the informer stops.
  bool waitForSync(std::chrono::milliseconds timeout);
  // Failed list/watch attempts so far (each already logged and retried).
  uint64_t errorCount() const { return errors_; }

 private:
  void deliver(WatcherEvent&& event);

  ResourceRef resource_;
  Watcher watcher_;
  Store store_;
  std::vector<EventHandlers> handlers_;
  CacheTransform transform_;
  CacheFilter filter_;
  std::atomic<uint64_t> errors_{0};
  std::mutex syncMutex_;
  std::condition_variable synced_;
  std::jthread thread_;
};

}  // namespace ipu::kube
