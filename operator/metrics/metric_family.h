#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "metrics/counter.h"
#include "metrics/gauge.h"
#include "metrics/histogram.h"

namespace ipu::metrics {

// One value per label name of a family, in the order the names were registered.
using LabelValues = std::vector<std::string>;

namespace detail {

// A metric family: a name, help text and type, and the label names fixed at registration. Families are
// created and owned by a Registry and render themselves into the text format.
class Family {
 public:
  Family(std::string name, std::string help, std::string type, std::vector<std::string> labelNames);
  virtual ~Family() = default;
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<std::string>& labelNames() const { return labelNames_; }

  // The names its samples use: the family's own, or for a histogram name_bucket, name_sum and name_count.
  // The registry refuses two families whose sample names meet, which Prometheus would reject at scrape.
  std::vector<std::string> sampleNames() const;

  // Appends HELP, TYPE and the samples; or nothing at all when there is no sample, which is what Go's
  // client_golang does for a labelled family nobody has used yet (Python's prints the bare HELP/TYPE).
  // Unlabelled families always have their one sample, at zero until used, as in both clients.
  void render(std::string& out) const;

 protected:
  // std::invalid_argument unless there is exactly one value per label name: a programming error.
  void checkLabelCount(std::size_t valueCount) const;
  // Appends the samples only, in a deterministic order.
  virtual void appendSamples(std::string& out) const = 0;

 private:
  const std::string name_;
  const std::string help_;
  const std::string type_;
  const std::vector<std::string> labelNames_;
};

// How each kind of child is written: `labels` is the inside of the braces (from formatLabels), maybe empty.
void appendChildSamples(std::string& out, const std::string& name, const std::string& labels,
                        const Counter& counter);
void appendChildSamples(std::string& out, const std::string& name, const std::string& labels,
                        const Gauge& gauge);
void appendChildSamples(std::string& out, const std::string& name, const std::string& labels,
                        const Histogram& histogram);

// A family whose children (one per set of label values) are updated by the program: counters, gauges,
// histograms. Thread-safe.
template <typename Child>
class ChildFamily final : public Family {
 public:
  using MakeChild = std::function<std::unique_ptr<Child>()>;

  ChildFamily(std::string name, std::string help, std::string type, std::vector<std::string> labelNames,
              MakeChild makeChild)
      : Family(std::move(name), std::move(help), std::move(type), std::move(labelNames)),
        makeChild_(std::move(makeChild)) {
    if (this->labelNames().empty()) with();
  }

  // The child for these label values (e.g. `phases.with({"Running"})`), created at zero on first use;
  // `with()` for an unlabelled family. The reference stays valid as long as the registry: callers on hot
  // paths may keep it instead of looking it up each time. std::invalid_argument for a wrong number of values.
  Child& with(const LabelValues& labelValues = {}) {
    checkLabelCount(labelValues.size());
    std::lock_guard lock(mutex_);
    if (auto found = children_.find(labelValues); found != children_.end()) return *found->second;
    auto child = makeChild_();  // before inserting: if it throws, the map holds no empty slot
    return *children_.emplace(labelValues, std::move(child)).first->second;
  }

 private:
  void appendSamples(std::string& out) const override;

  const MakeChild makeChild_;
  mutable std::mutex mutex_;
  // Ordered by label values, so that samples render in a deterministic order; node-based, so references
  // handed out by with() stay valid.
  std::map<LabelValues, std::unique_ptr<Child>> children_;
};

// Defined in metric_family.cpp, for these three children only.
extern template class ChildFamily<Counter>;
extern template class ChildFamily<Gauge>;
extern template class ChildFamily<Histogram>;

}  // namespace detail

using CounterFamily = detail::ChildFamily<Counter>;
using GaugeFamily = detail::ChildFamily<Gauge>;
using HistogramFamily = detail::ChildFamily<Histogram>;

}  // namespace ipu::metrics
