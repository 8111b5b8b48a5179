#include "test_cluster.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

namespace ipu::testing {
namespace {

// Reads NAME=value lines.
std::string envFileValue(const std::string& path, const std::string& name) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read " + path + ": is the test cluster up?");
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind(name + "=", 0) == 0) return line.substr(name.size() + 1);
  }
  throw std::runtime_error(path + " has no " + name +
                           " (the real node's values are there only with --real-node)");
}

// DNS-1123 label: lower-case test name, a random suffix, at most 63 characters.
std::string namespaceFor(const ::testing::TestInfo& test) {
  std::string base;
  for (char c : std::string(test.test_suite_name()) + "-" + test.name()) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      base += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!base.empty() && base.back() != '-') {
      base += '-';
    }
  }
  base = base.substr(0, 50);
  while (!base.empty() && base.back() == '-') base.pop_back();
  std::random_device random;
  return base + "-" + std::to_string(random() % 1000000);
}

}  // namespace

std::string TestCluster::value(const std::string& name) const {
  return envFileValue(dir_ + "/cluster.env", name);
}

const TestCluster& TestCluster::get() {
  static const TestCluster cluster = [] {
    const char* dir = std::getenv("IPU_TEST_CLUSTER_DIR");
    if (dir == nullptr || *dir == '\0') {
      throw std::runtime_error("IPU_TEST_CLUSTER_DIR is not set: run the integration tests through ctest");
    }
    return at(dir);
  }();
  return cluster;
}

TestCluster TestCluster::at(const std::string& dir) {
  TestCluster c;
  c.dir_ = dir;
  c.kubeconfig_ = c.value("KUBECONFIG");
  c.binDir_ = c.value("IPU_CLUSTER_BIN_DIR");
  c.etcd_ = c.value("IPU_CLUSTER_ETCD");
  return c;
}

std::vector<std::string> TestCluster::kubectlCommand(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{binDir_ + "/kubectl", "--kubeconfig", kubeconfig_};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

void TestCluster::installCrds() const {
  // Each step again until it holds (a cluster that has just started, or that another test process is
  // applying the same CRDs to, can refuse one attempt); its last answer is the error.
  RunResult applied;
  if (!eventually(
          [&] {
            return (applied = kubectl({"apply", "-f", IPU_SOURCE_DIR "/crds/"})).ok();
          },
          std::chrono::seconds(30))) {
    throw std::runtime_error("kubectl apply of the CRDs in crds/: " + applied.describe());
  }
  for (const std::string resource : {"ipujobs", "ipuquotas", "ipupods", "ipuqueues"}) {
    const std::string crd = "crd/" + resource + ".graphcore.ai";
    RunResult established;
    if (!eventually(
            [&] {
              established = kubectl({"wait", "--for", "condition=established", crd, "--timeout", "60s"});
              return established.ok();
            },
            std::chrono::seconds(60))) {
      throw std::runtime_error(crd + " was not established: " + established.describe());
    }
    // Established can precede discovery of the new resource by a moment.
    if (!eventually([&] { return kubectl({"get", resource, "-A"}).ok(); }, std::chrono::seconds(30))) {
      throw std::runtime_error(resource + " are not served 30 s after their CRD was established");
    }
  }
}

const std::string& TestCluster::installCrdsOnce() const {
  static const std::string failure = [this] {
    try {
      installCrds();
      return std::string();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  }();
  return failure;
}

RunResult TestCluster::etcdctl(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{binDir_ + "/etcdctl", "--endpoints", etcd_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

void TestCluster::compactEtcd() const {
  auto status = etcdctl({"endpoint", "status", "--write-out", "json"});
  if (!status.ok()) throw std::runtime_error("etcdctl endpoint status: " + status.describe());
  auto revision =
      nlohmann::json::parse(status.out).at(0).at("Status").at("header").at("revision").get<int64_t>();
  auto compacted = etcdctl({"compact", std::to_string(revision)});
  if (!compacted.ok()) throw std::runtime_error("etcdctl compact: " + compacted.describe());
}

void TestCluster::controlComponent(const std::string& command, const std::string& component) const {
  auto done = run({IPU_SOURCE_DIR "/tools/cluster.sh", command, component, "--dir", dir_},
                  RunOptions{.timeout = std::chrono::seconds(180)});
  if (!done.ok())
    throw std::runtime_error("cluster.sh " + command + " " + component + ": " + done.describe());
}

RunResult TestCluster::kubectl(const std::vector<std::string>& args, const RunOptions& options) const {
  return run(kubectlCommand(args), options);
}

void ClusterTest::SetUp() {
  namespace_ = namespaceFor(*::testing::UnitTest::GetInstance()->current_test_info());
  auto created = cluster().kubectl({"create", "namespace", namespace_});
  ASSERT_TRUE(created.ok()) << created.describe();
  // Pods need the namespace's default service account, which the controller-manager creates.
  ASSERT_TRUE(eventually(
      [&] {
        return kubectl({"get", "serviceaccount", "default"}).ok();
      },
      std::chrono::seconds(30)))
      << "no default service account in " << namespace_;
}

void ClusterTest::TearDown() {
  if (namespace_.empty()) return;
  auto deleted = cluster().kubectl({"delete", "namespace", namespace_, "--wait=false"});
  EXPECT_TRUE(deleted.ok()) << deleted.describe();
}

RunResult ClusterTest::kubectl(const std::vector<std::string>& args, const RunOptions& options) const {
  std::vector<std::string> namespaced{"--namespace", namespace_};
  namespaced.insert(namespaced.end(), args.begin(), args.end());
  return cluster().kubectl(namespaced, options);
}

void ClusterTest::create(const std::string& manifest) const {
  auto created = kubectl({"create", "-f", "-"}, RunOptions{.input = manifest});
  ASSERT_TRUE(created.ok()) << created.describe();
}

nlohmann::json ClusterTest::getJson(const std::string& resource, const std::string& name) const {
  auto got = kubectl({"get", resource, name, "-o", "json", "--ignore-not-found"});
  if (!got.ok() || got.out.empty()) return nullptr;
  return nlohmann::json::parse(got.out);
}

}  // namespace ipu::testing
