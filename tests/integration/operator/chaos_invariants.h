// The invariants the chaos test holds the operator to, checked on every snapshot of the cluster it takes
// while faults are injected. Each snapshot is the IPUJobs and worker pods the API server lists and the
// partitions V-IPU lists, taken one after the other (not at one instant), so every check is stated so that
// this skew cannot make a correct operator look wrong:
//  - never two live pods of the same worker (job, instance, worker index);
//  - never two jobs on one IPU: no IPU belongs to the partitions of live pods of two jobs. V-IPU never
//    places two partitions on one IPU, so this fails only when a job's pods outlive its partition and the
//    IPUs go to another job while they run (pods are made only once their partition is there, and a pod
//    once gone never comes back, so a later pod listing cannot show pods that were gone earlier);
//  - never a partition without a live owner for longer than `orphanGrace` (an IPUJob, in any phase, whose
//    identity derives the partition's id);
//  - never a namespace holding more IPUs than its IPUQuota (one list is one revision of every job).
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vipu/vipu_types.h"

namespace ipu::testing {

struct ChaosSnapshot {
  std::chrono::steady_clock::time_point at;
  nlohmann::json jobs;  // IPUJobs of the namespaces under test (items)
  nlohmann::json pods;  // their worker pods (items)
  std::vector<vipu::Partition> partitions;
};

class ChaosInvariants {
 public:
  // `prefix`: the operator's partition id prefix; `quotaOf`: namespace -> maxIPUs.
  ChaosInvariants(std::string prefix, std::map<std::string, int> quotaOf, std::chrono::seconds orphanGrace);

  void check(const ChaosSnapshot& snapshot);

  // Each violation once, with what was seen.
  const std::vector<std::string>& violations() const { return violations_; }
  int snapshots() const { return snapshots_; }
  int partitionsSeen() const { return static_cast<int>(ipusOf_.size()); }
  int partitionsSeenInError() const { return static_cast<int>(inError_.size()); }
  int orphansSeen() const { return static_cast<int>(orphansSeen_.size()); }
  int maxLivePods() const { return maxLivePods_; }

 private:
  void checkWorkers(const nlohmann::json& pods);
  void checkIpus(const nlohmann::json& pods);
  void checkOwners(const ChaosSnapshot& snapshot);
  void checkQuotas(const nlohmann::json& jobs);
  void violation(const std::string& key, const std::string& what);

  std::string prefix_;
  std::map<std::string, int> quotaOf_;
  std::chrono::seconds orphanGrace_;
  std::map<std::string, std::vector<std::string>> ipusOf_;  // partition id -> its IPUs, as last listed
  std::set<std::string> inError_;
  std::map<std::string, std::chrono::steady_clock::time_point> unownedSince_;
  std::set<std::string> orphansSeen_;
  std::set<std::string> reported_;
  std::vector<std::string> violations_;
  int snapshots_ = 0;
  int maxLivePods_ = 0;
};

}  // namespace ipu::testing
