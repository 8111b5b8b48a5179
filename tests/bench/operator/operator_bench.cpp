// The operator's admission throughput and latency on the local cluster: 300 one-IPU IPUJobs created at once
// against a simulated POD256 (so 256 run and 44 queue), through the real ipu-operator and vipu-sim.
// Measures create -> Running latency (p50/p99), how long the queue takes to show every waiting job its
// distinct position, and how long deleting every job takes to release every partition.
// Also counts the write conflicts (409) the operator logged. Usage: operator_bench [OUTPUT.json]; JSON also
// goes to stdout. IPU_BENCH_OPERATOR names another ipu-operator binary to measure (e.g. the previous
// release's, built by tools/build-previous-operator.sh), for back-to-back comparisons on one machine.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>

#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include "free_port.h"
#include "kube/cpprest_transport.h"
#include "kube/rest_client.h"
#include "sim_process.h"
#include "subprocess.h"
#include "test_cluster.h"
#include "vipu/vipu_client.h"

namespace {

using namespace std::chrono_literals;
using ipu::kube::Json;
using ipu::kube::ResourceRef;
using Clock = std::chrono::steady_clock;

constexpr int kJobs = 300;
constexpr int kIpus = 256;

const ResourceRef kIpuJobs{"graphcore.ai", "v1alpha1", "ipujobs", true};

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
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

// The value of an unlabelled sample in Prometheus text, or -1.
double sample(const std::string& text, const std::string& name) {
  const auto at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + name.size() + 2));
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) try {
  const auto& cluster = ipu::testing::TestCluster::get();
  cluster.installCrds();
  auto config = ipu::kube::loadKubeconfig(cluster.kubeconfig());
  check(config.ok(), "kubeconfig");
  std::shared_ptr<ipu::kube::Transport> transport = std::move(*ipu::kube::CppRestTransport::create(*config));
  ipu::kube::RestClient client(transport, *config, ipu::kube::ClientOptions{.qps = 1e6, .burst = 1000000});
  const std::string ns = "bench-operator-" + std::to_string(::getpid());
  check(client.create(ResourceRef::namespaces(), "", Json{{"metadata", {{"name", ns}}}}).ok(),
        "create namespace");

  const std::string directory = std::filesystem::temp_directory_path() / ns;
  std::filesystem::create_directories(directory);
  std::string failure;
  auto sim = ipu::vipu::testing::SimProcess::start(
      directory, {"--pod", "pod256", "--state-file", directory + "/state.json"}, 0, failure);
  check(sim != nullptr, "vipu-sim: " + failure);
  ipu::vipu::ClientOptions vipuOptions;
  vipuOptions.endpoint = sim->endpoint();
  auto vipu = ipu::vipu::VipuClient::create(vipuOptions);
  check(vipu.ok(), "vipu client");
  const std::string metricsAddress = "127.0.0.1:" + std::to_string(ipu::testing::freeLoopbackPort());
  const char* other = std::getenv("IPU_BENCH_OPERATOR");
  const std::string binary = other != nullptr && *other != '\0' ? other : IPU_OPERATOR_BINARY;
  ipu::testing::BackgroundProcess op(
      {binary, "--kubeconfig", cluster.kubeconfig(), "--vipu-controller", "pod64=" + sim->endpoint(),
       "--leader-elect=false", "--workers", "4", "--qps", "500", "--burst", "1000", "--metrics-bind-address",
       metricsAddress, "--health-probe-bind-address", "0", "--log-level", "warning"});

  std::map<std::string, Clock::time_point> created;
  const auto start = Clock::now();
  for (int i = 0; i < kJobs; ++i) {
    const std::string name = "job-" + std::to_string(i);
    check(client.create(kIpuJobs, ns, oneIpuJob(name)).ok(), "create " + name);
    created[name] = Clock::now();
  }
  const double createSeconds = seconds(Clock::now() - start);

  // Poll the list: the first time each job shows Running, and when the waiting ones all show positions.
  std::map<std::string, Clock::time_point> running;
  std::optional<Clock::time_point> queueSettled;
  const auto deadline = start + 600s;
  while (Clock::now() < deadline && (running.size() < static_cast<std::size_t>(kIpus) || !queueSettled)) {
    auto list = client.list(kIpuJobs, ns);
    check(list.ok(), "list");
    std::set<int> positions;
    int queued = 0;
    for (const Json& job : (*list)["items"]) {
      const Json status = job.value("status", Json::object());
      const std::string name = job["metadata"].value("name", "");
      if (status.value("phase", "") == "Running" && !running.contains(name)) running[name] = Clock::now();
      if (status.value("phase", "") == "Queued") {
        ++queued;
        if (status.contains("queuePosition")) positions.insert(status.value("queuePosition", 0));
      }
    }
    if (!queueSettled && running.size() == static_cast<std::size_t>(kIpus) && queued == kJobs - kIpus &&
        positions.size() == static_cast<std::size_t>(kJobs - kIpus) && *positions.begin() == 1 &&
        *positions.rbegin() == kJobs - kIpus) {
      queueSettled = Clock::now();
    }
    std::this_thread::sleep_for(100ms);
  }
  check(running.size() == static_cast<std::size_t>(kIpus),
        "only " + std::to_string(running.size()) + " jobs ran");
  check(queueSettled.has_value(),
        "the waiting jobs never all showed distinct positions 1.." + std::to_string(kJobs - kIpus));
  std::vector<double> latencies;
  Clock::time_point lastRunning = start;
  for (const auto& [name, at] : running) {
    latencies.push_back(seconds(at - created[name]));
    lastRunning = std::max(lastRunning, at);
  }

  const auto deleting = Clock::now();
  check(cluster.kubectl({"delete", "ipujobs", "--all", "-n", ns, "--wait=false"}).ok(), "delete the jobs");
  bool released = false;
  while (Clock::now() < deleting + 600s) {
    auto partitions = (*vipu)->listPartitions("");
    check(partitions.ok(), "list partitions");
    auto left = client.list(kIpuJobs, ns);
    check(left.ok(), "list jobs");
    if (partitions->empty() && (*left)["items"].empty()) {
      released = true;
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  check(released, "partitions or jobs left after deleting every job");
  const double releaseSeconds = seconds(Clock::now() - deleting);
  const auto scraped = ipu::testing::run({"curl", "-sS", "http://" + metricsAddress + "/metrics"});
  check(scraped.ok(), "scrape /metrics: " + scraped.describe());
  const double passes = sample(scraped.out, "ipu_operator_admission_pass_duration_seconds_count");
  const double passSeconds = sample(scraped.out, "ipu_operator_admission_pass_duration_seconds_sum");
  const double reconciles = sample(scraped.out, "ipu_operator_reconcile_duration_seconds_count");
  const double reconcileSeconds = sample(scraped.out, "ipu_operator_reconcile_duration_seconds_sum");
  op.stop();
  sim->stop();
  if (!client.remove(ResourceRef::namespaces(), "", ns).ok())
    std::cerr << "operator_bench: namespace " << ns << " kept\n";
  std::filesystem::remove_all(directory);

  std::size_t conflicts = 0;
  const std::string log = op.stderrText();
  for (auto at = log.find("Conflict:"); at != std::string::npos; at = log.find("Conflict:", at + 1))
    ++conflicts;
  const Json result = {{"benchmark", "operator_admission"},
                       {"operator_binary", binary},
                       {"write_conflicts_logged", conflicts},
                       {"jobs", kJobs},
                       {"ipus", kIpus},
                       {"create_seconds", createSeconds},
                       {"all_running_seconds", seconds(lastRunning - start)},
                       {"admitted_jobs_per_second", kIpus / seconds(lastRunning - start)},
                       {"create_to_running_p50_seconds", percentile(latencies, 0.5)},
                       {"create_to_running_p99_seconds", percentile(latencies, 0.99)},
                       {"queue_positions_settled_seconds", seconds(*queueSettled - start)},
                       {"delete_all_to_released_seconds", releaseSeconds},
                       {"admission_passes", passes},
                       {"admission_pass_mean_seconds", passes > 0 ? passSeconds / passes : 0},
                       {"reconciles", reconciles},
                       {"reconcile_mean_seconds", reconciles > 0 ? reconcileSeconds / reconciles : 0}};
  std::cout << result.dump(2) << "\n";
  if (argc > 1) std::ofstream(argv[1]) << result.dump(2) << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "operator_bench: " << e.what() << "\n";
  return 1;
}
