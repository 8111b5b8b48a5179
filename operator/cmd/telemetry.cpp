#include "cmd/telemetry.h"

#include <map>
#include <utility>

#include "ipujob/job_metrics.h"
#include "quota/quota_metrics.h"

namespace ipu::cmd {
namespace {

// client_golang's DefBuckets, in seconds: .005 … 10, sized for network calls.
prometheus::Histogram::BucketBoundaries defaultBuckets() {
  return {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
}

// From seconds to hours: admission waits for capacity, and a job can queue for a long time.
prometheus::Histogram::BucketBoundaries waitBuckets() {
  return {1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400};
}

// An unlabelled histogram, served (at zero) from the start.
prometheus::Histogram& histogram(prometheus::Registry& registry, const std::string& name,
                                 const std::string& help, prometheus::Histogram::BucketBoundaries buckets) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add({}, std::move(buckets));
}

}  // namespace

Telemetry::Telemetry()
    : reconciles_(prometheus::BuildCounter()
                      .Name("ipu_operator_reconcile_total")
                      .Help("IPUJob reconciles by result.")
                      .Register(registry_)),
      reconcileDuration_(histogram(registry_, "ipu_operator_reconcile_duration_seconds",
                                   "Time one IPUJob reconcile took.", defaultBuckets())),
      timeToAdmit_(histogram(registry_, "ipu_operator_time_to_admit_seconds",
                             "From an IPUJob's creation to its admission (partitions planned).",
                             waitBuckets())),
      timeToRunning_(histogram(registry_, "ipu_operator_time_to_running_seconds",
                               "From an IPUJob's creation to all its worker pods running.", waitBuckets())),
      admissionPass_(histogram(registry_, "ipu_operator_admission_pass_duration_seconds",
                               "Time one admission pass took (the whole queue planned against V-IPU).",
                               defaultBuckets())),
      leader_(prometheus::BuildGauge()
                  .Name("ipu_operator_leader")
                  .Help("1 while this replica runs the controller.")
                  .Register(registry_)
                  .Add({})) {
  // Counted from the caches at each scrape (see ScrapeGauges for why): a standby replica, which has no
  // cache attached, serves none of them.
  // Each counted by the controllers' own functions (ipujob/job_metrics.h) from the cache attached.
  const auto fromJobs = [this](metrics::GaugeSamples (*count)(const kube::Store&)) {
    return [this, count] {
      std::lock_guard lock(mutex_);
      return sources_.jobs == nullptr ? metrics::GaugeSamples{} : count(*sources_.jobs);
    };
  };
  scrapeGauges_.add("ipu_operator_ipujobs", "IPUJobs by phase.", {"phase"},
                    fromJobs(controllers::jobsByPhase));
  scrapeGauges_.add("ipu_operator_ipus_held", "IPUs in partitions that IPUJobs hold, by V-IPU controller.",
                    {"controller"}, fromJobs(controllers::ipusHeldByController));
  scrapeGauges_.add("ipu_operator_waiting_jobs", "IPUJobs waiting for admission.", {},
                    fromJobs(controllers::waitingJobs));
  scrapeGauges_.add("ipu_operator_workqueue_depth", "IPUJob keys ready for a worker.", {}, [this] {
    metrics::GaugeSamples samples;
    std::lock_guard lock(mutex_);
    if (sources_.queueLength) samples.push_back({{}, static_cast<double>(sources_.queueLength())});
    return samples;
  });
  addQuotaGauges();
  exposition_.add(registry_);
  exposition_.add(scrapeGauges_);

  healthz_.add("ping", [] { return Status{}; });
  // A standby replica is ready (it can take over at any time); the leader once its caches have synced.
  readyz_.add("informers-synced", [this]() -> Status {
    std::lock_guard lock(mutex_);
    if (!sources_.synced || sources_.synced()) return {};
    return makeError(ErrorCode::kUnavailable, "the IPUJob and pod caches have not synced yet");
  });
}

void Telemetry::addQuotaGauges() {
  // Per IPUQuota, as its spec and status say (the status the quota controller keeps): what an admin alerts
  // on.
  const auto perQuota = [this](const char* field, bool fromSpec) {
    return [this, field, fromSpec] {
      std::lock_guard lock(mutex_);
      return sources_.quotas == nullptr ? metrics::GaugeSamples{}
                                        : controllers::perQuota(*sources_.quotas, field, fromSpec);
    };
  };
  scrapeGauges_.add("ipu_operator_quota_limit_ipus", "IPUQuota maxIPUs, by namespace and quota.",
                    {"namespace", "quota"}, perQuota("maxIPUs", true));
  scrapeGauges_.add("ipu_operator_quota_used_ipus", "IPUs held by a namespace's running jobs, per IPUQuota.",
                    {"namespace", "quota"}, perQuota("usedIPUs", false));
  scrapeGauges_.add("ipu_operator_quota_reserved_ipus",
                    "IPUs held by a namespace's admitted jobs not running yet, per IPUQuota.",
                    {"namespace", "quota"}, perQuota("reservedIPUs", false));
  scrapeGauges_.add("ipu_operator_quota_pending_ipus",
                    "IPUs asked by a namespace's waiting jobs, per IPUQuota.", {"namespace", "quota"},
                    perQuota("pendingIPUs", false));
}

Status Telemetry::serve(const metrics::BindAddress& metricsAddress,
                        const metrics::BindAddress& probeAddress) {
  if (!metricsAddress.disabled) {
    auto server = metrics::HttpEndpoints::start(metricsAddress, {&exposition_, nullptr, nullptr});
    if (!server) return server.error();
    metricsServer_ = std::move(*server);
  }
  if (!probeAddress.disabled) {
    auto server = metrics::HttpEndpoints::start(probeAddress, {nullptr, &healthz_, &readyz_});
    if (!server) return server.error();
    probeServer_ = std::move(*server);
  }
  return {};
}

void Telemetry::attach(Sources sources) {
  std::lock_guard lock(mutex_);
  sources_ = std::move(sources);
}

void Telemetry::detach() {
  std::lock_guard lock(mutex_);
  sources_ = {};
}

void Telemetry::setLeading(bool leading) {
  leader_.Set(leading ? 1 : 0);
}

void Telemetry::reconciled(bool ok, double seconds) {
  reconciles_.Add({{"result", ok ? "success" : "error"}}).Increment();
  reconcileDuration_.Observe(seconds);
}

void Telemetry::admitted(double secondsSinceCreation) {
  if (secondsSinceCreation >= 0) timeToAdmit_.Observe(secondsSinceCreation);
}

void Telemetry::running(double secondsSinceCreation) {
  if (secondsSinceCreation >= 0) timeToRunning_.Observe(secondsSinceCreation);
}

void Telemetry::admissionPass(double seconds) {
  admissionPass_.Observe(seconds);
}

}  // namespace ipu::cmd
