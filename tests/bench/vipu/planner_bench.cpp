// Planner decisions per second on a 1024-IPU cluster (16 ILDs x 64) over 100k random operations: gang
// requests of 1-4 partitions of 1-256 IPUs, and frees of live partitions, from a fixed seed.
// Usage: vipu_planner_bench [OUTPUT.json]  (or IPU_BENCH_OUTPUT=OUTPUT.json); JSON also goes to stdout.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>

#include <nlohmann/json.hpp>

#include "vipu/partition_planner.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kIlds = 16;
constexpr std::uint32_t kIldSize = 64;
constexpr int kOperations = 100000;
constexpr std::uint32_t kSeed = 20240501;

}  // namespace

int main(int argc, char** argv) {
  using namespace ipu::vipu;
  std::string outputPath = argc > 1 ? argv[1] : "";
  if (outputPath.empty()) {
    if (const char* fromEnvironment = std::getenv("IPU_BENCH_OUTPUT")) outputPath = fromEnvironment;
  }

  const Topology topology = *Topology::create("bench", kIlds, kIldSize);
  const PartitionPlanner planner(topology);
  IpuSet taken(topology.totalIpus());
  std::vector<IpuBlock> live;
  std::mt19937 random(kSeed);
  // Small partitions are common, whole ILDs and multi-ILD partitions rarer.
  const std::vector<std::uint32_t> sizes{1, 1, 2, 2, 4, 4, 4, 8, 8, 16, 16, 32, 64, 128, 256};

  std::vector<double> decisionMicros;
  decisionMicros.reserve(kOperations);
  int placed = 0;
  int refused = 0;
  int frees = 0;
  std::uint64_t placedIpus = 0;
  const auto started = Clock::now();
  Clock::duration deciding{};
  for (int op = 0; op < kOperations; ++op) {
    const bool allocate = live.empty() || std::uniform_int_distribution<int>(0, 99)(random) < 55;
    if (!allocate) {
      const std::size_t victim = std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(random);
      taken.erase(live[victim]);
      live[victim] = live.back();
      live.pop_back();
      ++frees;
      continue;
    }
    const GangRequest request{std::uniform_int_distribution<std::uint32_t>(1, 4)(random),
                              sizes[std::uniform_int_distribution<std::size_t>(0, sizes.size() - 1)(random)]};
    const auto before = Clock::now();
    const PlanResult result = planner.plan(taken, request);
    const auto elapsed = Clock::now() - before;
    deciding += elapsed;
    decisionMicros.push_back(std::chrono::duration<double, std::micro>(elapsed).count());
    if (!result.placed()) {
      ++refused;
      continue;
    }
    ++placed;
    for (const InstancePlacement& placement : result.placements) {
      taken.insert(placement.block);
      live.push_back(placement.block);
      placedIpus += placement.block.size;
    }
  }
  const double wallSeconds = std::chrono::duration<double>(Clock::now() - started).count();
  const double decisionSeconds = std::chrono::duration<double>(deciding).count();
  std::sort(decisionMicros.begin(), decisionMicros.end());
  auto percentile = [&decisionMicros](double p) {
    return decisionMicros[static_cast<std::size_t>(p * static_cast<double>(decisionMicros.size() - 1))];
  };
  const auto decisions = static_cast<double>(decisionMicros.size());

  const nlohmann::ordered_json report{{"benchmark", "vipu_planner"},
                                      {"build_type", IPU_BUILD_TYPE},
                                      {"cluster_ipus", topology.totalIpus()},
                                      {"ilds", kIlds},
                                      {"ild_size", kIldSize},
                                      {"operations", kOperations},
                                      {"seed", kSeed},
                                      {"decisions", decisionMicros.size()},
                                      {"placed", placed},
                                      {"refused", refused},
                                      {"frees", frees},
                                      {"placed_ipus", placedIpus},
                                      {"decision_seconds", decisionSeconds},
                                      {"wall_seconds", wallSeconds},
                                      {"decisions_per_second", decisions / decisionSeconds},
                                      {"operations_per_second", kOperations / wallSeconds},
                                      {"decision_us_mean", decisionSeconds * 1e6 / decisions},
                                      {"decision_us_p50", percentile(0.50)},
                                      {"decision_us_p99", percentile(0.99)},
                                      {"decision_us_max", decisionMicros.back()}};
  const std::string text = report.dump(2);
  std::cout << text << "\n";
  if (!outputPath.empty()) {
    std::ofstream out(outputPath);
    out << text << "\n";
    if (!out) {
      std::cerr << "vipu_planner_bench: cannot write " << outputPath << "\n";
      return 1;
    }
  }
  return 0;
}
