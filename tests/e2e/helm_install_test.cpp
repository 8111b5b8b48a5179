// The Helm chart installed as a cluster admin would, on the local cluster with its real node: the operator's
// and vipu-sim's images imported into the node, `helm install` → both operator pods Running with one leader;
// the users' manifests from examples/ are admitted and their workers run (simulated node) and a job on the
// real node runs to the end, both through the in-cluster operator, whose requests the API server's audit log
// records; the leader pod killed mid-job → the standby leads within the lease duration and the job still
// finishes; `helm upgrade` rolls out; `helm uninstall` leaves no operator object behind. Finally every
// request the operator's service account made must be one the chart's roles grant.
#include <fstream>
#include <set>
#include <sstream>

#include <gmock/gmock.h>

#include "common/time_format.h"
#include "container_env.h"
#include "hostile_tenant.h"
#include "operator_on_real_node.h"
#include "rbac_rules.h"
#include "yaml_json.h"

namespace ipu::testing {
namespace {

const std::string kRelease = "ipu-e2e";
const std::string kReleaseNs = "ipu-system-e2e";
const std::string kChart = IPU_SOURCE_DIR "/deploy/helm/ipu-operator";
// The operator's account: the chart names it after the release.
const std::string kAccount = "system:serviceaccount:" + kReleaseNs + ":" + kRelease + "-ipu-operator";

// "localhost/ipu-operator/x:key" → {"localhost/ipu-operator/x", "key"}.
std::pair<std::string, std::string> splitImage(const std::string& reference) {
  const auto colon = reference.rfind(':');
  return {reference.substr(0, colon), reference.substr(colon + 1)};
}

// What the test sets: the images the real node imported, never pulled; the operator and vipu-sim on the real
// node (the simulated nodes run no containers).
std::vector<std::string> installValues() {
  const auto& cluster = TestCluster::get();
  const auto [operatorRepo, operatorTag] = splitImage(cluster.value("IPU_CLUSTER_IMAGE_IPU_OPERATOR"));
  const auto [simRepo, simTag] = splitImage(cluster.value("IPU_CLUSTER_IMAGE_VIPU_SIM"));
  const auto [runtimeRepo, runtimeTag] = splitImage(cluster.value("IPU_CLUSTER_IMAGE_IPU_RUNTIME"));
  const std::string realNode = "ipu-operator\\.dev/real-node";
  return {"--set", "image.repository=" + operatorRepo, "--set-string", "image.tag=" + operatorTag, "--set",
          "image.pullPolicy=Never", "--set", "vipuSim.enabled=true", "--set",
          "vipuSim.image.repository=" + simRepo, "--set-string", "vipuSim.image.tag=" + simTag, "--set",
          "vipuSim.image.pullPolicy=Never", "--set", "runtime.image.repository=" + runtimeRepo,
          "--set-string", "runtime.image.tag=" + runtimeTag, "--set", "runtime.image.pullPolicy=Never",
          "--set-string", "nodeSelector." + realNode + "=true", "--set-string",
          "vipuSim.nodeSelector." + realNode + "=true", "--set",
          "tolerations[0].key=ipu-operator.dev/real-node", "--set", "tolerations[0].operator=Exists", "--set",
          "vipuSim.tolerations[0].key=ipu-operator.dev/real-node", "--set",
          "vipuSim.tolerations[0].operator=Exists",
          // Activation slower than a pod's start: worker pods, made while it runs (the chart's default
          // vipuProxy.httpPort), always wait for it through the proxy's HTTP face.
          "--set-json", R"(vipuSim.args=["--activation-delay-ms","5000"])"};
}

class HelmInstallTest : public OperatorTest {
 protected:
  std::string serverVersion() const {
    const auto version = cluster().kubectl({"version", "-o", "json"});
    return Json::parse(version.out)["serverVersion"].value("gitVersion", "");
  }

  bool startsOperatorInSetUp() const override { return false; }

  void TearDown() override {
    // Whatever happened, leave the cluster as it was: jobs deleted while their operator can still remove
    // its finalizer, then no release and no namespace of it.
    kubectl({"delete", "ipujobs", "--all", "--timeout", "60s"});
    helm({"uninstall", kRelease, "--namespace", kReleaseNs, "--wait", "--ignore-not-found"});
    cluster().kubectl({"delete", "namespace", kReleaseNs, "--ignore-not-found", "--wait=false"});
    OperatorTest::TearDown();
  }

  RunResult helm(std::vector<std::string> args) const {
    args.insert(args.begin(), cluster().binDir() + "/helm");
    RunOptions options;
    options.timeout = std::chrono::minutes(4);
    options.extraEnv = {"KUBECONFIG=" + cluster().kubeconfig(),
                        "HELM_CACHE_HOME=" + cluster().dir() + "/helm/cache",
                        "HELM_CONFIG_HOME=" + cluster().dir() + "/helm/config",
                        "HELM_DATA_HOME=" + cluster().dir() + "/helm/data"};
    return run(args, options);
  }

  RunResult inRelease(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--namespace", kReleaseNs});
    return cluster().kubectl(args);
  }

  Json operatorPods() const {
    const auto listed =
        inRelease({"get", "pods", "-l", "app.kubernetes.io/component=operator", "-o", "json"});
    return listed.ok() ? Json::parse(listed.out)["items"] : Json::array();
  }

  // The Lease's holder: "<pod name>_<random>", a new one for every process.
  std::string leaderIdentity() const {
    const auto lease = inRelease({"get", "lease", "ipu-operator", "-o", "jsonpath={.spec.holderIdentity}"});
    return lease.ok() ? lease.out : "";
  }
  static std::string podOf(const std::string& identity) { return identity.substr(0, identity.rfind('_')); }

  // SIGKILLs the pod's container through the real node's containerd, as a crash would end it: no SIGTERM, no
  // Lease released.
  void killContainer(const std::string& pod) const {
    const auto id =
        inRelease({"get", "pod", pod, "-o", "jsonpath={.status.containerStatuses[0].containerID}"});
    ASSERT_TRUE(id.ok() && id.out.rfind("containerd://", 0) == 0) << id.describe() << id.out;
    const auto killed =
        run({cluster().binDir() + "/ctr", "--address", cluster().value("IPU_CLUSTER_CONTAINERD"),
             "--namespace", "k8s.io", "tasks", "kill", "--signal", "SIGKILL",
             id.out.substr(std::string("containerd://").size())});
    ASSERT_TRUE(killed.ok()) << killed.describe();
  }

  static bool runningAndReady(const Json& pod) {
    const Json status = pod.value("status", Json::object());
    if (status.value("phase", "") != "Running") return false;
    for (const auto& condition : status.value("conditions", Json::array())) {
      if (condition.value("type", "") == "Ready") return condition.value("status", "") == "True";
    }
    return false;
  }

  // Exactly two operator pods, both Ready, none going away.
  static bool twoReady(const Json& pods) {
    int ready = 0;
    for (const auto& pod : pods) {
      if (pod.value("metadata", Json::object()).contains("deletionTimestamp")) return false;
      ready += runningAndReady(pod) ? 1 : 0;
    }
    return ready == 2 && pods.size() == 2;
  }

  // Every object of the release still in the cluster, as "kind/name" lines.
  std::string releaseObjectsLeft() const {
    const auto left =
        cluster().kubectl({"get",
                           "deployments,replicasets,pods,services,serviceaccounts,roles,rolebindings,"
                           "poddisruptionbudgets,leases,endpointslices,"
                           "clusterroles,clusterrolebindings,validatingadmissionpolicies,"
                           "validatingadmissionpolicybindings",
                           "--all-namespaces", "-l", "app.kubernetes.io/instance=" + kRelease, "-o", "name"});
    const auto lease = inRelease({"get", "lease", "ipu-operator", "-o", "name", "--ignore-not-found"});
    return left.out + lease.out;
  }
};

TEST_F(HelmInstallTest, InstallRunJobsSurviveTheLeaderUpgradeAndUninstall) {
  // --- install (the fixture has applied crds/, which helm then leaves as they are: helm.chart.static checks
  // that the chart's copies are identical)
  auto install = helm([&] {
    std::vector<std::string> args{"install",     kRelease,    kChart,
                                  "--namespace", kReleaseNs,  "--create-namespace",
                                  "--wait",      "--timeout", "180s"};
    for (auto& value : installValues()) args.push_back(value);
    return args;
  }());
  ASSERT_TRUE(install.ok()) << install.describe() << "\n" << inRelease({"get", "pods", "-o", "wide"}).out;
  EXPECT_NE(install.out.find("kubectl label namespace"), std::string::npos) << "NOTES.txt: " << install.out;
  ASSERT_TRUE(eventually([&] { return twoReady(operatorPods()); }, 120s))
      << inRelease({"get", "pods", "-o", "wide"}).out;
  std::string leader;
  ASSERT_TRUE(eventually([&] { return !(leader = leaderIdentity()).empty(); }, 60s)) << "no leader";
  std::set<std::string> podNames;
  for (const auto& pod : operatorPods()) podNames.insert(pod["metadata"].value("name", ""));
  EXPECT_EQ(podNames.count(podOf(leader)), 1u) << "the Lease names " << leader << ", not an operator pod";

  // --- the job namespace labelled as docs/security.md says: workers admitted, everything else baseline.
  ASSERT_TRUE(cluster()
                  .kubectl({"label", "namespace", ns(), "pod-security.kubernetes.io/enforce=privileged",
                            "graphcore.ai/ipujobs=enabled"})
                  .ok());

  // --- a user's manifest, unchanged, on the simulated node: admitted, its worker Running (it passed the
  // policy).
  // A job's one worker Running on its simulated node: its pod passed the namespace's policy.
  const auto workerRuns = [&](const std::string& job) {
    return eventually(
        [&] {
          const Json pod = getJson("pod", job + "-worker-0");
          return pod.is_object() && pod["status"].value("phase", "") == "Running";
        },
        120s);
  };
  const std::string exampleJob = createJob(readFile(kFourIpuManifest));
  ASSERT_TRUE(workerRuns(exampleJob)) << jobStatus(exampleJob).dump() << "\n"
                                      << kubectl({"get", "events"}).out;
  EXPECT_FALSE(jobStatus(exampleJob)["partitions"].empty()) << jobStatus(exampleJob).dump();

  // --- the users' 64-IPU manifest, unchanged: it waits while the first holds 4 of the 64 IPUs, then is
  // admitted and its worker passes the policy too (hostIPC, IPC_LOCK, 200 Gi); deleted, it gives the
  // IPU-POD back to the jobs below.
  const std::string bigJob = createJob(readFile(kSixtyFourIpuManifest));
  ASSERT_TRUE(reachesPhase(bigJob, "Queued", 60s)) << jobStatus(bigJob).dump();
  EXPECT_TRUE(podsOf(bigJob).empty()) << "started while the IPUs were taken";
  ASSERT_TRUE(kubectl({"delete", "ipujob", exampleJob, "--timeout", "60s"}).ok());
  ASSERT_TRUE(workerRuns(bigJob)) << jobStatus(bigJob).dump() << "\n" << kubectl({"get", "events"}).out;
  ASSERT_TRUE(kubectl({"delete", "ipujob", bigJob, "--timeout", "60s"}).ok());

  // --- a job on the real node, while the leader pod is killed: the standby takes over and finishes it.
  const std::string job = createJob(
      jobRunning("through-failover", Json::array({"sh", "-c", "echo started; sleep 25; echo finished"})));
  ASSERT_TRUE(reachesPhase(job, "Running", 120s)) << jobStatus(job).dump();
  const auto killedAt = std::chrono::steady_clock::now();
  killContainer(podOf(leader));
  // ... and its pod gone with it (as with a node that died): the other replica must lead, not a restart.
  ASSERT_TRUE(
      inRelease({"delete", "pod", podOf(leader), "--grace-period=0", "--force", "--wait=false"}).ok());
  std::string next;
  ASSERT_TRUE(eventually([&] { return !(next = leaderIdentity()).empty() && next != leader; }, 60s));
  const auto takeover =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - killedAt);
  // The killed process never released the Lease: the standby sees its last renewal (renewed every 2 s, seen
  // within one retry of 2 s + 20% jitter), waits out the 15 s lease from then, and takes it at its next
  // retry.
  EXPECT_NE(podOf(next), podOf(leader)) << "the standby did not take over";
  EXPECT_LE(takeover.count(), 15 + 2 * 3 + 1) << "the standby took " << takeover.count() << " s to lead";
  std::cout << "leader " << leader << " SIGKILLed; " << next << " leads after " << takeover.count() << " s\n";
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 180s)) << jobStatus(job).dump();
  // The command ran once, whole (the runtime's own lines, its wait for the partition, aside).
  std::string commandOutput;
  std::istringstream logLines(kubectl({"logs", job + "-worker-0", "-c", "train"}).out);
  for (std::string line; std::getline(logLines, line);)
    if (!line.starts_with("ipu-runtime: ")) commandOutput += line + "\n";
  EXPECT_EQ(commandOutput, "started\nfinished\n");
  // The Deployment replaces the pod.
  EXPECT_TRUE(eventually([&] { return twoReady(operatorPods()); }, 120s));

  // --- a worker's V-IPU is the new leader's proxy, by the name it was given: vipu-ctl in the worker lists
  // its own partition only, through the EndpointSlice the new leader pointed at itself.
  const std::string proxyName = kRelease + "-ipu-operator-vipu-proxy";
  const std::string lister =
      createJob(jobRunning("vipu-lister", Json::array({"/vipu-ctl", "--json", "list"}), "",
                           TestCluster::get().value("IPU_CLUSTER_IMAGE_VIPU_SIM")));
  ASSERT_TRUE(reachesPhase(lister, "Succeeded", 120s))
      << kubectl({"logs", lister + "-worker-0", "-c", "train"}).out;
  const std::string own = jobStatus(lister)["partitions"][0].value("id", "");
  const auto listed = kubectl({"logs", lister + "-worker-0", "-c", "train"});
  EXPECT_EQ(partitionIdsListed(listed.out), std::vector<std::string>{own}) << listed.out;
  EXPECT_EQ(envValue(getJson("pod", lister + "-worker-0")["spec"]["containers"][0], "IPUOF_VIPU_API_HOST"),
            proxyName + "." + kReleaseNs + ".svc");
  // Made while its partition activated, the worker asked the proxy's HTTP face by the same name, from its
  // own address, and its command ran once the partition was active.
  EXPECT_EQ(envValue(getJson("pod", lister + "-worker-0")["spec"]["containers"][0],
                     "IPU_RUNTIME_PARTITION_STATUS_URL"),
            "http://" + proxyName + "." + kReleaseNs + ".svc:8091/v1/partitions/" + own);
  EXPECT_THAT(listed.out, ::testing::HasSubstr("V-IPU partition " + own + " is active after ")) << listed.out;
  const auto sliceAddress =
      inRelease({"get", "endpointslice", proxyName, "-o", "jsonpath={.endpoints[0].addresses[0]}"});
  const auto leaderIp = inRelease({"get", "pod", podOf(next), "-o", "jsonpath={.status.podIP}"});
  EXPECT_EQ(sliceAddress.out, leaderIp.out) << "the proxy's endpoint is not the new leader";

  // --- a tenant with the edit role: their own pods get no more than baseline, their jobs' workers no more
  // than the profile.
  bindEditRole(cluster(), ns(), "tenant");
  const auto podAsking = [&](const std::string& field) {
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", "mine"}}},
                {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
    if (!field.empty()) pod["spec"][field] = true;
    return asUser(cluster(), "tenant", ns(), {"create", "--dry-run=server", "-f", "-"},
                  RunOptions{.input = pod.dump()});
  };
  const auto hostIpc = podAsking("hostIPC");
  EXPECT_FALSE(hostIpc.ok()) << "a tenant's own pod got hostIPC";
  EXPECT_NE(hostIpc.err.find("ValidatingAdmissionPolicy '" + kRelease + "-ipu-operator-worker-pods'"),
            std::string::npos)
      << hostIpc.err;
  EXPECT_NE(hostIpc.err.find("hostIPC is allowed in this namespace only for IPUJob worker pods"),
            std::string::npos)
      << hostIpc.err;
  EXPECT_FALSE(podAsking("hostNetwork").ok());
  const auto plain = podAsking("");
  EXPECT_TRUE(plain.ok()) << "the policy refuses a baseline pod: " << plain.describe();
  for (const HostileTemplate& hostile : templatesPastTheProfile()) {
    std::string name = "node-" + hostile.what;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::replace(name.begin(), name.end(), '_', '-');
    const auto created =
        asUser(cluster(), "tenant", ns(), {"create", "-f", "-"},
               RunOptions{.input = manifestChangedBy(kFourIpuManifest, name, hostile.change).dump()});
    ASSERT_TRUE(created.ok()) << created.describe();
    ASSERT_TRUE(reachesPhase(name, "Failed", 60s)) << jobStatus(name).dump();
    EXPECT_EQ(jobStatus(name).value("lastMessage", "").rfind(hostile.field + ": ", 0), 0u)
        << jobStatus(name).dump();
    EXPECT_TRUE(podsOf(name).empty()) << name;
  }

  // --- upgrade: a changed value rolls out new pods running with it.
  const auto generation = inRelease({"get", "deployment", "-l", "app.kubernetes.io/component=operator", "-o",
                                     "jsonpath={.items[0].metadata.generation}"});
  auto upgrade = helm({"upgrade", kRelease, kChart, "--namespace", kReleaseNs, "--reuse-values", "--set",
                       "logLevel=debug", "--wait", "--timeout", "180s"});
  ASSERT_TRUE(upgrade.ok()) << upgrade.describe();
  const auto after = inRelease({"get", "deployment", "-l", "app.kubernetes.io/component=operator", "-o",
                                "jsonpath={.items[0].metadata.generation}"});
  EXPECT_NE(after.out, generation.out) << "the Deployment did not change";
  ASSERT_TRUE(eventually(
      [&] {
        const Json pods = operatorPods();
        if (!twoReady(pods)) return false;
        for (const auto& pod : pods) {
          if (pod["spec"]["containers"][0].dump().find("debug") == std::string::npos) return false;
        }
        return true;
      },
      180s))
      << inRelease({"get", "pods", "-o", "wide"}).out;

  // --- uninstall: jobs first (their finalizers need the operator), then nothing of the release is left.
  ASSERT_TRUE(kubectl({"delete", "ipujobs", "--all", "--wait=true", "--timeout=120s"}).ok());
  // As the audit log writes times (RFC 3339, UTC, microseconds), which compare as text.
  const std::string uninstallStarted = formatMicroTime(std::chrono::system_clock::now());
  auto uninstall = helm({"uninstall", kRelease, "--namespace", kReleaseNs, "--wait", "--timeout", "120s"});
  ASSERT_TRUE(uninstall.ok()) << uninstall.describe();
  std::string left;
  EXPECT_TRUE(eventually([&] { return (left = releaseObjectsLeft()).empty(); }, 60s)) << left;
  EXPECT_TRUE(cluster().kubectl({"get", "crd", "ipujobs.graphcore.ai"}).ok())
      << "helm keeps CRDs it installed";

  // --- the operator's requests, from the API server's audit log, against the roles the chart renders.
  auto rendered = helm([&] {
    // The kubeVersion the chart asks for is checked against the live cluster's (helm template alone would
    // assume an old default).
    std::vector<std::string> args{"template", kRelease,         kChart,         "--namespace",
                                  kReleaseNs, "--kube-version", serverVersion()};
    for (auto& value : installValues()) args.push_back(value);
    return args;
  }());
  ASSERT_TRUE(rendered.ok()) << rendered.describe();
  const std::vector<Json> objects = yamlDocumentsToJson(rendered.out);
  const auto grants = grantsOf(objects, kReleaseNs, kRelease + "-ipu-operator");
  ASSERT_FALSE(grants.empty()) << "the chart binds no role to " << kAccount;
  std::ifstream log(cluster().value("IPU_CLUSTER_AUDIT_LOG"));
  ASSERT_TRUE(log.good()) << "no audit log";
  const auto requests = auditedRequestsOf(log, kAccount);
  ASSERT_GT(requests.size(), 50u) << "the in-cluster operator made almost no requests: was it audited?";
  std::set<std::string> kinds, refused, ungranted;
  for (const auto& request : requests) {
    kinds.insert(request.verb + " " + request.resource +
                 (request.subresource.empty() ? "" : "/" + request.subresource));
    // helm deletes the roles while the operator's pods stop: a stopping replica's last words may be refused.
    if (request.code == 403 && request.received < uninstallStarted) refused.insert(request.describe());
    // Discovery and health paths every authenticated client may read (system:discovery,
    // system:public-info-viewer).
    if (request.resource.empty()) continue;
    if (!allows(grants, request)) ungranted.insert(request.describe());
  }
  EXPECT_TRUE(refused.empty()) << "the API server refused the operator:\n"
                               << ::testing::PrintToString(refused);
  EXPECT_TRUE(ungranted.empty()) << "requests the chart's roles do not grant:\n"
                                 << ::testing::PrintToString(ungranted);
  std::cout << requests.size() << " requests of " << kAccount << " checked; kinds:";
  for (const auto& kind : kinds) std::cout << " [" << kind << "]";
  std::cout << "\n";
}

}  // namespace
}  // namespace ipu::testing
