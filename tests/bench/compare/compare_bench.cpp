// ipu-operator against the API-server floor and the Kubeflow MPI Operator, in one run on this machine (see
// measure.h for one measurement, report.h for the summary). Each measurement gets a fresh local cluster; the
// contenders of a scenario take turns, their order rotated from run to run so none always goes first.
//
// Usage: compare_bench OUTPUT.json [--runs N] [--scale F] [--only TEXT] [--role ROLE]
//   --runs N    runs of each timed scenario (default 3)
//   --scale F   multiply every scenario's job count by F (e.g. 0.1 for a quick look; default 1)
//   --only TEXT run only the scenarios whose name contains TEXT; the scale curve (an hour of its own) runs
//               only when TEXT selects it ("scale curve")
//   --role ROLE run only one contender of each scenario: ours, floor or peer (e.g. to profile ours)
// The JSON goes to OUTPUT.json, the markdown table to stdout and to OUTPUT.md.
#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>

#include "kube/cpprest_transport.h"
#include "measure.h"
#include "report.h"
#include "scale_curve.h"
#include "scale_curve_report.h"

namespace {

using namespace ipu::bench;
using nlohmann::json;

struct Entrant {
  std::string role;  // "ours", "floor", "peer"
  std::function<std::unique_ptr<Contender>()> make;
};

struct Plan {
  Scenario scenario;
  std::vector<Entrant> entrants;
  bool once = false;  // one run whatever --runs says (the steady state: its figures barely move)
};

std::vector<Plan> plans(double scale, const std::string& workDirectory) {
  // The MPI Operator's work queue at 1,000 events a second (burst 1,000) never binds: its client's QPS does,
  // as ours does. At its defaults (10/s, burst 100) it is a second throttle ours does not have.
  const ClientSettings same{.qps = 50, .burst = 100, .workers = 2};  // ipu-operator's defaults
  const ClientSettings sameForPeer{
      .qps = 50, .burst = 100, .workers = 2, .queueQps = 1000, .queueBurst = 1000};
  const ClientSettings mpiDefaults{.qps = 5, .burst = 10, .workers = 2};
  // Client-side limits off (as high as each tool's flags go, far above what 2 cores can send): what bounds
  // each is its own CPU and its requests' latency, with API Priority and Fairness guarding the server.
  const ClientSettings uncapped{
      .qps = 10000, .burst = 100000, .workers = 2, .queueQps = 100000, .queueBurst = 100000};
  const ClientSettings fill{.qps = 200, .burst = 400, .workers = 4, .queueQps = 1000, .queueBurst = 1000};
  const auto jobs = [&](int n) { return std::max(1, static_cast<int>(std::lround(n * scale))); };
  const auto floorAt = [](ClientSettings settings) {
    return Entrant{"floor", [=] { return makeFloor(settings); }};
  };
  const auto oursAt = [&](ClientSettings settings) {
    return Entrant{"ours", [=] { return makeIpuOperator(settings, workDirectory + "/ipu-operator"); }};
  };
  const auto peerAt = [](ClientSettings settings) {
    return Entrant{"peer", [=] { return makeMpiOperator(settings); }};
  };
  const auto atSameQps = [&](std::string name, int n, int workers) {
    return Scenario{.name = std::move(name),
                    .jobs = n,
                    .workersPerJob = workers,
                    .boundQps = same.qps,
                    .boundBurst = same.burst};
  };
  return {
      {atSameQps("one-worker jobs at the same QPS", jobs(500), 1),
       {floorAt(same), oursAt(same), peerAt(sameForPeer)}},
      {atSameQps("eight-worker jobs at the same QPS", jobs(100), 8),
       {floorAt(same), oursAt(same), peerAt(sameForPeer)}},
      // At its defaults the MPI Operator sends 5 requests a second: 100 jobs already take it minutes.
      {{"one-worker jobs, each tool's defaults", jobs(100), 1}, {oursAt(same), peerAt(mpiDefaults)}},
      {{"one-worker jobs, client limits off", jobs(500), 1},
       {floorAt(uncapped), oursAt(uncapped), peerAt(uncapped)}},
      {{"eight-worker jobs, client limits off", jobs(100), 8},
       {floorAt(uncapped), oursAt(uncapped), peerAt(uncapped)}},
      // What is measured is the state once everything runs, not how fast it got there: both fill the cluster
      // at QPS 200 (the MPI Operator would take close to an hour at its defaults).
      {{.name = "steady state, eight-worker jobs",
        .jobs = jobs(1000),
        .workersPerJob = 8,
        .steadyState = true},
       {oursAt(fill), peerAt(fill)},
       /*once=*/true},
  };
}

// ipu-operator's steady state from 500 to 4,000 eight-worker jobs (32,000 pods on 322 kwok nodes, a POD
// of 32,768 IPUs), filled at the steady-state scenario's client settings.
CurveScenario scaleCurve(double scale) {
  CurveScenario curve{.name = "scale curve, eight-worker jobs", .workersPerJob = 8, .points = {}};
  for (const int jobs : {500, 1000, 2000, 4000}) {
    const int scaled = std::max(1, static_cast<int>(std::lround(jobs * scale)));
    if (curve.points.empty() || scaled > curve.points.back()) curve.points.push_back(scaled);
  }
  return curve;
}

struct Options {
  std::string output;
  int runs = 3;
  double scale = 1;
  std::string only;
  std::string role;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--runs") {
      options.runs = std::stoi(value());
      if (options.runs < 1 || options.runs > 20) throw std::invalid_argument("--runs must be 1 to 20");
    } else if (arg == "--scale") {
      options.scale = std::stod(value());
      if (!(options.scale > 0 && options.scale <= 10))
        throw std::invalid_argument("--scale must be in (0, 10]");
    } else if (arg == "--only") {
      options.only = value();
    } else if (arg == "--role") {
      options.role = value();
      if (options.role != "ours" && options.role != "floor" && options.role != "peer")
        throw std::invalid_argument("--role must be ours, floor or peer, not '" + options.role + "'");
    } else if (!arg.starts_with("--") && options.output.empty()) {
      options.output = arg;
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "'");
    }
  }
  if (options.output.empty())
    throw std::invalid_argument(
        "usage: compare_bench OUTPUT.json [--runs N] [--scale F] [--only TEXT] [--role ROLE]");
  return options;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options options = parse(argc, argv);
  // The bench's own clients (and the floor's) trust only each cluster's CA, as the operator does: none of
  // them loads the system's CA bundle per connection. Before any thread.
  ipu::kube::skipDefaultCaFileLoads();
  const std::string work =
      std::filesystem::temp_directory_path() / ("compare-bench-" + std::to_string(::getpid()));
  const std::string clusterDir = work + "/cluster";
  json measurements = json::array();
  bool allComplete = true;
  for (const Plan& plan : plans(options.scale, work)) {
    if (!options.only.empty() && plan.scenario.name.find(options.only) == std::string::npos) continue;
    const int runs = plan.once ? 1 : options.runs;
    for (int run = 0; run < runs; ++run) {
      for (std::size_t turn = 0; turn < plan.entrants.size(); ++turn) {
        const Entrant& entrant = plan.entrants[(turn + static_cast<std::size_t>(run)) % plan.entrants.size()];
        if (!options.role.empty() && entrant.role != options.role) continue;
        auto contender = entrant.make();
        std::cerr << "compare_bench: " << plan.scenario.name << " (" << plan.scenario.jobs << " jobs), run "
                  << run + 1 << "/" << runs << ": " << contender->name() << "\n";
        json m;
        try {
          m = measure(*contender, plan.scenario, clusterDir, std::chrono::minutes(plan.once ? 25 : 15));
        } catch (const std::exception& e) {
          // One failed measurement (a cluster that would not start) loses only itself, not the whole run.
          m = {{"scenario", plan.scenario.name},
               {"contender", contender->name()},
               {"complete", false},
               {"error", e.what()}};
        }
        m["role"] = entrant.role;
        m["run"] = run + 1;
        allComplete = allComplete && m.value("complete", false);
        std::cerr << "compare_bench:   " << m.dump() << "\n";
        measurements.push_back(std::move(m));
      }
    }
  }
  json curves = json::array();
  if (const CurveScenario curve = scaleCurve(options.scale);
      !options.only.empty() && curve.name.find(options.only) != std::string::npos &&
      (options.role.empty() || options.role == "ours")) {
    const ClientSettings fill{.qps = 200, .burst = 400, .workers = 4};
    // A POD of a power of two of IPUs, as real ones are: 32,768 for the 32,000 IPUs of 4,000 jobs.
    const auto ipus = std::bit_ceil(static_cast<unsigned>(curve.points.back() * curve.workersPerJob));
    auto contender = makeIpuOperator(fill, work + "/ipu-operator", static_cast<int>(ipus));
    std::cerr << "compare_bench: " << curve.name << " (" << curve.points.back()
              << " jobs): " << contender->name() << "\n";
    json m;
    try {
      m = measureScaleCurve(*contender, curve, clusterDir, std::chrono::minutes(30));
    } catch (const std::exception& e) {
      m = {{"scenario", curve.name},
           {"contender", contender->name()},
           {"complete", false},
           {"error", e.what()}};
    }
    allComplete = allComplete && m.value("complete", false);
    std::cerr << "compare_bench:   " << m.dump() << "\n";
    curves.push_back(std::move(m));
  }
  std::filesystem::remove_all(work);
  const json summary = summarize(measurements);
  const json result = {{"benchmark", "compare"}, {"runs", options.runs},         {"scale", options.scale},
                       {"summary", summary},     {"measurements", measurements}, {"curves", curves}};
  std::ofstream(options.output) << result.dump(2) << "\n";
  std::string table = markdownTable(summary);
  for (const json& curve : curves) table += curveTable(curve);
  std::ofstream(std::filesystem::path(options.output).replace_extension(".md")) << table;
  std::cout << table;
  return allComplete ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "compare_bench: " << e.what() << "\n";
  return 1;
}
