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

TEST(ReportTest, TheLowerBoundsAreStatedWithTheirFormulaAndEachContenderAgainstTheTighterOne) {
  json ours = measurement("ours", "ours", 40, 6);  // all worker pods exist at 20 s
  ours["bounds"] = {{"qps", 50.0},
                    {"burst", 100},
                    {"writes_before_pods", 2},
                    {"pods_only_seconds", 8.0},
                    {"must_precede_seconds", 16.0}};
  const json summary = summarize(json::array({ours, measurement("floor", "floor", 64, 4)}));
  ASSERT_TRUE(summary[0].contains("bounds"));
  EXPECT_DOUBLE_EQ(summary[0]["bounds"]["of_must_precede"]["ours"].get<double>(), 20.0 / 16.0);
  EXPECT_DOUBLE_EQ(summary[0]["bounds"]["of_must_precede"]["floor"].get<double>(), 32.0 / 16.0);
  const std::string table = markdownTable(summary);
  EXPECT_NE(table.find("Lower bounds of \"all worker pods exist\" at QPS 50, burst 100: the pods alone, "
                       "(N·W − burst)/QPS = 8.0 s; with the 2 writes per job that must precede its pods, "
                       "(N·W + 2·N − burst)/QPS = 16.0 s. floor: 2.00× it; ours: 1.25× it;"),
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
