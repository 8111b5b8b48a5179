#include "pod_map/pod_map_publisher.h"

#include <algorithm>
#include <cctype>
#include <random>
#include <set>
#include <utility>

#include "admission/published_queue.h"
#include "api/resources.h"
#include "common/digest.h"
#include "common/json_access.h"
#include "common/log.h"

namespace ipu::controllers {
namespace {

constexpr const char* kFieldManager = "ipu-operator";
constexpr const char* kManagedBySelector = "app.kubernetes.io/managed-by=ipu-operator";
constexpr const char* kIpuPodCrd = "ipupods.graphcore.ai.yaml";
constexpr const char* kIpuQueueCrd = "ipuqueues.graphcore.ai.yaml";

}  // namespace

std::string ipuPodNameFor(const std::string& controller) {
  std::string name = controller;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return c == '_' ? '-' : static_cast<char>(std::tolower(c)); });
  return name;
}

PodMapPublisher::PodMapPublisher(kube::RestClient& client, const VipuInventory& inventory,
                                 const kube::Store& jobs, std::vector<std::string> controllers,
                                 OwnPrefixes prefixes, Admitter* admitter)
    : client_(client),
      inventory_(inventory),
      jobs_(jobs),
      controllers_(std::move(controllers)),
      prefixes_(std::move(prefixes)),
      admitter_(admitter),
      namespaceSalt_(std::to_string(std::random_device()()) + std::to_string(std::random_device()())) {}

void PodMapPublisher::run(std::stop_token stop, Clock& clock, Clock::Duration interval) {
  publish(stop);
  while (clock.sleepFor(interval, stop)) publish(stop);
}

void PodMapPublisher::logFailure(const std::string& what, const Error& error) {
  log::warning(what, {{"error", error.toString()}});
}

bool PodMapPublisher::served(const Error& error, const char* crdFile, bool& logged) {
  if (error.code != ErrorCode::kNotFound) return true;
  // The resource itself is not served: an install that predates its CRD.
  if (!logged) {
    log::warning(std::string("a kind kubectl-ipu reads is not served: apply crds/") + crdFile +
                     " (Helm does not upgrade CRDs); trying again every round",
                 {{"error", error.toString()}});
  }
  logged = true;
  return false;
}

bool PodMapPublisher::start(std::stop_token stop) {
  auto listed = client_.listAll(api::ipuPodResource(), "", {.labelSelector = kManagedBySelector}, stop);
  if (!listed) {
    if (served(listed.error(), kIpuPodCrd, missingCrdLogged_))
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
    if (served(applied.error(), kIpuPodCrd, missingCrdLogged_))
      logFailure("could not write the IPUPod of a V-IPU controller", applied.error());
    return false;
  }
  written_[controller] = status;
  return true;
}

bool PodMapPublisher::publishQueue(std::stop_token stop) {
  // Read before the inputs: a change while they are read leaves the counters behind, so the next round
  // looks again.
  const Admitter::Counters counters = admitter_->inputsCounters();
  if (queueWritten_ && queueWrittenAt_ == counters) return true;  // an idle cluster costs no reading
  const api::Json status = queueStatusOf(admitter_->inputs(), [this](const std::string& ns) {
    return sha256Hex(namespaceSalt_ + "/" + ns, 12);
  });
  if (queueWritten_ == status) {
    queueWrittenAt_ = counters;
    return true;
  }
  if (missingQueueCrdLogged_) log::info("IPUQueues are served: publishing the admission queue");
  missingQueueCrdLogged_ = false;
  const api::Json object{
      {"apiVersion", "graphcore.ai/v1alpha1"},
      {"kind", "IPUQueue"},
      {"metadata",
       {{"name", api::kIpuQueueName}, {"labels", {{"app.kubernetes.io/managed-by", "ipu-operator"}}}}},
      {"status", status}};
  auto applied = client_.apply(api::ipuQueueResource(), "", object, kFieldManager, /*force=*/true, "", stop);
  if (!applied) {
    if (served(applied.error(), kIpuQueueCrd, missingQueueCrdLogged_))
      logFailure("could not write the IPUQueue", applied.error());
    return false;
  }
  queueWritten_ = status;
  queueWrittenAt_ = counters;
  return true;
}

bool PodMapPublisher::publish(std::stop_token stop) {
  if (!started_ && !start(stop)) return false;
  // The queue moves with things the counters below do not see (quotas, reservations): it has counters of
  // its own, and is written on change.
  const bool queueWritten = admitter_ == nullptr || publishQueue(stop);
  const std::pair counters{inventory_.version(), jobs_.revision()};
  if (published_ == counters) return queueWritten;
  const auto jobs = jobs_.summaries<api::JobSummary>();
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
  return complete && queueWritten;
}

}  // namespace ipu::controllers
