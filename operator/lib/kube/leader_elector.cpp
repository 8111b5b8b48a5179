#include "kube/leader_elector.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "common/log.h"
#include "common/time_format.h"
#include "kube/deadline_timer.h"

namespace ipu::kube {
namespace {

std::string describe(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + "s";
  return std::to_string(d.count()) + "ms";
}

const Json& specOf(const Json& lease) {
  static const Json kEmpty = Json::object();
  auto spec = lease.find("spec");
  return spec != lease.end() && spec->is_object() ? *spec : kEmpty;
}

std::string stringField(const Json& object, const char* key) {
  auto field = object.find(key);
  return field != object.end() && field->is_string() ? field->get<std::string>() : "";
}

int64_t intField(const Json& object, const char* key) {
  auto field = object.find(key);
  return field != object.end() && field->is_number_integer() ? field->get<int64_t>() : 0;
}

// leaseDurationSeconds is whole seconds: round up, so that followers never wait less than we promise.
int64_t wholeSeconds(std::chrono::milliseconds d) {
  return std::max<int64_t>(1, (d.count() + 999) / 1000);
}

// The record this candidate writes, on top of what the Lease already says (`base`), so that fields this
// elector does not know survive its writes.
Json leaseSpec(const std::string& holder, int64_t durationSeconds, const std::string& acquireTime,
               const std::string& renewTime, int64_t transitions, Json base = Json::object()) {
  base["holderIdentity"] = holder;
  base["leaseDurationSeconds"] = durationSeconds;
  base["acquireTime"] = acquireTime;
  base["renewTime"] = renewTime;
  base["leaseTransitions"] = transitions;
  return base;
}

// Blocks until `stop` fires. Not on the Clock: this waits for an event, not for time.
void waitUntilStopped(const std::stop_token& stop) {
  std::mutex mutex;
  std::condition_variable_any never;
  std::unique_lock lock(mutex);
  never.wait(lock, stop, [] { return false; });
}

}  // namespace

Status validate(const LeaderElectionConfig& config) {
  auto invalid = [](const std::string& message) {
    return makeError(ErrorCode::kInvalidArgument, "leader election: " + message);
  };
  if (config.leaseName.empty()) return invalid("leaseName is required");
  if (config.leaseNamespace.empty()) return invalid("leaseNamespace is required");
  if (config.retryPeriod <= std::chrono::milliseconds::zero()) {
    return invalid("retryPeriod must be positive, not " + describe(config.retryPeriod));
  }
  if (config.leaseDuration <= config.renewDeadline) {
    return invalid("leaseDuration (" + describe(config.leaseDuration) +
                   ") must be greater than renewDeadline (" + describe(config.renewDeadline) + ")");
  }
  const auto minimumDeadline =
      std::chrono::duration<double, std::milli>(config.retryPeriod) * kRetryPeriodJitterFactor;
  if (std::chrono::duration<double, std::milli>(config.renewDeadline) <= minimumDeadline) {
    char factor[16];
    std::snprintf(factor, sizeof(factor), "%.1f", kRetryPeriodJitterFactor);
    return invalid("renewDeadline (" + describe(config.renewDeadline) +
                   ") must be greater than retryPeriod (" + describe(config.retryPeriod) + ") x " + factor);
  }
  if (!(config.jitterFactor >= 0) || !std::isfinite(config.jitterFactor)) {
    return invalid("jitterFactor must be zero or positive");
  }
  return {};
}

std::string defaultIdentity() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0')
    std::snprintf(host, sizeof(host), "unknown");
  std::random_device entropy;
  const uint64_t suffix = (static_cast<uint64_t>(entropy()) << 32) | entropy();
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(suffix));
  return std::string(host) + "_" + hex;
}

Result<std::unique_ptr<LeaderElector>> LeaderElector::create(RestClient& client, LeaderElectionConfig config,
                                                             Clock& clock) {
  if (config.identity.empty()) config.identity = defaultIdentity();
  if (Status valid = validate(config); !valid) return valid.error();
  return std::make_unique<LeaderElector>(ConstructionKey{}, client, std::move(config), clock);
}

LeaderElector::LeaderElector(ConstructionKey, RestClient& client, LeaderElectionConfig config, Clock& clock)
    : client_(client), config_(std::move(config)), clock_(clock), random_(std::random_device{}()) {}

LeaderElector::Outcome LeaderElector::run(std::stop_token stop, const LeaderCallbacks& callbacks) {
  DeadlineTimer timer(clock_);
  if (!acquire(stop, timer, callbacks)) return Outcome::kStopped;

  // The leading work. Its thread ends only after it has been asked to stop, even if onStartedLeading returned
  // early, and its end is what ends the renewals after a graceful stop: the lease covers the work until the
  // work is over, so releasing it cannot let a successor start while we still write.
  std::stop_source workEnded;
  std::jthread work([&callbacks, workEnded](std::stop_token leading) mutable {
    if (callbacks.onStartedLeading) callbacks.onStartedLeading(leading);
    waitUntilStopped(leading);
    workEnded.request_stop();
  });
  std::stop_callback stopWork(stop, [&work] { work.request_stop(); });

  const Outcome outcome = renewUntilStopped(workEnded.get_token(), timer, callbacks);
  if (outcome == Outcome::kLost) {
    work.request_stop();
    leading_ = false;
    // At once: another candidate may lead by now. The work is joined afterwards, when `work` goes.
    if (callbacks.onStoppedLeading) callbacks.onStoppedLeading();
    return outcome;
  }
  work.join();
  if (config_.releaseOnStop) release(timer);
  leading_ = false;
  if (callbacks.onStoppedLeading) callbacks.onStoppedLeading();
  return outcome;
}

bool LeaderElector::acquire(std::stop_token stop, DeadlineTimer& timer, const LeaderCallbacks& callbacks) {
  log::info("leader election: trying to acquire the lease",
            {{"lease", config_.leaseNamespace + "/" + config_.leaseName}, {"identity", config_.identity}});
  while (!stop.stop_requested()) {
    // A follower's request may take as long as a leader's renewal may: renewDeadline.
    const bool acquired =
        timer.callBefore(deadlineAfter(clock_.now(), config_.renewDeadline), stop,
                         [&](std::stop_token request) { return tryAcquire(request, callbacks); });
    if (acquired) {
      if (!stop.stop_requested()) return true;
      // Stopped while winning: hand it straight back rather than start work that must stop at once.
      if (config_.releaseOnStop) release(timer);
      leading_ = false;
      return false;
    }
    if (!clock_.sleepFor(followerWait(), stop)) return false;
  }
  return false;
}

bool LeaderElector::tryAcquire(std::stop_token stop, const LeaderCallbacks& callbacks) {
  const ResourceRef leases = ResourceRef::leases();
  const int64_t ourSeconds = wholeSeconds(config_.leaseDuration);
  const Clock::TimePoint sentAt = clock_.now();
  auto current = client_.get(leases, config_.leaseNamespace, config_.leaseName, "", stop);
  if (!current) {
    if (current.error().code != ErrorCode::kNotFound) {
      log::warning("leader election: cannot read the lease", {{"error", current.error().toString()}});
      return false;
    }
    const std::string now = formatMicroTime(clock_.wallNow());
    Json lease = {{"apiVersion", leases.apiVersion()},
                  {"kind", "Lease"},
                  {"metadata", {{"name", config_.leaseName}, {"namespace", config_.leaseNamespace}}},
                  {"spec", leaseSpec(config_.identity, ourSeconds, now, now, 0)}};
    auto created = client_.create(leases, config_.leaseNamespace, lease, stop);
    if (!created) {
      if (created.error().code == ErrorCode::kAlreadyExists) {
        log::info("leader election: another candidate created the lease first");
      } else {
        log::warning("leader election: cannot create the lease", {{"error", created.error().toString()}});
      }
      return false;
    }
    becomeLeader(std::move(*created), sentAt, callbacks);
    return true;
  }

  const Json& spec = specOf(*current);
  if (spec != observedSpec_) {
    observedSpec_ = spec;
    observedAt_ = clock_.now();
  }
  const std::string holder = stringField(spec, "holderIdentity");
  reportLeader(holder, callbacks);
  // Ours already (a previous run under this identity): renew it at once, as client-go does.
  const bool ours = holder == config_.identity;
  if (!holder.empty() && !ours) {
    // The holder's own promise of how long its record stays valid, timed from when WE saw it change.
    const int64_t seconds = intField(spec, "leaseDurationSeconds");
    const Clock::Duration holderDuration =
        seconds > 0 ? Clock::Duration(std::chrono::seconds(seconds)) : Clock::Duration(config_.leaseDuration);
    if (clock_.now() < deadlineAfter(observedAt_, holderDuration)) return false;
    log::info(
        "leader election: the holder stopped renewing; taking over",
        {{"holder", holder},
         {"unchangedFor",
          describe(std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - observedAt_))}});
  }

  const std::string now = formatMicroTime(clock_.wallNow());
  const std::string acquireTime =
      ours && spec.contains("acquireTime") ? stringField(spec, "acquireTime") : now;
  const int64_t transitions = intField(spec, "leaseTransitions") + (ours ? 0 : 1);
  Json desired = *current;
  desired["spec"] = leaseSpec(config_.identity, ourSeconds, acquireTime, now, transitions, spec);
  auto updated = client_.update(leases, config_.leaseNamespace, desired, "", stop);
  if (!updated) {
    if (updated.error().code == ErrorCode::kConflict) {
      log::info("leader election: lost the race for the lease to another candidate");
    } else {
      log::warning("leader election: cannot update the lease", {{"error", updated.error().toString()}});
    }
    return false;
  }
  becomeLeader(std::move(*updated), sentAt, callbacks);
  return true;
}

void LeaderElector::becomeLeader(Json lease, Clock::TimePoint sentAt, const LeaderCallbacks& callbacks) {
  lease_ = std::move(lease);
  renewedAt_ = sentAt;
  leading_ = true;
  log::info("leader election: acquired the lease",
            {{"lease", config_.leaseNamespace + "/" + config_.leaseName},
             {"identity", config_.identity},
             {"leaseTransitions", std::to_string(intField(specOf(lease_), "leaseTransitions"))}});
  reportLeader(config_.identity, callbacks);
}

LeaderElector::Outcome LeaderElector::renewUntilStopped(std::stop_token stop, DeadlineTimer& timer,
                                                        const LeaderCallbacks& callbacks) {
  Clock::TimePoint nextTry = renewedAt_ + config_.retryPeriod;
  for (;;) {
    const Clock::TimePoint lossDeadline = renewedAt_ + config_.renewDeadline;
    if (!clock_.sleepUntil(std::min(nextTry, lossDeadline), stop) || stop.stop_requested()) {
      return Outcome::kStopped;
    }
    if (clock_.now() >= lossDeadline) {
      log::error("leader election: leadership lost: the lease was not renewed within renewDeadline",
                 {{"lease", config_.leaseNamespace + "/" + config_.leaseName},
                  {"renewDeadline", describe(config_.renewDeadline)}});
      return Outcome::kLost;
    }
    const Clock::TimePoint tried = clock_.now();
    // Bounded by the loss deadline: a request still hanging then is cancelled, and the check above fires.
    const Renewal renewal = timer.callBefore(
        lossDeadline, stop, [&](std::stop_token request) { return tryRenew(request, callbacks); });
    if (renewal == Renewal::kLost) return Outcome::kLost;
    nextTry = (renewal == Renewal::kRenewed ? renewedAt_ : tried) + config_.retryPeriod;
  }
}

LeaderElector::Renewal LeaderElector::tryRenew(std::stop_token stop, const LeaderCallbacks& callbacks) {
  auto lostBecause = [&](const std::string& why, const std::string& holder = "") {
    log::error("leader election: leadership lost: " + why,
               {{"lease", config_.leaseNamespace + "/" + config_.leaseName}, {"holder", holder}});
    reportLeader(holder, callbacks);
    return Renewal::kLost;
  };
  auto failed = [](const Error& error) {
    log::warning("leader election: cannot renew the lease", {{"error", error.toString()}});
    return Renewal::kFailed;
  };

  auto renewed = writeRenewal(stop);
  if (renewed) return Renewal::kRenewed;
  if (renewed.error().code == ErrorCode::kNotFound) return lostBecause("the lease was deleted");
  if (renewed.error().code != ErrorCode::kConflict) return failed(renewed.error());

  // Someone else wrote the Lease since we did. It is still ours only if it still names us.
  auto current = client_.get(ResourceRef::leases(), config_.leaseNamespace, config_.leaseName, "", stop);
  if (!current) {
    if (current.error().code == ErrorCode::kNotFound) return lostBecause("the lease was deleted");
    return failed(current.error());
  }
  const std::string holder = stringField(specOf(*current), "holderIdentity");
  if (holder != config_.identity) return lostBecause("another candidate holds the lease", holder);
  // Still ours (our own earlier write whose reply was lost, or an edit of its labels): renew on top of it.
  lease_ = std::move(*current);
  renewed = writeRenewal(stop);
  if (renewed) return Renewal::kRenewed;
  if (renewed.error().code == ErrorCode::kNotFound) return lostBecause("the lease was deleted");
  return failed(renewed.error());
}

Result<Json> LeaderElector::writeRenewal(std::stop_token stop) {
  const Clock::TimePoint sentAt = clock_.now();
  const Json& spec = specOf(lease_);
  const std::string now = formatMicroTime(clock_.wallNow());
  const std::string acquireTime = spec.contains("acquireTime") ? stringField(spec, "acquireTime") : now;
  Json desired = lease_;
  desired["spec"] = leaseSpec(config_.identity, wholeSeconds(config_.leaseDuration), acquireTime, now,
                              intField(spec, "leaseTransitions"), spec);
  auto written = client_.update(ResourceRef::leases(), config_.leaseNamespace, desired, "", stop);
  if (written) {
    lease_ = *written;
    renewedAt_ = sentAt;
  }
  return written;
}

void LeaderElector::release(DeadlineTimer& timer) {
  const std::string now = formatMicroTime(clock_.wallNow());
  const Json& spec = specOf(lease_);
  Json desired = lease_;
  desired["spec"] = leaseSpec("", 1, now, now, intField(spec, "leaseTransitions"), spec);
  // Not bounded by the caller's stop token, which has fired by now; bounded by renewDeadline instead. The
  // write is conditional, so it cannot clobber a successor that got there first.
  auto released = timer.callBefore(
      deadlineAfter(clock_.now(), config_.renewDeadline), std::stop_token{}, [&](std::stop_token request) {
        return client_.update(ResourceRef::leases(), config_.leaseNamespace, desired, "", request);
      });
  if (!released) {
    log::warning("leader election: cannot release the lease; a successor takes over when it expires",
                 {{"error", released.error().toString()}});
    return;
  }
  lease_ = std::move(*released);
  log::info("leader election: released the lease",
            {{"lease", config_.leaseNamespace + "/" + config_.leaseName}});
}

void LeaderElector::reportLeader(const std::string& holder, const LeaderCallbacks& callbacks) {
  if (holder.empty() || holder == reportedLeader_) return;
  reportedLeader_ = holder;
  log::info("leader election: new leader",
            {{"lease", config_.leaseNamespace + "/" + config_.leaseName}, {"leader", holder}});
  if (callbacks.onNewLeader) callbacks.onNewLeader(holder);
}

Clock::Duration LeaderElector::followerWait() {
  if (config_.jitterFactor <= 0) return config_.retryPeriod;
  std::uniform_real_distribution<double> fraction(0.0, config_.jitterFactor);
  const auto wait = std::chrono::duration<double, std::nano>(config_.retryPeriod) * (1.0 + fraction(random_));
  return std::chrono::duration_cast<Clock::Duration>(wait);
}

}  // namespace ipu::kube
