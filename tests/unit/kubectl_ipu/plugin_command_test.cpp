// kubectl ipu's command line and exit codes, with the cluster played by a scripted transport.
#include "kubectl-ipu/plugin_command.h"

#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "common/time_format.h"
#include "fake_transport.h"
#include "pod_map/pod_map_status.h"
#include "pod_map_fixtures.h"

namespace ipu::kubectl_ipu {
namespace {

using Json = nlohmann::json;

struct Outcome {
  int code = -1;
  std::string out, err;
};

class PluginCommandTest : public ::testing::Test {
 protected:
  Outcome run(const std::vector<std::string>& args) {
    std::ostringstream out, err;
    Terminal terminal{out, err, false, 80, false, *parseTime("2026-11-28T10:02:30Z")};
    const Connect connect = [this](const std::string& kubeconfig,
                                   const std::string& context) -> Result<Connection> {
      connectedWith = {kubeconfig, context};
      if (refuseConnection) return makeError(ErrorCode::kNotFound, "no Kubernetes configuration");
      kube::ClusterConfig config;
      config.server = "https://api.test";
      Connection connection;
      connection.ns = "team-a";
      connection.client = std::make_unique<kube::RestClient>(transport, config);
      return connection;
    };
    Outcome result;
    result.code = runPlugin(args, terminal, connect);
    result.out = out.str();
    result.err = err.str();
    return result;
  }

  std::shared_ptr<testing::FakeTransport> transport = std::make_shared<testing::FakeTransport>();
  bool refuseConnection = false;
  std::pair<std::string, std::string> connectedWith;
};

TEST_F(PluginCommandTest, HelpListsEveryCommandAndVersionNamesTheRelease) {
  const Outcome help = run({"--help"});
  EXPECT_EQ(help.code, kExitOk);
  for (const char* command : {"status", "quota", "top", "why", "fit", "logs", "cp", "version", "help"}) {
    EXPECT_NE(help.out.find("\n  " + std::string(command) + " "), std::string::npos) << command;
  }
  EXPECT_EQ(run({"version"}).out, "kubectl-ipu " + pluginVersion() + "\n");
  EXPECT_EQ(run({"version", "-o", "json"}).out, "{\"version\":\"" + pluginVersion() + "\"}\n");
  EXPECT_EQ(transport->played().size(), 0u) << "help and version read nothing";
}

TEST_F(PluginCommandTest, AWrongCommandLineExitsTwoSayingWhy) {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{},
                                             {"stauts"},
                                             {"status", "--bogus"},
                                             {"status", "-o", "yaml"},
                                             {"status", "--color"},
                                             {"quota", "extra"},
                                             {"top", "--color=sometimes"},
                                             {"cp", "job:/out"},
                                             {"cp", "job", "dest"},
                                             {"cp", ":/out", "dest"},
                                             {"cp", "job:", "dest"},
                                             {"cp", "job:/out", "dest", "--worker", "x"}}) {
    const Outcome result = run(args);
    EXPECT_EQ(result.code, kExitUsage) << ::testing::PrintToString(args);
    EXPECT_NE(result.err.find("kubectl ipu"), std::string::npos) << result.err;
  }
}

TEST_F(PluginCommandTest, AClusterThatCannotBeReachedExitsOne) {
  refuseConnection = true;
  const Outcome result = run({"status", "--kubeconfig", "/nowhere", "--context=lab"});
  EXPECT_EQ(result.code, kExitFailed);
  EXPECT_EQ(connectedWith, std::make_pair(std::string("/nowhere"), std::string("lab")));
  EXPECT_NE(result.err.find("no Kubernetes configuration"), std::string::npos);
}

TEST_F(PluginCommandTest, StatusNamesTheTenantsJobsAndHidesOthersWhenItMayNotListEveryNamespace) {
  testing::PodBuilder pod(1, 16);
  pod.job("team-a", "bert", {{0, 8}}).job("team-b", "resnet", {{8, 4}});
  const Json ipuPod = controllers::ipuPodObject("vipu-a", pod.status());
  transport->expect("GET", "/apis/graphcore.ai/v1alpha1/ipupods", 200,
                    Json{{"items", Json::array({ipuPod})}, {"metadata", Json::object()}}.dump());
  transport->expect("GET", "/apis/graphcore.ai/v1alpha1/ipujobs", 403,
                    R"({"kind":"Status","reason":"Forbidden","code":403,"message":"forbidden"})");
  transport->expect("GET", "/apis/graphcore.ai/v1alpha1/namespaces/team-a/ipujobs", 200,
                    Json{{"items", Json::array({*pod.jobs()[0]})}, {"metadata", Json::object()}}.dump());
  const Outcome result = run({"status"});
  EXPECT_EQ(result.code, kExitOk) << result.err;
  EXPECT_TRUE(transport->unexpected().empty()) << ::testing::PrintToString(transport->unexpected());
  EXPECT_NE(result.out.find("A  team-a/bert"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("B  another namespace"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("team-b"), std::string::npos) << result.out;
}

TEST_F(PluginCommandTest, StatusWithoutTheCrdSaysTheOperatorIsNotInstalled) {
  transport->expect(
      "GET", "/apis/graphcore.ai/v1alpha1/ipupods", 404,
      R"({"kind":"Status","reason":"NotFound","code":404,"message":"the server could not find the requested resource"})");
  const Outcome result = run({"status"});
  EXPECT_EQ(result.code, kExitFailed);
  EXPECT_NE(result.err.find("is ipu-operator installed"), std::string::npos) << result.err;
}

TEST_F(PluginCommandTest, FitReadsTheFileAndThePublishedQueueAndExitsThreeWhenAJobCanNeverRun) {
  const std::string path = ::testing::TempDir() + "/fit-jobs.yaml";
  std::ofstream(path) << R"(apiVersion: graphcore.ai/v1alpha1
kind: IPUJob
metadata: {name: small}
spec:
  ipusPerJobInstance: "16"
  workers: {template: {spec: {containers: [{name: w, image: i}]}}}
---
apiVersion: graphcore.ai/v1alpha1
kind: IPUJob
metadata: {name: huge}
spec:
  ipusPerJobInstance: "1024"
  workers: {template: {spec: {containers: [{name: w, image: i}]}}}
)";
  const Json queue{
      {"status",
       {{"strategy", "BestEffortFIFO"},
        {"controllers", {{{"name", "pod64"}, {"cluster", "c"}, {"ilds", 1}, {"ildSize", 64}}}}}}};
  const auto script = [&] {
    transport->expect("GET", "/apis/graphcore.ai/v1alpha1/ipuqueues/ipu-operator", 200, queue.dump());
    transport->expect("GET", "/apis/graphcore.ai/v1alpha1/namespaces/team-a/ipujobs", 200,
                      R"({"items":[],"metadata":{}})");
    transport->expect("GET", "/apis/graphcore.ai/v1alpha1/namespaces/team-a/ipuquotas", 403,
                      R"({"kind":"Status","reason":"Forbidden","code":403,"message":"forbidden"})");
  };
  script();
  const Outcome file = run({"fit", "-f", path});
  EXPECT_EQ(file.code, kExitNeverFits) << file.err;
  EXPECT_TRUE(transport->unexpected().empty()) << ::testing::PrintToString(transport->unexpected());
  EXPECT_TRUE(std::regex_search(file.out, std::regex("\nsmall +1 x 16 +now +now"))) << file.out;
  EXPECT_TRUE(std::regex_search(file.out, std::regex("\nhuge +1 x 1024 +never +- +Unschedulable")))
      << file.out;
  script();
  const Outcome flags = run({"fit", "--ipus", "64", "--instances", "1", "-o", "json"});
  EXPECT_EQ(flags.code, kExitOk) << flags.err;
  EXPECT_EQ(Json::parse(flags.out)["jobs"][0]["verdict"], "Now") << flags.out;

  for (const auto& args : std::vector<std::vector<std::string>>{{"fit"},
                                                                {"fit", "-f", path, "--ipus", "4"},
                                                                {"fit", "--instances", "2"},
                                                                {"fit", "--ipus", "x"}}) {
    EXPECT_EQ(run(args).code, kExitUsage) << ::testing::PrintToString(args);
  }
  EXPECT_EQ(run({"fit", "-f", ::testing::TempDir() + "/no-such-file.yaml"}).code, kExitUsage);
}

}  // namespace
}  // namespace ipu::kubectl_ipu
