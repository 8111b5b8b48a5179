#include "ipujob/agent_network_policy.h"

#include <gtest/gtest.h>

#include "yaml_json.h"

namespace ipu::controllers {
namespace {

using testing::yamlToJson;

// A job of two workers per instance whose worker container has `env` (YAML flow sequence).
api::IpuJob twoWorkerJob(const std::string& env = "[]") {
  auto job = api::parseIpuJob(yamlToJson(R"(
apiVersion: graphcore.ai/v1alpha1
kind: IPUJob
metadata: {name: bert}
spec:
  ipusPerJobInstance: "4"
  workersPerJobInstance: "2"
  workers:
    template:
      spec:
        containers: [{name: train, image: trainer, command: [python3], env: )" +
                                         env + R"(}]
)"));
  EXPECT_TRUE(job.ok()) << job.error().toString();
  job->identity = {"ml", "bert", "uid-bert"};
  return *job;
}

TEST(AgentNetworkPolicyTest, OnlyTheJobsOwnPodsReachTheAgentPortAndEveryOtherPortStaysOpen) {
  const Json policy = buildAgentNetworkPolicy(twoWorkerJob());
  EXPECT_EQ(policy["apiVersion"], "networking.k8s.io/v1");
  EXPECT_EQ(policy["kind"], "NetworkPolicy");
  EXPECT_EQ(policy["metadata"]["name"], "bert");
  EXPECT_EQ(policy["metadata"]["namespace"], "ml");
  EXPECT_EQ(policy["metadata"]["ownerReferences"][0]["uid"], "uid-bert");
  EXPECT_EQ(policy["metadata"]["ownerReferences"][0]["controller"], true);
  const Json jobPods = {{"matchLabels", {{"graphcore.ai/ipujob", "bert"}}}};
  EXPECT_EQ(policy["spec"]["podSelector"], jobPods) << "it applies to the job's worker pods";
  EXPECT_EQ(policy["spec"]["policyTypes"], Json::array({"Ingress"})) << "their egress is left alone";
  const Json& ingress = policy["spec"]["ingress"];
  ASSERT_EQ(ingress.size(), 2u);
  // The job's own pods (of its namespace: no namespaceSelector), on every port: the agents and MPI's own.
  EXPECT_EQ(ingress[0], (Json{{"from", Json::array({{{"podSelector", jobPods}}})}}));
  // Anyone, on every port but the agent's.
  EXPECT_EQ(ingress[1], (Json{{"ports",
                               {{{"protocol", "TCP"}, {"port", 1}, {"endPort", 7469}},
                                {{"protocol", "TCP"}, {"port", 7471}, {"endPort", 65535}},
                                {{"protocol", "UDP"}, {"port", 1}, {"endPort", 65535}}}}}));
}

TEST(AgentNetworkPolicyTest, AnAgentPortTheTemplateSetsIsTheOneClosed) {
  const auto closed = [](const std::string& env) {
    const Json ports = buildAgentNetworkPolicy(twoWorkerJob(env))["spec"]["ingress"][1]["ports"];
    return std::make_pair(ports[0].value("endPort", ports[0]["port"].get<int>()),
                          ports[1]["port"].get<int>());
  };
  EXPECT_EQ(closed("[{name: IPU_RUNTIME_AGENT_PORT, value: '9000'}]"), std::make_pair(8999, 9001));
  EXPECT_EQ(closed("[{name: IPU_RUNTIME_AGENT_PORT, value: '2'}]"), std::make_pair(1, 3));
  // Not a plain port (the runtime refuses to start with it): the default is closed.
  EXPECT_EQ(closed("[{name: IPU_RUNTIME_AGENT_PORT, value: 'x'}]"), std::make_pair(7469, 7471));
  EXPECT_EQ(closed("[{name: IPU_RUNTIME_AGENT_PORT, value: '70000'}]"), std::make_pair(7469, 7471));
  // At either end of the range, one TCP range is left.
  const Json lowest = buildAgentNetworkPolicy(twoWorkerJob("[{name: IPU_RUNTIME_AGENT_PORT, value: '1'}]"));
  EXPECT_EQ(lowest["spec"]["ingress"][1]["ports"][0],
            (Json{{"protocol", "TCP"}, {"port", 2}, {"endPort", 65535}}));
}

}  // namespace
}  // namespace ipu::controllers
