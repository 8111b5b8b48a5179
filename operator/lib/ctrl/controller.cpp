#include "ctrl/controller.h"

#include <utility>

#include "common/log.h"
#include "kube/store.h"

namespace ipu::ctrl {
namespace {

std::string apiGroupOf(const std::string& apiVersion) {
  const auto slash = apiVersion.find('/');
  return slash == std::string::npos ? "" : apiVersion.substr(0, slash);
}

}  // namespace

std::pair<std::string, std::string> splitKey(const std::string& key) {
  const auto slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

std::optional<std::string> controllerOwnerKey(const Json& child, const OwnerKind& owner) {
  if (!child.is_object()) return std::nullopt;
  const auto metadata = child.find("metadata");
  if (metadata == child.end() || !metadata->is_object()) return std::nullopt;
  const auto references = metadata->find("ownerReferences");
  if (references == metadata->end() || !references->is_array()) return std::nullopt;
  for (const Json& reference : *references) {
    if (!reference.is_object() || reference.value("controller", false) != true) continue;
    if (reference.value("kind", "") != owner.kind) return std::nullopt;
    if (apiGroupOf(reference.value("apiVersion", "")) != owner.apiGroup) return std::nullopt;
    const std::string name = reference.value("name", "");
    if (name.empty()) return std::nullopt;
    const std::string ns = metadata->value("namespace", "");
    return ns.empty() ? name : ns + "/" + name;
  }
  return std::nullopt;
}

Controller::Controller(std::string name, const kube::Store& primary, Reconciler& reconciler,
                       ControllerOptions options, Clock& clock)
    : name_(std::move(name)),
      primary_(primary),
      reconciler_(reconciler),
      options_(std::move(options)),
      clock_(clock),
      queue_(clock) {}

Controller::~Controller() {
  stop();
}

void Controller::watchPrimary(kube::Informer& primary) {
  watch(primary, [](const kube::ObjectPtr& old, const kube::ObjectPtr& current) {
    return std::vector<std::string>{kube::objectKey(current ? *current : *old)};
  });
}

void Controller::watch(kube::Informer& informer, KeysFor keysFor, Batching batching) {
  informers_.push_back(&informer);
  // The queue keeps one key's earliest time: the first held change of a batch sets when it is reconciled,
  // and the changes after it within the window join that reconcile.
  auto enqueue = [this, keysFor = std::move(keysFor), window = batching.window,
                  atOnce = std::move(batching.passesAtOnce)](const kube::ObjectPtr& old,
                                                             const kube::ObjectPtr& current) {
    if (!old && !current) return;
    const bool held = window > Clock::Duration::zero() && !(atOnce && atOnce(old, current));
    for (const std::string& key : keysFor(old, current))
      queue_.addAfter(key, held ? window : Clock::Duration::zero());
  };
  informer.addHandlers(kube::EventHandlers{
      .onAdd = [enqueue](const kube::ObjectPtr& added) { enqueue(nullptr, added); },
      .onUpdate = enqueue,
      .onDelete = [enqueue](const kube::ObjectPtr& deleted) { enqueue(deleted, nullptr); },
  });
}

void Controller::start() {
  if (pool_) return;
  pool_ = std::make_unique<WorkerPool>(queue_, options_.workers,
                                       [this](const std::string& key) { process(key); });
  log::info("controller started", {{"controller", name_}, {"workers", std::to_string(options_.workers)}});
}

void Controller::stop() {
  if (pool_) {
    pool_->stop();
  } else {
    queue_.shutDown();
  }
}

void Controller::process(const std::string& key) {
  const kube::ObjectPtr object = primary_.get(key);
  if (!object) {
    queue_.forget(key);  // deleted: nothing is left to drive
    return;
  }
  const auto started = clock_.now();
  auto result = reconciler_.reconcile(object);
  if (options_.observer) {
    options_.observer(result.ok(), std::chrono::duration<double>(clock_.now() - started).count());
  }
  if (result) {
    // What a test waits on to know that the controller looked at the object (not a sleep): a successful
    // reconcile that changed nothing leaves no other trace.
    log::debug("reconciled", {{"controller", name_}, {"key", key}});
    queue_.forget(key);
    if (const auto& after = result->requeueAfter) queue_.addAfter(key, *after);
    return;
  }
  const Error& error = result.error();
  switch (reconciler_.onError(object, error)) {
    case Retry::kWithBackoff:
      log::warning("reconcile failed; retrying with backoff",
                   {{"controller", name_}, {"key", key}, {"error", error.toString()}});
      queue_.addRateLimited(key);
      return;
    case Retry::kAfterChange:
      log::warning("reconcile failed with an error retrying cannot fix; waiting for a change",
                   {{"controller", name_}, {"key", key}, {"error", error.toString()}});
      queue_.forget(key);
      return;
  }
}

}  // namespace ipu::ctrl
