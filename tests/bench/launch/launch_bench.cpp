// Time from all of a job instance's worker pods running to all of its ranks started, on the real node: an
// IPUJob of 4 worker pods (ipu-runtime launch + 3 agents, mpirun's daemons started through rsh) against the
// reference of the same 4 ranks started by mpirun inside one pod, measured in the same run, 3 times each.
//
// "Pods running" is when the last worker's container wrote its first log line (kubectl logs --timestamps: the
// container runtime's clock; the runtime's launch and agents, or the reference's shell, print at once);
// "ranks started" is the latest time a rank printed from its own clock (`date`, the same machine). Writes
// JSON to ${IPU_BENCH_DIR}/launch.json and a table to stderr.
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "operator_on_real_node.h"
#include "run_summary.h"
#include "timed_logs.h"

namespace ipu::testing {
namespace {

constexpr int kWorkers = 4;
constexpr int kRuns = 3;

// The latest "rank-started <epoch seconds>" a rank printed.
double lastRankStart(const std::string& logs) {
  double latest = 0;
  std::istringstream in(logs);
  for (std::string line; std::getline(in, line);) {
    auto at = line.find("rank-started ");
    if (at == std::string::npos) continue;
    latest = std::max(latest, std::strtod(line.c_str() + at + 13, nullptr));
  }
  return latest;
}

class LaunchBench : public OperatorOnRealNodeTest {
 protected:
  // Seconds from the last worker's first log line to the last rank's start.
  double measure(const std::string& name, int workers, const Json& command) {
    const std::string created = createJob(jobRunning(
        name, command, R"({"workersPerJobInstance": ")" + std::to_string(workers) + R"("})", debianMpi()));
    eventually([&] { return phaseOf(created) == "Succeeded" || phaseOf(created) == "Failed"; }, 180s);
    EXPECT_EQ(phaseOf(created), "Succeeded") << jobStatus(created).dump();
    double podsRunning = 0;
    for (int k = 0; k < workers; ++k) {
      const auto logs =
          kubectl({"logs", "--timestamps", created + "-worker-" + std::to_string(k), "-c", "train"});
      EXPECT_TRUE(logs.ok()) << logs.describe();
      const auto lines = timedLines(logs.out);
      if (!lines.empty()) podsRunning = std::max(podsRunning, lines.front().first);
    }
    const double ranks = lastRankStart(kubectl({"logs", created + "-worker-0", "-c", "train"}).out);
    kubectl({"delete", "ipujob", created, "--wait=true", "--timeout", "60s"});
    EXPECT_GT(ranks, 0) << "no rank printed its start";
    return ranks - podsRunning;
  }
};

TEST_F(LaunchBench, PodsRunningToAllRanksStarted) {
  const Json printStart = Json::array({"sh", "-c", "echo rank-started $(date +%s.%N)"});
  std::vector<double> acrossPods, inOnePod;
  for (int run = 0; run < kRuns; ++run) {
    // Alternate the order so that neither always runs on a warmer node.
    auto multi = [&] {
      acrossPods.push_back(measure("across-" + std::to_string(run), kWorkers, printStart));
    };
    auto single = [&] {
      // The pod's shell prints when it started, then mpirun starts the same ranks inside it.
      inOnePod.push_back(
          measure("one-pod-" + std::to_string(run), 1,
                  Json::array({"sh", "-c",
                               "echo pod-started $(date +%s.%N); exec mpirun --tag-output "
                               "--oversubscribe -np " +
                                   std::to_string(kWorkers) + " sh -c 'echo rank-started $(date +%s.%N)'"})));
    };
    if (run % 2 == 0) {
      multi();
      single();
    } else {
      single();
      multi();
    }
  }
  Json result = {{"benchmark", "launch"},
                 {"workers", kWorkers},
                 {"pods_running_to_ranks_started_seconds", minMedianMax(acrossPods)},
                 {"reference_one_pod_mpirun_seconds", minMedianMax(inOnePod)}};
  result["ratio_median"] = result["pods_running_to_ranks_started_seconds"]["median"].get<double>() /
                           result["reference_one_pod_mpirun_seconds"]["median"].get<double>();
  std::ofstream(std::string(IPU_BENCH_DIR) + "/launch.json") << result.dump(2) << "\n";
  std::cout << result.dump(2) << "\n";
  std::cerr << "launch: " << kWorkers << " pods running -> " << kWorkers << " ranks started: median "
            << result["pods_running_to_ranks_started_seconds"]["median"] << " s (reference, " << kWorkers
            << " ranks in one pod: " << result["reference_one_pod_mpirun_seconds"]["median"] << " s)\n";
  for (double seconds : acrossPods)
    EXPECT_LT(seconds, 30) << "the launch should start the ranks within seconds";
}

}  // namespace
}  // namespace ipu::testing
