#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/ipujob.h"
#include "kube/resource.h"

// Kueue's Workload protocol, the pure part: an IPUJob's Workload as Kueue wants it, and what a Workload says
// back. Kueue's own job integrations do this in Go (its jobframework); the operator speaks the same protocol
// over the API (docs/using-kueue.md).
namespace ipu::controllers {

using Json = nlohmann::json;

// The label that puts a job in a Kueue LocalQueue of its namespace.
inline constexpr const char* kKueueQueueNameLabel = "kueue.x-k8s.io/queue-name";
// The label naming a WorkloadPriorityClass for the job's Workload.
inline constexpr const char* kKueuePriorityClassLabel = "kueue.x-k8s.io/priority-class";
// The resource a ClusterQueue covers for IPUs: each pod set asks for its workers' share of the partition.
inline constexpr const char* kIpuResourceName = "graphcore.ai/ipu";
// Kueue's label of the uid of the job a Workload is for.
inline constexpr const char* kKueueJobUidLabel = "kueue.x-k8s.io/job-uid";
// The controllerName of the AdmissionChecks the operator answers: IPU placement.
inline constexpr const char* kIpuPlacementCheckController = "graphcore.ai/ipu-operator";

kube::ResourceRef workloadResource();
kube::ResourceRef resourceFlavorResource();
kube::ResourceRef workloadPriorityClassResource();
kube::ResourceRef admissionCheckResource();

// The job's LocalQueue ("" when it has no queue-name label).
std::string localQueueOf(const Json& job);
// The WorkloadPriorityClass its label names ("" when none).
std::string workloadPriorityClassOf(const Json& job);

// The Workload's name: "ipujob-<name>-<5 hex digits of the uid's SHA-256>", cut to fit 253 characters; a
// job made again under the same name gets another Workload.
std::string workloadNameFor(const api::ObjectIdentity& identity);

// The job's pod sets as Kueue counts them: one per worker shape. Every worker of an IPUJob has the same
// template and the same share of its instance's IPUs (the spec's rules make workersPerJobInstance divide
// ipusPerJobInstance), so one pod set "workers" of jobInstances x workersPerJobInstance pods. Its template is
// the user's worker template (only labels and annotations of its metadata, as Kueue allows) with the share
// added to the first container's requests as graphcore.ai/ipu.
Json workloadPodSets(const api::IpuJobSpec& spec);

// The priority a Workload takes: a WorkloadPriorityClass by name and value, or the job's spec.priority.
struct WorkloadPriority {
  std::string className;  // "" for spec.priority
  int value = 0;
};

// The Workload of a job: controller owner reference to the job, Kueue's job-uid label, the LocalQueue, the
// priority and the pod sets. `jobObject` is the IPUJob as stored (its apiVersion, kind, uid, labels).
Json desiredWorkload(const Json& jobObject, const api::IpuJob& job, const WorkloadPriority& priority);

// MultiKueue (docs/using-kueue.md, "Several clusters with MultiKueue"). The copy of a job MultiKueue creates
// on a worker cluster names the manager's Workload, which it copied there before, in this annotation (or,
// from older Kueue versions, label): the worker's operator adopts that Workload instead of making one.
inline constexpr const char* kKueuePrebuiltWorkloadKey = "kueue.x-k8s.io/prebuilt-workload-name";
// The label MultiKueue puts on the copies it makes on a worker cluster: the manager's origin name.
inline constexpr const char* kKueueMultiKueueOriginLabel = "kueue.x-k8s.io/multikueue-origin";

// The prebuilt Workload a job names ("" none).
std::string prebuiltWorkloadOf(const Json& job);

// The merge patch that makes a prebuilt Workload the job's: its controller owner reference and Kueue's
// job-uid label, conditional on the Workload's resourceVersion (another controller's owner reference is kept
// only if it is not a controller one; the caller checks there is none).
Json adoptionPatch(const Json& workload, const Json& jobObject);

// Whether a prebuilt Workload's pod sets are the job's, in what Kueue admitted: the same pod sets (names and
// counts) and the same resource requests and limits of every container, amounts compared as quantities
// (Kueue's Go client writes them back in canonical form: 32 as "32", 0.5 as "500m"). The rest of the template
// is not compared: the API server prunes what its Workload schema does not know and Kueue's client drops
// empty fields, so a field-by-field comparison would refuse jobs that do match.
bool podSetsMatch(const Json& desired, const Json& stored);

// A job's pods are placed by the ResourceFlavors Kueue assigned: their node labels and tolerations.
struct QueuePlacement {
  std::map<std::string, std::string> nodeSelector;
  Json tolerations = Json::array();
  bool operator==(const QueuePlacement&) const = default;
};

// One entry of a Workload's status.admissionChecks.
struct AdmissionCheckEntry {
  std::string name;
  std::string state;  // Pending, Ready, Retry, Rejected
  std::string message;
};

// What a Workload says, as the operator acts on it.
struct WorkloadView {
  std::string ownerUid;  // the uid of its controller owner reference ("" none)
  bool quotaReserved = false;
  bool admitted = false;      // Admitted=True: quota reserved and every admission check Ready
  bool evicted = false;       // Evicted=True
  bool finished = false;      // Finished=True
  bool podsReady = false;     // PodsReady=True
  bool active = true;         // spec.active
  std::string clusterQueue;   // status.admission.clusterQueue
  std::string evictedReason;  // the Evicted condition's reason ("Preempted", "PodsReadyTimeout", ...)
  std::string evictedMessage;
  // Why it waits, in Kueue's words: the QuotaReserved condition's message while it is False, then pending
  // admission checks.
  std::string waiting;
  // The flavor each pod set's resources were assigned, by pod set name.
  std::map<std::string, std::vector<std::string>> flavors;
  std::vector<AdmissionCheckEntry> checks;
};
WorkloadView viewOf(const Json& workload);

// The Workload's entry for an AdmissionCheck the operator answers (its name in `ours`), if its ClusterQueue
// lists one.
std::optional<AdmissionCheckEntry> placementCheckOf(const WorkloadView& view,
                                                    const std::set<std::string>& ours);

// The operator's answer in its check's entry, as a server-side apply body of that one entry (the entries are
// a map by name, so the apply touches no other check's); its transition time kept unless the state changes.
Json admissionCheckApply(const Json& workload, const std::string& check, const std::string& state,
                         const std::string& message, const std::string& now);

// An AdmissionCheck the operator answers (spec.controllerName is ours), and the merge patch that marks it
// Active (nullopt when it is already, for its generation). Kueue admits nothing through a ClusterQueue whose
// checks are not active.
bool answersCheck(const Json& admissionCheck);
std::optional<Json> activePatch(const Json& admissionCheck, const std::string& now);

// The placement of the job's workers: the union of the node labels and tolerations of every flavor Kueue
// assigned (looked up by name; a flavor not found is an error naming it).
struct FlavorLookup {
  std::map<std::string, Json> flavors;  // ResourceFlavor objects by name
};
std::optional<QueuePlacement> placementFrom(const WorkloadView& view, const FlavorLookup& lookup,
                                            std::string& missing);

// A condition the job's controller owns on its Workload (PodsReady, Finished), as a server-side apply body of
// that one condition: Kueue's conditions are a map by type, so the apply touches no other.
Json workloadConditionApply(const Json& workload, const std::string& type, bool status,
                            const std::string& reason, const std::string& message, const std::string& now);

// After an eviction, once the job no longer runs: the Workload's quota reservation given back as Kueue's own
// job integrations do (admission removed, QuotaReserved and Admitted False, Requeued True when it was
// preempted or lost its node), as a merge patch conditional on the Workload's resourceVersion.
Json clearedAdmissionPatch(const Json& workload, const std::string& now);

}  // namespace ipu::controllers
