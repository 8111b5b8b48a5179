#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "admission/admitter.h"
#include "admission/vipu_inventory.h"
#include "api/ipupod.h"
#include "common/clock.h"
#include "kube/rest_client.h"
#include "kube/store.h"
#include "pod_map/pod_map_status.h"

namespace ipu::controllers {

// The IPUPod object's name for a V-IPU controller: the name lower-cased with '_' as '-' (controller names are
// label values, object names DNS subdomains).
std::string ipuPodNameFor(const std::string& controller);

// Keeps one IPUPod per V-IPU controller true to the inventory and the IPUJobs, for people who cannot reach
// V-IPU (`kubectl ipu status`). A leader-elected runnable: every `interval` it computes each controller's
// status when the inventory or the job cache moved, and applies (server-side) only those that changed, so an
// idle cluster costs no write and a busy one at most one write per controller per interval. At start it
// reads the IPUPods it manages (no write after a restart when nothing changed) and deletes those of
// controllers it is no longer configured with. Without the IPUPod CRD it logs so once and keeps trying.
//
// With an Admitter it also keeps the IPUQueue (admission/published_queue.h) true to what admission reads,
// written only on change, at most once per interval: `kubectl ipu fit` and `why` plan from it.
class PodMapPublisher {
 public:
  PodMapPublisher(kube::RestClient& client, const VipuInventory& inventory, const kube::Store& jobs,
                  std::vector<std::string> controllers, OwnPrefixes prefixes, Admitter* admitter = nullptr);

  void run(std::stop_token stop, Clock& clock, Clock::Duration interval);
  // One round: start-up work when not done yet, then every changed status written. Errors are logged; the
  // result says whether everything was written (false: the next round tries again).
  bool publish(std::stop_token stop = {});

 private:
  bool start(std::stop_token stop);
  bool write(const std::string& controller, const api::IpuPodStatus& status, std::stop_token stop);
  bool publishQueue(std::stop_token stop);
  void logFailure(const std::string& what, const Error& error);
  // False when `error` says the kind is not served (its CRD not applied), which is logged once until it is.
  static bool served(const Error& error, const char* crdFile, bool& logged);

  kube::RestClient& client_;
  const VipuInventory& inventory_;
  const kube::Store& jobs_;
  std::vector<std::string> controllers_;
  OwnPrefixes prefixes_;
  Admitter* admitter_;
  std::string namespaceSalt_;              // new for every publisher: namespace ids say nothing across terms
  std::optional<api::Json> queueWritten_;  // the IPUQueue's status as this publisher last wrote it
  Admitter::Counters queueWrittenAt_;      // the admission inputs' counters it was worked out at
  bool started_ = false;
  bool missingCrdLogged_ = false;
  bool missingQueueCrdLogged_ = false;
  std::map<std::string, api::IpuPodStatus> written_;  // by controller, as the API server has it
  // What the last complete round read: equal counters, nothing to compute.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> published_;
};

}  // namespace ipu::controllers
