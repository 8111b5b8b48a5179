#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

namespace ipu::metrics {

// What a scrape gauge reports at each scrape: label values (one per label name) and the value.
using GaugeSamples = std::vector<std::pair<std::vector<std::string>, double>>;
using GaugeCollector = std::function<GaugeSamples()>;

// Gauge families whose samples are computed when /metrics is scraped, e.g. jobs per phase counted from an
// informer's cache.
//
// A Collectable of its own rather than prometheus::Gauges updated before each scrape: the samples are the
// cache's picture at the moment of the scrape, with nothing to keep in step between scrapes; label values
// that disappear (a controller that holds no IPU any more, every sample while a standby replica has no
// cache) disappear from /metrics with them, where gauges would stay behind until removed one by one; and two
// concurrent scrapes cannot interleave their updates.
//
// Thread-safe. The collectors run on the scraping thread, possibly on several at once, without any lock of
// this class held; they may take their own. A family whose collector reports nothing is left out.
class ScrapeGauges final : public prometheus::Collectable {
 public:
  // std::invalid_argument for a name or label name outside the Prometheus grammar, a repeated label name, a
  // name already added here, or an empty collector.
  void add(std::string name, std::string help, std::vector<std::string> labelNames, GaugeCollector collect);

  // Runs every collector. std::invalid_argument when one reports the wrong number of label values or the
  // same label values twice (a programming error); propagates whatever a collector throws.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  struct Family {
    std::string name;
    std::string help;
    std::vector<std::string> labelNames;
    GaugeCollector collect;
  };

  mutable std::mutex mutex_;
  std::vector<Family> families_;
};

}  // namespace ipu::metrics
