// Two installs of the operator on one cluster (another --controller-name, another Lease): each acts only on
// the IPUJobs whose spec.managedBy names it (a job without it belongs to the default name), and a job managed
// by neither is left as it was written.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "operator_fixture.h"

namespace ipu::testing {
namespace {

class ManagedByTest : public OperatorTest {
 protected:
  // Install B: the same binary and V-IPU controller, its own controller name and no Lease (the default
  // install holds the test namespace's).
  void startSecondInstall() {
    second_ = std::make_unique<BackgroundProcess>(std::vector<std::string>{
        operatorBinary_, "--kubeconfig", cluster().kubeconfig(), "--log-level", "debug",
        "--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--vipu-controller",
        "pod64=" + sim_->endpoint(), "--leader-elect=false", "--controller-name", kSecondName});
  }

  void TearDown() override {
    if (second_) {
      // B's jobs go while B runs (its finalizer), then B stops; the fixture deletes the rest.
      kubectl({"delete", "ipujob", "for-b", "--ignore-not-found", "--timeout", "60s"});
      EXPECT_EQ(second_->stop(), 0);
      if (HasFailure()) std::cerr << "---- second install's log ----\n" << second_->stderrText();
    }
    OperatorTest::TearDown();
  }

  std::string managedBy(const std::string& manager, const std::string& name) {
    return withName(manifestWith(kFourIpuManifest, "", "  managedBy: " + manager + "\n"), name);
  }

  Json finalizersOf(const std::string& job) {
    const Json object = getJson("ipujob", job);
    return object.is_object() ? object["metadata"].value("finalizers", Json::array()) : Json();
  }

  static constexpr const char* kSecondName = "example.com/second-install";
  std::unique_ptr<BackgroundProcess> second_;
};

TEST_F(ManagedByTest, EachInstallActsOnlyOnTheJobsItsControllerNameManages) {
  startSecondInstall();
  create(withName(readFile(kFourIpuManifest), "for-default"));
  create(managedBy(kSecondName, "for-b"));
  create(managedBy("example.com/nobody", "for-nobody"));
  ASSERT_TRUE(reachesPhase("for-default", "Running"));
  ASSERT_TRUE(reachesPhase("for-b", "Running"));
  // Each job's partition and pods were made by its own install: the actions each logs name only its own job
  // (both caches see every job; the other's is passed over).
  const auto acted = [&](const std::string& log, const std::string& job) {
    return log.find("\"job\":\"" + ns() + "/" + job + "\"") != std::string::npos;
  };
  EXPECT_TRUE(acted(operatorLog(), "for-default"));
  EXPECT_FALSE(acted(operatorLog(), "for-b")) << "the default install acted on B's job";
  EXPECT_TRUE(acted(second_->stderrText(), "for-b"));
  EXPECT_FALSE(acted(second_->stderrText(), "for-default")) << "B acted on the default's job";
  EXPECT_FALSE(acted(operatorLog() + second_->stderrText(), "for-nobody"));
  // Nobody's job: no finalizer, no status, no partition, no pod, however long both ran.
  EXPECT_TRUE(finalizersOf("for-nobody").empty()) << finalizersOf("for-nobody").dump();
  EXPECT_EQ(jobStatus("for-nobody"), Json::object());
  EXPECT_TRUE(podsOf("for-nobody").empty());
  EXPECT_FALSE(partition(defaultPartitionId("for-nobody")).has_value());

  // managedBy is immutable: a job cannot be handed to another install (nor taken from one).
  const auto moved = kubectl({"patch", "ipujob", "for-b", "--type", "merge", "-p",
                              R"({"spec":{"managedBy":"graphcore.ai/ipu-operator"}})"});
  EXPECT_FALSE(moved.ok());
  EXPECT_NE(moved.err.find("spec.managedBy is immutable"), std::string::npos) << moved.describe();
  const auto claimed = kubectl({"patch", "ipujob", "for-default", "--type", "merge", "-p",
                                std::string(R"({"spec":{"managedBy":")") + kSecondName + "\"}}"});
  EXPECT_FALSE(claimed.ok()) << claimed.describe();
}

}  // namespace
}  // namespace ipu::testing
