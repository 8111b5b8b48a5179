#include "metrics/text_format.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ipu::metrics {
namespace {

TEST(FormatValueTest, WholeNumbersPrintWithoutExponentOrFraction) {
  EXPECT_EQ(formatValue(0), "0");
  EXPECT_EQ(formatValue(-0.0), "0");
  EXPECT_EQ(formatValue(1), "1");
  EXPECT_EQ(formatValue(-3), "-3");
  EXPECT_EQ(formatValue(1e6), "1000000");
  EXPECT_EQ(formatValue(9007199254740992.0), "9007199254740992");  // 2^53, the last exact one
}

TEST(FormatValueTest, FractionsAndHugeValuesUseTheShortestRoundTrippingForm) {
  EXPECT_EQ(formatValue(0.005), "0.005");
  EXPECT_EQ(formatValue(0.0005), "0.0005");
  EXPECT_EQ(formatValue(2.5), "2.5");
  EXPECT_EQ(formatValue(0.1), "0.1");
  EXPECT_EQ(formatValue(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(formatValue(1e-05), "1e-05");
  EXPECT_EQ(formatValue(1e300), "1e+300");
  EXPECT_EQ(formatValue(std::ldexp(1.0, 60)), "1.152921504606847e+18");
}

TEST(FormatValueTest, SpecialValuesUsePrometheusSpelling) {
  EXPECT_EQ(formatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(formatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(formatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(EscapeTest, HelpEscapesBackslashAndNewlineButNotQuotes) {
  EXPECT_EQ(escapeHelp("a\\b\nc \"q\""), "a\\\\b\\nc \"q\"");
}

TEST(EscapeTest, LabelValuesEscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(escapeLabelValue("C:\\dir \"x\"\nnext"), "C:\\\\dir \\\"x\\\"\\nnext");
  EXPECT_EQ(escapeLabelValue("plain-ünïcode"), "plain-ünïcode");
}

TEST(FormatLabelsTest, KeepsTheOrderGivenAndEscapesValues) {
  const std::vector<std::string> names = {"phase", "namespace"};
  const std::vector<std::string> values = {"Running", "a\"b"};
  EXPECT_EQ(formatLabels(names, values), "phase=\"Running\",namespace=\"a\\\"b\"");
  EXPECT_EQ(formatLabels({}, {}), "");
}

TEST(AppendSampleTest, BracesOnlyWhenThereAreLabels) {
  std::string out;
  appendSample(out, "up", "", 1);
  appendSample(out, "jobs", "phase=\"Running\"", 2.5);
  EXPECT_EQ(out, "up 1\njobs{phase=\"Running\"} 2.5\n");
}

}  // namespace
}  // namespace ipu::metrics
