#include "metrics/scrape_gauges.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <prometheus/check_names.h>

namespace ipu::metrics {
namespace {

std::string quoted(const std::string& text) {
  return '"' + text + '"';
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

void ScrapeGauges::add(std::string name, std::string help, std::vector<std::string> labelNames,
                       GaugeCollector collect) {
  if (!prometheus::CheckMetricName(name)) {
    throw std::invalid_argument("invalid metric name " + quoted(name));
  }
  std::set<std::string> seen;
  for (const auto& label : labelNames) {
    if (!prometheus::CheckLabelName(label)) {
      throw std::invalid_argument("metric " + quoted(name) + ": invalid label name " + quoted(label));
    }
    if (!seen.insert(label).second) {
      throw std::invalid_argument("metric " + quoted(name) + ": label name " + quoted(label) +
                                  " is repeated");
    }
  }
  if (!collect) throw std::invalid_argument("scrape gauge " + quoted(name) + ": the collector is empty");
  std::lock_guard lock(mutex_);
  if (std::any_of(families_.begin(), families_.end(), [&](const Family& f) { return f.name == name; })) {
    throw std::invalid_argument("metric " + quoted(name) + " is already registered");
  }
  families_.push_back({std::move(name), std::move(help), std::move(labelNames), std::move(collect)});
}

std::vector<prometheus::MetricFamily> ScrapeGauges::Collect() const {
  std::vector<Family> families;
  {
    std::lock_guard lock(mutex_);
    families = families_;  // the collectors then run without the lock
  }
  std::vector<prometheus::MetricFamily> out;
  for (const Family& family : families) {
    GaugeSamples samples = family.collect();
    if (samples.empty()) continue;
    std::sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    prometheus::MetricFamily collected{family.name, family.help, prometheus::MetricType::Gauge, {}};
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const auto& [labelValues, value] = samples[i];
      if (labelValues.size() != family.labelNames.size()) {
        throw std::invalid_argument("metric " + quoted(family.name) + " has " +
                                    std::to_string(family.labelNames.size()) + " label(s) (" +
                                    joined(family.labelNames) + ") but was given " +
                                    std::to_string(labelValues.size()) + " label value(s)");
      }
      if (i > 0 && samples[i - 1].first == labelValues) {
        throw std::invalid_argument("scrape gauge " + quoted(family.name) + " reported the label values (" +
                                    joined(labelValues) + ") twice");
      }
      prometheus::ClientMetric metric;
      for (std::size_t l = 0; l < labelValues.size(); ++l) {
        metric.label.push_back({family.labelNames[l], labelValues[l]});
      }
      metric.gauge.value = value;
      collected.metric.push_back(std::move(metric));
    }
    out.push_back(std::move(collected));
  }
  return out;
}

}  // namespace ipu::metrics
