// A hostile tenant of a shared cluster, through the real API server and the real operator: requests are made
// as a user bound to the aggregated `edit` role (the chart's roles rendered and applied as an install would),
// never as admin. Each case is one way the operator used to give a namespace editor more than their share:
// a worker template asking for a node, a mistyped template that held IPUs forever, and pods posing as a
// job's workers.
#include <algorithm>

#include "hostile_tenant.h"
#include "ipujob/child_names.h"
#include "operator_fixture.h"
#include "tls/pki.h"

namespace ipu::testing {
namespace {

const std::string kTenant = "tenant";

class TenantTest : public OperatorTest {
 protected:
  // In each test's set-up (not the suite's, whose failures gtest reports as skipped tests).
  void SetUp() override {
    OperatorTest::SetUp();
    if (HasFatalFailure()) return;
    installTenantRoles();
    if (HasFatalFailure()) return;
    bindEditRole(cluster(), ns(), kTenant);
  }

  // The chart's -edit and -view ClusterRoles (aggregated into edit and view), as `helm install` creates them
  // (applied again by every test: the same objects each time).
  static void installTenantRoles() {
    ASSERT_EQ(applyChartRbac(TestCluster::get(),
                             [](const std::string& kind, const std::string& name) {
                               return kind == "ClusterRole" &&
                                      (name.ends_with("-edit") || name.ends_with("-view"));
                             }),
              2);
  }

  // Creates the job as the tenant: empty when the API server refused it (its words in `refusal`).
  std::string createAsTenant(const Json& job, std::string* refusal = nullptr) {
    const auto created = asUser(cluster(), kTenant, ns(), {"create", "-f", "-", "-o", "name"},
                                RunOptions{.input = job.dump()});
    if (!created.ok()) {
      if (refusal) *refusal = created.err;
      return "";
    }
    return job["metadata"].value("name", "");
  }

  std::string failure(const std::string& job) {
    for (const Json& condition : jobStatus(job).value("conditions", Json::array())) {
      if (condition.value("type", "") == "Failed") return condition.value("reason", "");
    }
    return "";
  }

  bool noPartitions() {
    auto listed = vipu_->listPartitions("");
    return listed.ok() && listed->empty();
  }
};

TEST_F(TenantTest, WorkerTemplatesAskingForANodeEndForbiddenPodSpecWithNothingHeld) {
  // The tenant may create IPUJobs at all (else every refusal below would prove nothing).
  ASSERT_EQ(asUser(cluster(), kTenant, ns(), {"auth", "can-i", "create", "ipujobs.graphcore.ai"}).out,
            "yes\n");
  std::vector<std::pair<std::string, std::string>> jobs;  // name, field
  for (const HostileTemplate& hostile : templatesPastTheProfile()) {
    std::string name = "node-" + hostile.what;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::replace(name.begin(), name.end(), '_', '-');
    std::string refusal;
    ASSERT_EQ(createAsTenant(manifestChangedBy(kFourIpuManifest, name, hostile.change), &refusal), name)
        << refusal;
    jobs.emplace_back(name, hostile.field);
  }
  for (const auto& [job, field] : jobs) {
    SCOPED_TRACE(job);
    ASSERT_TRUE(reachesPhase(job, "Failed", 30s)) << jobStatus(job).dump();
    EXPECT_EQ(failure(job), "ForbiddenPodSpec");
    const std::string message = jobStatus(job).value("lastMessage", "");
    EXPECT_EQ(message.rfind(field + ": ", 0), 0u) << message;
    EXPECT_FALSE(jobStatus(job).contains("partitions")) << "admitted: " << jobStatus(job).dump();
    EXPECT_TRUE(podsOf(job).empty());
  }
  EXPECT_TRUE(noPartitions());
}

TEST_F(TenantTest, MistypedTemplatesAreRefusedAtTheDoorOrEndInvalidSpecBeforeAdmission) {
  int refusedAtTheDoor = 0;
  std::vector<std::pair<std::string, std::string>> jobs;  // name, field
  for (const HostileTemplate& mistyped : mistypedTemplates()) {
    std::string name = "typo-" + mistyped.what;
    std::replace(name.begin(), name.end(), ' ', '-');
    std::string refusal;
    const std::string job =
        createAsTenant(manifestChangedBy(kFourIpuManifest, name, mistyped.change), &refusal);
    if (job.empty()) {
      // The CRD's schema refused it: the user's kubectl says which field.
      ++refusedAtTheDoor;
      EXPECT_NE(refusal.find(mistyped.field), std::string::npos) << mistyped.what << ": " << refusal;
      continue;
    }
    jobs.emplace_back(job, mistyped.field);
  }
  for (const auto& [job, field] : jobs) {
    SCOPED_TRACE(job);
    ASSERT_TRUE(reachesPhase(job, "Failed", 30s)) << jobStatus(job).dump();
    EXPECT_EQ(failure(job), "InvalidSpec");
    const std::string message = jobStatus(job).value("lastMessage", "");
    EXPECT_EQ(message.rfind(field + ": ", 0), 0u) << message;
    EXPECT_FALSE(jobStatus(job).contains("partitions")) << "admitted: " << jobStatus(job).dump();
  }
  EXPECT_TRUE(noPartitions());
  std::cout << refusedAtTheDoor << " of " << mistypedTemplates().size()
            << " mistyped templates refused by the API server, the rest by the operator\n";
}

TEST_F(TenantTest, PodsPosingAsWorkersChangeNothingAndAreNamedOnTheJob) {
  // A second tenant, in a namespace of their own.
  const std::string other = ns() + "-other";
  ASSERT_TRUE(cluster().kubectl({"create", "namespace", other}).ok());
  bindEditRole(cluster(), other, "neighbour");
  const std::string job = createJob(manifestExitingWith(0, "", "20s"));
  const std::string uid = getJson("ipujob", job)["metadata"].value("uid", "");
  ASSERT_TRUE(reachesPhase(job, "Running", 60s)) << jobStatus(job).dump();
  // Failed pods claiming the job: one in the neighbour's namespace (controller reference to the job's uid,
  // the job's labels, named like its worker) and one in the job's own namespace without the controller flag.
  const auto impostor = [&](const std::string& name, bool controller) {
    return Json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", name},
                  {"labels", {{"graphcore.ai/ipujob", job}, {"graphcore.ai/attempt", "0"}}},
                  {"annotations", {{"ipu-operator.dev/simulate-exit-code", "1"}}},
                  {"ownerReferences",
                   {{{"apiVersion", "graphcore.ai/v1alpha1"},
                     {"kind", "IPUJob"},
                     {"name", job},
                     {"uid", uid},
                     {"controller", controller}}}}}},
                {"spec",
                 {{"restartPolicy", "Never"},
                  {"nodeSelector", {{"type", "kwok"}}},
                  {"tolerations", {{{"key", "kwok.x-k8s.io/node"}, {"operator", "Exists"}}}},
                  {"containers", {{{"name", "w"}, {"image", "busybox"}}}}}}};
  };
  const auto neighbours = asUser(cluster(), "neighbour", other, {"create", "-f", "-"},
                                 RunOptions{.input = impostor(job + "-worker-0", true).dump()});
  ASSERT_TRUE(neighbours.ok()) << neighbours.describe();
  const auto lookalike = asUser(cluster(), kTenant, ns(), {"create", "-f", "-"},
                                RunOptions{.input = impostor("lookalike", false).dump()});
  ASSERT_TRUE(lookalike.ok()) << lookalike.describe();
  // The job's own worker ends with 0 after its 20 s: the job succeeds, whatever its impostors did.
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 120s)) << jobStatus(job).dump();
  // Seen by a pass of the job (each of its workers' changes makes one): named on the job.
  const auto conflicts = [&] {
    const auto events =
        kubectl({"get", "events", "--field-selector", "involvedObject.name=" + job, "-o", "json"});
    std::string messages;
    const Json listed = Json::parse(events.out);  // named: a range over a temporary's member would dangle
    for (const Json& event : listed["items"]) {
      if (event.value("reason", "") == "PodConflict") messages += event.value("message", "") + "\n";
    }
    return messages;
  };
  EXPECT_NE(conflicts().find("Pod " + ns() + "/lookalike names this job"), std::string::npos) << conflicts();
  // The operator deleted neither: they are their owners' to delete.
  EXPECT_TRUE(getJson("pod", "lookalike").is_object());
  cluster().kubectl({"delete", "namespace", other, "--wait=false"});
}

// The same tenant with the runtime injected: multi-worker jobs get a runtime Secret and agents.
class RuntimeTenantTest : public TenantTest {
 protected:
  bool startsOperatorInSetUp() const override { return false; }
  void SetUp() override {
    TenantTest::SetUp();
    if (HasFatalFailure()) return;
    startOperator({"--runtime-image", "registry.example/ipu-runtime:test"});
  }

  // A Secret's ca.crt as stored (the admin may read it; the operator may not).
  std::string caOf(const std::string& secret) {
    const Json object = getJson("secret", secret);
    const auto decoded = run({"base64", "-d"}, RunOptions{.input = object["data"].value("ca.crt", "")});
    return decoded.out;
  }
};

TEST_F(RuntimeTenantTest, ASecretPlantedUnderTheJobsOldNameIsNeverMountedAndOnlyItsPodsReachItsAgents) {
  const std::string job = "planted";
  // Suspended: its name and uid are known long before any pod is made.
  const std::string manifest =
      withName(manifestExitingWith(0, "  suspend: true\n  workersPerJobInstance: \"2\"\n", "60s"), job);
  ASSERT_EQ(createAsTenant(yamlToJson(manifest)), job);
  const std::string uid = getJson("ipujob", job)["metadata"].value("uid", "");
  // The derived name earlier versions mounted, planted with a CA and key pair of the tenant's own for the
  // job's very identity: whoever holds that key could run commands in every worker through the agents.
  const std::string planted = controllers::legacyRuntimeSecretName({ns(), job, uid});
  const PlantedSecret secret = plantedRuntimeSecret(planted, ns(), job, uid);
  const auto& attackers = secret.credentials;
  const auto created =
      asUser(cluster(), kTenant, ns(), {"create", "-f", "-"}, RunOptions{.input = secret.object.dump()});
  ASSERT_TRUE(created.ok()) << created.describe();
  const auto resumed =
      asUser(cluster(), kTenant, ns(),
             {"patch", "ipujob", job, "--type=merge", "-p", R"({"spec":{"suspend":false}})"});
  ASSERT_TRUE(resumed.ok()) << resumed.describe();
  ASSERT_TRUE(reachesPhase(job, "Running", 90s)) << jobStatus(job).dump();

  // The job's own Secret: a generated name, recorded, owned by the job, immutable.
  const Json recorded = jobStatus(job)["runtimeSecret"];
  const std::string name = recorded.value("name", "");
  EXPECT_TRUE(name.starts_with(job + "-ipu-runtime-")) << recorded.dump();
  EXPECT_NE(name, planted);
  const Json own = getJson("secret", name);
  EXPECT_EQ(own["metadata"]["ownerReferences"][0]["uid"], uid);
  EXPECT_EQ(own["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(own.value("immutable", false), true);
  EXPECT_EQ(recorded.value("caSha256", ""), runtime::pki::pemDigest(caOf(name)));
  EXPECT_NE(recorded.value("caSha256", ""), runtime::pki::pemDigest(attackers.caCertPem));
  // Every worker mounts it, key readable by its own user only, and pins its CA.
  const Json pods = podsOf(job);
  ASSERT_EQ(pods.size(), 2u);
  for (const Json& pod : pods) {
    int mounted = 0;
    for (const Json& volume : pod["spec"]["volumes"]) {
      if (!volume.contains("secret")) continue;
      ++mounted;
      EXPECT_EQ(volume["secret"]["secretName"], name) << "the planted Secret must never be mounted";
      EXPECT_EQ(volume["secret"]["defaultMode"], 0400);
    }
    EXPECT_EQ(mounted, 1);
    std::string pinned;
    for (const Json& env : pod["spec"]["containers"][0]["env"]) {
      if (env["name"] == "IPU_RUNTIME_CA_SHA256") pinned = env.value("value", "");
    }
    EXPECT_EQ(pinned, recorded.value("caSha256", ""));
  }
  // The planted Secret is left as it was: it is the tenant's.
  EXPECT_EQ(caOf(planted), attackers.caCertPem);

  // The agents' NetworkPolicy: owned by the job, selecting its pods, the agent port only from them.
  const Json policy = getJson("networkpolicy", controllers::headlessServiceName(job));
  ASSERT_TRUE(policy.is_object());
  EXPECT_EQ(policy["metadata"]["ownerReferences"][0]["uid"], uid);
  const Json jobPods = {{"matchLabels", {{"graphcore.ai/ipujob", job}}}};
  EXPECT_EQ(policy["spec"]["podSelector"], jobPods);
  ASSERT_EQ(policy["spec"]["ingress"].size(), 2u);
  EXPECT_EQ(policy["spec"]["ingress"][0]["from"], Json::array({{{"podSelector", jobPods}}}));
  for (const Json& port : policy["spec"]["ingress"][1]["ports"]) {
    if (port["protocol"] != "TCP") continue;
    const int first = port["port"], last = port.value("endPort", first);
    EXPECT_FALSE(first <= 7470 && 7470 <= last) << "the agent port is open to everyone: " << port.dump();
  }
  // Its pods match its selector (as the API server lists them).
  const auto selected = kubectl({"get", "pods", "-l", "graphcore.ai/ipujob=" + job, "-o", "name"});
  EXPECT_EQ(std::count(selected.out.begin(), selected.out.end(), '\n'), 2) << selected.out;
}

}  // namespace
}  // namespace ipu::testing
