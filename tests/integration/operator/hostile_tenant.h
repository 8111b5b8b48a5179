// A tenant of a shared cluster as the tenancy tests play one: a user bound to the aggregated `edit` role in
// one namespace (what the chart grants namespace editors), never an admin, and the worker templates such a
// user might write to get more than the cluster means to give.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_cluster.h"
#include "tls/pki.h"
#include "yaml_json.h"

namespace ipu::testing {

// The aggregated `edit` role for `user` in `ns` (the chart's -edit ClusterRole adds IPUJobs to it).
inline void bindEditRole(const TestCluster& cluster, const std::string& ns, const std::string& user) {
  const auto bound = cluster.kubectl(
      {"-n", ns, "create", "rolebinding", user + "-edit", "--clusterrole=edit", "--user=" + user});
  ASSERT_TRUE(bound.ok()) << bound.describe();
}

// Renders the chart's templates/rbac.yaml as `helm install` would and applies the objects `wanted` picks
// (by kind and name); returns how many it applied (-1 after a failed assertion).
inline int applyChartRbac(
    const TestCluster& cluster,
    const std::function<bool(const std::string& kind, const std::string& name)>& wanted) {
  const auto version = cluster.kubectl({"version", "-o", "json"});
  EXPECT_TRUE(version.ok()) << version.describe();
  if (!version.ok()) return -1;
  const std::string server = nlohmann::json::parse(version.out)["serverVersion"].value("gitVersion", "");
  const auto rendered =
      run({cluster.binDir() + "/helm", "template", "tenant", IPU_SOURCE_DIR "/deploy/helm/ipu-operator",
           "--show-only", "templates/rbac.yaml", "--kube-version", server, "--set", "vipuSim.enabled=true"},
          RunOptions{.extraEnv = {"HELM_CACHE_HOME=" + cluster.dir() + "/helm/cache",
                                  "HELM_CONFIG_HOME=" + cluster.dir() + "/helm/config",
                                  "HELM_DATA_HOME=" + cluster.dir() + "/helm/data"}});
  EXPECT_TRUE(rendered.ok()) << rendered.describe();
  if (!rendered.ok()) return -1;
  int applied = 0;
  for (const nlohmann::json& object : yamlDocumentsToJson(rendered.out)) {
    const std::string name = object.value("metadata", nlohmann::json::object()).value("name", "");
    if (!wanted(object.value("kind", ""), name)) continue;
    const auto created = cluster.kubectl({"apply", "-f", "-"}, RunOptions{.input = object.dump()});
    EXPECT_TRUE(created.ok()) << created.describe();
    if (!created.ok()) return -1;
    ++applied;
  }
  return applied;
}

// kubectl as `user` (impersonated by the admin's kubeconfig: what the API server authorizes is the user's).
inline RunResult asUser(const TestCluster& cluster, const std::string& user, const std::string& ns,
                        std::vector<std::string> args, const RunOptions& options = {}) {
  args.insert(args.begin(), {"--as=" + user, "-n", ns});
  return cluster.kubectl(args, options);
}

// A Secret a principal who may create Secrets (not read them, not exec into pods) plants under `name` for
// the job `ns/job` (uid `uid`) before the operator makes its own: a CA and key pair of the planter's own,
// issued for the job's very identity. Whoever holds `credentials` would pass the job's agents' checks.
struct PlantedSecret {
  nlohmann::json object;
  runtime::pki::JobCredentials credentials;
};
inline PlantedSecret plantedRuntimeSecret(const std::string& name, const std::string& ns,
                                          const std::string& job, const std::string& uid) {
  auto credentials = runtime::pki::issueJobCredentials(ns + "/" + job + "/" + uid, std::chrono::hours(1));
  nlohmann::json object = {{"apiVersion", "v1"},
                           {"kind", "Secret"},
                           {"metadata", {{"name", name}}},
                           {"type", "kubernetes.io/tls"},
                           {"stringData",
                            {{"ca.crt", credentials.caCertPem},
                             {"tls.crt", credentials.certPem},
                             {"tls.key", credentials.keyPem}}}};
  return {std::move(object), std::move(credentials)};
}

// A worker template change and the field the operator must name when it refuses the job.
struct HostileTemplate {
  std::string what;
  std::function<void(nlohmann::json& podTemplate)> change;
  std::string field;  // the start of the refusal's message
};

// Past the ipu-baseline profile: each one a way to a node.
inline std::vector<HostileTemplate> templatesPastTheProfile() {
  using Json = nlohmann::json;
  return {
      {"privileged", [](Json& t) { t["spec"]["containers"][0]["securityContext"]["privileged"] = true; },
       "spec.workers.template.spec.containers[0].securityContext.privileged"},
      {"hostNetwork", [](Json& t) { t["spec"]["hostNetwork"] = true; },
       "spec.workers.template.spec.hostNetwork"},
      {"hostPID", [](Json& t) { t["spec"]["hostPID"] = true; }, "spec.workers.template.spec.hostPID"},
      {"hostPath",
       [](Json& t) {
         t["spec"]["volumes"].push_back({{"name", "root"}, {"hostPath", {{"path", "/"}}}});
       },
       "spec.workers.template.spec.volumes[1].hostPath"},
      {"SYS_ADMIN",
       [](Json& t) {
         t["spec"]["containers"][0]["securityContext"]["capabilities"]["add"].push_back("SYS_ADMIN");
       },
       "spec.workers.template.spec.containers[0].securityContext.capabilities.add[1]"},
  };
}

// Mistyped at every level the operator reads: the API server's schema may refuse some at the door; the
// operator refuses the rest (InvalidSpec) before admission.
inline std::vector<HostileTemplate> mistypedTemplates() {
  using Json = nlohmann::json;
  const std::string container = "spec.workers.template.spec.containers[0].";
  return {
      {"securityContext string", [](Json& t) { t["spec"]["containers"][0]["securityContext"] = "x"; },
       container + "securityContext"},
      {"env name number",
       [](Json& t) { t["spec"]["containers"][0]["env"] = Json::parse(R"([{"name": 1}])"); },
       container + "env[0].name"},
      {"env map",
       [](Json& t) {
         t["spec"]["containers"][0]["env"] = {{"A", "b"}};
       },
       container + "env"},
      {"command string", [](Json& t) { t["spec"]["containers"][0]["command"] = "bash"; },
       container + "command"},
      {"args number", [](Json& t) { t["spec"]["containers"][0]["args"] = Json::array({1}); },
       container + "args[0]"},
      {"volumeMount without path",
       [](Json& t) { t["spec"]["containers"][0]["volumeMounts"] = Json::parse(R"([{"name": "devshm"}])"); },
       container + "volumeMounts[0].mountPath"},
      {"capabilities string",
       [](Json& t) { t["spec"]["containers"][0]["securityContext"]["capabilities"]["add"] = "IPC_LOCK"; },
       container + "securityContext.capabilities.add"},
      {"port string",
       [](Json& t) { t["spec"]["containers"][0]["ports"] = Json::parse(R"([{"containerPort": "80"}])"); },
       container + "ports[0].containerPort"},
      {"hostIPC string", [](Json& t) { t["spec"]["hostIPC"] = "true"; },
       "spec.workers.template.spec.hostIPC"},
      {"nodeSelector number",
       [](Json& t) {
         t["spec"]["nodeSelector"] = {{"a", 1}};
       },
       "spec.workers.template.spec.nodeSelector.a"},
      {"volumes map",
       [](Json& t) {
         t["spec"]["volumes"] = {{"a", "b"}};
       },
       "spec.workers.template.spec.volumes"},
      {"labels list", [](Json& t) { t["metadata"]["labels"] = Json::array({"a"}); },
       "spec.workers.template.metadata.labels"},
  };
}

// The users' 4-IPU manifest with its worker template changed, named `name`.
inline nlohmann::json manifestChangedBy(const std::string& manifestPath, const std::string& name,
                                        const std::function<void(nlohmann::json&)>& change) {
  nlohmann::json job = yamlFileToJson(manifestPath);
  job["metadata"].erase("generateName");
  job["metadata"]["name"] = name;
  change(job["spec"]["workers"]["template"]);
  return job;
}

}  // namespace ipu::testing
