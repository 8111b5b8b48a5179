#include "scale_curve_report.h"

#include <cmath>
#include <sstream>

#include "report.h"

namespace ipu::bench {

namespace {

using nlohmann::json;

struct Column {
  const char* name;
  const char* header;
  int decimals;
};
// What each point of the curve shows: totals (whose exponent is ≤ 1 when the cost per job is flat or
// falling) and per-unit figures (whose exponent is ≈ 0 when flat).
const std::vector<Column> kColumns = {
    {"fill_seconds", "these jobs Running, s", 1},
    {"requests_per_job", "requests per job", 1},
    {"fill_cpu_seconds", "its CPU s for them", 1},
    {"cpu_ms_per_pass", "CPU ms per pass", 2},
    {"passes_per_job", "passes per job", 1},
    {"peak_rss_mb", "peak RSS, MB", 0},
    {"rss_mb", "RSS idle, MB", 0},
    {"rss_kb_per_job", "RSS per job, KB", 1},
    {"idle_cpu_seconds_per_minute", "CPU s per idle minute", 2},
    {"ready_after_restart_seconds", "ready after a restart, s", 2},
    {"restart_list_floor_seconds", "a raw client reading the same lists, s", 2},
    {"cpu_seconds_until_ready", "CPU s until ready", 2},
    {"rss_after_restart_mb", "RSS after a restart, MB", 0},
};

}  // namespace

std::optional<double> growthExponent(const std::vector<std::pair<double, double>>& points) {
  std::vector<std::pair<double, double>> logs;
  for (const auto& [x, y] : points)
    if (x > 0 && y > 0) logs.emplace_back(std::log(x), std::log(y));
  if (logs.size() < 2) return std::nullopt;
  double meanX = 0, meanY = 0;
  for (const auto& [x, y] : logs) {
    meanX += x;
    meanY += y;
  }
  meanX /= static_cast<double>(logs.size());
  meanY /= static_cast<double>(logs.size());
  double covariance = 0, variance = 0;
  for (const auto& [x, y] : logs) {
    covariance += (x - meanX) * (y - meanY);
    variance += (x - meanX) * (x - meanX);
  }
  if (variance == 0) return std::nullopt;
  return covariance / variance;
}

json growthOf(const json& curve) {
  json growth = json::object();
  for (const Column& column : kColumns) {
    std::vector<std::pair<double, double>> points;
    for (const json& point : curve.value("points", json::array()))
      if (point.contains(column.name) && point[column.name].is_number())
        points.emplace_back(point.value("jobs", 0.0), point[column.name].get<double>());
    if (const auto exponent = growthExponent(points)) growth[column.name] = *exponent;
  }
  return growth;
}

std::string curveTable(const json& curve) {
  std::ostringstream out;
  out << "\n#### " << curve.value("scenario", "") << ": " << curve.value("contender", "") << "\n\n| jobs";
  for (const Column& column : kColumns) out << " | " << column.header;
  out << " |\n| ---";
  for (std::size_t i = 0; i < kColumns.size(); ++i) out << " | ---";
  out << " |\n";
  const auto cell = [](const json& value, int decimals) {
    return value.is_number() ? fixedDecimals(value.get<double>(), decimals) : std::string("–");
  };
  for (const json& point : curve.value("points", json::array())) {
    out << "| " << point.value("jobs", 0);
    for (const Column& column : kColumns)
      out << " | " << cell(point.value(column.name, json()), column.decimals);
    out << " |\n";
  }
  const json growth = growthOf(curve);
  out << "| fitted exponent";
  for (const Column& column : kColumns) out << " | " << cell(growth.value(column.name, json()), 2);
  out << " |\n";
  if (curve.contains("error")) out << "\nIncomplete: " << curve["error"].get<std::string>() << "\n";
  return out.str();
}

}  // namespace ipu::bench
