#include "bench_cluster.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "eventually.h"
#include "kube/cpprest_transport.h"

namespace ipu::bench {

namespace {

std::map<std::string, std::string> readEnvFile(const std::string& path) {
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return values;
}

std::string script() {
  return std::string(IPU_SOURCE_DIR) + "/tools/cluster.sh";
}

}  // namespace

BenchCluster::BenchCluster(std::string dir, int nodes, const std::vector<std::string>& ipuPods)
    : dir_(std::move(dir)) {
  testing::run({script(), "down", "--dir", dir_}, {.timeout = std::chrono::minutes(2)});
  std::string pods;
  for (const std::string& pod : ipuPods) pods += (pods.empty() ? "" : ",") + pod;
  const auto up =
      // A hundred simulated nodes take kwok longer than the script's default two minutes to report Ready.
      testing::run({script(), "up", "--dir", dir_, "--nodes", std::to_string(nodes), "--ipu-pods", pods,
                    "--audit-all", "--timeout", "600"},
                   {.timeout = std::chrono::minutes(30)});
  if (!up.ok()) throw std::runtime_error("tools/cluster.sh up: " + up.describe());
  auto env = readEnvFile(dir_ + "/cluster.env");
  kubeconfig_ = env["KUBECONFIG"];
  auditLog_ = env["IPU_CLUSTER_AUDIT_LOG"];
  binDir_ = env["IPU_CLUSTER_BIN_DIR"];
  if (kubeconfig_.empty() || auditLog_.empty() || binDir_.empty())
    throw std::runtime_error(dir_ +
                             "/cluster.env lacks KUBECONFIG, IPU_CLUSTER_AUDIT_LOG or IPU_CLUSTER_BIN_DIR");
}

BenchCluster::~BenchCluster() {
  testing::run({script(), "down", "--dir", dir_}, {.timeout = std::chrono::minutes(2)});
}

testing::RunResult BenchCluster::tryKubectl(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {tool("kubectl"), "--kubeconfig", kubeconfig_};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::run(argv, {.timeout = std::chrono::minutes(2)});
}

std::string BenchCluster::kubectl(const std::vector<std::string>& args) const {
  const auto result = tryKubectl(args);
  if (!result.ok()) throw std::runtime_error("kubectl: " + result.describe());
  return result.out;
}

std::unique_ptr<kube::RestClient> BenchCluster::client(const kube::ClientOptions& options) const {
  auto config = kube::loadKubeconfig(kubeconfig_);
  if (!config) throw std::runtime_error("kubeconfig: " + config.error().message);
  auto transport = kube::CppRestTransport::create(*config);
  if (!transport) throw std::runtime_error("transport: " + transport.error().message);
  return std::make_unique<kube::RestClient>(std::shared_ptr<kube::Transport>(std::move(*transport)), *config,
                                            options);
}

void BenchCluster::installCrd(const std::string& manifest, const std::string& crd) const {
  kubectl({"apply", "--server-side", "-f", manifest});
  // `kubectl wait` fails outright while the new CRD has no conditions yet, so poll.
  const bool established = testing::eventually(
      [&] {
        const auto status = tryKubectl(
            {"get", "crd", crd, "-o", "jsonpath={.status.conditions[?(@.type==\"Established\")].status}"});
        return status.ok() && status.out == "True";
      },
      std::chrono::minutes(1));
  if (!established) throw std::runtime_error("CRD " + crd + " not established a minute after it was applied");
}

int BenchCluster::componentPid(const std::string& name) const {
  std::ifstream file(dir_ + "/pids/" + name + ".pid");
  int pid = 0;
  file >> pid;
  return pid;
}

}  // namespace ipu::bench
