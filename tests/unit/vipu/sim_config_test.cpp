#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "vipu-sim/sim_command_line.h"

namespace ipu::vipu::sim {
namespace {

namespace fs = std::filesystem;

Result<SimCommandLine> parse(std::vector<std::string> args) {
  return parseSimCommandLine(args);
}

void expectRejected(std::vector<std::string> args, const std::string& problem) {
  Result<SimCommandLine> result = parse(args);
  ASSERT_FALSE(result) << "accepted: " << ::testing::PrintToString(args);
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(result.error().message.find(problem), std::string::npos) << result.error().message;
}

class VipuSimConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ =
        (fs::temp_directory_path() / ("vipu-sim-config-" + std::to_string(::getpid()) + ".yaml")).string();
  }
  void TearDown() override { fs::remove(path_); }
  void write(const std::string& text) { std::ofstream(path_) << text; }

  std::string path_;
};

TEST(VipuSimCommandLineTest, DefaultsAreAPod64OnLoopback) {
  Result<SimCommandLine> parsed = parse({});
  ASSERT_TRUE(parsed) << parsed.error().toString();
  const SimConfig& config = parsed->config;
  EXPECT_EQ(config.listen, "127.0.0.1:8090");
  EXPECT_EQ(*config.topology(), *Topology::create("vipu-sim", 1, 64));
  EXPECT_TRUE(config.stateFile.empty());
  EXPECT_EQ(config.behaviour().activationDelay.count(), 1000);
  EXPECT_FALSE(*config.tls());
}

TEST(VipuSimCommandLineTest, ReadsEveryFlag) {
  Result<SimCommandLine> parsed = parse({"--listen=127.0.0.1:0",
                                         "--pod",
                                         "pod16",
                                         "--ilds",
                                         "3",
                                         "--ild-size=32",
                                         "--cluster-id",
                                         "lab",
                                         "--allocation",
                                         "a=0",
                                         "--allocation=b=1-2",
                                         "--state-file",
                                         "/tmp/s.json",
                                         "--activation-delay-ms",
                                         "5",
                                         "--reset-duration-ms=7",
                                         "--latency-ms",
                                         "3",
                                         "--create-failure-rate",
                                         "0.25",
                                         "--error-partition",
                                         "bad",
                                         "--error-rate",
                                         "0.125",
                                         "--seed",
                                         "9",
                                         "--port-file",
                                         "/tmp/p",
                                         "--quiet"});
  ASSERT_TRUE(parsed) << parsed.error().toString();
  const SimConfig& config = parsed->config;
  EXPECT_EQ(*config.topology(), *Topology::create("lab", 3, 32));
  const auto allocations = *config.allocationList(*config.topology());
  ASSERT_EQ(allocations.size(), 2u);
  EXPECT_EQ(allocations[1], (SimAllocation{"b", {1, 2}}));
  EXPECT_EQ(config.behaviour().resetDuration.count(), 7);
  const FaultOptions faults = config.faults();
  EXPECT_EQ(faults.latency.count(), 3);
  EXPECT_DOUBLE_EQ(faults.createFailureRate, 0.25);
  EXPECT_EQ(faults.errorPartitions.count("bad"), 1u);
  EXPECT_DOUBLE_EQ(faults.errorRate, 0.125);
  EXPECT_EQ(faults.seed, 9u);
  EXPECT_TRUE(config.quiet);
  EXPECT_EQ(config.portFile, "/tmp/p");
}

TEST(VipuSimCommandLineTest, RejectsMalformedFlags) {
  expectRejected({"--nope"}, "unknown flag --nope");
  expectRejected({"-x"}, "unknown flag -x");
  expectRejected({"stray"}, "unexpected argument 'stray'");
  expectRejected({"--ilds"}, "--ilds needs a value");
  expectRejected({"--ilds", "two"}, "not a whole number");
  expectRejected({"--ilds", "0"}, "outside [1, 64]");
  expectRejected({"--ilds", "-1"}, "--ilds");
  expectRejected({"--ilds", "99999999999999999999"}, "outside");
  expectRejected({"--ild-size", "24"}, "power of two");
  expectRejected({"--pod", "pod32"}, "unknown POD 'pod32'");
  expectRejected({"--cluster-id="}, "cluster id must not be empty");
  expectRejected({"--create-failure-rate", "1.5"}, "outside");
  expectRejected({"--create-failure-rate", "nan"}, "not a number");
  expectRejected({"--error-rate", "-0.1"}, "outside");
  expectRejected({"--error-rate", "x"}, "not a number");
  expectRejected({"--activation-delay-ms", "-5"}, "--activation-delay-ms");
  expectRejected({"--quiet=maybe"}, "not true or false");
  expectRejected({"--allocation", "noequals"}, "ID=ILDS");
  expectRejected({"--allocation", "a=7"}, "ILD 7 does not exist");
  expectRejected({"--pod", "pod128", "--allocation", "a=1-0"}, "runs backwards");
  expectRejected({"--pod", "pod128", "--allocation", "a=0", "--allocation", "b=0-1"}, "in two allocations");
  expectRejected({"--pod", "pod128", "--allocation", "a=0", "--allocation", "a=1"}, "given twice");
  expectRejected({"--error-partition", "bad id"}, "--error-partition");
  expectRejected({"--tls-cert", "c.pem"}, "--tls-key");
  expectRejected({"--tls-client-ca", "ca.pem"}, "--tls-cert");
  expectRejected({"--listen", "8090"}, "HOST:PORT");
}

TEST(VipuSimCommandLineTest, HelpListsEveryFlagWithItsDefault) {
  Result<SimCommandLine> parsed = parse({"--help"});
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(parsed->helpRequested);
  const std::string usage = simUsage();
  for (const char* flag :
       {"--listen HOST:PORT", "--pod", "--ilds", "--ild-size", "--cluster-id", "--allocation", "--state-file",
        "--activation-delay-ms", "--reset-duration-ms", "--latency-ms", "--create-failure-rate",
        "--error-partition", "--seed", "--port-file", "--tls-cert", "--tls-key", "--tls-client-ca", "--quiet",
        "--config"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(usage.find("(default \"127.0.0.1:8090\")"), std::string::npos);
  EXPECT_NE(usage.find("(default 1000)"), std::string::npos);
  EXPECT_NE(usage.find("(default \"pod64\")"), std::string::npos);
}

TEST_F(VipuSimConfigFileTest, FileSetsValuesAndFlagsWin) {
  write(
      "# lab POD\npod: pod128\ncluster_id: lab\nactivation-delay-ms: 250\nallocation: [a=0, b=1]\n"
      "error_partition:\n  - bad-1\n  - bad-2\n");
  Result<SimCommandLine> parsed = parse({"--activation-delay-ms", "10", "--config", path_});
  ASSERT_TRUE(parsed) << parsed.error().toString();
  const SimConfig& config = parsed->config;
  EXPECT_EQ(*config.topology(), *Topology::create("lab", 2, 64));
  EXPECT_EQ(config.activationDelayMs, 10);  // the flag wins, wherever it stands
  EXPECT_EQ(config.allocations.size(), 2u);
  EXPECT_EQ(config.errorPartitions.size(), 2u);
}

TEST_F(VipuSimConfigFileTest, EmptyFileSetsNothing) {
  write("");
  Result<SimCommandLine> parsed = parse({"--config=" + path_});
  ASSERT_TRUE(parsed) << parsed.error().toString();
  EXPECT_EQ(parsed->config.pod, "pod64");
}

TEST_F(VipuSimConfigFileTest, RejectsMalformedFiles) {
  struct Case {
    std::string text;
    std::string problem;
  };
  const std::vector<Case> cases{
      {"pod: [unclosed\n", "line"},
      {"- just\n- a list\n", "expected a mapping"},
      {"colour: blue\n", "'colour' is not a setting"},
      {"config: other.yaml\n", "'config' is not a setting"},
      {"ilds: {nested: 1}\n", "needs a value or a list"},
      {"ilds: [[1]]\n", "plain values"},
      {"ilds: many\n", "not a whole number"},
      {"ilds: 0\n", "outside"},
      {"pod: pod64\npod: pod16\n", ""},
  };
  for (const Case& c : cases) {
    write(c.text);
    Result<SimCommandLine> parsed = parse({"--config", path_});
    if (c.problem.empty()) continue;  // duplicate keys: yaml-cpp keeps one; either outcome is fine
    ASSERT_FALSE(parsed) << c.text;
    EXPECT_NE(parsed.error().message.find(path_), std::string::npos) << parsed.error().message;
    EXPECT_NE(parsed.error().message.find(c.problem), std::string::npos) << parsed.error().message;
  }
  Result<SimCommandLine> missing = parse({"--config", path_ + ".missing"});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("cannot read config file"), std::string::npos);
  expectRejected({"--config"}, "--config needs a value");
}

}  // namespace
}  // namespace ipu::vipu::sim
