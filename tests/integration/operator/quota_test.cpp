// IPUQuota through the real operator, vipu-sim and API server: a namespace's IPUs in use never exceed its
// quota at any revision the API server stored, through concurrent creates in many namespaces, leader kills
// and a second writer that leader election does not fence, with an admin lowering and raising a quota in the
// middle; and an admin's changes at run time, step by step.
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "teams_fixture.h"

namespace ipu::testing {
namespace {

// QuotaTest's own name for the fixture its runs share with the chaos test.
class QuotaTest : public TeamsTest {};

// What the stored revisions of one namespace's IPUQuota say about the claims made between two of them.
struct ClaimsBetween {
  int claims = 0;         // revisions at which the ledger (status.admissions) took a job it did not hold
  std::string overLimit;  // the first such revision whose ledger exceeded its own maxIPUs, if any
};

// Replays a `kubectl get --watch -o json` file of IPUQuotas as far as it is written (the watch may still be
// appending to it: a partly written last object ends the replay).
ClaimsBetween claimsBetween(const std::string& watchFile, const std::string& ns, std::uint64_t after,
                            std::uint64_t before) {
  ClaimsBetween found;
  std::ifstream events(watchFile);
  std::set<std::string> claimed;
  for (Json event; events >> std::ws && events.peek() != EOF;) {
    try {
      events >> event;
    } catch (const Json::parse_error&) {
      break;
    }
    const Json& quota = event["object"];
    if (quota["metadata"].value("namespace", "") != ns) continue;
    const std::uint64_t at = std::stoull(quota["metadata"].value("resourceVersion", "0"));
    const Json admissions = quota.value("status", Json::object()).value("admissions", Json::object());
    bool claims = false;
    int ledger = 0;
    for (const auto& [job, entry] : admissions.items()) {
      claims = claims || !claimed.contains(job);
      ledger += entry.value("ipus", 0);
    }
    claimed.clear();
    for (const auto& [job, entry] : admissions.items()) claimed.insert(job);
    if (!claims || at <= after || at >= before) continue;
    ++found.claims;
    if (found.overLimit.empty() && ledger > quota["spec"].value("maxIPUs", 0)) {
      found.overLimit = std::to_string(at) + " (" + std::to_string(ledger) + " IPUs claimed)";
    }
  }
  return found;
}

TEST_F(QuotaTest, AHundredJobsInFiveNamespacesNeverExceedTheirQuotasThroughKillsAndASecondWriter) {
  // 72 IPUs of quota on a 64-IPU POD: the teams compete for the topology as well as their own caps.
  const std::vector<std::pair<std::string, int>> limits = {
      {"a", 24}, {"b", 16}, {"c", 16}, {"d", 8}, {"e", 8}};
  std::map<std::string, int> limitOf;
  for (const auto& [suffix, limit] : limits) limitOf[teamNamespace(suffix, limit)] = limit;
  ASSERT_FALSE(HasFailure());

  // Every revision of every IPUJob and IPUQuota the API server stores, in order (a watch replays them all).
  const auto watchAll = [&](const std::string& resource) {
    return std::make_unique<BackgroundProcess>(std::vector<std::string>{
        "/bin/sh", "-c",
        "exec " + cluster().binDir() + "/kubectl --kubeconfig " + cluster().kubeconfig() + " get " +
            resource + " -A --watch --output-watch-events -o json > " + directory_ + "/" + resource +
            ".watch.json"});
  };
  const auto watch = watchAll("ipujobs");
  const auto quotaWatch = watchAll("ipuquotas");

  Replicas replicas(operatorArgv(), operator_);
  std::vector<std::string> documents;
  for (const auto& [team, limit] : limitOf) {
    for (int i = 0; i < 20; ++i) {
      std::string manifest = manifestExitingWith(0, "", "2s");
      manifest.insert(manifest.find("\nmetadata:\n") + 11, "  namespace: " + team + "\n");
      documents.push_back(manifest);
    }
  }
  std::shuffle(documents.begin(), documents.end(), std::mt19937(20261124));
  std::string all;
  for (const auto& document : documents) all += "---\n" + document;
  auto created = cluster().kubectl({"create", "-f", "-", "-o", "name"}, RunOptions{.input = all});
  ASSERT_TRUE(created.ok()) << created.describe();

  const auto succeeded = [&] {
    int count = 0;
    for (const auto& [team, limit] : limitOf) {
      auto listed = cluster().kubectl({"-n", team, "get", "ipujobs", "-o", "json"});
      if (!listed.ok()) continue;
      const Json jobs = Json::parse(listed.out);  // named: a temporary's member would dangle in the loop
      for (const Json& job : jobs["items"]) {
        count += job.value("status", Json::object()).value("phase", "") == "Succeeded" ? 1 : 0;
      }
    }
    return count;
  };
  // Five leaders SIGKILLed as the run goes on; for a while after the second, a third process with leader
  // election off writes alongside the leader (what a partitioned old leader would do: nothing fences it).
  // Meanwhile an admin lowers team a's quota from 24 to 8, and later gives the 24 back.
  const std::string lowered = ns() + "-a";
  std::uint64_t loweredAt = 0, raisedAt = 0;
  int kills = 0;
  std::unique_ptr<BackgroundProcess> unfenced;
  for (int target : {10, 25, 40, 55, 70}) {
    ASSERT_TRUE(eventually([&] { return succeeded() >= target; }, 240s)) << "stalled before " << target;
    if (kills == 1) loweredAt = changeQuota(lowered, 8);
    if (kills == 2) unfenced = std::make_unique<BackgroundProcess>(operatorArgv({"--leader-elect=false"}));
    if (kills == 3) {
      if (unfenced) {
        EXPECT_EQ(unfenced->stop(), 0);
        unfenced.reset();
      }
      // Team a's jobs admitted before the lowering drain first (its use falls from up to 24 to 4 or less):
      // on a slow run that can outlast the 30 successes above, so the quota is raised only once a job of
      // it has been admitted under the lowered one, as the quota's own revisions show.
      EXPECT_TRUE(eventually(
          [&] {
            return claimsBetween(directory_ + "/ipuquotas.watch.json", lowered, loweredAt,
                                 std::numeric_limits<std::uint64_t>::max())
                       .claims > 0;
          },
          240s))
          << "team a ran nothing while its quota was lowered";
      raisedAt = changeQuota(lowered, 24);
    }
    ASSERT_TRUE(killLeader(replicas));
    ++kills;
  }
  EXPECT_EQ(kills, 5);
  EXPECT_TRUE(eventually([&] { return succeeded() == 100; }, 300s)) << succeeded() << " of 100 succeeded";

  // At the end the admin's view is the truth: nothing held, nothing waiting, the ledgers empty.
  for (const auto& [team, limit] : limitOf) {
    EXPECT_TRUE(eventually(
        [&] {
          return quotaRow(team) == std::vector<std::string>{std::to_string(limit), "0", "0", "0", "0", "0"};
        },
        60s))
        << team << ": " << cluster().kubectl({"-n", team, "get", "ipuquota", "team"}).out;
    const Json quota =
        Json::parse(cluster().kubectl({"-n", team, "get", "ipuquota", "team", "-o", "json"}).out);
    EXPECT_TRUE(quota["status"].value("admissions", Json::object()).empty()) << quota["status"].dump();
  }

  // Replay every stored revision: at none does a namespace hold more than its quota. While team a's quota was
  // lowered, its running jobs went on (its use may stay above 8) but no job of it was admitted that took it
  // above 8: admission claims its IPUs in the quota's ledger (status.admissions, a write conditional on the
  // quota's resourceVersion) before the job's status shows them, so it is judged at the quota's revisions,
  // against the maxIPUs of the same revision. Once raised, team a used more than 8 again.
  watch->stop();
  quotaWatch->stop();
  const ClaimsBetween whileLowered =
      claimsBetween(directory_ + "/ipuquotas.watch.json", lowered, loweredAt, raisedAt);
  EXPECT_EQ(whileLowered.overLimit, "") << "a claim past the lowered quota at resourceVersion";
  std::ifstream events(directory_ + "/ipujobs.watch.json");
  std::map<std::string, std::map<std::string, int>> heldByTeam;  // team -> job -> IPUs
  std::map<std::string, int> peak;
  int peakAfterRaise = 0;
  std::set<std::string> heldBack;  // teams with a job that waited on its quota
  int revisions = 0;
  for (Json event; events >> std::ws && events.peek() != EOF;) {
    events >> event;
    const Json& job = event["object"];
    const std::string team = job["metadata"].value("namespace", "");
    if (!limitOf.contains(team)) continue;
    ++revisions;
    const Json& conditions = job.value("status", Json::object()).value("conditions", Json::array());
    if (countIf(conditions, [](const Json& c) { return c.value("reason", "") == "QuotaExceeded"; }) > 0) {
      heldBack.insert(team);
    }
    auto& held = heldByTeam[team];
    held[job["metadata"].value("name", "")] = event.value("type", "") == "DELETED" ? 0 : heldIpus(job);
    int total = 0;
    for (const auto& [name, ipus] : held) total += ipus;
    peak[team] = std::max(peak[team], total);
    const std::string revision = job["metadata"].value("resourceVersion", "0");
    ASSERT_LE(total, limitOf[team]) << team << " held " << total << " IPUs at resourceVersion " << revision;
    if (team != lowered) continue;
    if (std::stoull(revision) > raisedAt) peakAfterRaise = std::max(peakAfterRaise, total);
  }
  EXPECT_GT(revisions, 100 * 4) << "the watch saw too little of the run";
  // The caps were what held the teams back, not only the POD: the small teams ran at their limit and most
  // teams had jobs waiting on their quota.
  EXPECT_EQ(peak[ns() + "-d"], 8);
  EXPECT_EQ(peak[ns() + "-e"], 8);
  EXPECT_GE(heldBack.size(), 3u);
  EXPECT_GT(whileLowered.claims, 0) << "team a ran nothing while its quota was lowered";
  EXPECT_GT(peakAfterRaise, 8) << "the raised quota was not used";
  if (HasFailure()) std::cerr << replicas.logs();
}

TEST_F(QuotaTest, AnAdminRaisesLowersAndDeletesAQuotaWhileJobsRun) {
  const std::string team = teamNamespace("t", 8);
  const std::string a = createJob(manifestExitingWith(0, "", "25s"), team);
  const std::string b = createJob(manifestExitingWith(0, "", "25s"), team);
  ASSERT_TRUE(
      eventually([&] { return teamPhase(team, a) == "Running" && teamPhase(team, b) == "Running"; }, 90s));

  // Over quota: waits, saying which quota, its limit, the use and its place.
  const std::string c = createJob(manifestExitingWith(0, "", "25s"), team);
  ASSERT_TRUE(eventually([&] { return teamPhase(team, c) == "Queued"; }, 30s));
  Json status = teamJob(team, c)["status"];
  EXPECT_NE(status.value("lastMessage", "")
                .find("Waiting (position 1 in the queue): the job needs 4 IPUs; IPUQuota " + team +
                      "/team allows 8 IPUs (maxIPUs) and the namespace holds 8 (0 free)"),
            std::string::npos)
      << status.dump();
  EXPECT_EQ(countIf(status["conditions"],
                    [](const Json& condition) {
                      return condition.value("type", "") == "Admitted" &&
                             condition.value("status", "") == "False" &&
                             condition.value("reason", "") == "QuotaExceeded";
                    }),
            1)
      << status.dump();
  EXPECT_TRUE(eventually(
      [&] { return quotaRow(team) == std::vector<std::string>{"8", "8", "0", "4", "2", "1"}; }, 30s))
      << cluster().kubectl({"-n", team, "get", "ipuquota", "team"}).out;

  // Raised: the waiting job is admitted at once.
  const auto raised = std::chrono::steady_clock::now();
  setQuota(team, 12);
  ASSERT_TRUE(eventually([&] { return teamPhase(team, c) == "Running"; }, 30s)) << teamJob(team, c).dump();
  // Within the 15 s after which waiting jobs are looked at again anyway: the quota's change woke it.
  EXPECT_LT(std::chrono::steady_clock::now() - raised, 14s) << "a raised quota should admit at once";

  // Lowered below what runs: nothing is stopped; nothing new is admitted while use is above the limit.
  setQuota(team, 4);
  const std::string d = createJob(manifestExitingWith(0, "", "1s"), team);
  const std::string never = createJob(readFile(kSixtyFourIpuManifest), team);
  ASSERT_TRUE(eventually([&] { return teamPhase(team, never) == "Queued"; }, 30s));
  EXPECT_NE(
      teamJob(team, never)["status"].value("lastMessage", "").find("can never run under the current quota"),
      std::string::npos)
      << teamJob(team, never)["status"].dump();
  EXPECT_FALSE(teamJob(team, never)["status"].contains("queuePosition"));
  // What proves the operator looked after the lowering: d's decision written under the new limit, and the
  // quota's status recounted with both new jobs pending.
  EXPECT_TRUE(eventually([&] { return teamPhase(team, d) == "Queued"; }, 30s)) << teamJob(team, d).dump();
  EXPECT_TRUE(eventually(
      [&] { return quotaRow(team) == std::vector<std::string>{"4", "12", "0", "68", "3", "2"}; }, 30s))
      << cluster().kubectl({"-n", team, "get", "ipuquota", "team"}).out;
  for (const std::string& job : {a, b, c}) EXPECT_EQ(teamPhase(team, job), "Running") << job;
  EXPECT_EQ(teamPhase(team, d), "Queued");

  // Once the running jobs end, use falls below the limit and the next job fits.
  EXPECT_TRUE(eventually([&] { return teamPhase(team, d) == "Succeeded"; }, 120s)) << teamJob(team, d).dump();
  EXPECT_EQ(teamPhase(team, a), "Succeeded");

  // Deleted: the namespace is back to the default (unlimited): the 64-IPU job runs once the POD is free.
  ASSERT_TRUE(cluster().kubectl({"-n", team, "delete", "ipuquota", "team"}).ok());
  EXPECT_TRUE(eventually([&] { return teamPhase(team, never) == "Running"; }, 90s))
      << teamJob(team, never).dump();
}

}  // namespace
}  // namespace ipu::testing
