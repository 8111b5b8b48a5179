#include "ipujob/agent_network_policy.h"

#include <string>

#include "common/json_access.h"
#include "contract/runtime_contract.h"
#include "ipujob/child_names.h"
#include "ipujob/worker_pod.h"

namespace ipu::controllers {
namespace {

constexpr int kLowestPort = 1;
constexpr int kHighestPort = 65535;

Json portRange(const char* protocol, int first, int last) {
  Json range = {{"protocol", protocol}, {"port", first}};
  if (last > first) range["endPort"] = last;
  return range;
}

}  // namespace

int agentPortOf(const api::IpuJob& job) {
  const Json& containers = member(member(job.spec.workerTemplate, "spec"), "containers");
  if (!containers.is_array() || containers.empty()) return runtime::contract::kAgentPort;
  const Json& env = member(containers[0], "env");
  if (!env.is_array()) return runtime::contract::kAgentPort;
  for (const Json& entry : env) {
    if (stringMember(entry, "name") != runtime::contract::kEnvAgentPort) continue;
    if (auto port = runtime::contract::portFrom(stringMember(entry, "value"))) return *port;
  }
  return runtime::contract::kAgentPort;
}

Json buildAgentNetworkPolicy(const api::IpuJob& job) {
  const int agent = agentPortOf(job);
  Json everyPortButTheAgents = Json::array();
  if (agent > kLowestPort) everyPortButTheAgents.push_back(portRange("TCP", kLowestPort, agent - 1));
  if (agent < kHighestPort) everyPortButTheAgents.push_back(portRange("TCP", agent + 1, kHighestPort));
  everyPortButTheAgents.push_back(portRange("UDP", kLowestPort, kHighestPort));
  const Json jobPods = {{"matchLabels", jobLabels(job)}};
  return {{"apiVersion", "networking.k8s.io/v1"},
          {"kind", "NetworkPolicy"},
          {"metadata", childMetadata(job, headlessServiceName(job.identity.name))},
          {"spec",
           {{"podSelector", jobPods},
            {"policyTypes", Json::array({"Ingress"})},
            {"ingress", Json::array({{{"from", Json::array({{{"podSelector", jobPods}}})}},
                                     {{"ports", everyPortButTheAgents}}})}}}};
}

}  // namespace ipu::controllers
