#include "metrics/metric_family.h"

#include <stdexcept>

#include "metrics/text_format.h"

namespace ipu::metrics::detail {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

Family::Family(std::string name, std::string help, std::string type, std::vector<std::string> labelNames)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(std::move(type)),
      labelNames_(std::move(labelNames)) {}

std::vector<std::string> Family::sampleNames() const {
  if (type_ == "histogram") return {name_ + "_bucket", name_ + "_sum", name_ + "_count"};
  return {name_};
}

void Family::render(std::string& out) const {
  std::string samples;
  appendSamples(samples);
  if (samples.empty()) return;
  appendFamilyHeader(out, name_, help_, type_);
  out += samples;
}

void Family::checkLabelCount(std::size_t valueCount) const {
  if (valueCount == labelNames_.size()) return;
  throw std::invalid_argument("metric \"" + name_ + "\" has " + std::to_string(labelNames_.size()) +
                              " label(s) (" + joined(labelNames_) + ") but was given " +
                              std::to_string(valueCount) + " label value(s)");
}

void appendChildSamples(std::string& out, const std::string& name, const std::string& labels,
                        const Counter& counter) {
  appendSample(out, name, labels, counter.value());
}

void appendChildSamples(std::string& out, const std::string& name, const std::string& labels,
                        const Gauge& gauge) {
  appendSample(out, name, labels, gauge.value());
}

void appendChildSamples(std::string& out, const std::string& name, const std::string& labels,
                        const Histogram& histogram) {
  const Histogram::Snapshot snapshot = histogram.snapshot();
  const std::string bucketName = name + "_bucket";
  // `le` goes last, after the family's own labels, as client_golang writes it.
  const std::string lePrefix = labels.empty() ? "le=\"" : labels + ",le=\"";
  const auto bounds = histogram.upperBounds();
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    appendSample(out, bucketName, lePrefix + formatValue(bounds[i]) + '"',
                 static_cast<double>(snapshot.cumulativeCounts[i]));
  }
  appendSample(out, bucketName, lePrefix + "+Inf\"", static_cast<double>(snapshot.count));
  appendSample(out, name + "_sum", labels, snapshot.sum);
  appendSample(out, name + "_count", labels, static_cast<double>(snapshot.count));
}

template <typename Child>
void ChildFamily<Child>::appendSamples(std::string& out) const {
  std::lock_guard lock(mutex_);
  for (const auto& [labelValues, child] : children_) {
    appendChildSamples(out, name(), formatLabels(labelNames(), labelValues), *child);
  }
}

template class ChildFamily<Counter>;
template class ChildFamily<Gauge>;
template class ChildFamily<Histogram>;

}  // namespace ipu::metrics::detail
