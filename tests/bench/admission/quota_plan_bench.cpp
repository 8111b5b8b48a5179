// The time of one admission plan with quotas (planQuotaAdmissions) over a queue of waiting jobs spread
// across 50 namespaces, each with an IPUQuota, on a 1024-IPU cluster (16 ILDs x 64) half in use; at 250,
// 500, 1000 and 2000 jobs, with the ratios t(2n)/t(n) next to n log n's (2 log 2n / log n). Queues come
// from a fixed seed; each size is planned 31 times, interleaved, and its fastest and median plans reported,
// for both queueing strategies; the ratios use the fastest.
// Usage: quota_plan_bench [OUTPUT.json]  (or IPU_BENCH_OUTPUT=OUTPUT.json); JSON also goes to stdout.
// Fails (exit 1) only when a ratio exceeds 3, well above n log n (about 2.2) and below quadratic (4).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>

#include <nlohmann/json.hpp>

#include "admission/quota_plan.h"

namespace {

using namespace ipu;
using namespace ipu::controllers;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kIlds = 16;
constexpr std::uint32_t kIldSize = 64;
constexpr int kNamespaces = 50;
constexpr std::uint32_t kSeed = 20261124;
constexpr int kRepeats = 31;
const std::vector<int> kSizes{250, 500, 1000, 2000};

std::string timestamp(int second) {
  char text[32];
  std::snprintf(text, sizeof text, "2026-01-01T%02d:%02d:%02dZ", second / 3600, second / 60 % 60,
                second % 60);
  return text;
}

struct Workload {
  std::vector<AdmissionRequest> queue;
  QuotaRules rules;
};

// n waiting jobs (gangs of 1-2 partitions of 1-64 IPUs, priorities 0-3) over 50 namespaces, each with a
// quota of 16-256 IPUs of which it already holds up to a half.
Workload workload(int jobs) {
  std::mt19937 random(kSeed);
  const std::vector<std::uint32_t> sizes{1, 2, 4, 4, 8, 8, 16, 32, 64};
  Workload out;
  for (int i = 0; i < kNamespaces; ++i) {
    const std::string ns = "team-" + std::to_string(i);
    const std::uint64_t limit = 16u << std::uniform_int_distribution<int>(0, 4)(random);
    out.rules.quotas[ns] = {limit, "quota", 8, "quota", 3, "quota"};
    out.rules.usage[ns] = {std::uniform_int_distribution<std::uint64_t>(0, limit / 2)(random), 0, 1};
  }
  for (int i = 0; i < jobs; ++i) {
    AdmissionRequest request;
    request.ns = "team-" + std::to_string(std::uniform_int_distribution<int>(0, kNamespaces - 1)(random));
    request.key = request.ns + "/job-" + std::to_string(i);
    request.priority = std::uniform_int_distribution<int>(0, 3)(random);
    request.creationTimestamp = timestamp(i);
    request.instances = std::uniform_int_distribution<std::uint32_t>(1, 2)(random);
    request.ipusPerInstance = sizes[std::uniform_int_distribution<std::size_t>(0, sizes.size() - 1)(random)];
    out.queue.push_back(std::move(request));
  }
  return out;
}

struct Measured {
  double minSeconds = 0;
  double medianSeconds = 0;
  int admitted = 0;
  int waiting = 0;
  int quotaExceeded = 0;
};

// Plans every size once per round, round after round, so that a burst of load from elsewhere on the machine
// hits all sizes alike; the ratios use each size's fastest plan, the figure least disturbed by that load.
std::vector<Measured> measure(const std::vector<Workload>& works, const vipu::PartitionPlanner& planner,
                              const vipu::IpuSet& taken, QueueingStrategy strategy) {
  std::vector<std::vector<double>> seconds(works.size());
  std::vector<Measured> out(works.size());
  for (int round = 0; round < kRepeats; ++round) {
    for (std::size_t i = 0; i < works.size(); ++i) {
      const auto started = Clock::now();
      const auto decisions =
          planQuotaAdmissions(works[i].queue, {{"bench", &planner, taken}}, {}, strategy, works[i].rules);
      seconds[i].push_back(std::chrono::duration<double>(Clock::now() - started).count());
      if (round > 0) continue;
      for (const auto& [key, decision] : decisions) {
        out[i].admitted += decision.kind == AdmissionDecision::Kind::kAdmit;
        out[i].waiting += decision.kind == AdmissionDecision::Kind::kWait;
        out[i].quotaExceeded += decision.reason == kReasonQuotaExceeded;
      }
    }
  }
  for (std::size_t i = 0; i < works.size(); ++i) {
    std::sort(seconds[i].begin(), seconds[i].end());
    out[i].minSeconds = seconds[i].front();
    out[i].medianSeconds = seconds[i][seconds[i].size() / 2];
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string outputPath = argc > 1 ? argv[1] : "";
  if (outputPath.empty()) {
    if (const char* fromEnvironment = std::getenv("IPU_BENCH_OUTPUT")) outputPath = fromEnvironment;
  }
  const vipu::Topology topology = *vipu::Topology::create("bench", kIlds, kIldSize);
  const vipu::PartitionPlanner planner(topology);
  // Half the cluster in use, in blocks of 8 every 16 IPUs: free space is fragmented, as in a busy cluster.
  vipu::IpuSet taken(topology.totalIpus());
  for (std::uint32_t first = 0; first < topology.totalIpus(); first += 16)
    taken.insert(vipu::IpuBlock{first, 8});

  bool withinBound = true;
  nlohmann::ordered_json strategies = nlohmann::ordered_json::object();
  std::vector<Workload> works;
  for (const int jobs : kSizes) works.push_back(workload(jobs));
  for (const auto strategy : {QueueingStrategy::kBestEffortFifo, QueueingStrategy::kStrictFifo}) {
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    nlohmann::ordered_json ratios = nlohmann::ordered_json::array();
    const std::vector<Measured> measured = measure(works, planner, taken, strategy);
    for (std::size_t i = 0; i < kSizes.size(); ++i) {
      const int jobs = kSizes[i];
      runs.push_back({{"jobs", jobs},
                      {"plan_ms_min", measured[i].minSeconds * 1e3},
                      {"plan_ms_median", measured[i].medianSeconds * 1e3},
                      {"us_per_job_min", measured[i].minSeconds * 1e6 / jobs},
                      {"admitted", measured[i].admitted},
                      {"waiting", measured[i].waiting},
                      {"quota_exceeded", measured[i].quotaExceeded}});
      if (i == 0) continue;
      const double ratio = measured[i].minSeconds / measured[i - 1].minSeconds;
      const double n = kSizes[i - 1];
      withinBound = withinBound && ratio <= 3.0;
      ratios.push_back({{"from_jobs", kSizes[i - 1]},
                        {"to_jobs", jobs},
                        {"t_ratio", ratio},
                        {"n_log_n_ratio", 2 * std::log(2 * n) / std::log(n)}});
    }
    strategies[queueingStrategyName(strategy)] = {{"runs", runs}, {"t_2n_over_t_n", ratios}};
  }

  const nlohmann::ordered_json report{{"benchmark", "admission_quota_plan"},
                                      {"build_type", IPU_BUILD_TYPE},
                                      {"cluster_ipus", topology.totalIpus()},
                                      {"cluster_ipus_in_use", taken.count()},
                                      {"namespaces", kNamespaces},
                                      {"seed", kSeed},
                                      {"repeats", kRepeats},
                                      {"strategies", strategies},
                                      {"growth_within_bound", withinBound}};
  const std::string text = report.dump(2);
  std::cout << text << "\n";
  if (!outputPath.empty()) {
    std::ofstream out(outputPath);
    out << text << "\n";
    if (!out) {
      std::cerr << "quota_plan_bench: cannot write " << outputPath << "\n";
      return 1;
    }
  }
  return withinBound ? 0 : 1;
}
