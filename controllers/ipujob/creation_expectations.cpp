#include "ipujob/creation_expectations.h"

namespace ipu::controllers {

std::string CreationExpectations::keyOf(const std::string& jobUid, int attempt) {
  return jobUid + "/" + std::to_string(attempt);
}

CreationExpectations::Attempt& CreationExpectations::entryLocked(const std::string& jobUid, int attempt) {
  const std::string key = keyOf(jobUid, attempt);
  if (Attempt* entry = attempts_.find(key)) return *entry;
  return attempts_.put(key, Attempt{});
}

void CreationExpectations::sharedChildrenMade(const std::string& jobUid, int attempt) {
  std::lock_guard lock(mutex_);
  entryLocked(jobUid, attempt).sharedChildren = true;
}

bool CreationExpectations::sharedChildrenMadeFor(const std::string& jobUid, int attempt) {
  std::lock_guard lock(mutex_);
  const Attempt* entry = attempts_.find(keyOf(jobUid, attempt));
  return entry && entry->sharedChildren;
}

void CreationExpectations::podCreated(const std::string& jobUid, int attempt, const std::string& pod) {
  std::lock_guard lock(mutex_);
  entryLocked(jobUid, attempt).podsAwaited[pod] = clock_.now();
}

void CreationExpectations::podSeen(const std::string& jobUid, int attempt, const std::string& pod) {
  std::lock_guard lock(mutex_);
  if (Attempt* entry = attempts_.find(keyOf(jobUid, attempt))) entry->podsAwaited.erase(pod);
}

std::optional<Clock::Duration> CreationExpectations::awaiting(const std::string& jobUid, int attempt,
                                                              const std::string& pod) {
  std::lock_guard lock(mutex_);
  Attempt* entry = attempts_.find(keyOf(jobUid, attempt));
  if (!entry) return std::nullopt;
  const auto found = entry->podsAwaited.find(pod);
  if (found == entry->podsAwaited.end()) return std::nullopt;
  const Clock::Duration left = found->second + ttl_ - clock_.now();
  if (left <= Clock::Duration::zero()) {
    entry->podsAwaited.erase(found);  // never shown: deleted before the cache saw it, or its watch lost
    return std::nullopt;
  }
  return left;
}

}  // namespace ipu::controllers
