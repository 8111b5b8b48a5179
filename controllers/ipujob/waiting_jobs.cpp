#include "ipujob/waiting_jobs.h"

#include "api/ipujob_status.h"
#include "api/job_lifecycle.h"

namespace ipu::controllers {
namespace {

std::set<std::string> heldIds(const kube::ObjectPtr& job) {
  std::set<std::string> ids;
  if (!job) return ids;
  for (const auto& partition : api::heldPartitionsOf(*job)) ids.insert(partition.id);
  return ids;
}

}  // namespace

std::vector<std::string> WaitingJobs::wakeFor(const kube::ObjectPtr& old, const kube::ObjectPtr& current) {
  const std::string self = kube::objectKey(current ? *current : *old);
  const bool waitsNow = current && api::waitsForAdmission(*current);
  const bool capacityChanged = heldIds(old) != heldIds(current);
  const bool leftQueue = old && api::waitsForAdmission(*old) && !waitsNow;
  std::lock_guard lock(mutex_);
  if (waitsNow) {
    waiting_.insert(self);
  } else {
    waiting_.erase(self);
  }
  std::vector<std::string> keys;
  if (!capacityChanged && !leftQueue) return keys;
  for (const std::string& key : waiting_) {
    if (key != self) keys.push_back(key);
  }
  return keys;
}

}  // namespace ipu::controllers
