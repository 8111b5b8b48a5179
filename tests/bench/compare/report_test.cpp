#include "report.h"

#include <gtest/gtest.h>

namespace ipu::bench {
namespace {

using nlohmann::json;

json measurement(const std::string& contender, const std::string& role, double running, double requests,
                 bool complete = true) {
  return {{"scenario", "s"},
          {"contender", contender},
          {"role", role},
          {"complete", complete},
          {"workers_created_seconds", running / 2},
          {"workers_running_seconds", running},
          {"requests_per_job", requests}};
}

TEST(ReportTest, SpreadsEachFigureAndRatesOursAgainstTheOthersByMedian) {
  const json summary =
      summarize(json::array({measurement("ours", "ours", 30, 6), measurement("floor", "floor", 20, 4),
                             measurement("ours", "ours", 10, 6), measurement("floor", "floor", 25, 4),
                             measurement("ours", "ours", 20, 6), measurement("floor", "floor", 40, 4)}));
  ASSERT_EQ(summary.size(), 1u);
  const json& ours = summary[0]["contenders"][0];
  EXPECT_EQ(ours["contender"], "ours");
  EXPECT_EQ(ours["workers_running_seconds"],
            (json{{"min", 10.0}, {"median", 20.0}, {"max", 30.0}, {"runs", 3}}));
  EXPECT_TRUE(ours["launchers_running_seconds"].is_null());
  ASSERT_EQ(summary[0]["ratios"].size(), 1u);
  const json& ratio = summary[0]["ratios"][0];
  EXPECT_EQ(ratio["to"], "floor");
  EXPECT_DOUBLE_EQ(ratio["workers_running_seconds"].get<double>(), 20.0 / 25.0);
  EXPECT_DOUBLE_EQ(ratio["requests_per_job"].get<double>(), 1.5);
  EXPECT_FALSE(ratio.contains("rss_mb")) << "the floor has no process of its own";

  const std::string table = markdownTable(summary);
  EXPECT_NE(table.find("| | all worker pods exist, s | all worker pods Running, s | API requests per job |"),
            std::string::npos)
      << "only the columns some contender has a figure for: " << table;
  EXPECT_NE(table.find("| ours | 10.0 (5.0–15.0) | 20.0 (10.0–30.0) | 6.0 (6.0–6.0) |"), std::string::npos)
      << table;
  EXPECT_NE(
      table.find("ours / floor (medians): pods exist 0.80×; pods Running 0.80×; requests per job 1.50×;"),
      std::string::npos)
      << table;
}

TEST(ReportTest, IncompleteRunsAreNamedAndLeftOutOfTheFigures) {
  const json summary =
      summarize(json::array({measurement("ours", "ours", 10, 6), measurement("ours", "ours", 99, 99, false),
                             measurement("peer", "peer", 0, 0, false)}));
  const json& ours = summary[0]["contenders"][0];
  EXPECT_EQ(ours["incomplete_runs"], 1);
  EXPECT_EQ(ours["workers_running_seconds"]["max"], 10.0);
  const json& peer = summary[0]["contenders"][1];
  EXPECT_TRUE(peer["workers_running_seconds"].is_null());
  EXPECT_FALSE(summary[0]["ratios"][0].contains("workers_running_seconds"));
  EXPECT_NE(markdownTable(summary).find("| peer (1 run(s) incomplete) | – | – |"), std::string::npos);
}

TEST(ReportTest, MeasurementsWithoutFiguresOrRolesDoNotBreakTheSummary) {
  const json summary =
      summarize(json::array({json::object(), json{{"scenario", "s"}, {"workers_running_seconds", "x"}}}));
  EXPECT_EQ(summary.size(), 2u);
  EXPECT_FALSE(markdownTable(summary).empty());
}

}  // namespace
}  // namespace ipu::bench
