#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "common/clock.h"

namespace ipu::kube {
class Informer;
class Store;
}  // namespace ipu::kube

// What the controllers that walk every cached IPUJob on every pass read of each one (admission, the quota
// controller and ledger, the metrics), taken once per version of a job as the cache takes it in: such a walk
// then reads no JSON, and the cache can keep the jobs themselves packed.
namespace ipu::api {

// What a job waiting for admission asks of the queue, read from its spec and metadata.
struct JobAsk {
  int priority = 0;
  std::string creationTimestamp;  // RFC 3339 in UTC, so text order is time order
  std::uint32_t instances = 1;
  std::uint32_t ipusPerInstance = 0;
  std::string pinnedController;  // the V-IPU controller the template pins the job to; "" for any
  std::optional<std::int64_t> activeDeadlineSeconds;

  std::int64_t ipus() const { return std::int64_t{instances} * ipusPerInstance; }
  bool operator==(const JobAsk&) const = default;
};

// A parsed job's ask (creationTimestamp is the object's, which the parsed job does not carry).
JobAsk askOf(const IpuJob& job, std::string creationTimestamp);

struct JobSummary {
  std::string key;  // "namespace/name"
  ObjectIdentity identity;
  std::string generation;  // metadata.generation as the object has it (its JSON text)
  std::string phase;       // phaseOf
  bool alive = false;      // isAlive
  bool suspended = false;  // spec.suspend
  bool waitsForAdmission = false;
  bool queuedByKueue = false;
  std::string manager;                                // managerOf
  std::vector<PartitionRecord> held;                  // heldPartitionsOf
  std::optional<Clock::WallTime> latestEnd;           // latestEndOf
  std::optional<std::int64_t> activeDeadlineSeconds;  // activeDeadlineOf: read for every job, held or waiting
  std::string admittedAt;  // IpuJobStatus::admittedAt: when its Admitted condition turned true
  // For a job that waits for admission and whose spec parses, what it asks for; nullopt for every other job
  // (one whose spec does not parse is failed by its own reconcile, with the reason).
  std::optional<JobAsk> ask;

  bool operator==(const JobSummary&) const = default;
};

JobSummary summarizeJob(const nlohmann::json& job);

// How the IPUJob cache keeps its jobs, the same for every controller that shares it: packed (a job's
// reconcile decodes the one job it reads) and summarized. Each controller that reads the IPUJob informer
// calls it before the informer starts; a second call changes nothing.
void keepJobsPackedAndSummarized(kube::Informer& jobs);
// The same for a store filled by hand (tests, tools).
void keepJobsPackedAndSummarized(kube::Store& jobs);

}  // namespace ipu::api
