// How long a user waits for a multi-host MPI job on real containers: from `kubectl create` of the job to all
// of its worker pods Running, to its first rank's output, and to the job complete, for ipu-operator (the
// ipu-runtime it injects starts the ranks: no sshd, no launcher pod) against the Kubeflow MPI Operator v0.8.2
// run as its documentation says (a launcher Job whose mpirun starts the ranks over ssh, sshd in every worker
// of the debian-mpi-ssh image, tools/images/build-debian-mpi-ssh.sh). Both run an mpi4py allreduce of 2 and
// of 4 ranks, one per worker pod, in the same run on the real node (kubelet + containerd + runc), the two
// operators' jobs alternating, each operator at its defaults; ours three times, each time alternating with
// the MPI Operator's jobs afresh: for each way ipu-runtime reaches the pods (--runtime-delivery
// init-container, then image-volume), then with the image volume and the pods made while the partition
// activates (--vipu-proxy-http-port). Writes JSON to ${IPU_BENCH_DIR}/start_latency.json and a table to
// stderr.
//
// Clocks: the start is the host's clock just before `kubectl create` runs; "Running" and "complete" are when
// a `kubectl get --watch` of the pods and of the job (started before the job) printed the change; a rank's
// output time is what the rank read from the same host's clock right after MPI_Init, just before printing.
// The MPI Operator's launcher is made only when its workers are Ready (launcherCreationPolicy
// WaitForWorkersReady, its documented way of not starting ssh before the workers' DNS names exist);
// the e2e cluster's vipu-sim takes 200 ms to activate each of our partitions.
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "operator_on_real_node.h"
#include "run_summary.h"
#include "subprocess.h"
#include "timed_logs.h"

namespace ipu::testing {
namespace {

using Clock = std::chrono::system_clock;

double now() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// Every rank prints when it came up (after MPI_Init, its own clock), then the allreduce of rank+1.
const char* kAllreduce =
    "import time; from mpi4py import MPI; up = time.time(); c = MPI.COMM_WORLD; r = c.Get_rank(); "
    "print('rank %d up %.6f' % (r, up), flush=True); "
    "print('rank %d of %d sum %d' % (r, c.Get_size(), c.allreduce(r + 1)), flush=True)";

// A `kubectl get --watch` whose lines are kept with the host time each arrived.
class TimedWatch {
 public:
  explicit TimedWatch(std::vector<std::string> argv) : process_(std::move(argv)) {
    reader_ = std::jthread([this](std::stop_token stop) {
      while (!stop.stop_requested()) {
        auto line = process_.readLine(std::chrono::milliseconds(100));
        if (!line) continue;
        const double at = now();
        std::lock_guard lock(mutex_);
        lines_.emplace_back(at, *line);
      }
    });
  }
  ~TimedWatch() {
    reader_.request_stop();
    reader_.join();
    process_.stop();
  }

  std::vector<std::pair<double, std::string>> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 private:
  BackgroundProcess process_;
  mutable std::mutex mutex_;
  std::vector<std::pair<double, std::string>> lines_;
  std::jthread reader_;
};

// The first time `workers` pods had been seen, from "<name> <phase>" lines; 0 if never.
double allCreatedAt(const std::vector<std::pair<double, std::string>>& lines, int workers) {
  std::set<std::string> names;
  for (const auto& [at, line] : lines) {
    names.insert(line.substr(0, line.find(' ')));
    if (static_cast<int>(names.size()) >= workers) return at;
  }
  return 0;
}

// The first time every one of `workers` pods had been seen Running, from "<name> <phase>" lines; 0 if never.
double allRunningAt(const std::vector<std::pair<double, std::string>>& lines, int workers) {
  std::map<std::string, std::string> phases;
  for (const auto& [at, line] : lines) {
    std::istringstream in(line);
    std::string name, phase;
    in >> name >> phase;
    phases[name] = phase;
    const auto running = std::count_if(phases.begin(), phases.end(), [](const auto& p) {
      return p.second == "Running" || p.second == "Succeeded";
    });
    if (running >= workers) return at;
  }
  return 0;
}

// The first line's time that `done` accepts; 0 if none.
double firstAt(const std::vector<std::pair<double, std::string>>& lines,
               const std::function<bool(const std::string&)>& done) {
  for (const auto& [at, line] : lines) {
    if (done(line)) return at;
  }
  return 0;
}

struct RankTimes {
  double first = 0, last = 0;
  int sums = 0;  // ranks that printed the right sum
};

RankTimes ranksIn(const std::string& logs, int workers) {
  RankTimes times;
  const std::string rightSum =
      "of " + std::to_string(workers) + " sum " + std::to_string(workers * (workers + 1) / 2);
  std::istringstream in(logs);
  for (std::string line; std::getline(in, line);) {
    // mpirun may tag the lines ("[1,0]<stdout>:rank 0 up ...").
    const auto up = line.find(" up ");
    if (line.find("rank ") != std::string::npos && up != std::string::npos) {
      const double at = std::strtod(line.c_str() + up + 4, nullptr);
      times.first = times.first == 0 ? at : std::min(times.first, at);
      times.last = std::max(times.last, at);
    }
    if (line.find(rightSum) != std::string::npos) ++times.sums;
  }
  return times;
}

// Where worker 0's launch spent its time, from the times the container runtime stamped on ipu-runtime's
// lines (`kubectl logs --timestamps`): its first line, the start of its wait for the peers' agents (after the
// partition is active), all agents answered, and the launcher started. 0 where a line is missing.
struct LaunchPhases {
  double runtimeFirstLine = 0, agentsWaitStarted = 0, agentsAnswered = 0, launcherStarted = 0;
};

LaunchPhases launchPhasesIn(const std::string& timestampedLogs) {
  LaunchPhases phases;
  for (const auto& [at, text] : timedLines(timestampedLogs)) {
    const auto mark = [&, at = at](double& phase, bool seen) {
      if (phase == 0 && seen) phase = at;
    };
    mark(phases.runtimeFirstLine, text.starts_with("ipu-runtime"));
    mark(phases.agentsWaitStarted, text.starts_with("ipu-runtime launch: waiting for the agents"));
    mark(phases.agentsAnswered,
         text.starts_with("ipu-runtime launch: all ") && text.find(" answered in ") != std::string::npos);
    mark(phases.launcherStarted, text.starts_with("ipu-runtime launch: running "));
  }
  return phases;
}

// One job's milestones, in seconds from its `kubectl create`; the launch phases are ours only.
struct Milestones {
  double workersCreated = 0, workersRunning = 0, firstRank = 0, allRanks = 0, complete = 0;
  std::optional<LaunchPhases> launch;
};

struct Series {
  std::vector<double> workersCreated, workersRunning, firstRank, allRanks, complete, launchOverhead;
  std::vector<double> runtimeFirstLine, agentsWaitStarted, agentsAnswered, launcherStarted;
  void add(const Milestones& m) {
    workersCreated.push_back(m.workersCreated);
    workersRunning.push_back(m.workersRunning);
    firstRank.push_back(m.firstRank);
    allRanks.push_back(m.allRanks);
    complete.push_back(m.complete);
    launchOverhead.push_back(m.firstRank - m.workersRunning);
    if (m.launch) {
      runtimeFirstLine.push_back(m.launch->runtimeFirstLine);
      agentsWaitStarted.push_back(m.launch->agentsWaitStarted);
      agentsAnswered.push_back(m.launch->agentsAnswered);
      launcherStarted.push_back(m.launch->launcherStarted);
    }
  }
  Json json() const {
    Json figures = {{"workers_created_seconds", minMedianMax(workersCreated)},
                    {"workers_running_seconds", minMedianMax(workersRunning)},
                    {"first_rank_output_seconds", minMedianMax(firstRank)},
                    {"all_ranks_output_seconds", minMedianMax(allRanks)},
                    {"complete_seconds", minMedianMax(complete)},
                    {"workers_running_to_first_rank_seconds", minMedianMax(launchOverhead)}};
    if (!runtimeFirstLine.empty()) {
      figures["launch_phases"] = {{"runtime_first_line_seconds", minMedianMax(runtimeFirstLine)},
                                  {"agents_wait_started_seconds", minMedianMax(agentsWaitStarted)},
                                  {"agents_answered_seconds", minMedianMax(agentsAnswered)},
                                  {"launcher_started_seconds", minMedianMax(launcherStarted)}};
    }
    return figures;
  }
};

class StartLatencyBench : public OperatorOnRealNodeTest {
 protected:
  std::string runtimeDelivery() const override { return setup_.delivery; }
  bool servesPartitionStatus() const override { return setup_.podsWhileActivating; }

  // How our operator runs: how ipu-runtime reaches the pods, and whether the pods are made while their
  // partitions activate (--vipu-proxy-http-port).
  struct Setup {
    std::string delivery;
    bool podsWhileActivating = false;
    bool operator==(const Setup&) const = default;
    std::string name() const { return delivery + (podsWhileActivating ? ", pods while activating" : ""); }
  };

  // The setups of ours to run: all three, or those IPU_BENCH_START_SETUPS names (a comma-separated list of
  // init-container, image-volume, pods-while-activating), for a shorter run while working on one of them.
  static std::vector<Setup> setupsToRun() {
    const std::vector<std::pair<std::string, Setup>> all = {
        {"init-container", {"init-container"}},
        {"image-volume", {"image-volume"}},
        {"pods-while-activating", {"image-volume", true}}};
    const char* chosen = std::getenv("IPU_BENCH_START_SETUPS");
    std::vector<Setup> setups;
    for (const auto& [name, setup] : all) {
      if (chosen == nullptr || ("," + std::string(chosen) + ",").find("," + name + ",") != std::string::npos)
        setups.push_back(setup);
    }
    return setups;
  }

  // Our operator again, set up otherwise (it releases its Lease when stopped; startOperator keeps the
  // stopped one's log).
  void restartOursWith(const Setup& setup) {
    kubectl({"delete", "ipujobs", "--all", "--timeout", "60s"});
    ASSERT_EQ(operator_->stop(), 0) << "ipu-operator exit status";
    setup_ = setup;
    startOperatorOnRealNode();
  }

  void SetUp() override {
    OperatorOnRealNodeTest::SetUp();
    if (HasFatalFailure()) return;
    const std::string bin = cluster().binDir();
    auto crd = cluster().kubectl({"apply", "--server-side", "-f", bin + "/kubeflow.org_mpijobs.yaml"});
    ASSERT_TRUE(crd.ok()) << crd.describe()
                          << "\n(the MPI Operator is built by tools/build-tools.sh --peers)";
    // `kubectl wait` fails outright while the new CRD has no conditions yet, so poll.
    ASSERT_TRUE(eventually(
        [&] {
          return cluster()
                     .kubectl({"get", "crd", "mpijobs.kubeflow.org", "-o",
                               R"(jsonpath={.status.conditions[?(@.type=="Established")].status})"})
                     .out == "True";
        },
        60s));
    // As its deployment runs it, watching this namespace only and electing its leader here.
    mpiOperator_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{bin + "/mpi-operator", "--kubeConfig", cluster().kubeconfig(), "--namespace",
                                 ns(), "--lock-namespace", ns()});
    // It serves its health check on :8080, which it cannot be told otherwise: that port must be free.
    std::optional<int> exited;
    ASSERT_TRUE(eventually(
        [&] {
          exited = mpiOperator_->wait(std::chrono::milliseconds(0));
          return exited || mpiOperator_->stderrText().find("Starting workers") != std::string::npos;
        },
        60s))
        << mpiOperator_->stderrText();
    ASSERT_FALSE(exited) << "the MPI Operator exited (" << *exited << "):\n" << mpiOperator_->stderrText();
    sshImage_ = cluster().value("IPU_CLUSTER_IMAGE_DEBIAN_MPI_SSH");
  }

  void TearDown() override {
    if (mpiOperator_) {
      kubectl({"delete", "mpijobs", "--all", "--timeout", "60s"});
      if (HasFailure()) std::cerr << "---- mpi-operator log ----\n" << mpiOperator_->stderrText();
      mpiOperator_->stop();
    }
    OperatorOnRealNodeTest::TearDown();
  }

  std::vector<std::string> inNamespace(std::vector<std::string> args) const {
    args.insert(args.begin(), {"-n", ns()});
    return cluster().kubectlCommand(args);
  }

  // Creates the job, watching its pods and itself from before; waits for it to complete, deletes it and
  // waits for its pods to go, so that the next job has the node to itself.
  Milestones run(const std::string& resource, const std::string& name, const std::string& manifest,
                 const std::string& workerSelector, const std::string& doneJsonPath, const std::string& done,
                 const std::function<std::string()>& rankLogs, int workers) {
    TimedWatch pods(inNamespace({"get", "pods", "--watch", "-l", workerSelector, "-o",
                                 R"(jsonpath={.metadata.name} {.status.phase}{"\n"})"}));
    TimedWatch job(inNamespace({"get", resource, "--watch", "--field-selector", "metadata.name=" + name, "-o",
                                "jsonpath=" + doneJsonPath + R"({"\n"})"}));
    const auto isDone = [&done](const std::string& line) { return line == done; };
    const double start = now();
    const auto created = kubectl({"create", "-f", "-"}, RunOptions{.input = manifest});
    EXPECT_TRUE(created.ok()) << created.describe();
    const bool completed = eventually([&] { return firstAt(job.lines(), isDone) > 0; }, 180s, 100ms);
    EXPECT_TRUE(completed) << resource << " " << name
                           << " did not complete: " << getJson(resource, name).dump();
    const std::string logs = rankLogs();
    const RankTimes ranks = ranksIn(logs, workers);
    EXPECT_EQ(ranks.sums, workers) << name << ": every rank prints the right sum";
    Milestones milestones{allCreatedAt(pods.lines(), workers) - start,
                          allRunningAt(pods.lines(), workers) - start,
                          ranks.first - start,
                          ranks.last - start,
                          firstAt(job.lines(), isDone) - start,
                          {}};
    if (resource == "ipujob") {
      LaunchPhases phases = launchPhasesIn(logs);
      for (double* phase : {&phases.runtimeFirstLine, &phases.agentsWaitStarted, &phases.agentsAnswered,
                            &phases.launcherStarted})
        *phase -= start;
      milestones.launch = phases;
    }
    kubectl({"delete", resource, name, "--wait=true", "--timeout", "60s"});
    EXPECT_TRUE(eventually(
        [&] {
          return kubectl({"get", "pods", "-o", "name"}).out.empty();
        },
        60s))
        << kubectl({"get", "pods"}).out;
    return milestones;
  }

  Milestones runOurs(int workers, int index) {
    const std::string name = "ours-" + std::to_string(workers) + "-" + std::to_string(index);
    const std::string spec = R"({"workersPerJobInstance": ")" + std::to_string(workers) +
                             R"(", "ipusPerJobInstance": ")" + std::to_string(workers) + R"("})";
    return run(
        "ipujob", name, jobRunning(name, Json::array({"python3", "-c", kAllreduce}), spec, debianMpi()),
        "graphcore.ai/ipujob=" + name, "{.status.phase}", "Succeeded",
        [&] {
          return kubectl({"logs", "--timestamps", name + "-worker-0", "-c", "train"}).out;
        },
        workers);
  }

  Milestones runTheirs(int workers, int index) {
    const std::string name = "mpi-" + std::to_string(workers) + "-" + std::to_string(index);
    return run(
        "mpijob", name, mpiJob(name, workers).dump(),
        "training.kubeflow.org/job-name=" + name + ",training.kubeflow.org/job-role=worker",
        R"({.status.conditions[?(@.type=="Succeeded")].status})", "True",
        [&] {
          return kubectl(
                     {"logs", "-l",
                      "training.kubeflow.org/job-name=" + name + ",training.kubeflow.org/job-role=launcher",
                      "--tail", "-1"})
              .out;
        },
        workers);
  }

  // The MPIJob of the MPI Operator's documentation (root, OpenMPI, one slot per worker), on the real node:
  // the workers have no command, so the operator runs sshd in them.
  Json mpiJob(const std::string& name, int workers) const {
    const auto onRealNode = [&](const Json& container) {
      return Json{{"spec",
                   {{"nodeSelector", {{"ipu-operator.dev/real-node", "true"}}},
                    {"tolerations", Json::array({{{"key", "ipu-operator.dev/real-node"},
                                                  {"operator", "Exists"},
                                                  {"effect", "NoSchedule"}}})},
                    {"terminationGracePeriodSeconds", 1},
                    {"containers", Json::array({container})}}}};
    };
    const Json launcher = {{"name", "launcher"},
                           {"image", sshImage_},
                           {"imagePullPolicy", "Never"},
                           {"command", Json::array({"mpirun", "--allow-run-as-root", "-n",
                                                    std::to_string(workers), "python3", "-c", kAllreduce})}};
    const Json worker = {{"name", "worker"}, {"image", sshImage_}, {"imagePullPolicy", "Never"}};
    return {{"apiVersion", "kubeflow.org/v2beta1"},
            {"kind", "MPIJob"},
            {"metadata", {{"name", name}}},
            {"spec",
             {{"slotsPerWorker", 1},
              {"launcherCreationPolicy", "WaitForWorkersReady"},
              {"runPolicy", {{"cleanPodPolicy", "Running"}}},
              {"mpiReplicaSpecs",
               {{"Launcher", {{"replicas", 1}, {"template", onRealNode(launcher)}}},
                {"Worker", {{"replicas", workers}, {"template", onRealNode(worker)}}}}}}}};
  }

  std::unique_ptr<BackgroundProcess> mpiOperator_;
  std::string sshImage_;
  Setup setup_{"init-container"};
};

int runsPerCase() {
  const char* runs = std::getenv("IPU_BENCH_START_RUNS");
  return runs ? std::max(1, std::atoi(runs)) : 10;
}

TEST_F(StartLatencyBench, FromCreateToFirstRankAgainstTheMpiOperator) {
  const int runs = runsPerCase();
  Json cases = Json::array();
  std::ostringstream table;
  table << std::fixed << std::setprecision(2);
  table << "start latency, seconds from kubectl create (median [min-max] of " << runs << ")\n";
  const auto setups = setupsToRun();
  ASSERT_FALSE(setups.empty()) << "IPU_BENCH_START_SETUPS names none of init-container, image-volume, "
                                  "pods-while-activating";
  for (const Setup& setup : setups) {
    if (setup != setup_) restartOursWith(setup);
    if (HasFatalFailure()) return;
    for (int workers : {2, 4}) {
      Series ours, theirs;
      for (int index = 0; index < runs; ++index) {
        // Alternate which goes first, so that neither always follows the other's clean-up.
        if (index % 2 == 0) {
          ours.add(runOurs(workers, index));
          theirs.add(runTheirs(workers, index));
        } else {
          theirs.add(runTheirs(workers, index));
          ours.add(runOurs(workers, index));
        }
        if (HasFailure()) return;
      }
      Json oursJson = ours.json(), theirsJson = theirs.json();
      const auto median = [](const Json& series, const char* figure) {
        return series[figure]["median"].get<double>();
      };
      cases.push_back(
          {{"workers", workers},
           {"runtime_delivery", setup.delivery},
           {"pods_while_partition_activates", setup.podsWhileActivating},
           {"ipu-operator", oursJson},
           {"mpi-operator", theirsJson},
           {"first_rank_output_speedup_median",
            median(theirsJson, "first_rank_output_seconds") / median(oursJson, "first_rank_output_seconds")},
           {"complete_speedup_median",
            median(theirsJson, "complete_seconds") / median(oursJson, "complete_seconds")}});
      for (const auto& [tool, series] : {std::pair{"ipu-operator (" + setup.name() + ")", oursJson},
                                         std::pair{std::string("mpi-operator"), theirsJson}}) {
        table << std::setw(2) << workers << " workers  " << std::left << std::setw(54) << tool << std::right;
        for (const char* figure :
             {"workers_created_seconds", "workers_running_seconds", "first_rank_output_seconds",
              "all_ranks_output_seconds", "complete_seconds", "workers_running_to_first_rank_seconds"}) {
          table << "  " << figure << " " << median(series, figure) << " ["
                << series[figure]["min"].get<double>() << "-" << series[figure]["max"].get<double>() << "]";
        }
        table << "\n";
      }
      const Json& phases = oursJson["launch_phases"];
      table << "           ipu-operator's worker 0, medians: first ipu-runtime line "
            << median(phases, "runtime_first_line_seconds") << ", agents wait started "
            << median(phases, "agents_wait_started_seconds") << ", agents answered "
            << median(phases, "agents_answered_seconds") << ", launcher started "
            << median(phases, "launcher_started_seconds") << ", first rank up "
            << median(oursJson, "first_rank_output_seconds") << "\n";
    }
  }
  const Json result = {{"benchmark", "start_latency"},
                       {"runs_per_case", runs},
                       {"vipu_activation_delay_ms", 200},
                       {"mpi_operator_launcher_creation_policy", "WaitForWorkersReady"},
                       {"cases", cases}};
  std::ofstream(std::string(IPU_BENCH_DIR) + "/start_latency.json") << result.dump(2) << "\n";
  std::cout << result.dump(2) << "\n";
  std::cerr << table.str();
}

}  // namespace
}  // namespace ipu::testing
