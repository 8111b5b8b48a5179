// `kubectl ipu` against the real API server and the real operator, run by a tenant: a ServiceAccount of one
// namespace bound to the aggregated `edit` role, with its own token in its own kubeconfig (as a user of a
// shared cluster is given one), and the IPU-POD maps readable by every authenticated user as the chart
// grants. The plugin is the built binary copied to a directory outside the build tree and found by kubectl on
// PATH.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <thread>

#include "api/ipupod.h"
#include "common/time_format.h"
#include "free_port.h"
#include "hostile_tenant.h"
#include "operator_fixture.h"
#include "pod_map/pod_map_page.h"

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
    tenantToken_ = tokenText;
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

  // The tenant's job "mine" (4 IPUs) and another team's "theirs" (2 x 4 IPUs), both running. `manifest`:
  // set to the manifest "mine" was created from.
  void startMineAndTheirs(Json* manifest = nullptr) {
    Json mine = yamlFileToJson(kFourIpuManifest);
    mine["metadata"].erase("generateName");
    mine["metadata"]["name"] = "mine";
    if (manifest != nullptr) *manifest = mine;
    const auto created = tenantKubectl({"create", "-f", "-"}, RunOptions{.input = mine.dump()});
    ASSERT_TRUE(created.ok()) << created.describe();
    Json theirs = mine;
    theirs["metadata"]["name"] = "theirs";
    theirs["spec"]["jobInstances"] = 2;
    ASSERT_TRUE(
        cluster().kubectl({"-n", otherNs_, "create", "-f", "-"}, RunOptions{.input = theirs.dump()}).ok());
    ASSERT_TRUE(reachesPhase("mine", "Running", 60s)) << jobStatus("mine").dump();
  }

  // The same under the tenant's IPUQuota "team" of 4 IPUs, and then a second job of the tenant, "waiting",
  // which the quota holds back (Queued, QuotaExceeded).
  void startMineTheirsAndWaiting() {
    ASSERT_TRUE(kubectl({"apply", "-f", "-"},
                        RunOptions{.input = R"({"apiVersion":"graphcore.ai/v1alpha1","kind":"IPUQuota",
                                               "metadata":{"name":"team"},"spec":{"maxIPUs":4}})"})
                    .ok());
    Json waiting;
    startMineAndTheirs(&waiting);
    if (HasFatalFailure()) return;
    waiting["metadata"]["name"] = "waiting";
    ASSERT_TRUE(tenantKubectl({"create", "-f", "-"}, RunOptions{.input = waiting.dump()}).ok());
    ASSERT_TRUE(reachesPhase("waiting", "Queued", 30s)) << jobStatus("waiting").dump();
  }

  std::string otherNs_;
  std::string pluginDir_;
  std::string tenantKubeconfig_;
  std::string tenantToken_;
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
  // The tenant's job (4 IPUs) and one of another team (2 x 4 IPUs), then one of the tenant's that the quota
  // holds back.
  startMineTheirsAndWaiting();
  if (HasFatalFailure()) return;

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

// A job of the tenant's that runs until deleted (kwok keeps its pods running), with small requests so that
// every pod fits a node.
Json longRunningJob(const std::string& name, int instances, int ipus,
                    std::optional<int> deadlineSeconds = std::nullopt) {
  Json job = yamlFileToJson(kFourIpuManifest);
  job["metadata"].erase("generateName");
  job["metadata"]["name"] = name;
  job["spec"]["jobInstances"] = instances;
  job["spec"]["ipusPerJobInstance"] = std::to_string(ipus);
  job["spec"]["workers"]["template"]["spec"]["containers"][0]["resources"] = {
      {"limits", {{"cpu", "100m"}, {"memory", "64Mi"}}}};
  if (deadlineSeconds) job["spec"]["activeDeadlineSeconds"] = *deadlineSeconds;
  return job;
}

// What the operator did with a job, in fit's words: "Now", "Queued <position>" or "Never".
std::string outcomeOf(const Json& job) {
  const Json& status = job.value("status", Json::object());
  const std::string phase = status.value("phase", "");
  if (status.contains("partitions") && !status["partitions"].empty()) return "Now";
  if (phase == "Failed") return "Never";
  if (phase == "Queued") {
    const int position = status.value("queuePosition", 0);
    return position > 0 ? "Queued " + std::to_string(position) : "Never";
  }
  return "undecided (" + phase + ")";
}

TEST_F(KubectlIpuTest, FitPredictsWhereEachOfFiftyRandomJobsEndsUp) {
  // The tenant's namespace may hold 48 of the POD's 64 IPUs: some gangs never fit the quota, some never the
  // POD (128 IPUs), the rest are admitted or queue. Same priority, so creating them one after another in
  // file order is what fit plans.
  ASSERT_TRUE(kubectl({"apply", "-f", "-"},
                      RunOptions{.input = R"({"apiVersion":"graphcore.ai/v1alpha1","kind":"IPUQuota",
                                             "metadata":{"name":"team"},"spec":{"maxIPUs":48}})"})
                  .ok());
  const unsigned seed = std::random_device()();
  std::cout << "seed " << seed << '\n';
  std::mt19937 random(seed);
  const int sizes[] = {1, 2, 4, 8, 16, 32, 64, 128};
  std::string file;
  std::vector<std::string> names;
  for (int i = 0; i < 50; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "job-%02d", i);
    names.push_back(name);
    const int size = sizes[std::uniform_int_distribution<int>(0, 7)(random)];
    const int instances = std::uniform_int_distribution<int>(1, 2)(random);
    file += "---\n" + longRunningJob(name, instances, size).dump() + "\n";
  }
  const std::string path = directory_ + "/jobs.yaml";
  std::ofstream(path) << file;
  // The operator publishes its queue (empty) before the first prediction.
  ASSERT_TRUE(eventually([&] { return cluster().kubectl({"get", "ipuqueue", "ipu-operator"}).ok(); }, 30s));

  const RunResult fit = asTenant({"fit", "-f", path, "-o", "json"});
  ASSERT_TRUE(fit.exitCode == 0 || fit.exitCode == 3) << fit.describe();
  std::cout << "$ kubectl ipu fit -f jobs.yaml\n" << asTenant({"fit", "-f", path}).out;
  std::map<std::string, std::string> predicted;
  const Json answer = Json::parse(fit.out);
  for (const Json& job : answer["jobs"]) {
    std::string verdict = job["verdict"];
    if (verdict == "Queued") verdict += " " + std::to_string(job["position"].get<int>());
    predicted[job["job"]] = verdict;
  }
  ASSERT_EQ(predicted.size(), 50u) << fit.out;

  const auto created = tenantKubectl({"create", "-f", path});
  ASSERT_TRUE(created.ok()) << created.describe();
  std::map<std::string, std::string> actual;
  const bool settled = eventually(
      [&] {
        const auto listed = kubectl({"get", "ipujobs", "-o", "json"});
        if (!listed.ok()) return false;
        actual.clear();
        const Json items = Json::parse(listed.out)["items"];
        for (const Json& job : items) actual[job["metadata"]["name"]] = outcomeOf(job);
        return actual == predicted;
      },
      90s);
  for (const std::string& name : names) {
    EXPECT_EQ(actual[name], predicted[name]) << name << ": " << jobStatus(name).value("lastMessage", "");
  }
  EXPECT_TRUE(settled);
}

TEST_F(KubectlIpuTest, WithDeadlinesEveryJobStartsByItsEstimate) {
  // Two holders fill the POD for 20 s; five jobs wait, each with a deadline, so every start is bounded.
  ASSERT_TRUE(tenantKubectl({"create", "-f", "-"},
                            RunOptions{.input = longRunningJob("hold-a", 1, 32, 20).dump() + "\n" +
                                                longRunningJob("hold-b", 1, 32, 25).dump()})
                  .ok());
  ASSERT_TRUE(reachesPhase("hold-a", "Running", 60s)) << jobStatus("hold-a").dump();
  ASSERT_TRUE(reachesPhase("hold-b", "Running", 60s)) << jobStatus("hold-b").dump();
  const std::vector<std::tuple<std::string, int, int>> waiting = {
      {"wait-0", 64, 15}, {"wait-1", 32, 20}, {"wait-2", 16, 10}, {"wait-3", 32, 15}, {"wait-4", 64, 10}};
  std::string manifests;
  for (const auto& [name, size, deadline] : waiting)
    manifests += longRunningJob(name, 1, size, deadline).dump() + "\n";
  ASSERT_TRUE(tenantKubectl({"create", "-f", "-"}, RunOptions{.input = manifests}).ok());
  // Each job's estimate, as `why` gives it once the queue with all five is published.
  std::map<std::string, Clock::WallTime> estimates;
  RunResult why;
  for (const auto& [name, size, deadline] : waiting) {
    ASSERT_TRUE(eventually(
        [&] {
          why = asTenant({"why", name, "-o", "json"});
          if (!why.ok()) return false;
          const Json report = Json::parse(why.out);
          if (!report.contains("estimate") || !report["estimate"].contains("startsBy")) return false;
          // Published with every job of the batch queued (the earliest estimate comes with the full queue).
          const auto queue =
              cluster().kubectl({"get", "ipuqueue", "ipu-operator", "-o", "jsonpath={.status.waiting}"});
          if (Json::parse(queue.out.empty() ? "[]" : queue.out).size() < waiting.size()) return false;
          estimates[name] = *parseTime(report["estimate"]["startsBy"].get<std::string>());
          // The operator writes its own estimate into the job's status too.
          return jobStatus(name).value("startEstimate", Json::object()).contains("startsBy");
        },
        30s))
        << why.describe();
  }
  std::cout << "$ kubectl ipu why wait-4\n" << asTenant({"why", "wait-4"}).out;
  // Every job starts (is admitted: status.startTime) no later than its estimate + 10 s.
  for (const auto& [name, size, deadline] : waiting) {
    std::optional<Clock::WallTime> started;
    const auto bound = estimates[name] + 10s;
    const auto wait =
        std::chrono::duration_cast<std::chrono::seconds>(bound - std::chrono::system_clock::now()) + 5s;
    EXPECT_TRUE(eventually(
        [&] {
          const Json status = jobStatus(name);
          if (const auto at = parseTime(status.value("startTime", ""))) started = at;
          return started.has_value();
        },
        std::max<std::chrono::seconds>(wait, 1s)))
        << name << " did not start by " << formatTime(bound) << ": " << jobStatus(name).dump();
    if (started) {
      EXPECT_LE(*started, bound) << name << " started " << formatTime(*started) << ", estimate "
                                 << formatTime(estimates[name]);
    }
  }
}

// The POD map page the operator serves (--pod-map-page-bind-address), looked at in a real headless Chromium
// (the Debian package tools/install-deps.sh installs) and fetched with curl as the tenant would.
class PodMapPageTest : public KubectlIpuTest {
 protected:
  bool startsOperatorInSetUp() const override { return false; }

  void startWithPage(const std::string& host) {
    port_ = freeLoopbackPort();
    startOperator({"--pod-map-page-bind-address", host + ":" + std::to_string(port_)});
    url_ = "http://127.0.0.1:" + std::to_string(port_) + "/";
  }

  // Chromium's own DOM of the page after loading it (--dump-dom), or its screenshot.
  RunResult chromium(const std::vector<std::string>& what) {
    std::vector<std::string> argv{"chromium",
                                  "--headless",
                                  "--no-sandbox",  // tests run as root, where Chromium's sandbox cannot
                                  "--disable-gpu",
                                  "--user-data-dir=" + directory_ + "/chromium",
                                  "--window-size=1280,1000"};
    argv.insert(argv.end(), what.begin(), what.end());
    argv.push_back(url_);
    return run(argv, RunOptions{.timeout = 60s});
  }

  struct Reply {
    int status = 0;
    std::string body;
  };
  Reply curl(const std::string& token) {
    const std::string bodyFile = directory_ + "/page.html";
    std::vector<std::string> argv{"curl", "-s", "-o", bodyFile, "-w", "%{http_code}"};
    if (!token.empty()) argv.insert(argv.end(), {"-H", "Authorization: Bearer " + token});
    argv.push_back(url_);
    const RunResult fetched = run(argv);
    Reply reply;
    if (!fetched.ok()) return reply;
    reply.status = std::atoi(fetched.out.c_str());
    std::ifstream file(bodyFile);
    reply.body.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    return reply;
  }

  std::uint16_t port_ = 0;
  std::string url_;
};

// Each IPU cell of a page (global id -> fill) and each legend row's colour by its label.
struct DrawnMap {
  std::map<int, std::string> fills;
  std::map<std::string, std::string> colourOf;
};
DrawnMap drawnMapOf(const std::string& dom) {
  DrawnMap map;
  const std::regex cell(R"re(<rect class="ipu" data-ipu="(\d+)"[^>]* fill="([^"]+)")re");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), cell); it != std::sregex_iterator(); ++it)
    map.fills[std::stoi((*it)[1])] = (*it)[2];
  const std::regex row(
      R"re(<tr class="holder" data-holder="\d+" data-colour="([^"]+)">.*?<td>([^<]*)</td>)re");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), row); it != std::sregex_iterator(); ++it)
    map.colourOf[(*it)[2]] = (*it)[1];
  return map;
}

TEST_F(PodMapPageTest, OnLoopbackChromiumDrawsEveryIpuInTheColourOfTheJobTheIpuPodSaysHoldsIt) {
  startWithPage("127.0.0.1");
  startMineTheirsAndWaiting();
  if (HasFatalFailure()) return;
  std::map<std::string, std::string> labelOfUid;
  for (const auto& [job, jobNs] :
       {std::pair{std::string("mine"), ns()}, std::pair{std::string("theirs"), otherNs_}}) {
    const auto uid = cluster().kubectl({"-n", jobNs, "get", "ipujob", job, "-o", "jsonpath={.metadata.uid}"});
    ASSERT_TRUE(uid.ok()) << uid.describe();
    labelOfUid[uid.out] = jobNs + "/" + job;
  }
  // What the IPUPod says against what Chromium shows, until both have both jobs (the IPUPod is written at
  // most every 5 s; the page reads the operator's caches).
  std::string why;
  const bool agree = eventually(
      [&] {
        const auto pod = cluster().kubectl({"get", "ipupod", "pod64", "-o", "json"});
        const RunResult dom = chromium({"--dump-dom"});
        if (!pod.ok() || !dom.ok()) {
          why = pod.describe() + dom.describe();
          return false;
        }
        const DrawnMap drawn = drawnMapOf(dom.out);
        if (drawn.fills.size() != 64u) {
          why = "cells: " + std::to_string(drawn.fills.size()) + "\n" + dom.out;
          return false;
        }
        std::map<int, std::string> expected;  // IPU -> label
        const Json published = Json::parse(pod.out);
        for (const Json& holder : published["status"]["holders"]) {
          const auto ipus = api::parseIpuRanges(holder["ipus"].get<std::string>(), 64);
          if (!ipus || !labelOfUid.contains(holder.value("jobUID", ""))) continue;
          for (const std::uint32_t ipu : *ipus)
            expected[static_cast<int>(ipu)] = labelOfUid[holder["jobUID"]];
        }
        if (expected.size() != 12u) {
          why = "the IPUPod holds " + std::to_string(expected.size()) + " of the jobs' 12 IPUs: " + pod.out;
          return false;
        }
        for (const auto& [ipu, fill] : drawn.fills) {
          const auto held = expected.find(ipu);
          const std::string want = held == expected.end() ? controllers::kFreeColour
                                   : drawn.colourOf.count(held->second)
                                       ? drawn.colourOf.at(held->second)
                                       : "(no legend row for " + held->second + ")";
          if (fill != want) {
            why = "IPU " + std::to_string(ipu) + " is " + fill + ", not " + want + "\n" + dom.out;
            return false;
          }
        }
        // The queue with its reason and the quota, too.
        if (dom.out.find("<td>" + ns() + "/waiting</td><td>4</td><td>QuotaExceeded</td>") ==
                std::string::npos ||
            dom.out.find("<td>" + ns() + "</td><td>team</td><td>4 / 4</td>") == std::string::npos) {
          why = "no waiting job or quota:\n" + dom.out;
          return false;
        }
        return drawn.colourOf.size() == 2u &&
               drawn.colourOf.at(ns() + "/mine") != drawn.colourOf.at(otherNs_ + "/theirs");
      },
      60s);
  ASSERT_TRUE(agree) << why;

  // A standby replica serves the same page from what the API server holds: the same holders in the same
  // colours.
  const std::string leaderUrl = url_;
  const std::uint16_t standbyPort = freeLoopbackPort();
  BackgroundProcess standby(
      operatorArgv({"--pod-map-page-bind-address", "127.0.0.1:" + std::to_string(standbyPort)}));
  url_ = "http://127.0.0.1:" + std::to_string(standbyPort) + "/";
  RunResult standbyDom;
  ASSERT_TRUE(eventually(
      [&] {
        standbyDom = chromium({"--dump-dom"});
        const DrawnMap drawn = drawnMapOf(standbyDom.out);
        return standbyDom.ok() && drawn.fills.size() == 64u &&
               drawn.colourOf.count(otherNs_ + "/theirs") == 1u &&
               std::count_if(drawn.fills.begin(), drawn.fills.end(), [&](const auto& cell) {
                 return cell.second == drawn.colourOf.at(otherNs_ + "/theirs");
               }) == 8;
      },
      30s))
      << standbyDom.describe() << standby.stderrText();
  url_ = leaderUrl;

  // The screenshot, kept as the test's artifact (docs/images/pod-map.png is one).
  fs::create_directories(IPU_TEST_ARTIFACTS_DIR);
  const std::string png = std::string(IPU_TEST_ARTIFACTS_DIR) + "/pod-map.png";
  fs::remove(png);
  const RunResult shot = chromium({"--screenshot=" + png});
  ASSERT_TRUE(shot.ok()) << shot.describe();
  std::ifstream file(png, std::ios::binary);
  std::string header(8, '\0');
  file.read(header.data(), 8);
  EXPECT_EQ(header, "\x89PNG\r\n\x1a\n");
  EXPECT_GT(fs::file_size(png), 10000u) << "a page that draws a map is more than a blank image";
  std::cout << "screenshot: " << png << "\n";
}

TEST_F(PodMapPageTest, BoundWiderOnlyReviewedTokensSeeThePageAndEachSeesWhatItMayList) {
  startWithPage("");  // ":PORT": every interface, so every request must carry a token
  startMineAndTheirs();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(kubectl({"create", "serviceaccount", "nobody"}).ok());
  const auto nobody = kubectl({"create", "token", "nobody", "--duration", "1h"});
  ASSERT_TRUE(nobody.ok()) << nobody.describe();

  Reply tenant;
  ASSERT_TRUE(eventually(
      [&] {
        tenant = curl(tenantToken_);
        return tenant.status == 200 && tenant.body.find(ns() + "/mine") != std::string::npos &&
               tenant.body.find("another namespace") != std::string::npos;
      },
      30s))
      << tenant.status << " " << tenant.body;
  EXPECT_EQ(tenant.body.find(otherNs_), std::string::npos) << "another namespace is named:\n" << tenant.body;
  EXPECT_EQ(tenant.body.find("theirs"), std::string::npos) << tenant.body;
  EXPECT_NE(tenant.body.find("shown to system:serviceaccount:" + ns() + ":tenant"), std::string::npos);

  EXPECT_EQ(curl("").status, 401);
  EXPECT_EQ(curl("not-a-token").status, 401);
  const Reply refused = curl(nobody.out.substr(0, nobody.out.find('\n')));
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_NE(refused.body.find("may not list IPUJobs"), std::string::npos) << refused.body;
}

}  // namespace
}  // namespace ipu::testing
