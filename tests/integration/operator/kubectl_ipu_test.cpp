// `kubectl ipu` against the real API server and the real operator, run by a tenant: a ServiceAccount of one
// namespace bound to the aggregated `edit` role, with its own token in its own kubeconfig (as a user of a
// shared cluster is given one), and the IPU-POD maps readable by every authenticated user as the chart
// grants. The plugin is the built binary copied to a directory outside the build tree and found by kubectl on
// PATH.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <thread>

#include "hostile_tenant.h"
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

class KubectlIpuTest : public OperatorTest {
 protected:
  void SetUp() override {
    OperatorTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_EQ(applyChartRbac(cluster(),
                             [](const std::string& kind, const std::string& name) {
                               return (kind == "ClusterRole" &&
                                       (name.ends_with("-edit") || name.ends_with("-view") ||
                                        name.ends_with("-pod-map-reader"))) ||
                                      (kind == "ClusterRoleBinding" && name.ends_with("-pod-map-reader"));
                             }),
              4);
    otherNs_ = ns() + "-other";
    ASSERT_TRUE(cluster().kubectl({"create", "namespace", otherNs_}).ok());
    makeTenantKubeconfig();
    if (HasFatalFailure()) return;
    // The plugin as a user installs it: the tarball extracted into a prefix of its own, whose bin/ is on
    // PATH.
    const std::string prefix = directory_ + "/plugin-prefix";
    fs::create_directories(prefix);
    const auto extracted = run({"tar", "-xzf", IPU_KUBECTL_IPU_TARBALL, "-C", prefix});
    ASSERT_TRUE(extracted.ok()) << extracted.describe();
    pluginDir_ = prefix + "/bin";
  }

  void TearDown() override {
    if (!otherNs_.empty()) {
      cluster().kubectl({"-n", otherNs_, "delete", "ipujobs", "--all", "--timeout", "60s"});
      cluster().kubectl({"delete", "namespace", otherNs_, "--wait=false"});
    }
    OperatorTest::TearDown();
  }

  // A ServiceAccount `tenant` bound to edit in the test's namespace, and a kubeconfig with its token.
  void makeTenantKubeconfig() {
    ASSERT_TRUE(kubectl({"create", "serviceaccount", "tenant"}).ok());
    ASSERT_TRUE(kubectl({"create", "rolebinding", "tenant-edit", "--clusterrole=edit",
                         "--serviceaccount=" + ns() + ":tenant"})
                    .ok());
    const auto token = kubectl({"create", "token", "tenant", "--duration", "1h"});
    ASSERT_TRUE(token.ok()) << token.describe();
    const auto admin = cluster().kubectl({"config", "view", "--raw", "--minify", "--flatten", "-o", "json"});
    ASSERT_TRUE(admin.ok()) << admin.describe();
    const Json server = Json::parse(admin.out)["clusters"][0]["cluster"];
    std::string tokenText = token.out;
    while (!tokenText.empty() && tokenText.back() == '\n') tokenText.pop_back();
    const Json kubeconfig{
        {"apiVersion", "v1"},
        {"kind", "Config"},
        {"clusters", {{{"name", "lab"}, {"cluster", server}}}},
        {"users", {{{"name", "tenant"}, {"user", {{"token", tokenText}}}}}},
        {"contexts",
         {{{"name", "tenant"}, {"context", {{"cluster", "lab"}, {"user", "tenant"}, {"namespace", ns()}}}}}},
        {"current-context", "tenant"}};
    tenantKubeconfig_ = directory_ + "/tenant.kubeconfig";
    std::ofstream(tenantKubeconfig_) << kubeconfig.dump();
  }

  // `kubectl ipu <args>` as `kubeconfig`'s user, kubectl finding the plugin on PATH.
  RunResult plugin(const std::vector<std::string>& args, const std::string& kubeconfig) {
    std::vector<std::string> argv{cluster().binDir() + "/kubectl", "ipu"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, RunOptions{.extraEnv = {"KUBECONFIG=" + kubeconfig,
                                             "PATH=" + pluginDir_ + ":/usr/bin:/bin", "COLUMNS=100"}});
  }
  RunResult asTenant(const std::vector<std::string>& args) { return plugin(args, tenantKubeconfig_); }

  RunResult tenantKubectl(const std::vector<std::string>& args, const RunOptions& options = {}) {
    std::vector<std::string> argv{cluster().binDir() + "/kubectl", "--kubeconfig", tenantKubeconfig_};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, options);
  }

  std::string otherNs_;
  std::string pluginDir_;
  std::string tenantKubeconfig_;
};

// The mark the legend gives `label` ("" when it has none).
std::string markOf(const std::string& map, const std::string& label) {
  std::smatch match;
  if (std::regex_search(map, match, std::regex("\n  (.)  " + label + " "))) return match[1];
  return "";
}

// How many IPUs the map's rows give `mark`.
long cellsMarked(const std::string& map, char mark) {
  long count = 0;
  std::istringstream lines(map);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("ILD ", 0) == 0 || line.rfind("       M", 0) == 0) {
      count += std::count(line.begin() + 12, line.end(), mark);
    }
  }
  return count;
}

TEST_F(KubectlIpuTest, ATenantSeesWhatIsFreeWhoHoldsItAndItsQuotaWithOtherNamespacesUnnamed) {
  ASSERT_TRUE(kubectl({"apply", "-f", "-"},
                      RunOptions{.input = R"({"apiVersion":"graphcore.ai/v1alpha1","kind":"IPUQuota",
                                             "metadata":{"name":"team"},"spec":{"maxIPUs":4}})"})
                  .ok());
  // The tenant's job (4 IPUs) and one of another team (2 x 4 IPUs), then one of the tenant's that the quota
  // holds back.
  Json mine = yamlFileToJson(kFourIpuManifest);
  mine["metadata"].erase("generateName");
  mine["metadata"]["name"] = "mine";
  const auto created = tenantKubectl({"create", "-f", "-"}, RunOptions{.input = mine.dump()});
  ASSERT_TRUE(created.ok()) << created.describe();
  Json theirs = mine;
  theirs["metadata"]["name"] = "theirs";
  theirs["spec"]["jobInstances"] = 2;
  ASSERT_TRUE(
      cluster().kubectl({"-n", otherNs_, "create", "-f", "-"}, RunOptions{.input = theirs.dump()}).ok());
  ASSERT_TRUE(reachesPhase("mine", "Running", 60s)) << jobStatus("mine").dump();
  Json waiting = mine;
  waiting["metadata"]["name"] = "waiting";
  ASSERT_TRUE(tenantKubectl({"create", "-f", "-"}, RunOptions{.input = waiting.dump()}).ok());
  ASSERT_TRUE(reachesPhase("waiting", "Queued", 30s)) << jobStatus("waiting").dump();

  // status: both jobs' IPUs on the map, the tenant's named, the other team's not.
  RunResult status;
  ASSERT_TRUE(eventually(
      [&] {
        status = asTenant({"status"});
        return status.ok() && status.out.find(ns() + "/mine") != std::string::npos &&
               status.out.find("another namespace") != std::string::npos;
      },
      30s))
      << status.describe();
  std::cout << "$ kubectl ipu status   # as the tenant\n" << status.out;
  const std::string mark = markOf(status.out, ns() + "/mine");
  const std::string hidden = markOf(status.out, "another namespace");
  ASSERT_FALSE(mark.empty()) << status.out;
  ASSERT_FALSE(hidden.empty()) << status.out;
  EXPECT_EQ(cellsMarked(status.out, mark[0]), 4) << status.out;
  EXPECT_EQ(cellsMarked(status.out, hidden[0]), 8) << status.out;
  EXPECT_EQ(status.out.find(otherNs_), std::string::npos) << "the other namespace is named:\n" << status.out;
  EXPECT_EQ(status.out.find("theirs"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("free 52 of 64 IPUs"), std::string::npos) << status.out;
  EXPECT_EQ(status.out.find('\x1b'), std::string::npos) << "no colour when stdout is not a terminal";

  const RunResult json = asTenant({"status", "-o", "json"});
  ASSERT_TRUE(json.ok()) << json.describe();
  const Json controllers = Json::parse(json.out)["controllers"];
  ASSERT_EQ(controllers.size(), 1u);
  EXPECT_EQ(controllers[0]["controller"], "pod64");
  int named = 0;
  for (const Json& holder : controllers[0]["holders"]) {
    if (holder["job"].is_object()) {
      EXPECT_EQ(holder["job"]["name"], "mine");
      ++named;
    }
  }
  EXPECT_EQ(named, 1) << json.out;

  // An admin, who may list every namespace, sees both names.
  const RunResult admin = plugin({"status"}, cluster().kubeconfig());
  ASSERT_TRUE(admin.ok()) << admin.describe();
  EXPECT_NE(admin.out.find(otherNs_ + "/theirs"), std::string::npos) << admin.out;

  // top: the tenant's namespace by name, the other team's IPUs counted, not named.
  const RunResult top = asTenant({"top"});
  ASSERT_TRUE(top.ok()) << top.describe();
  std::cout << "$ kubectl ipu top\n" << top.out;
  EXPECT_TRUE(std::regex_search(top.out, std::regex("\n" + ns() + " +4 +1\n"))) << top.out;
  EXPECT_TRUE(std::regex_search(top.out, std::regex("\n\\(other namespaces\\) +8 +1\n"))) << top.out;
  EXPECT_TRUE(std::regex_search(top.out, std::regex("\n" + ns() + " +mine +4 +1 +Running "))) << top.out;
  EXPECT_EQ(top.out.find(otherNs_), std::string::npos) << top.out;

  // quota: the namespace's use against its limit and the job it holds back.
  const RunResult quota = asTenant({"quota"});
  ASSERT_TRUE(quota.ok()) << quota.describe();
  std::cout << "$ kubectl ipu quota\n" << quota.out;
  EXPECT_TRUE(std::regex_search(quota.out, std::regex("\n" + ns() + " +team +4/4 "))) << quota.out;
  EXPECT_TRUE(std::regex_search(quota.out, std::regex("\n" + ns() + " +waiting +4 +[0-9]+ +QuotaExceeded ")))
      << quota.out;

  // why: the waiting job's quota holds it back; the running one holds its partition.
  const RunResult why = asTenant({"why", "waiting"});
  ASSERT_TRUE(why.ok()) << why.describe();
  std::cout << "$ kubectl ipu why waiting\n" << why.out;
  EXPECT_NE(why.out.find(ns() + "/waiting: Queued (QuotaExceeded)"), std::string::npos) << why.out;
  EXPECT_NE(why.out.find("needs    1 x 4 IPUs (4), on any V-IPU controller"), std::string::npos) << why.out;
  EXPECT_NE(why.out.find("free     pod64: 52 of 64 IPUs"), std::string::npos) << why.out;
  EXPECT_NE(why.out.find("holds it back: the job needs 4 IPUs and 0 are left under maxIPUs 4"),
            std::string::npos)
      << why.out;
  EXPECT_NE(why.out.find("to run   the namespace's running jobs give back IPUs (IPUQuota team)"),
            std::string::npos)
      << why.out;
  const RunResult running = asTenant({"why", "mine", "-o", "json"});
  ASSERT_TRUE(running.ok()) << running.describe();
  EXPECT_EQ(Json::parse(running.out)["holds"].size(), 1u) << running.out;
  EXPECT_EQ(asTenant({"why", "nosuchjob"}).exitCode, 1);

  // The maps are the operator's: the tenant reads them and cannot change them.
  EXPECT_EQ(tenantKubectl({"auth", "can-i", "list", "ipupods.graphcore.ai"}).out, "yes\n");
  for (const char* verb : {"patch", "delete", "create"}) {
    EXPECT_EQ(tenantKubectl({"auth", "can-i", verb, "ipupods.graphcore.ai"}).out, "no\n") << verb;
  }
  EXPECT_EQ(tenantKubectl({"auth", "can-i", "list", "ipujobs.graphcore.ai", "-n", otherNs_}).out, "no\n");

  // Scripts: a wrong command line exits 2, an unreadable cluster 1.
  EXPECT_EQ(asTenant({"stauts"}).exitCode, 2);
  EXPECT_EQ(plugin({"status"}, directory_ + "/no-such-kubeconfig").exitCode, 1);
}

TEST_F(KubectlIpuTest, TheExtractedPluginLoadsItsOwnLibrariesButTheCLibrary) {
  const RunResult linked = run({"ldd", pluginDir_ + "/kubectl-ipu"});
  ASSERT_TRUE(linked.ok()) << linked.describe();
  const std::string own = fs::canonical(pluginDir_ + "/../lib/kubectl-ipu").string() + "/";
  int carried = 0;
  std::istringstream lines(linked.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (!std::regex_search(line, match, std::regex(R"(^\s*(\S+) => (\S+))"))) continue;
    const std::string name = match[1], path = match[2];
    if (std::regex_search(name, std::regex(R"(^(libc|libm|libpthread|libdl|librt)\.so)"))) continue;
    EXPECT_EQ(fs::weakly_canonical(path).string().rfind(own, 0), 0u) << name << " is loaded from " << path;
    ++carried;
  }
  EXPECT_GE(carried, 5) << linked.out;  // cpprest, ssl, crypto, yaml-cpp, libstdc++ at least
  const RunResult version = plugin({"version"}, cluster().kubeconfig());
  ASSERT_TRUE(version.ok()) << version.describe();
  EXPECT_EQ(version.out.rfind("kubectl-ipu ", 0), 0u) << version.out;
}

TEST_F(KubectlIpuTest, TheMapFollowsJobsAndIsWrittenOnlyWhenItChanges) {
  Json job = yamlFileToJson(kFourIpuManifest);
  job["metadata"].erase("generateName");
  job["metadata"]["name"] = "short";
  ASSERT_TRUE(tenantKubectl({"create", "-f", "-"}, RunOptions{.input = job.dump()}).ok());
  ASSERT_TRUE(reachesPhase("short", "Running", 60s)) << jobStatus("short").dump();
  RunResult status;
  ASSERT_TRUE(eventually(
      [&] { return (status = asTenant({"status"})).out.find(ns() + "/short") != std::string::npos; }, 30s))
      << status.describe();
  // Changes that do not change the map (the job annotated: the operator's job cache moves) are not written:
  // the object's resourceVersion stands across more than two of the operator's 5 s periods. What is tested is
  // the absence of a write over time, so the test waits that time.
  const auto version = [&] {
    return cluster().kubectl({"get", "ipupod", "pod64", "-o", "jsonpath={.metadata.resourceVersion}"}).out;
  };
  const std::string before = version();
  ASSERT_FALSE(before.empty());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(kubectl({"annotate", "--overwrite", "ipujob", "short", "touched=" + std::to_string(i)}).ok());
    std::this_thread::sleep_for(4s);
  }
  EXPECT_EQ(version(), before);
  // The job ends: its IPUs are free on the map again.
  ASSERT_TRUE(tenantKubectl({"delete", "ipujob", "short", "--wait=true", "--timeout=60s"}).ok());
  ASSERT_TRUE(eventually(
      [&] { return (status = asTenant({"status"})).out.find("free 64 of 64 IPUs") != std::string::npos; },
      30s))
      << status.describe();
  EXPECT_EQ(status.out.find("short"), std::string::npos) << status.out;
}

}  // namespace
}  // namespace ipu::testing
