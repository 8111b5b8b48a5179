#include "scale_curve_report.h"

#include <cmath>

#include <gtest/gtest.h>

#include "metrics_text.h"

namespace ipu::bench {
namespace {

using nlohmann::json;

TEST(ScaleCurveReportTest, TheExponentOfAPowerLawIsFoundAndFlatIsZero) {
  std::vector<std::pair<double, double>> linear, square, flat;
  for (const double x : {500.0, 1000.0, 2000.0, 4000.0}) {
    linear.emplace_back(x, 0.03 * x);
    square.emplace_back(x, 2e-6 * x * x);
    flat.emplace_back(x, 1.7);
  }
  EXPECT_NEAR(*growthExponent(linear), 1.0, 1e-9);
  EXPECT_NEAR(*growthExponent(square), 2.0, 1e-9);
  EXPECT_NEAR(*growthExponent(flat), 0.0, 1e-9);
  EXPECT_FALSE(growthExponent({{500, 1}})) << "one point fits no line";
  EXPECT_FALSE(growthExponent({{500, 1}, {500, 2}})) << "no spread in x";
  EXPECT_FALSE(growthExponent({{500, 0}, {1000, 0}})) << "no logarithm of zero";
}

TEST(ScaleCurveReportTest, TheTableHasARowPerPointAndTheFittedExponents) {
  const json curve = {{"scenario", "scale curve, eight-worker jobs"},
                      {"contender", "ipu-operator (qps 200)"},
                      {"points",
                       {{{"jobs", 500}, {"rss_mb", 40.0}, {"cpu_ms_per_pass", 1.5}},
                        {{"jobs", 1000}, {"rss_mb", 80.0}, {"cpu_ms_per_pass", 1.5}},
                        {{"jobs", 2000}, {"rss_mb", 160.0}}}}};
  const json growth = growthOf(curve);
  EXPECT_NEAR(growth["rss_mb"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(growth["cpu_ms_per_pass"].get<double>(), 0.0, 1e-9);
  EXPECT_FALSE(growth.contains("ready_after_restart_seconds")) << "no point measured it";
  const std::string table = curveTable(curve);
  EXPECT_NE(table.find("| 2000 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| fitted exponent |"), std::string::npos) << table;
  EXPECT_NE(table.find("| 160 |"), std::string::npos) << table;
}

TEST(ScaleCurveReportTest, ACounterIsSummedOverItsLabelsAndNothingElse) {
  const std::string exposition =
      "# HELP ipu_operator_reconcile_total Reconciles.\n"
      "# TYPE ipu_operator_reconcile_total counter\n"
      "ipu_operator_reconcile_total{controller=\"ipujob\",result=\"success\"} 120\n"
      "ipu_operator_reconcile_total{controller=\"ipujob\",result=\"error\"} 3\n"
      "ipu_operator_reconcile_total_seconds 9\n"
      "ipu_operator_reconcile 7\n";
  EXPECT_EQ(counterTotal(exposition, "ipu_operator_reconcile_total"), 123);
  EXPECT_EQ(counterTotal(exposition, "ipu_operator_queue_depth"), 0);
}

}  // namespace
}  // namespace ipu::bench
