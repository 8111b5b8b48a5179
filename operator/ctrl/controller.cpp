#include "ctrl/controller.h"

#include <utility>

#include "common/log.h"
#include "kube/store.h"

namespace ipu::ctrl {

std::pair<std::string, std::string> splitKey(const std::string& key) {
  const auto slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

Controller::Controller(std::string name, Reconcile reconcile, int workers, Clock& clock)
    : name_(std::move(name)), reconcile_(std::move(reconcile)), workers_(workers), queue_(clock) {}

Controller::~Controller() {
  stop();
}

void Controller::watchPrimary(kube::Informer& informer) {
  watchRelated(informer,
               [](const Json& object) -> std::optional<std::string> { return kube::objectKey(object); });
}

void Controller::watchRelated(kube::Informer& informer, KeyMapper mapper) {
  informers_.push_back(&informer);
  auto enqueue = [this, mapper = std::move(mapper)](const kube::ObjectPtr& object) {
    if (!object) return;
    if (auto key = mapper(*object)) queue_.add(*key);
  };
  informer.addHandlers(kube::EventHandlers{
      .onAdd = enqueue,
      .onUpdate = [enqueue](const kube::ObjectPtr&, const kube::ObjectPtr& current) { enqueue(current); },
      .onDelete = enqueue,
  });
}

bool Controller::start(std::chrono::milliseconds syncTimeout) {
  for (kube::Informer* informer : informers_) {
    if (!informer->waitForSync(syncTimeout)) {
      log::error("informer cache did not sync",
                 {{"controller", name_}, {"resource", informer->resource().resource}});
      return false;
    }
  }
  pool_ = std::make_unique<WorkerPool>(queue_, workers_, [this](const std::string& key) { process(key); });
  log::info("controller started", {{"controller", name_}, {"workers", std::to_string(workers_)}});
  return true;
}

void Controller::stop() {
  if (pool_) {
    pool_->stop();
  } else {
    queue_.shutDown();
  }
}

void Controller::process(const std::string& key) {
  const auto [ns, name] = splitKey(key);
  auto result = reconcile_(ns, name);
  if (!result) {
    log::warning("reconcile failed; retrying with backoff",
                 {{"controller", name_}, {"key", key}, {"error", result.error().toString()}});
    queue_.addRateLimited(key);
    return;
  }
  queue_.forget(key);
  if (const auto& after = *result) queue_.addAfter(key, *after);
}

}  // namespace ipu::ctrl
