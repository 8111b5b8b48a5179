#include "subprocess.h"

#include <chrono>
#include <stdexcept>

#include <gtest/gtest.h>

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;

TEST(RunTest, CapturesStdoutStderrAndExitCode) {
  auto result = run({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(result.exitCode, 3);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.out, "out\n");
  EXPECT_EQ(result.err, "err\n");
  EXPECT_EQ(result.describe(), "exit 3: err\n [stdout: out\n]");
}

TEST(RunTest, PassesArgumentsWithoutAShell) {
  auto result = run({"printf", "%s|", "a b", "$HOME", "'q'"});
  ASSERT_TRUE(result.ok()) << result.describe();
  EXPECT_EQ(result.out, "a b|$HOME|'q'|");
}

TEST(RunTest, FeedsLargeInputWithoutDeadlock) {
  std::string input(1 << 20, 'x');  // larger than a pipe buffer both ways
  auto result = run({"cat"}, RunOptions{.input = input});
  ASSERT_TRUE(result.ok()) << result.describe();
  EXPECT_EQ(result.out.size(), input.size());
}

TEST(RunTest, KillsAChildThatOverrunsItsTimeout) {
  auto started = std::chrono::steady_clock::now();
  auto result = run({"sleep", "30"}, RunOptions{.timeout = 200ms});
  EXPECT_TRUE(result.timedOut);
  EXPECT_FALSE(result.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
}

TEST(RunTest, AddsEnvironment) {
  auto result = run({"sh", "-c", "echo $IPU_TEST_VALUE"}, RunOptions{.extraEnv = {"IPU_TEST_VALUE=42"}});
  EXPECT_EQ(result.out, "42\n");
}

TEST(RunTest, ReportsAMissingProgram) {
  EXPECT_THROW(run({"/nonexistent/program"}), std::runtime_error);
  EXPECT_THROW(run({}), std::invalid_argument);
}

TEST(BackgroundProcessTest, ReadsLinesAsTheyComeAndStops) {
  BackgroundProcess child({"sh", "-c", "echo first; echo problem >&2; echo second; exec sleep 30"});
  EXPECT_EQ(child.readLine(5s), "first");
  EXPECT_EQ(child.readLine(5s), "second");
  EXPECT_EQ(child.readLine(100ms), std::nullopt);  // nothing more yet: a timeout, not a hang
  EXPECT_EQ(child.stop(), 128 + 15);               // SIGTERM
  EXPECT_EQ(child.stderrText(), "problem\n");
}

TEST(BackgroundProcessTest, ReportsEndOfOutput) {
  BackgroundProcess child({"sh", "-c", "printf 'last line without newline\\nend\\n'"});
  EXPECT_EQ(child.readLine(5s), "last line without newline");
  EXPECT_EQ(child.readLine(5s), "end");
  EXPECT_EQ(child.readLine(5s), std::nullopt);
  EXPECT_EQ(child.stop(), 0);
}

}  // namespace
}  // namespace ipu::testing
