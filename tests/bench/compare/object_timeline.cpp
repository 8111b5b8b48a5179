#include "object_timeline.h"

namespace ipu::bench {

ObjectTimeline::ObjectTimeline(kube::RestClient& client, kube::ResourceRef resource, std::string ns,
                               RoleOf roleOf, IsRunning isRunning)
    : client_(client),
      resource_(std::move(resource)),
      ns_(std::move(ns)),
      roleOf_(std::move(roleOf)),
      isRunning_(std::move(isRunning)) {
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

std::unique_ptr<ObjectTimeline> ObjectTimeline::pods(kube::RestClient& client, std::string ns,
                                                     RoleOf roleOf) {
  return std::make_unique<ObjectTimeline>(
      client, kube::ResourceRef::pods(), std::move(ns), std::move(roleOf), [](const nlohmann::json& pod) {
        return pod.value("status", nlohmann::json::object()).value("phase", "") == "Running";
      });
}

ObjectTimeline::~ObjectTimeline() {
  thread_.request_stop();
}

void ObjectTimeline::observe(const nlohmann::json& object) {
  const auto now = Clock::now();
  const std::string name = object["metadata"].value("name", "");
  std::lock_guard lock(mutex_);
  auto [it, added] =
      objects_.try_emplace(name, ObjectTimes{.role = roleOf_(object), .seen = now, .running = {}});
  if (!it->second.running && isRunning_(object)) it->second.running = now;
}

void ObjectTimeline::run(std::stop_token stop) {
  std::string version;
  while (!stop.stop_requested()) {
    if (version.empty()) {
      auto list = client_.list(resource_, ns_);
      if (!list) {
        std::lock_guard lock(mutex_);
        error_ = list.error().message;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      for (const auto& object : (*list)["items"]) observe(object);
      version = (*list)["metadata"].value("resourceVersion", "");
    }
    kube::WatchOptions options;
    options.resourceVersion = version;
    options.timeoutSeconds = 60;
    auto status = client_.watch(
        resource_, ns_, options,
        [&](kube::WatchEvent&& event) {
          const std::string rv = event.object["metadata"].value("resourceVersion", "");
          if (!rv.empty()) version = rv;
          if (event.type == "ADDED" || event.type == "MODIFIED") observe(event.object);
          return !stop.stop_requested();
        },
        stop);
    if (!status) {
      std::lock_guard lock(mutex_);
      error_ = status.error().message;
      version.clear();  // 410 Gone or a broken stream: list again (times already seen are kept)
    }
  }
}

RoleProgress ObjectTimeline::progress(PodRole role) const {
  std::lock_guard lock(mutex_);
  RoleProgress progress;
  for (const auto& [name, times] : objects_) {
    if (times.role != role) continue;
    ++progress.exist;
    progress.lastSeen = std::max(progress.lastSeen, times.seen);
    if (times.running) {
      ++progress.running;
      progress.lastRunning = std::max(progress.lastRunning, *times.running);
    }
  }
  return progress;
}

std::string ObjectTimeline::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

}  // namespace ipu::bench
