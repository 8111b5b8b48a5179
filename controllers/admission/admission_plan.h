#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "vipu/ipu_set.h"
#include "vipu/partition_planner.h"

namespace ipu::controllers {

// How waiting jobs share capacity (the names are Kueue's, which cluster admins already know):
//  - BestEffortFIFO: in queue order, every job that fits now is admitted; a job that does not fit waits
//    without holding back smaller jobs behind it (better use of IPUs; a large job can wait long);
//  - StrictFIFO: the first job that does not fit holds back every job behind it (no overtaking).
enum class QueueingStrategy { kBestEffortFifo, kStrictFifo };

// "BestEffortFIFO" / "StrictFIFO"; false for anything else.
bool parseQueueingStrategy(const std::string& text, QueueingStrategy& out);
const char* queueingStrategyName(QueueingStrategy strategy);

// One V-IPU controller's cluster as admission sees it: its planner and the IPUs its partitions hold.
struct ControllerCapacity {
  std::string name;
  const vipu::PartitionPlanner* planner = nullptr;
  vipu::IpuSet taken;
};

// A job that wants partitions: a gang of `instances` partitions of `ipusPerInstance` IPUs.
struct AdmissionRequest {
  std::string key;  // "namespace/name"
  int priority = 0;
  std::string creationTimestamp;  // RFC 3339 in UTC, so text order is time order
  std::uint32_t instances = 1;
  std::uint32_t ipusPerInstance = 0;
  std::vector<std::string> controllers;  // where the job may run; empty: any
  std::string ns;                        // the job's namespace (quota is per namespace)
  std::string uid;                       // the job's metadata.uid ("" for a job not created yet)
  // spec.activeDeadlineSeconds: once admitted, the job holds its IPUs at most this long (start estimates).
  std::optional<std::int64_t> activeDeadlineSeconds;
  // Admitted by Kueue, whose quota applies: placed on capacity alone, outside every IPUQuota.
  bool queuedByKueue = false;

  std::uint64_t ipus() const { return std::uint64_t{instances} * ipusPerInstance; }
};

// Partitions already promised to an admitted job (ids in its status) that V-IPU does not have yet: placed
// before any waiting job, on their controller, so a restart between "recorded" and "created" loses nothing.
struct Reservation {
  std::string controller;
  std::uint32_t instances = 0;
  std::uint32_t ipusPerInstance = 0;
  // The job it is for, and when that job gives its IPUs back at the latest (nullopt: not known); read by
  // start estimates only.
  std::string ns;
  std::string uid;
  std::optional<Clock::WallTime> endsBy;
};

struct AdmissionDecision {
  enum class Kind { kAdmit, kWait, kNeverFits };
  Kind kind = Kind::kWait;
  std::string controller;                           // kAdmit
  std::vector<vipu::InstancePlacement> placements;  // kAdmit: one per instance
  int position = 0;                                 // kWait: 1 = next in line
  std::string reason;                               // a status condition reason
  std::string message;                              // for people

  // Named, so that no decision is built by the position of its fields.
  static AdmissionDecision admit(std::string controller, std::vector<vipu::InstancePlacement> placements) {
    AdmissionDecision decision;
    decision.kind = Kind::kAdmit;
    decision.controller = std::move(controller);
    decision.placements = std::move(placements);
    return decision;
  }
  // Waits, not in line (position 0): only a change of its quota, or of the job itself, can let it run.
  static AdmissionDecision waitOutOfLine(std::string reason, std::string message) {
    AdmissionDecision decision;
    decision.reason = std::move(reason);
    decision.message = std::move(message);
    return decision;
  }
};

// The free space of every controller during one pass. Reservations take their IPUs at construction; each
// admitted request takes its IPUs at once, before the next request is considered.
class CapacityPass {
 public:
  CapacityPass(std::vector<ControllerCapacity> controllers, const std::vector<Reservation>& reservations);

  // Admits the request on the first controller it may use (in name order) that places it, taking its IPUs;
  // otherwise says why it waits (it could fit later) or never fits (no controller it may use can ever hold
  // it).
  AdmissionDecision admit(const AdmissionRequest& request);
  // What admit() would decide, taking nothing.
  AdmissionDecision probe(const AdmissionRequest& request) const;
  // IPUs of every controller in the pass, free or not.
  std::uint64_t totalIpus() const;

 private:
  struct FreeSpace {
    std::string name;
    const vipu::PartitionPlanner* planner;
    vipu::BuddyMap free;
  };
  static AdmissionDecision admitInto(const AdmissionRequest& request, std::vector<FreeSpace>& spaces);

  std::vector<FreeSpace> spaces_;
};

// Queue order: higher priority first, then older first, then by key (a total order, so every process
// computes the same queue).
void sortQueue(std::vector<AdmissionRequest>& queue);

// Decides, for every request, whether it is admitted now (and where), waits (and its position), or can never
// run on the controllers it may use. Reservations take their IPUs first; then requests in queue order, each
// admitted one taking its IPUs before the next is considered. A job goes to the first of its controllers (in
// name order) that fits it. Pure and deterministic.
std::map<std::string, AdmissionDecision> planAdmissions(std::vector<AdmissionRequest> queue,
                                                        std::vector<ControllerCapacity> controllers,
                                                        const std::vector<Reservation>& reservations,
                                                        QueueingStrategy strategy);

}  // namespace ipu::controllers
