// What a tenant who may label pods costs the operator: its resident memory before and after 5,000 pods in a
// namespace of their own carry the label the operator watches (graphcore.ai/ipujob) and 4 KB of further
// graphcore.ai/ labels each, and after a restart with them present (the first list reads them all). The pods
// select no node, so nothing else happens to them. That the operator has taken in every one of them is
// proven, not waited for: a real IPUJob created after them reaches Running only once the operator's pod
// watch, which delivers in order, has passed them all.
// Usage: foreign_pods_bench [OUTPUT.json]; JSON also goes to stdout. IPU_BENCH_OPERATOR names another
// ipu-operator binary (the build before a change, from tools/build-previous-operator.sh) to measure instead.
// The true lower bound of the growth is 0 bytes: pods the operator never acts on need cost it nothing.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "free_port.h"
#include "kube/cpprest_transport.h"
#include "kube/rest_client.h"
#include "sim_process.h"
#include "subprocess.h"
#include "test_cluster.h"

namespace {

using namespace std::chrono_literals;
using ipu::kube::Json;
using ipu::kube::ResourceRef;
using Clock = std::chrono::steady_clock;

constexpr int kForeignPods = 5000;
constexpr int kLabelsPerPod = 50;            // 50 x (16-character key + 63-character value) ~ 4 KB
constexpr double kChartMemoryLimitMb = 256;  // deploy/helm/ipu-operator/values.yaml resources.limits.memory

const ResourceRef kIpuJobs{"graphcore.ai", "v1alpha1", "ipujobs", true};

void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

// VmRSS or VmHWM of a process, in MB (10^6 bytes).
double statusMb(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1)) * 1024 / 1e6;
  }
  throw std::runtime_error("no " + field + " for pid " + std::to_string(pid));
}

Json foreignPod(int index) {
  Json labels = {{"graphcore.ai/ipujob", "not-a-job"}};
  for (int k = 0; k < kLabelsPerPod; ++k) {
    const std::string key = "graphcore.ai/l" + std::to_string(100 + k);
    labels[key] = std::string(62, 'a' + static_cast<char>(k % 26)) + "z";
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "foreign-" + std::to_string(index)}, {"labels", labels}}},
          {"spec",
           {{"nodeSelector", {{"ipu-operator.dev/bench", "nowhere"}}},
            {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
}

Json oneIpuJob(const std::string& name) {
  return {{"apiVersion", "graphcore.ai/v1alpha1"},
          {"kind", "IPUJob"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"ipusPerJobInstance", "1"},
            {"workers",
             {{"template", {{"spec", {{"containers", {{{"name", "main"}, {"image", "train:1"}}}}}}}}}}}}};
}

// Creates the job and waits until the operator reports it Running: proof it has seen every earlier pod.
void runJob(ipu::kube::RestClient& client, const std::string& ns, const std::string& name) {
  check(client.create(kIpuJobs, ns, oneIpuJob(name)).ok(), "create " + name);
  const auto deadline = Clock::now() + 300s;
  while (Clock::now() < deadline) {
    auto job = client.get(kIpuJobs, ns, name);
    if (job.ok() && job->value("status", Json::object()).value("phase", "") == "Running") return;
    std::this_thread::sleep_for(100ms);
  }
  throw std::runtime_error(name + " never ran");
}

}  // namespace

int main(int argc, char** argv) try {
  const auto& cluster = ipu::testing::TestCluster::get();
  cluster.installCrds();
  auto config = ipu::kube::loadKubeconfig(cluster.kubeconfig());
  check(config.ok(), "kubeconfig");
  std::shared_ptr<ipu::kube::Transport> transport = std::move(*ipu::kube::CppRestTransport::create(*config));
  ipu::kube::RestClient client(transport, *config, ipu::kube::ClientOptions{.qps = 1e6, .burst = 1000000});
  const std::string suffix = std::to_string(::getpid());
  const std::string jobs = "bench-jobs-" + suffix;
  const std::string foreign = "bench-foreign-" + suffix;
  for (const std::string& ns : {jobs, foreign}) {
    check(client.create(ResourceRef::namespaces(), "", Json{{"metadata", {{"name", ns}}}}).ok(),
          "create namespace " + ns);
  }

  const std::string directory = std::filesystem::temp_directory_path() / jobs;
  std::filesystem::create_directories(directory);
  std::string failure;
  auto sim = ipu::vipu::testing::SimProcess::start(
      directory, {"--pod", "pod64", "--state-file", directory + "/state.json", "--activation-delay-ms", "0"},
      0, failure);
  check(sim != nullptr, "vipu-sim: " + failure);
  const char* other = std::getenv("IPU_BENCH_OPERATOR");
  const std::string binary = other != nullptr && *other != '\0' ? other : IPU_OPERATOR_BINARY;
  const std::vector<std::string> command = {binary,
                                            "--kubeconfig",
                                            cluster.kubeconfig(),
                                            "--vipu-controller",
                                            "pod64=" + sim->endpoint(),
                                            "--leader-elect=false",
                                            "--metrics-bind-address",
                                            "0",
                                            "--health-probe-bind-address",
                                            "0",
                                            "--log-level",
                                            "warning"};
  auto op = std::make_unique<ipu::testing::BackgroundProcess>(command);
  runJob(client, jobs, "before");
  const double before = statusMb(op->pid(), "VmRSS");

  const auto creating = Clock::now();
  for (int i = 0; i < kForeignPods; ++i) {
    check(client.create(ResourceRef::pods(), foreign, foreignPod(i)).ok(),
          "create foreign pod " + std::to_string(i));
  }
  const double createSeconds = std::chrono::duration<double>(Clock::now() - creating).count();
  runJob(client, jobs, "after");
  const double after = statusMb(op->pid(), "VmRSS");

  op->stop();
  op = std::make_unique<ipu::testing::BackgroundProcess>(command);
  runJob(client, jobs, "restarted");
  const double restarted = statusMb(op->pid(), "VmRSS");
  const double restartPeak = statusMb(op->pid(), "VmHWM");
  op->stop();
  sim->stop();
  for (const std::string& ns : {jobs, foreign}) {
    if (!client.remove(ResourceRef::namespaces(), "", ns).ok())
      std::cerr << "foreign_pods_bench: namespace " << ns << " kept\n";
  }
  std::filesystem::remove_all(directory);

  const Json result = {{"benchmark", "foreign_labelled_pods"},
                       {"operator_binary", binary},
                       {"foreign_pods", kForeignPods},
                       {"label_bytes_per_pod", kLabelsPerPod * (16 + 63)},
                       {"create_seconds", createSeconds},
                       {"rss_before_mb", before},
                       {"rss_after_mb", after},
                       {"growth_mb", after - before},
                       {"growth_lower_bound_mb", 0},
                       {"rss_after_restart_mb", restarted},
                       {"peak_rss_of_restart_mb", restartPeak},
                       {"chart_memory_limit_mb", kChartMemoryLimitMb},
                       {"restart_peak_under_chart_limit", restartPeak < kChartMemoryLimitMb}};
  std::cout << result.dump(2) << "\n";
  if (argc > 1) std::ofstream(argv[1]) << result.dump(2) << "\n";
  return 0;
} catch (const std::exception& error) {
  std::cerr << "foreign_pods_bench: " << error.what() << "\n";
  return 1;
}
