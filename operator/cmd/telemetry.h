#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "common/result.h"
#include "kube/store.h"
#include "metrics/bind_address.h"
#include "metrics/health_checks.h"
#include "metrics/http_endpoints.h"
#include "metrics/metrics_registry.h"

namespace ipu::cmd {

// The operator's metrics (prefix ipu_operator_, base units) and probes. They exist for the whole process:
// a standby replica answers probes and reports that it does not lead; the leader attaches its caches while
// it runs the controller, and the gauges computed from them appear.
class Telemetry {
 public:
  Telemetry();

  // Serves /metrics and the probes on their addresses (either may be disabled). Unavailable when a port is
  // taken.
  Status serve(const metrics::BindAddress& metricsAddress, const metrics::BindAddress& probeAddress);

  // While leading: what the per-scrape gauges count and what /readyz waits for.
  struct Sources {
    const kube::Store* jobs = nullptr;
    std::function<std::size_t()> queueLength;
    std::function<bool()> synced;
  };
  void attach(Sources sources);
  void detach();
  void setLeading(bool leading);

  void reconciled(bool ok, double seconds);
  void admitted(double secondsSinceCreation);
  void running(double secondsSinceCreation);
  void admissionPass(double seconds);

  const metrics::Registry& registry() const { return registry_; }

 private:
  metrics::Registry registry_;
  metrics::HealthChecks healthz_{"healthz"};
  metrics::HealthChecks readyz_{"readyz"};
  metrics::CounterFamily& reconciles_;
  metrics::HistogramFamily& reconcileDuration_;
  metrics::HistogramFamily& timeToAdmit_;
  metrics::HistogramFamily& timeToRunning_;
  metrics::HistogramFamily& admissionPass_;
  metrics::GaugeFamily& leader_;

  mutable std::mutex mutex_;
  Sources sources_;
  std::unique_ptr<metrics::HttpEndpoints> metricsServer_;
  std::unique_ptr<metrics::HttpEndpoints> probeServer_;
};

}  // namespace ipu::cmd
