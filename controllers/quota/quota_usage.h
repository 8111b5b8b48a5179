#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/ipuquota.h"
#include "api/job_summary.h"

namespace ipu::controllers {

using Json = nlohmann::json;

// What one IPUJob means to its namespace's quota, read from the job's summary as a cache has it. Pure.
struct QuotaJob {
  enum class State {
    kWaiting,   // waiting for admission: asks for its gang
    kReserved,  // admitted, partitions not all active yet: holds its gang
    kRunning,   // every held partition active
  };
  std::string name;
  std::string uid;
  State state = State::kWaiting;
  std::int64_t ipus = 0;  // held (its held partitions) or asked for (jobInstances x ipusPerJobInstance)

  bool holds() const { return state != State::kWaiting; }
  bool operator==(const QuotaJob&) const = default;
};

// The job as it holds IPUs (kRunning or kReserved, with what its held partitions add up to); nullopt when it
// holds none.
std::optional<QuotaJob> heldQuotaJobOf(const api::JobSummary& job);
std::vector<QuotaJob> heldQuotaJobsOf(const std::vector<std::shared_ptr<const api::JobSummary>>& jobs);

// heldQuotaJobOf, or for a waiting job what it asks for (JobSummary::ask); nullopt for a job that neither
// holds nor asks for IPUs (finished with its partitions released, suspended,
// being deleted without partitions, or waiting with a spec that does not parse: its own reconcile fails it).
std::optional<QuotaJob> quotaJobOf(const api::JobSummary& job);
std::vector<QuotaJob> quotaJobsOf(const std::vector<std::shared_ptr<const api::JobSummary>>& jobs);

// One IPUQuota's status counts from its namespace's jobs and its ledger. A ledger entry whose job is waiting
// (its admission was claimed but not recorded yet) counts as reserved: the quota holds those IPUs for it.
api::IpuQuotaStatus observeQuota(const std::vector<QuotaJob>& jobs,
                                 const std::map<std::string, api::LedgerEntry>& ledger);

// Where a ledger and the namespace's jobs disagree:
//  - missing: jobs holding IPUs with no entry under their name (admitted before the quota existed): the
//    controller adds them, and until then every claim counts them;
//  - unknown: entries whose job (name and uid) the cache does not show as holding or asking; only the API
//    server can say that the job is gone (a cache may not have seen a job created a moment ago, or may
//    still show an older job of the name), so each is checked there before it goes.
struct LedgerGaps {
  std::map<std::string, api::LedgerEntry> missing;
  std::vector<std::string> unknown;  // job names
};
LedgerGaps ledgerGaps(const std::vector<QuotaJob>& jobs,
                      const std::map<std::string, api::LedgerEntry>& ledger);

// A job about to be admitted, as it claims its namespace's quota.
struct LedgerClaim {
  std::string ns;
  std::string name;
  std::string uid;
  std::int64_t ipus = 0;
  std::string jobVersion;  // the job's resourceVersion, as the admission that claims read it
};

struct ClaimCheck {
  enum class Kind {
    kRecorded,  // the ledger has this claim (job, size and job version) already: nothing to write
    kFits,      // write the entry (conditionally on the version checked)
    kRefused,   // over maxIPUs or maxJobs: the message says which, the limit and the use
  };
  Kind kind = Kind::kRefused;
  std::string message;
};

// The check made, against the quota as one resourceVersion has it, before an entry is written: the
// namespace's holding is the ledger (an entry of another job that had the claimant's name is a job gone) plus
// the held jobs missing from it; with the claim it must stay within maxIPUs and maxJobs. Only the jobs that
// hold IPUs are read (heldQuotaJobsOf is enough).
ClaimCheck checkClaim(const api::IpuQuota& quota, const std::vector<QuotaJob>& jobs,
                      const LedgerClaim& claim);

}  // namespace ipu::controllers
