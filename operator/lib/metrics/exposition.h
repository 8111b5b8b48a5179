#pragma once

#include <string>
#include <vector>

#include <prometheus/collectable.h>

namespace ipu::metrics {

// What /metrics serves: the metric families of some prometheus-cpp Collectables (a prometheus::Registry,
// ScrapeGauges), rendered by prometheus-cpp's TextSerializer in the text exposition format 0.0.4.
//
// Before serializing, families are put in name order and each family's samples in label order, so that the
// page reads the same from one scrape to the next (prometheus-cpp keeps a family's samples in a hash map);
// families without samples are left out; HELP text has its backslashes and newlines escaped as the format
// asks (TextSerializer writes it as it is). Thread-safe as long as the collectables are.
class Exposition {
 public:
  // `collectable` must outlive the Exposition.
  void add(const prometheus::Collectable& collectable) { collectables_.push_back(&collectable); }

  // std::invalid_argument when two collectables report a family of the same name; propagates whatever a
  // collectable throws.
  std::string render() const;

 private:
  std::vector<const prometheus::Collectable*> collectables_;
};

}  // namespace ipu::metrics
