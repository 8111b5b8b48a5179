#pragma once

#include <string_view>

namespace ipu::metrics {

// The Prometheus data model's grammar (prometheus.io/docs/concepts/data_model): a scrape with one bad name is
// rejected whole, so names are checked once, when a metric is registered.

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool isValidMetricName(std::string_view name);

// [a-zA-Z_][a-zA-Z0-9_]*, and not starting with "__", which Prometheus reserves for its own labels.
bool isValidLabelName(std::string_view name);

}  // namespace ipu::metrics
