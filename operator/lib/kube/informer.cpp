#include "kube/informer.h"

#include "common/json_access.h"
#include "common/log.h"

namespace ipu::kube {

Informer::Informer(RestClient& client, ResourceRef resource, std::string ns, WatcherConfig config,
                   Clock& clock)
    : resource_(resource), watcher_(client, std::move(resource), std::move(ns), std::move(config), clock) {}

Informer::~Informer() {
  stop();
}

void Informer::addHandlers(EventHandlers handlers) {
  handlers_.push_back(std::move(handlers));
}

void Informer::start() {
  if (thread_.joinable()) return;
  thread_ = std::jthread([this](std::stop_token stop) {
    watcher_.run(
        stop, [this](WatcherEvent&& event) { deliver(std::move(event)); },
        [this](const Error& error) {
          ++errors_;
          log::warning("list/watch failed; retrying",
                       {{"resource", resource_.resource}, {"error", error.toString()}});
        });
    synced_.notify_all();
  });
}

void Informer::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
  synced_.notify_all();
}

void Informer::deliver(WatcherEvent&& event) {
  if (event.kind == WatcherEvent::Kind::kOversized) {
    // Not cached (the store keeps the version it had); told to whoever can tell the object's owner.
    const Json& metadata = member(event.object, "metadata");
    log::warning("a watch event was larger than the operator reads: this version of the object is ignored",
                 {{"resource", resource_.path("")},
                  {"namespace", stringMember(metadata, "namespace")},
                  {"name", stringMember(metadata, "name")},
                  {"bytes", std::to_string(event.bytes)}});
    for (const auto& handlers : handlers_) {
      if (handlers.onOversized) handlers.onOversized(event.object, event.bytes);
    }
    return;
  }
  if (!event.object.is_null()) {
    stripBookkeeping(event.object);
    if (transform_) transform_(event.object);
    if (filter_ && !filter_(event.object)) {
      using Kind = WatcherEvent::Kind;
      // Never kept: a list item or an event is dropped; one the store holds (it passed before) goes.
      if (event.kind == Kind::kInitApply || !store_.get(objectKey(event.object))) return;
      event.kind = Kind::kDelete;
    }
  }
  bool initDone = event.kind == WatcherEvent::Kind::kInitDone;
  for (const auto& change : store_.apply(std::move(event))) {
    for (const auto& handlers : handlers_) {
      switch (change.type) {
        case StoreChange::Type::kAdded:
          if (handlers.onAdd) handlers.onAdd(change.current);
          break;
        case StoreChange::Type::kUpdated:
          if (handlers.onUpdate) handlers.onUpdate(change.old, change.current);
          break;
        case StoreChange::Type::kDeleted:
          if (handlers.onDelete) handlers.onDelete(change.current);
          break;
      }
    }
  }
  if (initDone) {
    std::lock_guard lock(syncMutex_);
    synced_.notify_all();
  }
}

bool Informer::waitForSync(std::chrono::milliseconds timeout) {
  std::unique_lock lock(syncMutex_);
  return synced_.wait_for(lock, timeout, [this] { return store_.hasSynced() || !thread_.joinable(); }) &&
         store_.hasSynced();
}

}  // namespace ipu::kube
