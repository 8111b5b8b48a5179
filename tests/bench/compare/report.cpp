#include "report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

namespace ipu::bench {

namespace {

using nlohmann::json;

const std::vector<std::string> kFigures = {"workers_created_seconds", "workers_running_seconds",
                                           "launchers_running_seconds", "requests_per_job", "rss_mb"};

json spread(std::vector<double> values) {
  if (values.empty()) return nullptr;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const double median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return {{"min", values.front()}, {"median", median}, {"max", values.back()}, {"runs", n}};
}

std::string format(double value, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string cell(const json& figure, int decimals) {
  if (figure.is_null()) return "–";
  if (figure.value("runs", 0) == 1) return format(figure["median"].get<double>(), decimals);
  return format(figure["median"].get<double>(), decimals) + " (" +
         format(figure["min"].get<double>(), decimals) + "–" + format(figure["max"].get<double>(), decimals) +
         ")";
}

}  // namespace

json summarize(const json& measurements) {
  // scenario -> contender -> figure -> values, in the order scenarios and contenders first appear.
  std::vector<std::string> scenarios;
  std::map<std::string, std::vector<std::string>> contenders;
  std::map<std::string, std::map<std::string, std::map<std::string, std::vector<double>>>> values;
  std::map<std::string, std::map<std::string, std::string>> roles;
  std::map<std::string, std::map<std::string, int>> incomplete;
  for (const json& m : measurements) {
    const std::string scenario = m.value("scenario", ""), contender = m.value("contender", "");
    if (std::find(scenarios.begin(), scenarios.end(), scenario) == scenarios.end())
      scenarios.push_back(scenario);
    auto& names = contenders[scenario];
    if (std::find(names.begin(), names.end(), contender) == names.end()) names.push_back(contender);
    roles[scenario][contender] = m.value("role", "");
    if (!m.value("complete", false)) {
      ++incomplete[scenario][contender];
      continue;
    }
    for (const std::string& figure : kFigures)
      if (m.contains(figure) && m[figure].is_number())
        values[scenario][contender][figure].push_back(m[figure].get<double>());
  }
  json summary = json::array();
  for (const std::string& scenario : scenarios) {
    json rows = json::array();
    std::map<std::string, json> medians;  // role -> contender's figures, for the ratios
    for (const std::string& contender : contenders[scenario]) {
      json row = {{"contender", contender},
                  {"role", roles[scenario][contender]},
                  {"incomplete_runs", incomplete[scenario][contender]}};
      for (const std::string& figure : kFigures) row[figure] = spread(values[scenario][contender][figure]);
      rows.push_back(row);
    }
    json ratios = json::array();
    const json* ours = nullptr;
    for (const json& row : rows)
      if (row["role"] == "ours") ours = &row;
    for (const json& row : rows) {
      if (ours == nullptr || &row == ours) continue;
      json ratio = {{"of", (*ours)["contender"]}, {"to", row["contender"]}};
      for (const char* figure :
           {"workers_created_seconds", "workers_running_seconds", "requests_per_job", "rss_mb"}) {
        const json& a = (*ours)[figure];
        const json& b = row[figure];
        ratio[figure] = a.is_null() || b.is_null() || b["median"].get<double>() == 0
                            ? json(nullptr)
                            : json(a["median"].get<double>() / b["median"].get<double>());
      }
      ratios.push_back(ratio);
    }
    summary.push_back({{"scenario", scenario}, {"contenders", rows}, {"ratios", ratios}});
  }
  return summary;
}

std::string markdownTable(const json& summary) {
  std::ostringstream out;
  for (const json& scenario : summary) {
    out << "\n#### " << scenario.value("scenario", "") << "\n\n"
        << "| | all worker pods exist, s | all worker pods Running, s | launchers Running, s | API requests "
           "per job "
           "| RSS, MB |\n| --- | --- | --- | --- | --- | --- |\n";
    for (const json& row : scenario["contenders"]) {
      out << "| " << row.value("contender", "");
      if (row.value("incomplete_runs", 0) > 0)
        out << " (" << row["incomplete_runs"].get<int>() << " run(s) incomplete)";
      out << " | " << cell(row["workers_created_seconds"], 1) << " | "
          << cell(row["workers_running_seconds"], 1) << " | " << cell(row["launchers_running_seconds"], 1)
          << " | " << cell(row["requests_per_job"], 1) << " | " << cell(row["rss_mb"], 0) << " |\n";
    }
    for (const json& ratio : scenario["ratios"]) {
      out << "\n" << ratio.value("of", "") << " / " << ratio.value("to", "") << " (medians):";
      const auto put = [&](const char* label, const char* figure) {
        if (!ratio[figure].is_null())
          out << " " << label << " " << format(ratio[figure].get<double>(), 2) << "×;";
      };
      put("pods exist", "workers_created_seconds");
      put("pods Running", "workers_running_seconds");
      put("requests per job", "requests_per_job");
      put("RSS", "rss_mb");
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace ipu::bench
