#include "cmd/operator_flags.h"

#include <gtest/gtest.h>

namespace ipu::cmd {
namespace {

TEST(ParseVipuEndpointTest, ReadsNameHostAndPort) {
  auto endpoint = parseVipuEndpoint("pod64=10.0.0.5:8090");
  ASSERT_TRUE(endpoint.ok()) << endpoint.error().message;
  EXPECT_EQ(endpoint->name, "pod64");
  EXPECT_EQ(endpoint->host, "10.0.0.5");
  EXPECT_EQ(endpoint->port, 8090);
}

TEST(ParseVipuEndpointTest, RefusesWhatIsNotNameHostPort) {
  for (const std::string text :
       {"pod64", "=h:1", "pod64=:1", "pod64=h", "pod64=h:", "pod64=h:x", "pod64=h:70000"}) {
    auto endpoint = parseVipuEndpoint(text);
    ASSERT_FALSE(endpoint.ok()) << text;
    EXPECT_EQ(endpoint.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(endpoint.error().message.find("--vipu-controller"), std::string::npos);
  }
}

TEST(ParseOperatorFlagsTest, DefaultsMatchTheDocumentedOnes) {
  auto flags = parseOperatorFlags({"--vipu-controller", "pod64=127.0.0.1:8090"});
  ASSERT_TRUE(flags.ok()) << flags.error().message;
  EXPECT_EQ(flags->workers, 2);
  EXPECT_EQ(flags->shmSize, "10Gi");
  EXPECT_TRUE(flags->leaderElect);
  EXPECT_EQ(flags->logLevel, "info");
  EXPECT_EQ(flags->vipu.port, 8090);
}

TEST(ParseOperatorFlagsTest, ReadsEveryFlag) {
  auto flags =
      parseOperatorFlags({"--vipu-controller=a=h:1", "--workers", "4", "--qps", "20", "--burst", "30",
                          "--shm-size", "1Gi", "--leader-elect=false", "--leader-election-namespace", "ops",
                          "--log-level", "debug", "--kubeconfig", "/k"});
  ASSERT_TRUE(flags.ok()) << flags.error().message;
  EXPECT_EQ(flags->workers, 4);
  EXPECT_EQ(flags->qps, 20);
  EXPECT_EQ(flags->burst, 30);
  EXPECT_EQ(flags->shmSize, "1Gi");
  EXPECT_FALSE(flags->leaderElect);
  EXPECT_EQ(flags->leaderElectionNamespace, "ops");
  EXPECT_EQ(flags->kubeconfig, "/k");
}

TEST(ParseOperatorFlagsTest, RefusesMissingControllerUnknownFlagsAndBadValues) {
  EXPECT_FALSE(parseOperatorFlags({}).ok());
  EXPECT_FALSE(parseOperatorFlags({"--vipu-controller", "a=h:1", "--bogus"}).ok());
  EXPECT_FALSE(parseOperatorFlags({"--vipu-controller", "a=h:1", "--workers", "0"}).ok());
  EXPECT_FALSE(parseOperatorFlags({"--vipu-controller", "a=h:1", "--log-level", "loud"}).ok());
}

TEST(ParseOperatorFlagsTest, HelpNeedsNothingElseAndShowsEveryFlag) {
  auto flags = parseOperatorFlags({"--help"});
  ASSERT_TRUE(flags.ok());
  EXPECT_TRUE(flags->helpRequested);
  const std::string usage = operatorUsage();
  for (const char* flag : {"--kubeconfig", "--vipu-controller", "--workers", "--qps", "--burst", "--shm-size",
                           "--leader-elect", "--leader-election-namespace", "--log-level"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace ipu::cmd
