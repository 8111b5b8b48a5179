#include "pod_map/pod_map_publisher.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "api/resources.h"
#include "common/json_access.h"
#include "common/log.h"

namespace ipu::controllers {
namespace {

constexpr const char* kFieldManager = "ipu-operator";
constexpr const char* kManagedBySelector = "app.kubernetes.io/managed-by=ipu-operator";

}  // namespace

std::string ipuPodNameFor(const std::string& controller) {
  std::string name = controller;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return c == '_' ? '-' : static_cast<char>(std::tolower(c)); });
  return name;
}

PodMapPublisher::PodMapPublisher(kube::RestClient& client, const VipuInventory& inventory,
                                 const kube::Store& jobs, std::vector<std::string> controllers,
                                 OwnPrefixes prefixes)
    : client_(client),
      inventory_(inventory),
      jobs_(jobs),
      controllers_(std::move(controllers)),
      prefixes_(std::move(prefixes)) {}

void PodMapPublisher::run(std::stop_token stop, Clock& clock, Clock::Duration interval) {
  publish(stop);
  while (clock.sleepFor(interval, stop)) publish(stop);
}

void PodMapPublisher::logFailure(const std::string& what, const Error& error) {
  if (error.code == ErrorCode::kNotFound) {
    // The resource itself is not served: an install that predates the IPUPod CRD.
    if (!missingCrdLogged_) {
      log::warning(
          "IPUPods are not served, so `kubectl ipu status` has nothing to show: apply "
          "crds/ipupods.graphcore.ai.yaml (Helm does not upgrade CRDs); trying again every round",
          {{"error", error.toString()}});
    }
    missingCrdLogged_ = true;
    return;
  }
  log::warning(what, {{"error", error.toString()}});
}

bool PodMapPublisher::start(std::stop_token stop) {
  auto listed = client_.listAll(api::ipuPodResource(), "", {.labelSelector = kManagedBySelector}, stop);
  if (!listed) {
    logFailure("could not list IPUPods", listed.error());
    return false;
  }
  std::set<std::string> configured;
  for (const std::string& controller : controllers_) configured.insert(ipuPodNameFor(controller));
  for (const api::Json& pod : member(*listed, "items")) {
    const std::string name = stringMember(member(pod, "metadata"), "name");
    if (configured.contains(name)) {
      const api::IpuPodStatus status = api::parseIpuPodStatus(member(pod, "status"));
      written_[status.controller] = status;
      continue;
    }
    // A controller this operator is no longer configured with: its picture would only mislead.
    auto removed = client_.remove(api::ipuPodResource(), "", name, {}, stop);
    if (!removed && removed.error().code != ErrorCode::kNotFound) {
      logFailure("could not delete the IPUPod of a V-IPU controller no longer configured", removed.error());
      return false;
    }
    log::info("deleted the IPUPod of a V-IPU controller no longer configured", {{"ipupod", name}});
  }
  if (missingCrdLogged_) log::info("IPUPods are served: publishing the IPU-POD maps");
  missingCrdLogged_ = false;
  return started_ = true;
}

bool PodMapPublisher::write(const std::string& controller, const api::IpuPodStatus& status,
                            std::stop_token stop) {
  auto applied = client_.apply(api::ipuPodResource(), "", ipuPodObject(ipuPodNameFor(controller), status),
                               kFieldManager, /*force=*/true, "", stop);
  if (!applied) {
    logFailure("could not write the IPUPod of a V-IPU controller", applied.error());
    return false;
  }
  written_[controller] = status;
  return true;
}

bool PodMapPublisher::publish(std::stop_token stop) {
  if (!started_ && !start(stop)) return false;
  const std::pair counters{inventory_.version(), jobs_.revision()};
  if (published_ == counters) return true;
  const std::vector<kube::ObjectPtr> jobs = jobs_.list();
  bool complete = true;
  std::set<std::string> names;
  for (const std::string& controller : controllers_) {
    if (!names.insert(ipuPodNameFor(controller)).second) continue;  // two names that differ only in case
    const auto view = inventory_.view(controller);
    const api::IpuPodStatus status = ipuPodStatusOf(controller, view.get(), jobs, prefixes_);
    if (const auto found = written_.find(controller); found != written_.end() && found->second == status)
      continue;
    complete = write(controller, status, stop) && complete;
  }
  if (complete) published_ = counters;
  return complete;
}

}  // namespace ipu::controllers
