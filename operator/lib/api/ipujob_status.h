#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipu::api {

using Json = nlohmann::json;

// One metav1.Condition.
struct Condition {
  std::string type;
  std::string status;  // "True", "False" or "Unknown"
  std::string reason;
  std::string message;
  int64_t observedGeneration = 0;
  std::string lastTransitionTime;  // RFC 3339

  bool isTrue() const { return status == "True"; }
  bool operator==(const Condition&) const = default;
};

// The states of a recorded partition (status.partitions[].state): its id is written (Planned) before
// CreatePartition, it is Active once PS_ACTIVE, Released after RemovePartition. Abandoned: on a V-IPU
// controller the operator is no longer configured with, so it could not be removed (a Warning Event tells
// the admin); the job no longer holds it.
inline constexpr const char* kPartitionPlanned = "Planned";
inline constexpr const char* kPartitionActive = "Active";
inline constexpr const char* kPartitionReleased = "Released";
inline constexpr const char* kPartitionAbandoned = "Abandoned";

// One entry of status.partitions: a job instance's V-IPU partition, recorded (Planned) before it is created.
struct PartitionRecord {
  std::string id;
  int instance = 0;
  int size = 0;
  std::string controller;
  std::string ipus;   // where its IPUs are, for people ("ild0:0-3")
  std::string state;  // Planned, Active, Released or Abandoned

  bool held() const;  // Planned or Active (anything but Released and Abandoned)
  bool operator==(const PartitionRecord&) const = default;
};

// The shape a job was admitted with (status.admittedShape), recorded with its partitions.
struct AdmittedShape {
  int jobInstances = 0;
  int ipusPerJobInstance = 0;
  int workersPerJobInstance = 0;
  bool operator==(const AdmittedShape&) const = default;
};

// The job's runtime Secret (status.runtimeSecret): ipu-runtime's CA and key pair, under a name the API server
// generated (so nobody could create it first), recorded before any pod refers to it. `caSha256` (SHA-256 of
// ca.crt as written, hex) is pinned in the worker pods, whose runtime refuses any other CA; empty for a job
// whose pods were made before the record existed (they mount the Secret by its old derived name).
struct RuntimeSecretRecord {
  std::string name;
  std::string caSha256;
  bool operator==(const RuntimeSecretRecord&) const = default;
};

// status.interactive of an interactive job, from when every worker first ran: the ttl in force (the spec's,
// the operator's default for 0, at most its maximum) and when the session ends (RFC 3339).
struct InteractiveStatus {
  std::string runningSince;
  int64_t ttlSeconds = 0;
  std::string expiresAt;
  bool operator==(const InteractiveStatus&) const = default;
};

// status.outputs of a job with spec.outputs once worker 0's command ended and its pod keeps the outputs for
// `kubectl ipu cp`: the path and when the pod stops serving it (RFC 3339).
struct OutputsStatus {
  std::string path;
  std::string retainedUntil;
  bool operator==(const OutputsStatus&) const = default;
};

// status.kueue of a job Kueue queues (the label kueue.x-k8s.io/queue-name, with the operator's Kueue support
// on): its Workload, the LocalQueue it waits in, and, once Kueue admitted it, the ClusterQueue whose quota it
// uses. `admitted` mirrors the Workload's Admitted condition as the operator last acted on it;
// `awaitingPlacement`, that Kueue reserved quota for it and waits for the operator's IPU placement check.
// While both are false the job is Kueue's to admit and stays out of the operator's own queue; its IPUQuota
// never counts it.
struct KueueStatus {
  std::string workload;
  std::string localQueue;
  std::string clusterQueue;
  bool admitted = false;
  bool awaitingPlacement = false;
  bool operator==(const KueueStatus&) const = default;
};

// status.startEstimate of a waiting job: when it starts at the latest by the admission plan played forward
// over the deadlines of the jobs before it (controllers/admission/start_estimate.h), or why that is not
// known. Rewritten at most once a minute.
struct StartEstimateStatus {
  std::string startsBy;   // RFC 3339; "" when not known
  std::string unknown;    // why not, when startsBy is ""
  std::string updatedAt;  // RFC 3339: when the operator last changed it
  bool operator==(const StartEstimateStatus&) const = default;
};

// IPUJob.status as the operator keeps it: Graphcore's fields (launcherStatus, currentReplicas, ...) and ours.
// Optional fields are absent from the JSON when unset; a status written by an older version reads field by
// field, and fields this version does not know are never touched (statusPatch only names fields it changes).
struct IpuJobStatus {
  std::string phase;  // "" before the first write
  std::string launcherStatus;
  std::string lastMessage;
  std::optional<int> currentReplicas;
  std::optional<int> desiredReplicas;
  std::optional<int> currentInstances;
  std::optional<int> restartCount;
  std::optional<int> queuePosition;
  std::optional<std::string> startTime;
  std::optional<std::string> completionTime;
  std::optional<int64_t> observedGeneration;
  std::optional<std::string> selector;
  std::vector<Condition> conditions;
  std::vector<PartitionRecord> partitions;
  // Recorded at admission. Absent in a status written before it existed: then the partitions tell the
  // instances and size (workersPerJobInstance is immutable).
  std::optional<AdmittedShape> admittedShape;
  // Kept for the job's life (restarts and suspensions too): every pod of every attempt mounts the same one.
  std::optional<RuntimeSecretRecord> runtimeSecret;
  // Interactive jobs, once every worker ran (kept through restarts: the session's time counts from then).
  std::optional<InteractiveStatus> interactive;
  // Waiting jobs only.
  std::optional<StartEstimateStatus> startEstimate;
  // A finished job whose worker 0 keeps its outputs (spec.outputs).
  std::optional<OutputsStatus> outputs;
  // A job Kueue queues: recorded when its Workload is made, kept for the job's life.
  std::optional<KueueStatus> kueue;

  // The recorded partitions not yet released.
  std::vector<PartitionRecord> heldPartitions() const;
  // Drops the partitions' records and the shape they were admitted for, which go together.
  void forgetPartitions() {
    partitions.clear();
    admittedShape.reset();
  }
  const Condition* condition(const std::string& type) const;
  // When the job was admitted (RFC 3339): the Admitted condition's last transition while it is True; "" when
  // it is not admitted.
  std::string admittedAt() const;
  // Sets the condition of its type; lastTransitionTime changes only when its status flips, so a repeated
  // reconcile writes the same array.
  void setCondition(Condition condition, const std::string& now);

  bool operator==(const IpuJobStatus&) const = default;
};

// The partitions the IPUJob `job` still holds, from its status as the API server returns it. None for a job
// MultiKueue manages (spec.managedBy kueue.x-k8s.io/multikueue): its status is a copy of its worker cluster's
// job's, whose partitions are that cluster's, not this one's.
std::vector<PartitionRecord> heldPartitionsOf(const Json& job);

// Reads `status` as the API server returns it (null or absent: the empty status). Lenient by design: status
// is the operator's own, but a field of the wrong type (an older version, a hand edit) reads as absent rather
// than failing the job.
IpuJobStatus parseIpuJobStatus(const Json& status);
Json toJson(const IpuJobStatus& status);
// The JSON merge patch of status that turns `from` into `to`: changed fields with their new value, fields
// `to` no longer has as null, nothing else. {} when they are equal.
Json statusPatch(const IpuJobStatus& from, const IpuJobStatus& to);

}  // namespace ipu::api
