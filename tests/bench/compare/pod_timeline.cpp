#include "pod_timeline.h"

namespace ipu::bench {

PodTimeline::PodTimeline(kube::RestClient& client, std::string ns, RoleOf roleOf)
    : client_(client), ns_(std::move(ns)), roleOf_(std::move(roleOf)) {
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

PodTimeline::~PodTimeline() {
  thread_.request_stop();
}

void PodTimeline::observe(const nlohmann::json& pod) {
  const auto now = Clock::now();
  const std::string name = pod["metadata"].value("name", "");
  std::lock_guard lock(mutex_);
  auto [it, added] = pods_.try_emplace(name, PodTimes{.role = roleOf_(pod), .seen = now, .running = {}});
  const nlohmann::json status = pod.value("status", nlohmann::json::object());
  if (!it->second.running && status.value("phase", "") == "Running") it->second.running = now;
}

void PodTimeline::run(std::stop_token stop) {
  std::string version;
  while (!stop.stop_requested()) {
    if (version.empty()) {
      auto list = client_.list(kube::ResourceRef::pods(), ns_);
      if (!list) {
        std::lock_guard lock(mutex_);
        error_ = list.error().message;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      for (const auto& pod : (*list)["items"]) observe(pod);
      version = (*list)["metadata"].value("resourceVersion", "");
    }
    kube::WatchOptions options;
    options.resourceVersion = version;
    options.timeoutSeconds = 60;
    auto status = client_.watch(
        kube::ResourceRef::pods(), ns_, options,
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

RoleProgress PodTimeline::progress(PodRole role) const {
  std::lock_guard lock(mutex_);
  RoleProgress progress;
  for (const auto& [name, times] : pods_) {
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

std::string PodTimeline::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

}  // namespace ipu::bench
