#include "admission/job_facts.h"

#include "api/ipujob.h"
#include "api/job_lifecycle.h"
#include "common/json_access.h"
#include "kube/store.h"

namespace ipu::controllers {
JobFacts factsOf(const nlohmann::json& job) {
  const auto identity = api::identityOf(job);
  JobFacts facts;
  facts.key = kube::objectKey(job);
  facts.ns = identity.ns;
  facts.uid = identity.uid;
  facts.generation = member(member(job, "metadata"), "generation").dump();
  facts.alive = api::isAlive(job);
  facts.suspended = member(member(job, "spec"), "suspend") == nlohmann::json(true);
  facts.waitsForAdmission = api::waitsForAdmission(job);
  facts.manager = api::managerOf(job);
  facts.held = api::heldPartitionsOf(job);
  facts.latestEnd = api::latestEndOf(job);
  facts.heldQuota = heldQuotaJobOf(job);
  return facts;
}

JobFacts& JobFactsCache::of(const std::shared_ptr<const nlohmann::json>& job) {
  Entry& entry = entries_[job.get()];
  entry.seen = true;
  // The same control block is the same object: `job` holds it, so it cannot have been freed and reused.
  const bool same = !entry.object.owner_before(job) && !job.owner_before(entry.object);
  if (!same) {
    entry.object = job;
    entry.facts = factsOf(*job);
  }
  return entry.facts;
}

void JobFactsCache::sweep() {
  std::erase_if(entries_, [](const auto& entry) { return !entry.second.seen; });
  for (auto& [object, entry] : entries_) entry.seen = false;
}

}  // namespace ipu::controllers
