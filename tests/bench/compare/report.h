#pragma once

#include <string>

#include <nlohmann/json.hpp>

// The comparison's summary from its measurements: per scenario and contender min / median / max of each
// timed figure, the ratios of ipu-operator to the others (medians, so one noisy run moves nothing), and the
// same as a markdown table. Pure: the JSON holds everything the table shows.
namespace ipu::bench {

// measurements: [{"scenario", "contender", "role" ("ours", "floor", "peer"), "workers_created_seconds",
// "workers_running_seconds", "requests_per_job", "rss_mb", ...}, ...]. Measurements that did not complete
// ("complete": false) are listed but left out of the figures.
nlohmann::json summarize(const nlohmann::json& measurements);
std::string markdownTable(const nlohmann::json& summary);

// `value` with `decimals` digits after the point, as the tables show figures.
std::string fixedDecimals(double value, int decimals);

}  // namespace ipu::bench
