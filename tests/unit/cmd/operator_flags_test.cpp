#include "cmd/operator_flags.h"

#include <fstream>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

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
  ASSERT_EQ(flags->vipuControllers.size(), 1u);
  EXPECT_EQ(flags->vipuControllers[0].port, 8090);
  EXPECT_STREQ(controllers::queueingStrategyName(flags->queueingStrategy), "BestEffortFIFO");
  EXPECT_STREQ(controllers::missingQuotaPolicyName(flags->missingQuota), "unlimited");
  EXPECT_EQ(flags->partitionIdPrefix, "") << "derived from the cluster at start-up";
  EXPECT_EQ(flags->metricsBindAddress.toString(), ":8080");
  EXPECT_TRUE(flags->podMapPageBindAddress.disabled) << "no POD map page unless asked for";
  EXPECT_EQ(flags->healthProbeBindAddress.toString(), ":8081");
  EXPECT_FALSE(flags->vipuProxy) << "no proxy unless asked (the chart asks)";
  EXPECT_EQ(flags->interactiveDefaultTtlSeconds, 14400);
  EXPECT_EQ(flags->interactiveMaxTtlSeconds, 86400);
  EXPECT_EQ(flags->interactiveIdleSeconds, 0);
  EXPECT_EQ(flags->outputsRetainSeconds, 600);
  EXPECT_EQ(flags->outputsMaxRetainSeconds, 3600);
  EXPECT_TRUE(flags->kueue) << "Kueue is used wherever its CRDs are installed";
  auto off = parseOperatorFlags({"--vipu-controller", "pod64=127.0.0.1:8090", "--kueue=false"});
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_FALSE(off->kueue);
  EXPECT_EQ(flags->controllerName, "graphcore.ai/ipu-operator");
  for (const char* bad : {"ipu-operator", "/x", "example.com/", "Example.com/x", "kueue.x-k8s.io/multikueue",
                          "example.com/this-name-is-far-too-long-for-a-managed-by-field-of-63-chars"}) {
    EXPECT_FALSE(
        parseOperatorFlags({"--vipu-controller", "pod64=127.0.0.1:8090", "--controller-name", bad}).ok())
        << bad;
  }
  EXPECT_TRUE(parseOperatorFlags(
                  {"--vipu-controller", "pod64=127.0.0.1:8090", "--controller-name", "example.com/team-b"})
                  .ok());
}

TEST(ParseOperatorFlagsTest, TheProxysHttpPortIsAnotherPortOfAProxyThatRuns) {
  auto flags = parseOperatorFlags({"--vipu-controller", "a=h:1", "--vipu-proxy-bind-address",
                                   "127.0.0.1:18090", "--vipu-proxy-http-port", "18091"});
  ASSERT_TRUE(flags) << flags.error().message;
  EXPECT_EQ(flags->vipuProxy->httpPort, 18091);
  flags = parseOperatorFlags({"--vipu-controller", "a=h:1", "--vipu-proxy-bind-address", "127.0.0.1:18090"});
  ASSERT_TRUE(flags) << flags.error().message;
  EXPECT_EQ(flags->vipuProxy->httpPort, 0) << "off unless asked for";

  const auto refused = [](std::vector<std::string> args) {
    args.insert(args.begin(), {"--vipu-controller", "a=h:1"});
    auto parsed = parseOperatorFlags(args);
    return parsed ? std::string("accepted") : parsed.error().message;
  };
  EXPECT_NE(refused({"--vipu-proxy-http-port", "18091"}).find("needs --vipu-proxy-bind-address"),
            std::string::npos);
  EXPECT_NE(refused({"--vipu-proxy-bind-address", "127.0.0.1:18090", "--vipu-proxy-http-port", "18090"})
                .find("is the proxy's gRPC port"),
            std::string::npos);
  EXPECT_NE(refused({"--vipu-proxy-bind-address", "127.0.0.1:18090", "--vipu-proxy-http-port", "70000"})
                .find("--vipu-proxy-http-port"),
            std::string::npos);
}

TEST(ParseOperatorFlagsTest, TheVipuProxyListensOnAFixedPortAndWorkersGetAnAddressThatReachesIt) {
  auto proxy = parseVipuProxyFlags("10.200.0.1:8090", "");
  ASSERT_TRUE(proxy) << proxy.error().message;
  ASSERT_TRUE(*proxy);
  EXPECT_EQ((*proxy)->listen.toString(), "10.200.0.1:8090");
  EXPECT_EQ((*proxy)->advertisedHost, "10.200.0.1") << "one host: workers get it";
  EXPECT_EQ((*proxy)->advertisedPort, 8090);

  proxy = parseVipuProxyFlags(":8090", "ipu-operator-vipu-proxy.ipu-system.svc");
  ASSERT_TRUE(proxy) << proxy.error().message;
  EXPECT_EQ((*proxy)->advertisedHost, "ipu-operator-vipu-proxy.ipu-system.svc");
  EXPECT_EQ((*proxy)->advertisedPort, 8090) << "the bind port";
  proxy = parseVipuProxyFlags(":8090", "proxy.example:80");
  ASSERT_TRUE(proxy) << proxy.error().message;
  EXPECT_EQ((*proxy)->advertisedPort, 80);

  proxy = parseVipuProxyFlags("0", "");
  ASSERT_TRUE(proxy);
  EXPECT_FALSE(*proxy);

  const auto refusedNaming = [](const std::string& bind, const std::string& advertise,
                                const std::string& text) {
    const auto refused = parseVipuProxyFlags(bind, advertise);
    if (refused) return ::testing::AssertionFailure() << bind << " / " << advertise << " accepted";
    if (refused.error().message.find(text) == std::string::npos)
      return ::testing::AssertionFailure() << refused.error().message;
    return ::testing::AssertionSuccess();
  };
  EXPECT_TRUE(refusedNaming(":8090", "", "--vipu-proxy-advertise-address is needed"))
      << "every interface is no address to give a pod";
  EXPECT_TRUE(refusedNaming("0.0.0.0:8090", "", "--vipu-proxy-advertise-address is needed"));
  EXPECT_TRUE(refusedNaming("127.0.0.1:0", "", "--vipu-proxy-bind-address")) << "pods keep a fixed port";
  EXPECT_TRUE(refusedNaming("0", "proxy:8090", "needs --vipu-proxy-bind-address"));
  EXPECT_TRUE(refusedNaming(":8090", ":8090", "expected HOST or HOST:PORT"));
  EXPECT_TRUE(refusedNaming(":8090", "a b", "expected HOST or HOST:PORT"));
  EXPECT_TRUE(refusedNaming(":8090", "a b", "not \"a b\"")) << "the message names the value given";

  auto flags =
      parseOperatorFlags({"--vipu-controller", "a=h:1", "--vipu-proxy-bind-address", "127.0.0.1:18090"});
  ASSERT_TRUE(flags) << flags.error().message;
  ASSERT_TRUE(flags->vipuProxy);
  EXPECT_EQ(flags->vipuProxy->advertisedPort, 18090);
}

TEST(ParseOperatorFlagsTest, ReadsEveryFlag) {
  auto flags = parseOperatorFlags({"--vipu-controller=a=h:1",
                                   "--workers",
                                   "4",
                                   "--qps",
                                   "20",
                                   "--burst",
                                   "30",
                                   "--shm-size",
                                   "1Gi",
                                   "--runtime-image",
                                   "registry.example/ipu-runtime:1",
                                   "--runtime-image-pull-policy",
                                   "Always",
                                   "--leader-elect=false",
                                   "--leader-election-namespace",
                                   "ops",
                                   "--log-level",
                                   "debug",
                                   "--kubeconfig",
                                   "/k",
                                   "--vipu-controller",
                                   "b=g:2",
                                   "--queueing-strategy",
                                   "StrictFIFO",
                                   "--partition-id-prefix",
                                   "lab-a",
                                   "--metrics-bind-address",
                                   "127.0.0.1:9090",
                                   "--health-probe-bind-address",
                                   "0",
                                   "--pod-map-page-bind-address",
                                   "127.0.0.1:8095"});
  ASSERT_TRUE(flags.ok()) << flags.error().message;
  EXPECT_EQ(flags->podMapPageBindAddress.toString(), "127.0.0.1:8095");
  EXPECT_EQ(flags->workers, 4);
  EXPECT_EQ(flags->qps, 20);
  EXPECT_EQ(flags->burst, 30);
  EXPECT_EQ(flags->shmSize, "1Gi");
  EXPECT_EQ(flags->runtimeImage, "registry.example/ipu-runtime:1");
  EXPECT_EQ(flags->runtimeImagePullPolicy, "Always");
  EXPECT_FALSE(flags->leaderElect);
  EXPECT_EQ(flags->leaderElectionNamespace, "ops");
  EXPECT_EQ(flags->kubeconfig, "/k");
  ASSERT_EQ(flags->vipuControllers.size(), 2u);
  EXPECT_EQ(flags->vipuControllers[1].name, "b");
  EXPECT_EQ(flags->vipuControllers[1].host, "g");
  EXPECT_STREQ(controllers::queueingStrategyName(flags->queueingStrategy), "StrictFIFO");
  EXPECT_EQ(flags->partitionIdPrefix, "lab-a");
  EXPECT_EQ(flags->metricsBindAddress.toString(), "127.0.0.1:9090");
  EXPECT_EQ(flags->healthProbeBindAddress.toString(), "0");
}

TEST(ParseOperatorFlagsTest, EnvironmentSetsFlagsAndTheCommandLineWins) {
  const std::map<std::string, std::string> environment = {{"IPU_OPERATOR_VIPU_CONTROLLER", "a=h:1,b=g:2"},
                                                          {"IPU_OPERATOR_WORKERS", "8"},
                                                          {"IPU_OPERATOR_LOG_LEVEL", "warning"},
                                                          {"IPU_OPERATOR_LEADER_ELECT", "false"}};
  const Environment lookup = [&](const std::string& name) -> std::optional<std::string> {
    auto it = environment.find(name);
    if (it == environment.end()) return std::nullopt;
    return it->second;
  };
  auto flags = parseOperatorFlags({"--workers", "3"}, lookup);
  ASSERT_TRUE(flags.ok()) << flags.error().message;
  EXPECT_EQ(flags->workers, 3);
  EXPECT_EQ(flags->logLevel, "warning");
  EXPECT_FALSE(flags->leaderElect);
  ASSERT_EQ(flags->vipuControllers.size(), 2u);
  flags = parseOperatorFlags({"--vipu-controller", "c=k:3"}, lookup);
  ASSERT_TRUE(flags.ok()) << flags.error().message;
  ASSERT_EQ(flags->vipuControllers.size(), 1u) << "the command line's list replaces the environment's";
  EXPECT_EQ(flags->vipuControllers[0].name, "c");

  const Environment bad = [](const std::string& name) -> std::optional<std::string> {
    if (name == "IPU_OPERATOR_WORKERS") return "many";
    return std::nullopt;
  };
  auto refused = parseOperatorFlags({"--vipu-controller", "a=h:1"}, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("IPU_OPERATOR_WORKERS"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(environmentVariableFor("health-probe-bind-address"), "IPU_OPERATOR_HEALTH_PROBE_BIND_ADDRESS");
}

TEST(ParseOperatorFlagsTest, RefusesMissingControllerUnknownFlagsAndBadValues) {
  EXPECT_FALSE(parseOperatorFlags({}).ok());
  EXPECT_FALSE(parseOperatorFlags({"--vipu-controller", "a=h:1", "--bogus"}).ok());
  EXPECT_FALSE(parseOperatorFlags({"--vipu-controller", "a=h:1", "--workers", "0"}).ok());
  EXPECT_FALSE(parseOperatorFlags({"--vipu-controller", "a=h:1", "--log-level", "loud"}).ok());
  const std::vector<std::vector<std::string>> malformed = {
      {"--vipu-controller", "a=h:1", "--vipu-controller", "a=g:2"},
      {"--vipu-controller", "a=h:1", "--queueing-strategy", "fifo"},
      {"--vipu-controller", "a=h:1", "--missing-quota", "allow"},
      {"--vipu-controller", "a=h:1", "--worker-pod-profile", "baseline"},
      {"--vipu-controller", "a=h:1", "--partition-id-prefix", "Has_Underscore"},
      {"--vipu-controller", "a=h:1", "--metrics-bind-address", "8080"},
      {"--vipu-controller", "a=h:1", "--health-probe-bind-address", "host:99999"},
      {"--vipu-controller", "a=h:1", "--pod-map-page-bind-address", "8095"},
      {"--vipu-controller", "a=h:1", "--runtime-image-pull-policy", "Sometimes"},
      {"--vipu-controller", "a=h:1", "--runtime-delivery", "ImageVolume"},
      {"--vipu-controller", "a=h:1", "--shm-size", "10GB"},
      {"--vipu-controller", "a=h:1", "--shm-size", "0Gi"},
      {"--vipu-controller", "a=h:1", "--shm-size", "-1Gi"},
      {"--vipu-controller", "a=h:1", "--shm-size", ""},
      {"--vipu-controller", "pod/64=h:1"},
      {"--vipu-controller", "-pod=h:1"},
      {"--vipu-controller", "a=h:1", "--interactive-max-ttl-seconds", "3600"},  // below the default's 14400
      {"--vipu-controller", "a=h:1", "--outputs-max-retain-seconds", "60"},     // below the default's 600
      {"--vipu-controller", "a=h:1", "--interactive-idle-seconds", "-1"},
  };
  for (const auto& args : malformed) {
    const std::string& flag = args[args.size() - 2];  // the flag whose value is wrong
    auto flags = parseOperatorFlags(args);
    ASSERT_FALSE(flags.ok()) << flag << " " << args.back();
    EXPECT_NE(flags.error().message.find(flag), std::string::npos) << flags.error().message;
  }
  auto privileged = parseOperatorFlags({"--vipu-controller", "a=h:1", "--worker-pod-profile", "privileged"});
  ASSERT_TRUE(privileged.ok()) << privileged.error().message;
  EXPECT_EQ(privileged->workerPodProfile, api::WorkerPodProfile::kPrivileged);
  EXPECT_EQ(parseOperatorFlags({"--vipu-controller", "a=h:1"})->workerPodProfile,
            api::WorkerPodProfile::kIpuBaseline);
  EXPECT_EQ(parseOperatorFlags({"--vipu-controller", "a=h:1"})->runtimeDelivery,
            controllers::RuntimeDelivery::kInitContainer);
  EXPECT_EQ(parseOperatorFlags({"--vipu-controller", "a=h:1", "--runtime-delivery", "image-volume"})
                ->runtimeDelivery,
            controllers::RuntimeDelivery::kImageVolume);
  for (const char* size : {"512Mi", "1.5Gi", "64G", "1"}) {
    auto flags = parseOperatorFlags({"--vipu-controller", "a=h:1", "--shm-size", size});
    ASSERT_TRUE(flags.ok()) << size << ": " << flags.error().message;
    EXPECT_EQ(flags->shmSize, size);
  }
}

// TLS is off unless asked for; any certificate flag turns it on; files are read at start-up, so a typo stops
// the operator naming the flag instead of failing every V-IPU call.
TEST(ParseOperatorFlagsTest, VipuTlsFlagsTurnTlsOnAndTheirFilesMustBeReadable) {
  const std::string pem = ::testing::TempDir() + "/operator-flags-ca.pem";
  const std::string empty = ::testing::TempDir() + "/operator-flags-empty.pem";
  std::ofstream(pem) << "-----BEGIN CERTIFICATE-----\n";
  std::ofstream(empty).flush();
  auto plain = parseOperatorFlags({"--vipu-controller", "a=h:1"});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->vipuTls.has_value());

  auto systemRoots = parseOperatorFlags({"--vipu-controller", "a=h:1", "--vipu-tls"});
  ASSERT_TRUE(systemRoots.ok()) << systemRoots.error().message;
  ASSERT_TRUE(systemRoots->vipuTls.has_value());
  EXPECT_EQ(systemRoots->vipuTls->caCertFile, "");

  auto mutual = parseOperatorFlags({"--vipu-controller", "a=h:1", "--vipu-ca-cert", pem, "--vipu-client-cert",
                                    pem, "--vipu-client-key", pem, "--vipu-tls-server-name", "vipu.example"});
  ASSERT_TRUE(mutual.ok()) << mutual.error().message;
  ASSERT_TRUE(mutual->vipuTls.has_value());
  EXPECT_EQ(mutual->vipuTls->caCertFile, pem);
  EXPECT_EQ(mutual->vipuTls->clientCertFile, pem);
  EXPECT_EQ(mutual->vipuTls->clientKeyFile, pem);
  EXPECT_EQ(mutual->vipuTls->serverNameOverride, "vipu.example");

  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"--vipu-ca-cert", "/nonexistent/ca.pem"}, "--vipu-ca-cert: cannot read \"/nonexistent/ca.pem\""},
      {{"--vipu-ca-cert", empty}, "--vipu-ca-cert: cannot read"},
      {{"--vipu-client-cert", pem}, "--vipu-client-cert and --vipu-client-key go together"},
      {{"--vipu-client-key", pem}, "--vipu-client-cert and --vipu-client-key go together"},
      {{"--vipu-client-cert", pem, "--vipu-client-key", "/nonexistent/key.pem"},
       "--vipu-client-key: cannot read"},
  };
  for (const auto& [extra, message] : refused) {
    std::vector<std::string> args{"--vipu-controller", "a=h:1"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto flags = parseOperatorFlags(args);
    ASSERT_FALSE(flags.ok()) << message;
    EXPECT_NE(flags.error().message.find(message), std::string::npos) << flags.error().message;
  }
}

TEST(ParseOperatorFlagsTest, HelpNeedsNothingElseAndShowsEveryFlag) {
  auto flags = parseOperatorFlags({"--help"});
  ASSERT_TRUE(flags.ok());
  EXPECT_TRUE(flags->helpRequested);
  const std::string usage = operatorUsage();
  for (const char* flag :
       {"--kubeconfig", "--vipu-controller", "--workers", "--qps", "--burst", "--shm-size", "--leader-elect",
        "--leader-election-namespace", "--log-level", "--queueing-strategy", "--partition-id-prefix",
        "--metrics-bind-address", "--health-probe-bind-address", "IPU_OPERATOR_"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

TEST(OperatorUsageTest, NamesEveryFlagWithItsDefaultAndEnvironmentVariable) {
  // Each flag and what its line in --help gives as the default.
  const std::vector<std::pair<std::string, std::string>> flags = {
      {"kubeconfig", "$KUBECONFIG, then in-cluster, then ~/.kube/config"},
      {"vipu-controller", "at least one is required"},
      {"queueing-strategy", "(default \"BestEffortFIFO\")"},
      {"missing-quota", "(default \"unlimited\")"},
      {"partition-id-prefix", "(default: k8s- and the first 8 hex digits of the kube-system namespace's uid"},
      {"workers", "(default 2)"},
      {"qps", "(default 50.0)"},
      {"burst", "(default 100)"},
      {"shm-size", "(default \"10Gi\")"},
      {"runtime-image", "empty: not injected"},
      {"runtime-image-pull-policy", "(default \"IfNotPresent\")"},
      {"runtime-delivery", "(default \"init-container\")"},
      {"leader-elect", "(default true)"},
      {"leader-election-namespace", "(default: the kubeconfig's namespace)"},
      {"metrics-bind-address", "(default \":8080\")"},
      {"health-probe-bind-address", "(default \":8081\")"},
      {"pod-map-page-bind-address", "(default \"0\")"},
      {"log-level", "(default \"info\")"},
      {"vipu-tls", "(default false)"},
      {"orphan-sweep-interval-seconds", "(default 300)"},
      {"orphan-sweep-dry-run", "(default false)"},
      {"kueue", "(default true)"},
      {"controller-name", "(default \"graphcore.ai/ipu-operator\")"},
      {"pod-map-interval-seconds", "(default 5)"},
      {"pod-start-timeout-seconds", "(default 600)"},
      {"pod-deletion-timeout-seconds", "(default 120)"},
      {"interactive-ttl-seconds", "(default 14400)"},
      {"interactive-max-ttl-seconds", "(default 86400)"},
      {"interactive-idle-seconds", "(default 0)"},
      {"outputs-retain-seconds", "(default 600)"},
      {"outputs-max-retain-seconds", "(default 3600)"},
      {"worker-pod-profile", "(default \"ipu-baseline\")"},
      {"vipu-ca-cert", "only it is trusted"},
      {"vipu-client-cert", "with --vipu-client-key"},
      {"vipu-client-key", "--vipu-client-cert"},
      {"vipu-tls-server-name", "endpoint's host"},
      {"vipu-proxy-bind-address", "(default \"0\")"},
      {"vipu-proxy-advertise-address", "default: the bind address"},
      {"vipu-proxy-endpoint-slice", "made by the Helm chart"},
      {"vipu-proxy-http-port", "while their partitions activate"},
      {"pod-ip", "IPU_OPERATOR_POD_IP"}};
  std::map<std::string, std::string> lines;  // flag -> its line
  std::istringstream usage(operatorUsage());
  for (std::string line; std::getline(usage, line);) {
    if (!line.starts_with("  --")) continue;
    lines[line.substr(4, line.find(' ', 4) - 4)] = line;
  }
  EXPECT_EQ(lines.size(), flags.size()) << operatorUsage();
  for (const auto& [flag, defaultText] : flags) {
    ASSERT_TRUE(lines.contains(flag)) << flag << " is missing from\n" << operatorUsage();
    EXPECT_NE(lines[flag].find(defaultText), std::string::npos) << lines[flag];
    EXPECT_NE(lines[flag].find("[env " + environmentVariableFor(flag) + "]"), std::string::npos)
        << lines[flag];
  }
}

}  // namespace
}  // namespace ipu::cmd
