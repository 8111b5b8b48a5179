// SIGKILL of the operator at exact points of a job's life (failpoints), then a fresh process: the job ends as
// it would have, with no duplicate pod and no leaked partition.
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

struct CrashPoint {
  const char* failpoint;
  bool restarts;  // the point is on the restart path: the job fails once and restarts once
  friend void PrintTo(const CrashPoint& point, std::ostream* out) { *out << point.failpoint; }
};

class CrashTest : public OperatorTest, public ::testing::WithParamInterface<CrashPoint> {
 protected:
  bool startsOperatorInSetUp() const override { return false; }
};

TEST_P(CrashTest, TheSuccessorConvergesWithoutDuplicatesOrLeaks) {
  const CrashPoint point = GetParam();
  startOperator({}, point.failpoint);

  const std::string job =
      point.restarts
          ? createJob(manifestExitingWith(3, "  restartPolicy: {type: OnFailure, backOffLimit: 1}\n", "1s"))
          : createJob(manifestExitingWith(0, "", "2s"));
  ASSERT_FALSE(job.empty());
  ASSERT_TRUE(eventually([&] { return exited(operator_->pid()); }, 120s))
      << "failpoint " << point.failpoint << " never reached; status: " << jobStatus(job).dump();
  EXPECT_EQ(operator_->stop(), 128 + SIGKILL);

  startOperator();
  const std::string finalPhase = point.restarts ? "Failed" : "Succeeded";
  ASSERT_TRUE(reachesPhase(job, finalPhase, 180s));
  const Json status = jobStatus(job);
  EXPECT_EQ(status.value("restartCount", 0), point.restarts ? 1 : 0) << status.dump();
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s))
      << partitions().size() << " partition(s) left on vipu-sim";
  EXPECT_TRUE(eventually(
      [&] {
        const auto held = jobStatus(job).value("partitions", Json::array());
        return held.size() == 1 && held[0].value("state", "") == "Released";
      },
      30s))
      << jobStatus(job).dump();
  const Json pods = podsOf(job);
  ASSERT_EQ(pods.size(), 1u) << pods.dump();
  EXPECT_EQ(pods[0]["metadata"]["labels"].value("graphcore.ai/attempt", ""), point.restarts ? "1" : "0");
}

INSTANTIATE_TEST_SUITE_P(Failpoints, CrashTest,
                         ::testing::Values(CrashPoint{"ipujob/after-admission-recorded", false},
                                           CrashPoint{"ipujob/after-partition-created", false},
                                           CrashPoint{"ipujob/after-pods-created", false},
                                           CrashPoint{"ipujob/before-release", false},
                                           CrashPoint{"ipujob/after-restart-recorded", true},
                                           CrashPoint{"ipujob/after-restart-pods-deleted", true},
                                           CrashPoint{"ipujob/after-partitions-reset", true}),
                         [](const ::testing::TestParamInfo<CrashPoint>& point) {
                           std::string name = std::string(point.param.failpoint).substr(7);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace ipu::testing
