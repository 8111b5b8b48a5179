#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <stop_token>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "kube/rest_client.h"

namespace ipu::kube {

class DeadlineTimer;

// client-go's defaults and rules (tools/leaderelection): followers retry every retryPeriod; a leader that
// has not renewed for renewDeadline stops leading; a follower takes over a lease whose record it has seen
// unchanged for leaseDuration.
struct LeaderElectionConfig {
  std::string leaseName;
  std::string leaseNamespace;
  // Must differ between candidates. Empty: defaultIdentity().
  std::string identity;
  std::chrono::milliseconds leaseDuration{15000};
  std::chrono::milliseconds renewDeadline{10000};
  std::chrono::milliseconds retryPeriod{2000};
  // A follower waits retryPeriod × (1 + a random fraction of jitterFactor) between tries, as client-go's
  // JitterUntil does, so that candidates started together do not stay in step. 0: exactly retryPeriod.
  double jitterFactor = 1.2;
  // On a graceful stop, hand the lease back (holder "", leaseDurationSeconds 1) so that a follower takes over
  // at its next try instead of waiting out the lease. Safe because run() first waits for the leading work.
  bool releaseOnStop = true;
};

// The factor client-go's validation applies to retryPeriod: renewDeadline > retryPeriod × 1.2.
inline constexpr double kRetryPeriodJitterFactor = 1.2;

// InvalidArgument unless leaseDuration > renewDeadline > retryPeriod × 1.2 > 0 and the names are set.
// The margin leaseDuration - renewDeadline is what protects against two leaders: a leader stops leading
// renewDeadline after its last renewal, followers wait leaseDuration after seeing it.
Status validate(const LeaderElectionConfig& config);

// "<hostname>_<16 hex digits>": unique per process, readable in `kubectl get lease -o yaml`.
std::string defaultIdentity();

struct LeaderCallbacks {
  // Runs on a thread of its own once this candidate leads. `leading` fires when leadership is lost or the
  // elector is stopped; the work must then end promptly. If it returns early, the candidate goes on leading.
  std::function<void(std::stop_token leading)> onStartedLeading;
  // Called once when leading ends, on the thread that called run(). When leadership is LOST it is called at
  // once, before waiting for the leading work (which may then still be starting on its own thread): the
  // process should exit, since another candidate may lead by now.
  std::function<void()> onStoppedLeading;
  // Called on run()'s thread whenever the observed holder changes (this candidate included). Must be quick.
  std::function<void(const std::string& identity)> onNewLeader;
};

// Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics and two deliberate choices:
//  - Expiry is judged only on this process's monotonic Clock: a follower takes over when the holder's record
//    (the Lease's spec) has not changed for the holder's leaseDurationSeconds since this follower first saw
//    it. The timestamps in the record come from another machine's clock and are never compared with ours.
//  - Every write is a PUT conditional on the resourceVersion last read or written, so two candidates cannot
//    both win: the slower one gets 409 Conflict. A leader renews by PUT alone; a 409 makes it re-read the
//    Lease, and leadership is lost if the holder is no longer this candidate.
// A leader's renewals, and any request it has in flight, are bounded by renewDeadline after its last
// successful renewal (measured from when that request was sent), so a hung connection cannot stretch it.
// There is no fencing: the leading work must stop writing when `leading` fires.
class LeaderElector {
 public:
  enum class Outcome { kStopped, kLost };

  // InvalidArgument for a config validate() rejects. An empty identity becomes defaultIdentity().
  static Result<std::unique_ptr<LeaderElector>> create(RestClient& client, LeaderElectionConfig config,
                                                       Clock& clock = Clock::real());

  // Only create() can make the key, so only create() constructs (and validates).
  class ConstructionKey {
    friend class LeaderElector;
    ConstructionKey() = default;
  };
  LeaderElector(ConstructionKey, RestClient& client, LeaderElectionConfig config, Clock& clock);
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Tries to acquire the lease until it does or `stop` fires; then leads, renewing every retryPeriod, until
  //  - `stop` fires: the leading work is asked to stop and keeps being covered by renewals until it has
  //    ended; then the lease is released (releaseOnStop), onStoppedLeading is called and kStopped returned;
  //  - leadership is lost (renewDeadline passed without a renewal, another holder, the Lease deleted): the
  //    leading work is asked to stop, onStoppedLeading is called at once, and kLost is returned once the
  //    work has ended.
  // onStoppedLeading is only called if the candidate led. Call run() once.
  Outcome run(std::stop_token stop, const LeaderCallbacks& callbacks);

  bool isLeader() const { return leading_.load(); }
  const std::string& identity() const { return config_.identity; }
  const LeaderElectionConfig& config() const { return config_; }

 private:
  enum class Renewal { kRenewed, kFailed, kLost };

  bool acquire(std::stop_token stop, DeadlineTimer& timer, const LeaderCallbacks& callbacks);
  bool tryAcquire(std::stop_token stop, const LeaderCallbacks& callbacks);
  Outcome renewUntilStopped(std::stop_token stop, DeadlineTimer& timer, const LeaderCallbacks& callbacks);
  Renewal tryRenew(std::stop_token stop, const LeaderCallbacks& callbacks);
  Result<Json> writeRenewal(std::stop_token stop);
  void release(DeadlineTimer& timer);
  void becomeLeader(Json lease, Clock::TimePoint sentAt, const LeaderCallbacks& callbacks);
  void reportLeader(const std::string& holder, const LeaderCallbacks& callbacks);
  Clock::Duration followerWait();

  RestClient& client_;
  const LeaderElectionConfig config_;
  Clock& clock_;
  std::atomic<bool> leading_{false};

  // As a follower: the holder's record as last seen, and when (on our clock) it last changed.
  Json observedSpec_;
  Clock::TimePoint observedAt_;
  std::string reportedLeader_;

  // As the leader: the Lease as last written (its resourceVersion makes the next write conditional), and
  // when the request that wrote it was sent: our lease cannot have started later than that.
  Json lease_;
  Clock::TimePoint renewedAt_;

  std::mt19937_64 random_;
};

}  // namespace ipu::kube
