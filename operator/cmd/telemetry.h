#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "common/result.h"
#include "kube/store.h"
#include "metrics/bind_address.h"
#include "metrics/exposition.h"
#include "metrics/health_checks.h"
#include "metrics/http_endpoints.h"
#include "metrics/scrape_gauges.h"

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
    const kube::Store* quotas = nullptr;
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

  // Everything /metrics serves; render() gives the page.
  const metrics::Exposition& registry() const { return exposition_; }

 private:
  prometheus::Registry registry_;       // what the program updates: counters, histograms, the leader gauge
  metrics::ScrapeGauges scrapeGauges_;  // what is counted from the caches at each scrape
  metrics::Exposition exposition_;
  metrics::HealthChecks healthz_{"healthz"};
  metrics::HealthChecks readyz_{"readyz"};
  void addQuotaGauges();

  prometheus::Family<prometheus::Counter>& reconciles_;
  prometheus::Histogram& reconcileDuration_;
  prometheus::Histogram& timeToAdmit_;
  prometheus::Histogram& timeToRunning_;
  prometheus::Histogram& admissionPass_;
  prometheus::Gauge& leader_;

  mutable std::mutex mutex_;
  Sources sources_;
  std::unique_ptr<metrics::HttpEndpoints> metricsServer_;
  std::unique_ptr<metrics::HttpEndpoints> probeServer_;
};

}  // namespace ipu::cmd
