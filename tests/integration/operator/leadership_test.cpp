// Leadership lost in a running process: the operator fences V-IPU, stops its controllers, drops its caches
// and campaigns again in the same process, so a single replica outlives API server outages and Lease
// takeovers.
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

int occurrences(const std::string& text, const std::string& what) {
  int count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

class LeadershipTest : public OperatorTest {
 protected:
  std::string holder() const {
    const Json lease = getJson("lease", "ipu-operator");
    return lease.is_object() ? lease["spec"].value("holderIdentity", "") : "";
  }
};

// The API server away for longer than the renew deadline (10 s): the leader cannot renew and loses its
// leadership. It used to exit, leaving every job stuck until someone restarted it by hand.
TEST_F(LeadershipTest, ASingleReplicaOutlivesAnApiServerOutageLongerThanItsRenewDeadline) {
  const std::string during = createJob(manifestExitingWith(0, "", "45s"));
  ASSERT_TRUE(reachesPhase(during, "Running"));
  ASSERT_TRUE(eventually([&] { return !holder().empty(); }, 30s));
  const std::string leader = holder();

  cluster().controlComponent("stop", "kube-apiserver");
  // The renew deadline is 10 s: the loss is logged soon after.
  EXPECT_TRUE(
      eventually([&] { return operator_->stderrText().find("leadership lost") != std::string::npos; }, 60s))
      << "the outage should have cost the leadership";
  cluster().controlComponent("start", "kube-apiserver");

  // The same process leads again under the same identity, with caches read afresh.
  ASSERT_TRUE(
      eventually([&] { return occurrences(operator_->stderrText(), "controller started") >= 4; }, 60s))
      << "the controllers never started again";
  EXPECT_FALSE(exited(operator_->pid()));
  EXPECT_EQ(holder(), leader);
  const std::string after = createJob(manifestExitingWith(0, "", "2s"));
  ASSERT_TRUE(reachesPhase(after, "Succeeded", 120s));
  ASSERT_TRUE(reachesPhase(during, "Succeeded", 120s));
  EXPECT_EQ(jobStatus(during).value("restartCount", 0), 0) << jobStatus(during).dump();
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s)) << partitions().size() << " left";
  EXPECT_FALSE(exited(operator_->pid()));
}

// Another candidate takes the Lease over (as a replica would after a network partition): this one stops
// acting at once and stands by; when the other stops renewing, it leads again and finishes the jobs.
TEST_F(LeadershipTest, ALeaderWhoseLeaseIsTakenStandsByAndLeadsAgainLater) {
  const std::string job = createJob(manifestExitingWith(0, "", "30s"));
  ASSERT_TRUE(reachesPhase(job, "Running"));
  ASSERT_TRUE(eventually([&] { return !holder().empty(); }, 30s));
  const std::string leader = holder();

  // Another candidate's write: its holder, a short lease it never renews.
  const auto taken = kubectl({"patch", "lease", "ipu-operator", "--type", "merge", "-p",
                              R"({"spec":{"holderIdentity":"intruder","leaseDurationSeconds":5}})"});
  ASSERT_TRUE(taken.ok()) << taken.describe();
  ASSERT_TRUE(eventually(
      [&] { return operator_->stderrText().find("another candidate holds the lease") != std::string::npos; },
      30s));
  // Standing by: the process runs and campaigns, and the Lease goes back to it once the intruder's lapses.
  ASSERT_TRUE(eventually([&] { return holder() == leader; }, 60s)) << "holder: " << holder();
  EXPECT_FALSE(exited(operator_->pid()));
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 120s));
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s)) << partitions().size() << " left";
}

}  // namespace
}  // namespace ipu::testing
