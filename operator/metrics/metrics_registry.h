#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "metrics/metric_family.h"

namespace ipu::metrics {

// What a gauge callback reports at each scrape: label values (one per label name) and the value.
using GaugeSamples = std::vector<std::pair<LabelValues, double>>;
using GaugeCollector = std::function<GaugeSamples()>;

// client_golang's DefBuckets, in seconds: .005 … 10, sized for network calls.
std::vector<double> defaultBuckets();

// The operator's metrics, rendered for Prometheus in the text exposition format 0.0.4. Thread-safe.
//
// Registration is where mistakes are caught, once and loudly: a name outside the Prometheus grammar, a
// label name that is reserved or repeated, a name already taken, bad histogram bounds all throw
// std::invalid_argument naming the metric. Families live as long as the registry; the references returned
// here can be kept.
//
//   auto& reconciles = registry.counter("ipu_reconciles_total", "Reconciles by result.", {"result"});
//   reconciles.with({"error"}).inc();
class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  CounterFamily& counter(std::string name, std::string help, std::vector<std::string> labelNames = {});
  GaugeFamily& gauge(std::string name, std::string help, std::vector<std::string> labelNames = {});
  // `upperBounds`: finite and strictly increasing; a trailing +Inf is dropped (it is always there). Empty
  // means a single +Inf bucket, i.e. only _sum and _count carry information. `le` is not a valid label
  // name for a histogram: the buckets use it.
  HistogramFamily& histogram(std::string name, std::string help, std::vector<double> upperBounds,
                             std::vector<std::string> labelNames = {});

  // A gauge family whose samples are computed at scrape time, e.g. jobs per phase counted from an
  // informer's cache, so no counter has to be kept in step with it. `collect` runs on the scraping thread,
  // possibly on several at once, and must be thread-safe; it may take its own locks (the registry holds
  // none while it runs). It returning label values of the wrong count, or the same label values twice, is a
  // programming error: render() throws std::invalid_argument.
  void gaugeCallback(std::string name, std::string help, std::vector<std::string> labelNames,
                     GaugeCollector collect);

  // Every family in name order, each family's samples in label-value order; labels in the order they were
  // registered. Propagates whatever a gauge callback throws.
  std::string render() const;

 private:
  // Takes ownership after checking that the family's sample names are free.
  void add(std::unique_ptr<detail::Family> family);

  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<detail::Family>> families_;  // by name: render()'s order
  std::map<std::string, std::string> sampleNameOwners_;              // every sample name in use → family
};

}  // namespace ipu::metrics
