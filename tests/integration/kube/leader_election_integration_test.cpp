// Lease leader election between real processes (tests/support/lease_contender) on the real API server: one
// leads; a killed leader is replaced once its lease runs out, and not before; a leader stopped gracefully
// hands the lease over at once.
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <signal.h>

#include "subprocess.h"
#include "test_cluster.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;
using Milliseconds = std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// Short timings in client-go's proportions (15 s / 10 s / 2 s), passed to the contenders as flags. No
// jitter, so that the bounds below are exact.
constexpr Milliseconds kLeaseDuration = 4s;
constexpr Milliseconds kRenewDeadline = 3s;
constexpr Milliseconds kRetryPeriod = 500ms;
// Process start-up, pipes and API round trips on a shared test machine.
constexpr Milliseconds kSlack = 750ms;
const std::string kLease = "ipu-operator-test";

std::string seconds(Milliseconds d) {
  return std::to_string(static_cast<double>(d.count()) / 1000.0);
}

class LeaderElectionIntegrationTest : public ClusterTest {
 protected:
  struct Candidate {
    std::string identity;
    std::unique_ptr<BackgroundProcess> process;
  };

  Candidate contender(const std::string& identity) {
    return Candidate{identity, std::make_unique<BackgroundProcess>(std::vector<std::string>{
                                   IPU_LEASE_CONTENDER, "--kubeconfig", cluster().kubeconfig(), "--namespace",
                                   ns(), "--lease", kLease, "--identity", identity, "--lease-duration",
                                   seconds(kLeaseDuration), "--renew-deadline", seconds(kRenewDeadline),
                                   "--retry-period", seconds(kRetryPeriod), "--jitter", "0"})};
  }

  // Starts two candidates; exactly one of them leads, and the other keeps following for longer than a
  // lease duration, since the leader renews. Sets leader_ and follower_.
  void startTwo() {
    candidates_.push_back(contender("candidate-a"));
    candidates_.push_back(contender("candidate-b"));
    std::optional<size_t> leading;
    const auto deadline = SteadyClock::now() + 30s;
    while (!leading && SteadyClock::now() < deadline) {
      for (size_t i = 0; i < candidates_.size() && !leading; ++i) {
        if (auto line = candidates_[i].process->readLine(50ms)) {
          ASSERT_EQ(*line, "LEADING " + candidates_[i].identity) << stderrOf(i);
          leading = i;
        }
      }
    }
    ASSERT_TRUE(leading.has_value()) << "nobody leads\n" << stderrOf(0) << stderrOf(1);
    leader_ = &candidates_[*leading];
    follower_ = &candidates_[1 - *leading];
    auto second = follower_->process->readLine(kLeaseDuration + 2s);
    ASSERT_FALSE(second.has_value()) << "two leaders: " << *second;

    nlohmann::json lease = getJson("lease", kLease);
    ASSERT_FALSE(lease.is_null());
    EXPECT_EQ(lease["spec"]["holderIdentity"], leader_->identity);
    EXPECT_EQ(lease["spec"]["leaseDurationSeconds"], 4);
    transitionsBefore_ = lease["spec"].value("leaseTransitions", 0);
  }

  // How long until the follower prints that it leads, from `since`.
  Milliseconds followerLeadsAfter(SteadyClock::time_point since, Milliseconds timeout) {
    auto line = follower_->process->readLine(timeout);
    const auto elapsed = std::chrono::duration_cast<Milliseconds>(SteadyClock::now() - since);
    EXPECT_EQ(line.value_or("(nothing)"), "LEADING " + follower_->identity)
        << follower_->process->stderrText();
    return elapsed;
  }

  void expectTheLeaseMovedToTheFollower() {
    nlohmann::json lease = getJson("lease", kLease);
    ASSERT_FALSE(lease.is_null());
    EXPECT_EQ(lease["spec"]["holderIdentity"], follower_->identity);
    EXPECT_EQ(lease["spec"].value("leaseTransitions", 0), transitionsBefore_ + 1);
  }

  std::string stderrOf(size_t i) const {
    return "--- " + candidates_[i].identity + " stderr:\n" + candidates_[i].process->stderrText();
  }

  static void report(const std::string& what, Milliseconds elapsed) {
    std::printf("[ MEASURED ] %s: %.3f s\n", what.c_str(), static_cast<double>(elapsed.count()) / 1000.0);
    ::testing::Test::RecordProperty(what, static_cast<int>(elapsed.count()));
  }

  std::vector<Candidate> candidates_;
  Candidate* leader_ = nullptr;
  Candidate* follower_ = nullptr;
  int transitionsBefore_ = 0;
};

TEST_F(LeaderElectionIntegrationTest, AKilledLeaderIsReplacedOnceItsLeaseRunsOutAndNotBefore) {
  ASSERT_NO_FATAL_FAILURE(startTwo());

  const auto killedAt = SteadyClock::now();
  ASSERT_EQ(::kill(leader_->process->pid(), SIGKILL), 0);
  const Milliseconds takeover = followerLeadsAfter(killedAt, kLeaseDuration + 2 * kRetryPeriod + 10s);
  report("takeoverAfterSigkillMs", takeover);

  // The leader renewed at most one retry period before it died, and the follower counts the lease from when
  // it saw that renewal: it cannot have taken over sooner than this...
  EXPECT_GE(takeover, kLeaseDuration - kRetryPeriod - 100ms) << "took over a lease that had not run out";
  // ...and sees the record unchanged within one retry period of the kill, and the lease run out within one
  // more.
  EXPECT_LE(takeover, kLeaseDuration + 2 * kRetryPeriod + kSlack);
  expectTheLeaseMovedToTheFollower();
  EXPECT_EQ(leader_->process->stop(), 128 + SIGKILL);
}

TEST_F(LeaderElectionIntegrationTest, AGracefullyStoppedLeaderHandsTheLeaseOverAtOnce) {
  ASSERT_NO_FATAL_FAILURE(startTwo());

  const auto stoppedAt = SteadyClock::now();
  ASSERT_EQ(::kill(leader_->process->pid(), SIGTERM), 0);
  const Milliseconds takeover = followerLeadsAfter(stoppedAt, kLeaseDuration + 10s);
  report("takeoverAfterSigtermMs", takeover);
  // Released: the follower takes it at its next try, not after a lease duration.
  EXPECT_LE(takeover, kRetryPeriod + kSlack);
  EXPECT_LT(takeover, kLeaseDuration / 2);

  EXPECT_EQ(leader_->process->readLine(10s).value_or("(nothing)"), "STOPPED " + leader_->identity);
  EXPECT_FALSE(leader_->process->readLine(10s).has_value()) << "the stopped leader goes on writing";
  EXPECT_EQ(leader_->process->stop(), 0) << leader_->process->stderrText();
  expectTheLeaseMovedToTheFollower();
}

}  // namespace
}  // namespace ipu::testing
