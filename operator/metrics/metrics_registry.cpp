#include "metrics/metrics_registry.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "metrics/metric_names.h"
#include "metrics/text_format.h"

namespace ipu::metrics {
namespace {

std::string quoted(const std::string& text) {
  return '"' + text + '"';
}

void checkNames(const std::string& name, const std::vector<std::string>& labelNames) {
  if (!isValidMetricName(name)) {
    throw std::invalid_argument("invalid metric name " + quoted(name) +
                                ": must match [a-zA-Z_:][a-zA-Z0-9_:]*");
  }
  std::set<std::string> seen;
  for (const auto& label : labelNames) {
    if (!isValidLabelName(label)) {
      throw std::invalid_argument("metric " + quoted(name) + ": invalid label name " + quoted(label) +
                                  ": must match [a-zA-Z_][a-zA-Z0-9_]* and not start with \"__\"");
    }
    if (!seen.insert(label).second) {
      throw std::invalid_argument("metric " + quoted(name) + ": label name " + quoted(label) +
                                  " is repeated");
    }
  }
}

std::vector<double> checkedBuckets(const std::string& name, std::vector<double> upperBounds) {
  if (!upperBounds.empty() && upperBounds.back() == std::numeric_limits<double>::infinity())
    upperBounds.pop_back();
  for (std::size_t i = 0; i < upperBounds.size(); ++i) {
    if (!std::isfinite(upperBounds[i])) {
      throw std::invalid_argument("histogram " + quoted(name) + ": bucket bound " +
                                  formatValue(upperBounds[i]) +
                                  " is not finite (only a last +Inf is allowed)");
    }
    if (i > 0 && !(upperBounds[i - 1] < upperBounds[i])) {
      throw std::invalid_argument(
          "histogram " + quoted(name) + ": bucket bounds must increase strictly, but " +
          formatValue(upperBounds[i - 1]) + " is followed by " + formatValue(upperBounds[i]));
    }
  }
  return upperBounds;
}

// A gauge family computed by a callback at each scrape: it owns no children, only the callback.
class GaugeCallbackFamily final : public detail::Family {
 public:
  GaugeCallbackFamily(std::string name, std::string help, std::vector<std::string> labelNames,
                      GaugeCollector collect)
      : Family(std::move(name), std::move(help), "gauge", std::move(labelNames)),
        collect_(std::move(collect)) {}

 private:
  void appendSamples(std::string& out) const override {
    GaugeSamples samples = collect_();
    for (const auto& sample : samples) checkLabelCount(sample.first.size());
    std::sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const auto repeated = std::adjacent_find(samples.begin(), samples.end(),
                                             [](const auto& a, const auto& b) { return a.first == b.first; });
    if (repeated != samples.end()) {
      throw std::invalid_argument("gauge callback " + quoted(name()) + " reported the label values {" +
                                  formatLabels(labelNames(), repeated->first) + "} twice");
    }
    for (const auto& [labelValues, value] : samples) {
      appendSample(out, name(), formatLabels(labelNames(), labelValues), value);
    }
  }

  const GaugeCollector collect_;
};

}  // namespace

std::vector<double> defaultBuckets() {
  return {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
}

Registry::Registry() = default;
Registry::~Registry() = default;

CounterFamily& Registry::counter(std::string name, std::string help, std::vector<std::string> labelNames) {
  checkNames(name, labelNames);
  auto family =
      std::make_unique<CounterFamily>(std::move(name), std::move(help), "counter", std::move(labelNames),
                                      [] { return std::make_unique<Counter>(); });
  CounterFamily& registered = *family;
  add(std::move(family));
  return registered;
}

GaugeFamily& Registry::gauge(std::string name, std::string help, std::vector<std::string> labelNames) {
  checkNames(name, labelNames);
  auto family =
      std::make_unique<GaugeFamily>(std::move(name), std::move(help), "gauge", std::move(labelNames),
                                    [] { return std::make_unique<Gauge>(); });
  GaugeFamily& registered = *family;
  add(std::move(family));
  return registered;
}

HistogramFamily& Registry::histogram(std::string name, std::string help, std::vector<double> upperBounds,
                                     std::vector<std::string> labelNames) {
  checkNames(name, labelNames);
  if (std::find(labelNames.begin(), labelNames.end(), "le") != labelNames.end()) {
    throw std::invalid_argument("histogram " + quoted(name) +
                                ": \"le\" cannot be a label name, the buckets use it");
  }
  auto bounds = std::make_shared<const std::vector<double>>(checkedBuckets(name, std::move(upperBounds)));
  auto family =
      std::make_unique<HistogramFamily>(std::move(name), std::move(help), "histogram", std::move(labelNames),
                                        [bounds] { return std::make_unique<Histogram>(bounds); });
  HistogramFamily& registered = *family;
  add(std::move(family));
  return registered;
}

void Registry::gaugeCallback(std::string name, std::string help, std::vector<std::string> labelNames,
                             GaugeCollector collect) {
  checkNames(name, labelNames);
  if (!collect) throw std::invalid_argument("gauge callback " + quoted(name) + ": the callback is empty");
  add(std::make_unique<GaugeCallbackFamily>(std::move(name), std::move(help), std::move(labelNames),
                                            std::move(collect)));
}

void Registry::add(std::unique_ptr<detail::Family> family) {
  const std::string& name = family->name();
  std::vector<std::string> claimed = family->sampleNames();
  if (claimed.front() != name) claimed.push_back(name);  // a histogram's own name is taken too

  std::lock_guard lock(mutex_);
  for (const auto& sampleName : claimed) {
    const auto owner = sampleNameOwners_.find(sampleName);
    if (owner == sampleNameOwners_.end()) continue;
    if (owner->second == name)
      throw std::invalid_argument("metric " + quoted(name) + " is already registered");
    throw std::invalid_argument("metric " + quoted(name) + " clashes with metric " + quoted(owner->second) +
                                ": both would use the name " + quoted(sampleName));
  }
  for (auto& sampleName : claimed) sampleNameOwners_.emplace(std::move(sampleName), name);
  families_.emplace(name, std::move(family));
}

std::string Registry::render() const {
  // Families are never removed, so the pointers outlive the lock; callbacks then run without it.
  std::vector<const detail::Family*> families;
  {
    std::lock_guard lock(mutex_);
    families.reserve(families_.size());
    for (const auto& [name, family] : families_) families.push_back(family.get());
  }
  std::string out;
  for (const auto* family : families) family->render(out);
  return out;
}

}  // namespace ipu::metrics
