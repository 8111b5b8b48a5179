// Chaos: IPUJobs of mixed shapes in three namespaces with IPUQuotas, run by two replicas of the operator with
// leader election, while the leader is SIGKILLed again and again, the API server restarts, V-IPU fails a
// share of CreatePartition calls and puts a share of new partitions in PS_ERROR, users delete running jobs
// and an admin strips a deleted job's finalizer. A checker snapshots the cluster every second and holds it to
// the invariants of chaos_invariants.h; at the end every job is terminal, every deleted job gone, no
// partition left and no IPUQuota charged. The counts go to $IPU_CHAOS_RESULTS_DIR/<plan>.json and to stdout.
//
// ChaosTest.Smoke (in the default run, under 2 minutes) and ChaosTest.Full (label chaos: 200 jobs, 20 leader
// kills, 3 API server restarts) run the same code with different plans.
#include <atomic>
#include <fstream>
#include <random>
#include <thread>

#include "chaos_invariants.h"
#include "teams_fixture.h"

namespace ipu::testing {
namespace {

struct ChaosPlan {
  std::string name;
  int jobs = 0;
  int leaderKills = 0;
  int apiServerRestarts = 0;
  int userDeletes = 0;  // running jobs a user deletes
  int finalizersStripped =
      0;  // running jobs deleted right after a leader kill, their finalizer removed by hand
  std::chrono::seconds timeout{0};
};

constexpr double kCreateFailureRate = 0.10;
constexpr double kErrorRate = 0.05;
constexpr int kOrphanSweepSeconds = 5;
// An orphan is removed once two sweeps in a row found it; a new leader sweeps at start-up, after the killed
// one's Lease (15 s) lapses; and the API server may be restarting. Longer than that is a leak.
constexpr std::chrono::seconds kOrphanGrace{2 * kOrphanSweepSeconds + 15 + 20};

// A job shape: instances x IPUs per instance, workers per instance.
struct Shape {
  int instances, ipus, workers;
};
constexpr Shape kShapes[] = {{1, 1, 1}, {1, 1, 1}, {1, 4, 1},  {1, 4, 1}, {2, 2, 1},
                             {1, 8, 2}, {2, 4, 2}, {1, 16, 4}, {2, 8, 2}};

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  return at == std::string::npos ? "" : text.replace(at, from.size(), to);
}

class ChaosTest : public TeamsTest {
 protected:
  bool startsOperatorInSetUp() const override { return false; }

  std::vector<std::string> vipuSimArgs() const override {
    return {"--activation-delay-ms",
            "200",
            "--create-failure-rate",
            std::to_string(kCreateFailureRate),
            "--error-rate",
            std::to_string(kErrorRate),
            "--seed",
            "2026"};
  }

  // The user's 4-IPU manifest reshaped, in `team`: most succeed, some fail and restart once before failing.
  std::string chaosManifest(const std::string& team, const Shape& shape, bool fails, int runSeconds) {
    std::string manifest = manifestWith(
        kFourIpuManifest,
        "ipu-operator.dev/simulate-exit-code: \"" + std::string(fails ? "3" : "0") +
            "\", ipu-operator.dev/simulate-run-duration: \"" + std::to_string(runSeconds) + "s\"",
        "  workersPerJobInstance: \"" + std::to_string(shape.workers) + "\"\n" +
            (fails ? "  restartPolicy: {type: OnFailure, backOffLimit: 1}\n" : ""));
    manifest =
        replaced(manifest, "jobInstances: 1\n", "jobInstances: " + std::to_string(shape.instances) + "\n");
    manifest = replaced(manifest, "ipusPerJobInstance: \"4\"",
                        "ipusPerJobInstance: \"" + std::to_string(shape.ipus) + "\"");
    return replaced(manifest, "\nmetadata:\n", "\nmetadata:\n  namespace: " + team + "\n");
  }

  Json listed(const std::vector<std::string>& args) {
    const auto got = cluster().kubectl(args);
    if (!got.ok()) return Json();
    Json list = Json::parse(got.out, nullptr, false);
    return list.is_object() ? list["items"] : Json();
  }

  // The jobs (or pods) of the teams' namespaces; null when the API server did not answer.
  Json teamsOnly(const Json& items) {
    if (!items.is_array()) return Json();
    Json mine = Json::array();
    for (const Json& item : items) {
      if (std::find(teams_.begin(), teams_.end(), item["metadata"].value("namespace", "")) != teams_.end())
        mine.push_back(item);
    }
    return mine;
  }

  std::optional<ChaosSnapshot> snapshot() {
    ChaosSnapshot taken;
    taken.at = std::chrono::steady_clock::now();
    auto partitions = vipu_->listPartitions("");
    if (!partitions) return std::nullopt;
    taken.partitions = *partitions;
    // Jobs after partitions: a partition being made is recorded in its job's status before it exists.
    taken.jobs = teamsOnly(listed({"get", "ipujobs", "-A", "-o", "json"}));
    taken.pods = teamsOnly(listed({"get", "pods", "-A", "-l", "graphcore.ai/ipujob", "-o", "json"}));
    if (taken.jobs.is_null() || taken.pods.is_null()) return std::nullopt;
    return taken;
  }

  static bool terminal(const Json& job) {
    const std::string phase = job.value("status", Json::object()).value("phase", "");
    return phase == "Succeeded" || phase == "Failed";
  }

  void run(const ChaosPlan& plan);
};

// The faults of a run, spread over its progress (jobs ended or gone) in a shuffled order.
enum class Fault { kKillLeader, kRestartApiServer, kUserDelete };

std::vector<Fault> faultSchedule(const ChaosPlan& plan, std::mt19937& random) {
  std::vector<Fault> faults;
  faults.insert(faults.end(), plan.leaderKills, Fault::kKillLeader);
  faults.insert(faults.end(), plan.apiServerRestarts, Fault::kRestartApiServer);
  faults.insert(faults.end(), plan.userDeletes, Fault::kUserDelete);
  std::shuffle(faults.begin(), faults.end(), random);
  return faults;
}

void ChaosTest::run(const ChaosPlan& plan) {
  const auto started = std::chrono::steady_clock::now();
  std::map<std::string, int> quotaOf;
  for (const auto& [suffix, limit] : {std::pair{"a", 32}, {"b", 24}, {"c", 16}})
    quotaOf[teamNamespace(suffix, limit)] = limit;
  ASSERT_FALSE(HasFailure());
  const Json kubeSystem = getJson("namespace", "kube-system");
  ChaosInvariants invariants(cmd::prefixForClusterUid(kubeSystem["metadata"].value("uid", "")), quotaOf,
                             kOrphanGrace);

  const std::vector<std::string> argv =
      operatorArgv({"--orphan-sweep-interval-seconds", std::to_string(kOrphanSweepSeconds)});
  operator_ = std::make_unique<BackgroundProcess>(argv);
  Replicas replicas(argv, operator_);
  // On a failure, every replica's log (the leader of the moment may be any of them), however the run ends: an
  // assertion that stops it early included.
  struct LogsOnFailure {
    const Replicas& replicas;
    ~LogsOnFailure() {
      if (::testing::Test::HasFailure()) std::cerr << replicas.logs();
    }
  } logsOnFailure{replicas};

  std::mt19937 random(20261124);
  std::string all;
  for (int i = 0; i < plan.jobs; ++i) {
    const std::string& team = teams_[random() % teams_.size()];
    all += "---\n" + chaosManifest(team, kShapes[random() % std::size(kShapes)], random() % 100 < 15,
                                   1 + static_cast<int>(random() % 4));
  }
  auto created = cluster().kubectl({"create", "-f", "-", "-o", "name"}, RunOptions{.input = all});
  ASSERT_TRUE(created.ok()) << created.describe();

  // The checker: a snapshot a second, each held to the invariants, until the run is over. A jthread: an
  // assertion that ends the run early stops and joins it on the way out, so the replicas and the fixture's
  // teardown still run (a joinable std::thread would abort the process and leave them behind).
  std::mutex checked;
  int unanswered = 0;
  std::jthread checker([&](std::stop_token over) {
    while (!over.stop_requested()) {
      if (auto taken = snapshot()) {
        std::lock_guard lock(checked);
        invariants.check(*taken);
      } else {
        ++unanswered;
      }
      std::this_thread::sleep_for(1s);
    }
  });

  // Progress: jobs that ended or are gone (deleted). Faults happen at even steps of it.
  std::set<std::string> deleted;
  const auto progress = [&] {
    const Json jobs = teamsOnly(listed({"get", "ipujobs", "-A", "-o", "json"}));
    if (!jobs.is_array()) return -1;
    int present = 0, ended = 0;
    for (const Json& job : jobs) {
      ++present;
      ended += terminal(job) ? 1 : 0;
    }
    return ended + (plan.jobs - present);
  };
  // A running job of the teams not being deleted yet (for a user to delete), or "" when none runs.
  const auto runningJob = [&]() -> std::pair<std::string, std::string> {
    const Json jobs = teamsOnly(listed({"get", "ipujobs", "-A", "-o", "json"}));
    for (const Json& job : jobs.is_array() ? jobs : Json::array()) {
      if (job.value("status", Json::object()).value("phase", "") == "Running" &&
          !job["metadata"].contains("deletionTimestamp"))
        return {job["metadata"].value("namespace", ""), job["metadata"].value("name", "")};
    }
    return {"", ""};
  };

  // A user deletes a Running job; with `strip`, an admin then removes its finalizer, as one does to a job
  // stuck deleting, so the operator never releases its partitions: the orphan sweep must.
  const auto deleteRunningJob = [&](bool strip) -> ::testing::AssertionResult {
    std::pair<std::string, std::string> picked;  // jobs run for seconds: wait for one to be Running
    if (!eventually([&] { return !(picked = runningJob()).second.empty(); }, 60s))
      return ::testing::AssertionFailure() << "no job ran for a user to delete";
    const auto& [team, job] = picked;
    auto done = cluster().kubectl({"-n", team, "delete", "ipujob", job, "--wait=false"});
    if (!done.ok()) return ::testing::AssertionFailure() << done.describe();
    if (strip) {
      done = cluster().kubectl({"-n", team, "patch", "ipujob", job, "--type", "merge", "-p",
                                R"({"metadata":{"finalizers":null}})"});
      // Gone already: a replica took the Lease while this waited for a running job, and released the job
      // itself in the moment between the delete and the patch. Deleted all the same.
      const bool goneAlready = !done.ok() && done.err.find("NotFound") != std::string::npos;
      if (!done.ok() && !goneAlready) return ::testing::AssertionFailure() << done.describe();
    }
    deleted.insert(team + "/" + job);
    return ::testing::AssertionSuccess();
  };

  int kills = 0, restarts = 0, userDeletes = 0, stripped = 0;
  const std::vector<Fault> faults = faultSchedule(plan, random);
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const int target = static_cast<int>((i + 1) * plan.jobs / (faults.size() + 2));
    ASSERT_TRUE(eventually([&] { return progress() >= target; }, 240s))
        << "stalled before " << target << " jobs ended; at " << progress();
    switch (faults[i]) {
      case Fault::kKillLeader:
        ASSERT_TRUE(killLeader(replicas));
        ++kills;
        // The finalizers are stripped while no replica leads, before the operator can release the job itself.
        if (stripped < plan.finalizersStripped) {
          ASSERT_TRUE(deleteRunningJob(true));
          ++stripped;
        }
        break;
      case Fault::kRestartApiServer:
        cluster().controlComponent("restart", "kube-apiserver");  // kwok with it (tools/cluster.sh)
        ++restarts;
        break;
      case Fault::kUserDelete:
        ASSERT_TRUE(deleteRunningJob(false));
        ++userDeletes;
        break;
    }
  }

  // The end: every job terminal, every deleted one gone (no finalizer stuck), no partition left, nothing
  // charged.
  const auto settled = [&] {
    const Json jobs = teamsOnly(listed({"get", "ipujobs", "-A", "-o", "json"}));
    if (!jobs.is_array()) return false;
    for (const Json& job : jobs) {
      const std::string key =
          job["metadata"].value("namespace", "") + "/" + job["metadata"].value("name", "");
      if (deleted.contains(key) || !terminal(job) || heldIpus(job) > 0) return false;
    }
    return static_cast<int>(jobs.size()) == plan.jobs - static_cast<int>(deleted.size());
  };
  EXPECT_TRUE(eventually(settled, plan.timeout)) << "jobs did not all end";
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, kOrphanGrace))
      << partitions().size() << " left";
  checker.request_stop();
  checker.join();

  // The counts, as JSON and on one line.
  int succeeded = 0, failed = 0, restartedJobs = 0;
  Json failedBy = Json::object();  // reason of the Failed condition -> jobs
  for (const Json& job : teamsOnly(listed({"get", "ipujobs", "-A", "-o", "json"}))) {
    const Json status = job.value("status", Json::object());
    succeeded += status.value("phase", "") == "Succeeded" ? 1 : 0;
    failed += status.value("phase", "") == "Failed" ? 1 : 0;
    restartedJobs += status.value("restartCount", 0) > 0 ? 1 : 0;
    for (const Json& condition : status.value("conditions", Json::array())) {
      if (condition.value("type", "") != "Failed" || condition.value("status", "") != "True") continue;
      const std::string reason = condition.value("reason", "");
      failedBy[reason] = failedBy.value(reason, 0) + 1;
    }
  }
  const std::string simLog = sim_->log();
  int createFailures = 0;
  for (auto at = simLog.find("injected fault: CreatePartition failed"); at != std::string::npos;
       at = simLog.find("injected fault: CreatePartition failed", at + 1))
    ++createFailures;
  std::lock_guard lock(checked);
  const Json result = {
      {"plan", plan.name},
      {"jobs", plan.jobs},
      {"namespaces", teams_.size()},
      {"seconds",
       std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started).count()},
      {"leaderKills", kills},
      {"apiServerRestarts", restarts},
      {"createPartitionFailuresInjected", createFailures},
      {"partitionsInErrorSeen", invariants.partitionsSeenInError()},
      {"jobsDeletedByUsers", userDeletes},
      {"finalizersStripped", stripped},
      {"orphanedPartitionsSeen", invariants.orphansSeen()},
      {"succeeded", succeeded},
      {"failed", failed},
      {"jobsRestarted", restartedJobs},
      {"failedBy", failedBy},
      {"partitionsSeen", invariants.partitionsSeen()},
      {"maxLivePods", invariants.maxLivePods()},
      {"snapshotsChecked", invariants.snapshots()},
      {"snapshotsMissed", unanswered},
      {"violations", invariants.violations().size()},
      {"violationDetails", invariants.violations()}};
  std::cout << "chaos " << result.dump() << std::endl;
  if (const char* dir = std::getenv("IPU_CHAOS_RESULTS_DIR")) {
    fs::create_directories(dir);
    std::ofstream(std::string(dir) + "/" + plan.name + ".json") << result.dump(2) << "\n";
  }
  EXPECT_TRUE(invariants.violations().empty()) << result["violationDetails"].dump(2);
  EXPECT_EQ(kills, plan.leaderKills);
  EXPECT_EQ(restarts, plan.apiServerRestarts);
  EXPECT_EQ(userDeletes, plan.userDeletes);
  EXPECT_EQ(stripped, plan.finalizersStripped);
  EXPECT_EQ(static_cast<int>(deleted.size()), userDeletes + stripped) << "a job was deleted twice";
  EXPECT_GT(createFailures, 0) << "no CreatePartition failure was injected";
  EXPECT_GT(invariants.snapshots(), 10);
}

// About 100 s alone; the bound leaves room for a lost lease (a renewal that missed its deadline while the API
// server restarted on a loaded machine) and the campaign after it, as happened in a full test run.
TEST_F(ChaosTest, Smoke) {
  run({.name = "smoke",
       .jobs = 30,
       .leaderKills = 2,
       .apiServerRestarts = 1,
       .userDeletes = 2,
       .finalizersStripped = 1,
       .timeout = 240s});
}

TEST_F(ChaosTest, Full) {
  run({.name = "full",
       .jobs = 200,
       .leaderKills = 20,
       .apiServerRestarts = 3,
       .userDeletes = 10,
       .finalizersStripped = 3,
       .timeout = 600s});
}

}  // namespace
}  // namespace ipu::testing
