#include "report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

namespace ipu::bench {

namespace {

using nlohmann::json;

// Each figure a measurement may have: its table header and decimals.
struct Figure {
  const char* name;
  const char* header;
  int decimals;
  const char* ratioLabel;
};
const std::vector<Figure> kFigures = {
    {"workers_created_seconds", "all worker pods exist, s", 1, "pods exist"},
    {"workers_running_seconds", "all worker pods Running, s", 1, "pods Running"},
    {"launchers_running_seconds", "launchers Running, s", 1, "launchers Running"},
    {"jobs_running_seconds", "every job's status Running, s", 1, "jobs Running"},
    {"requests_per_job", "API requests per job", 1, "requests per job"},
    {"request_budget_share", "share of its request budget used", 2, "budget share"},
    {"cpu_seconds", "its CPU s until then", 1, "CPU"},
    {"apiserver_cpu_seconds", "API server CPU s", 1, "API server CPU"},
    {"etcd_cpu_seconds", "etcd CPU s", 1, "etcd CPU"},
    {"peak_rss_mb", "peak RSS, MB", 0, "peak RSS"},
    {"rss_mb", "RSS, MB", 0, "RSS"},
    {"rss_anon_mb", "of it heap and stacks (RssAnon), MB", 0, "RssAnon"},
    {"rss_after_release_mb", "RSS 3 idle minutes on, MB", 0, "RSS after release"},
    {"idle_cpu_seconds_per_minute", "CPU s per idle minute", 2, "idle CPU"},
    {"ready_after_restart_seconds", "ready after a restart, s", 2, "ready after a restart"},
    {"restart_lease_wait_seconds", "of a restart, waiting for the old Lease, s", 1, "Lease wait"},
    {"restart_list_floor_seconds", "a raw client reading the same lists, s", 2, "list floor"},
    {"cpu_seconds_until_ready", "CPU s until ready", 2, "CPU until ready"},
    {"rss_after_restart_mb", "RSS after a restart, MB", 0, "RSS after a restart"},
};

json spread(std::vector<double> values) {
  if (values.empty()) return nullptr;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const double median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return {{"min", values.front()}, {"median", median}, {"max", values.back()}, {"runs", n}};
}

std::string cell(const json& figure, int decimals) {
  if (figure.is_null()) return "–";
  if (figure.value("runs", 0) == 1) return fixedDecimals(figure["median"].get<double>(), decimals);
  return fixedDecimals(figure["median"].get<double>(), decimals) + " (" +
         fixedDecimals(figure["min"].get<double>(), decimals) + "–" +
         fixedDecimals(figure["max"].get<double>(), decimals) + ")";
}

}  // namespace

std::string fixedDecimals(double value, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

json summarize(const json& measurements) {
  // scenario -> contender -> figure -> values, in the order scenarios and contenders first appear.
  std::vector<std::string> scenarios;
  std::map<std::string, std::vector<std::string>> contenders;
  std::map<std::string, std::map<std::string, std::map<std::string, std::vector<double>>>> values;
  std::map<std::string, std::map<std::string, std::string>> roles;
  std::map<std::string, std::map<std::string, int>> incomplete;
  std::map<std::string, json> bounds;
  for (const json& m : measurements) {
    const std::string scenario = m.value("scenario", ""), contender = m.value("contender", "");
    if (m.contains("bounds") && m["bounds"].is_object()) bounds.try_emplace(scenario, m["bounds"]);
    if (std::find(scenarios.begin(), scenarios.end(), scenario) == scenarios.end())
      scenarios.push_back(scenario);
    auto& names = contenders[scenario];
    if (std::find(names.begin(), names.end(), contender) == names.end()) names.push_back(contender);
    roles[scenario][contender] = m.value("role", "");
    if (!m.value("complete", false)) {
      ++incomplete[scenario][contender];
      continue;
    }
    for (const Figure& figure : kFigures)
      if (m.contains(figure.name) && m[figure.name].is_number())
        values[scenario][contender][figure.name].push_back(m[figure.name].get<double>());
  }
  json summary = json::array();
  for (const std::string& scenario : scenarios) {
    json rows = json::array();
    std::map<std::string, json> medians;  // role -> contender's figures, for the ratios
    for (const std::string& contender : contenders[scenario]) {
      json row = {{"contender", contender},
                  {"role", roles[scenario][contender]},
                  {"incomplete_runs", incomplete[scenario][contender]}};
      for (const Figure& figure : kFigures)
        row[figure.name] = spread(values[scenario][contender][figure.name]);
      rows.push_back(row);
    }
    json ratios = json::array();
    const json* ours = nullptr;
    for (const json& row : rows)
      if (row["role"] == "ours") ours = &row;
    for (const json& row : rows) {
      if (ours == nullptr || &row == ours) continue;
      json ratio = {{"of", (*ours)["contender"]}, {"to", row["contender"]}};
      for (const Figure& figure : kFigures) {
        const json& a = (*ours)[figure.name];
        const json& b = row[figure.name];
        if (a.is_null() || b.is_null() || b["median"].get<double>() == 0) continue;
        ratio[figure.name] = a["median"].get<double>() / b["median"].get<double>();
      }
      ratios.push_back(ratio);
    }
    json entry = {{"scenario", scenario}, {"contenders", rows}, {"ratios", ratios}};
    if (const auto found = bounds.find(scenario); found != bounds.end()) {
      json bound = found->second;
      // Each contender's median time to all worker pods against the tighter bound.
      const double mustPrecede = bound.value("must_precede_seconds", 0.0);
      bound["of_must_precede"] = json::object();
      for (const json& row : rows) {
        const json& created = row["workers_created_seconds"];
        if (!created.is_null() && mustPrecede > 0)
          bound["of_must_precede"][row["contender"].get<std::string>()] =
              created["median"].get<double>() / mustPrecede;
      }
      entry["bounds"] = bound;
    }
    summary.push_back(entry);
  }
  return summary;
}

std::string markdownTable(const json& summary) {
  std::ostringstream out;
  for (const json& scenario : summary) {
    // The columns some contender of the scenario has a figure for.
    std::vector<Figure> columns;
    for (const Figure& figure : kFigures) {
      for (const json& row : scenario["contenders"]) {
        if (!row.value(figure.name, json()).is_null()) {
          columns.push_back(figure);
          break;
        }
      }
    }
    out << "\n#### " << scenario.value("scenario", "") << "\n\n|";
    for (const Figure& figure : columns) out << " | " << figure.header;
    out << " |\n| ---";
    for (std::size_t i = 0; i < columns.size(); ++i) out << " | ---";
    out << " |\n";
    for (const json& row : scenario["contenders"]) {
      out << "| " << row.value("contender", "");
      if (row.value("incomplete_runs", 0) > 0)
        out << " (" << row["incomplete_runs"].get<int>() << " run(s) incomplete)";
      for (const Figure& figure : columns)
        out << " | " << cell(row.value(figure.name, json()), figure.decimals);
      out << " |\n";
    }
    if (scenario.contains("bounds")) {
      const json& bound = scenario["bounds"];
      const int k = bound.value("writes_before_pods", 0);
      out << "\nLower bounds of \"all worker pods exist\" at QPS "
          << fixedDecimals(bound.value("qps", 0.0), 0) << ", burst " << bound.value("burst", 0)
          << ": the pods alone, (N·W − burst)/QPS = "
          << fixedDecimals(bound.value("pods_only_seconds", 0.0), 1) << " s; with the " << k
          << " writes per job that must precede its pods, (N·W + " << k
          << "·N − burst)/QPS = " << fixedDecimals(bound.value("must_precede_seconds", 0.0), 1) << " s.";
      for (const auto& [contender, ratio] : bound["of_must_precede"].items())
        out << " " << contender << ": " << fixedDecimals(ratio.get<double>(), 2) << "× it;";
      out << "\n";
    }
    for (const json& ratio : scenario["ratios"]) {
      out << "\n" << ratio.value("of", "") << " / " << ratio.value("to", "") << " (medians):";
      for (const Figure& figure : columns) {
        if (ratio.contains(figure.name))
          out << " " << figure.ratioLabel << " " << fixedDecimals(ratio[figure.name].get<double>(), 2)
              << "×;";
      }
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace ipu::bench
