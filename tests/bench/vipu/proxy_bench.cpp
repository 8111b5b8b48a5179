// What the V-IPU proxy adds to a worker's call: GetPartitionStatus on a real vipu-sim, N calls straight to it
// and N through the proxy (in this process, on 127.0.0.1, its pod cache holding 2,000 other workers as the
// operator's does, packed), one at a time; medians, p99 and their ratio.
// Usage: vipu_proxy_bench [OUTPUT.json [CALLS]]  (or IPU_BENCH_OUTPUT=OUTPUT.json); JSON also goes to stdout.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "ipujob/orphan_partitions.h"
#include "job_store.h"
#include "proxy_objects.h"
#include "sim_process.h"
#include "vipu/vipu_client.h"
#include "vipu_proxy/vipu_proxy.h"

namespace {

using namespace ipu;
using Clock = std::chrono::steady_clock;

constexpr int kOtherWorkers = 2000;

std::unique_ptr<vipu::VipuClient> clientOf(const std::string& endpoint) {
  vipu::ClientOptions options;
  options.endpoint = endpoint;
  options.retry.maxAttempts = 1;
  auto client = vipu::VipuClient::create(options);
  if (!client) throw std::runtime_error(client.error().toString());
  return std::move(*client);
}

// Microseconds of each of `calls` GetPartitionStatus calls, sorted.
std::vector<double> timeCalls(vipu::VipuClient& client, const std::string& partition, int calls) {
  std::vector<double> micros;
  micros.reserve(static_cast<std::size_t>(calls));
  for (int call = 0; call < calls; ++call) {
    const auto before = Clock::now();
    auto status = client.getPartitionStatus(partition);
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - before).count());
    if (!status) throw std::runtime_error(status.error().toString());
  }
  std::sort(micros.begin(), micros.end());
  return micros;
}

double percentile(const std::vector<double>& sorted, double p) {
  return sorted[static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1))];
}

nlohmann::ordered_json summary(const std::vector<double>& sorted) {
  return {{"median_us", percentile(sorted, 0.5)},
          {"p99_us", percentile(sorted, 0.99)},
          {"max_us", sorted.back()}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string outputPath = argc > 1 ? argv[1] : "";
  if (outputPath.empty()) {
    if (const char* fromEnvironment = std::getenv("IPU_BENCH_OUTPUT")) outputPath = fromEnvironment;
  }
  const int calls = argc > 2 ? std::max(1, std::atoi(argv[2])) : 2000;
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("vipu-proxy-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  std::string failure;
  auto sim = vipu::testing::SimProcess::start(directory.string(), {"--pod", "pod16", "--quiet"}, 0, failure);
  if (!sim) {
    std::cerr << "vipu_proxy_bench: vipu-sim did not start: " << failure << "\n";
    return 1;
  }
  try {
    auto direct = clientOf(sim->endpoint());
    const std::string partition = controllers::partitionIdFor("bench", "team-a", "job-a", 0);
    if (!direct->createPartition({.id = partition, .size = 4})) throw std::runtime_error("cannot create");

    kube::Store pods(kube::StoreLayout::kPacked);
    testing::JobStore jobs;
    testing::put(
        jobs, testing::ipuJobObject("team-a", "job-a", "uid-a",
                                    nlohmann::json::array({testing::partitionRecord(partition, 0, "sim")})));
    testing::put(pods, testing::workerPodObject("team-a", "job-a-worker-0", "job-a", "uid-a", "127.0.0.1"));
    for (int k = 0; k < kOtherWorkers; ++k) {
      testing::put(
          pods, testing::workerPodObject("team-b", "job-b-worker-" + std::to_string(k), "job-b", "uid-b",
                                         "10.1." + std::to_string(k / 250) + "." + std::to_string(k % 250)));
    }
    auto proxy = controllers::VipuProxy::start("127.0.0.1:0", pods, jobs, {{"sim", direct->channel()}},
                                               {.partitionIds = {"bench", ""}});
    if (!proxy) throw std::runtime_error(proxy.error().toString());
    auto proxied = clientOf("127.0.0.1:" + std::to_string((*proxy)->port()));

    // Warm both paths (connections, the proxy's address index) before timing.
    timeCalls(*direct, partition, 50);
    timeCalls(*proxied, partition, 50);
    const std::vector<double> straight = timeCalls(*direct, partition, calls);
    const std::vector<double> through = timeCalls(*proxied, partition, calls);

    const nlohmann::ordered_json report{
        {"benchmark", "vipu_proxy"},
        {"build_type", IPU_BUILD_TYPE},
        {"call", "GetPartitionStatus"},
        {"calls", calls},
        {"cached_worker_pods", kOtherWorkers + 1},
        {"direct", summary(straight)},
        {"proxy", summary(through)},
        {"median_ratio", percentile(through, 0.5) / percentile(straight, 0.5)},
        {"p99_ratio", percentile(through, 0.99) / percentile(straight, 0.99)},
        {"added_median_us", percentile(through, 0.5) - percentile(straight, 0.5)}};
    const std::string text = report.dump(2);
    std::cout << text << "\n";
    if (!outputPath.empty()) {
      std::ofstream out(outputPath);
      out << text << "\n";
      if (!out) throw std::runtime_error("cannot write " + outputPath);
    }
  } catch (const std::exception& error) {
    std::cerr << "vipu_proxy_bench: " << error.what() << "\n";
    std::filesystem::remove_all(directory);
    return 1;
  }
  sim.reset();
  std::filesystem::remove_all(directory);
  return 0;
}
