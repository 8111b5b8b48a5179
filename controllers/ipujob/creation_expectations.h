#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/clock.h"
#include "kube/lru_cache.h"

namespace ipu::controllers {

// How long a pod this process created may stay out of its pod cache before a pass creates it again: far
// more than a watch lags, short enough that a pod deleted before the cache ever showed it is soon replaced.
inline constexpr std::chrono::seconds kCreationExpectationTtl{30};

// What this process created for a job's attempt and its pod cache has not shown yet, as Kubernetes'
// ReplicaSet controller keeps "expectations": a pass that runs on a cache still behind its own creates
// (7 of 8 pods seen) would otherwise create the 8th again — and, finding no pod of the attempt, the
// Service and NetworkPolicy too — each answered AlreadyExists and read back, three requests for nothing.
//
// Only an optimisation: forgetting (a restart, an evicted entry, the TTL) falls back to creating and the
// AlreadyExists answer, which is judged by owner as before. Keyed by the job's uid and attempt, so a job
// created again under its name or a new attempt never inherits another's. Thread-safe.
class CreationExpectations {
 public:
  explicit CreationExpectations(const Clock& clock, Clock::Duration ttl = kCreationExpectationTtl,
                                std::size_t capacity = 8192)
      : clock_(clock), ttl_(ttl), attempts_(capacity) {}

  // The attempt's Service (and NetworkPolicy) exist: created, or found to be this job's.
  void sharedChildrenMade(const std::string& jobUid, int attempt);
  bool sharedChildrenMadeFor(const std::string& jobUid, int attempt);

  // `pod` of the attempt was created (or found to be this job's) and is awaited in the cache.
  void podCreated(const std::string& jobUid, int attempt, const std::string& pod);
  // The cache shows `pod`: no longer awaited.
  void podSeen(const std::string& jobUid, int attempt, const std::string& pod);
  // How long `pod` is still awaited (created by this process within the TTL, not seen since); nullopt: it
  // is not, and a missing pod of that name must be created.
  std::optional<Clock::Duration> awaiting(const std::string& jobUid, int attempt, const std::string& pod);

 private:
  struct Attempt {
    bool sharedChildren = false;
    std::map<std::string, Clock::TimePoint> podsAwaited;  // name -> when created
  };
  static std::string keyOf(const std::string& jobUid, int attempt);
  // The attempt's entry, made when it has none; the caller holds mutex_.
  Attempt& entryLocked(const std::string& jobUid, int attempt);

  const Clock& clock_;
  const Clock::Duration ttl_;
  std::mutex mutex_;
  kube::LruCache<std::string, Attempt> attempts_;
};

}  // namespace ipu::controllers
