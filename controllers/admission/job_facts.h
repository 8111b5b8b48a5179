#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "admission/admission_plan.h"
#include "api/ipujob_status.h"
#include "common/clock.h"
#include "quota/quota_usage.h"

namespace ipu::controllers {

// What an admission pass reads of one IPUJob. Every pass reads every job in the cache (who holds which
// partitions, who waits); taken from each cached object once, a pass over a thousand jobs walks a thousand
// of these instead of a thousand JSON trees.
struct JobFacts {
  std::string key;  // "ns/name"
  std::string ns;
  std::string uid;
  std::string generation;  // metadata.generation as the object has it
  bool alive = false;      // not being deleted, not finished (api::isAlive)
  bool suspended = false;
  bool waitsForAdmission = false;
  std::string manager;                     // api::managerOf
  std::vector<api::PartitionRecord> held;  // api::heldPartitionsOf
  std::optional<Clock::WallTime> latestEnd;
  std::optional<QuotaJob> heldQuota;  // heldQuotaJobOf: what it holds of its namespace's quota
  // Its request to the queue: parsed the first time a pass needs it (a waiting job's), with its pod
  // template. Inner nullopt: the spec does not parse (the job's own reconcile fails it with the reason).
  std::optional<std::optional<AdmissionRequest>> request;
};

JobFacts factsOf(const nlohmann::json& job);

// The facts of the jobs a pass walks, by the cached object they were taken from. A store replaces an object
// (a new shared pointer) whenever the job changes and never changes one in place, so the same object means
// the same facts: a walk reads no JSON for a job that did not change. Not thread-safe: the admitter's pass
// lock guards it.
class JobFactsCache {
 public:
  // The facts of `job`, taken afresh when it is not the object they were taken from.
  JobFacts& of(const std::shared_ptr<const nlohmann::json>& job);
  // Forgets the jobs not looked at since the last sweep (gone from the cache). Call after a walk of all.
  void sweep();
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    // Which object the facts are of. Its control block outlives a freed object while this refers to it, so a
    // new object at a freed one's address is never taken for it.
    std::weak_ptr<const nlohmann::json> object;
    JobFacts facts;
    bool seen = true;
  };
  std::unordered_map<const nlohmann::json*, Entry> entries_;
};

}  // namespace ipu::controllers
