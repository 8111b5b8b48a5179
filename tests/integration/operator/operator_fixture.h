// The fixture of the operator's integration tests: the real ipu-operator binary and a real vipu-sim (POD64)
// against the shared test cluster, with helpers to create users' manifests and wait on their status.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>

#include "cmd/partition_prefix.h"
#include "eventually.h"
#include "ipujob/orphan_partitions.h"
#include "sim_process.h"
#include "subprocess.h"
#include "test_cluster.h"
#include "vipu/partition_id.h"
#include "vipu/vipu_client.h"

namespace ipu::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Json = nlohmann::json;

inline std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A process that has exited (a zombie until reaped counts) or is gone.
inline bool exited(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

inline int countIf(const Json& array, const std::function<bool(const Json&)>& predicate) {
  int count = 0;
  if (array.is_array()) {
    for (const Json& item : array) count += predicate(item) ? 1 : 0;
  }
  return count;
}

inline constexpr const char* kFourIpuManifest =
    IPU_SOURCE_DIR "/examples/ipujobs/bert-training-multi-ipu.yaml";
inline constexpr const char* kSixtyFourIpuManifest =
    IPU_SOURCE_DIR "/examples/ipujobs/bert-poprun-64ipus.yaml";

// A user's manifest with additions: `specLines` (YAML at two spaces, each ending in a newline) go first in
// spec; `annotations` (a YAML flow map body) go on the worker template, which is how kwok is told when a
// simulated worker ends and with which exit code. Everything the user wrote stays as it is.
inline std::string manifestWith(const std::string& path, const std::string& annotations,
                                const std::string& specLines = "") {
  std::string manifest = readFile(path);
  if (!annotations.empty()) {
    const std::string anchor = "    template:\n";
    const auto at = manifest.find(anchor);
    if (at == std::string::npos) return "";
    manifest.insert(at + anchor.size(), "      metadata: {annotations: {" + annotations + "}}\n");
  }
  if (!specLines.empty()) {
    const std::string anchor = "\nspec:\n";
    const auto at = manifest.find(anchor);
    if (at == std::string::npos) return "";
    manifest.insert(at + anchor.size(), specLines);
  }
  return manifest;
}

// A manifest of ours with metadata.name `name` instead of its generateName.
inline std::string withName(std::string manifest, const std::string& name) {
  const std::string generated = "generateName: bert-training-multi-ipu-";
  const auto at = manifest.find(generated);
  if (at == std::string::npos) return "";
  return manifest.replace(at, generated.size(), "name: " + name);
}

// The user's 4-IPU manifest with the worker template annotated so that kwok ends the pod with `exitCode`.
inline std::string manifestExitingWith(int exitCode, const std::string& specLines = "",
                                       const std::string& runFor = "") {
  return manifestWith(
      kFourIpuManifest,
      "ipu-operator.dev/simulate-exit-code: \"" + std::to_string(exitCode) + "\"" +
          (runFor.empty() ? "" : ", ipu-operator.dev/simulate-run-duration: \"" + runFor + "\""),
      specLines);
}

class OperatorTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    ASSERT_EQ(TestCluster::get().installCrdsOnce(), "") << "the CRDs could not be installed";
    directory_ = fs::temp_directory_path() / ("ipu-operator-test-" + ns());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    startVipuSim(vipuPod(), vipuSimArgs(), sim_, vipu_);
    if (HasFatalFailure()) return;
    if (startsOperatorInSetUp()) startOperator();
  }

  // A vipu-sim of `pod` (also the controller's name) in its own directory under the test's, and a client.
  void startVipuSim(const std::string& pod, const std::vector<std::string>& extraArgs,
                    std::unique_ptr<vipu::testing::SimProcess>& sim,
                    std::unique_ptr<vipu::VipuClient>& client) {
    const std::string directory = directory_ + "/" + pod;
    fs::create_directories(directory);
    std::vector<std::string> args{"--pod", pod, "--state-file", directory + "/state.json"};
    args.insert(args.end(), extraArgs.begin(), extraArgs.end());
    std::string failure;
    sim = vipu::testing::SimProcess::start(directory, args, 0, failure);
    ASSERT_NE(sim, nullptr) << failure;
    vipu::ClientOptions options;
    options.name = pod;
    options.endpoint = sim->endpoint();
    auto created = vipu::VipuClient::create(options);
    ASSERT_TRUE(created.ok()) << created.error().message;
    client = std::move(*created);
  }

  // The POD preset of vipu-sim, also its controller's name (the simulated nodes' ipu-pod label).
  virtual std::string vipuPod() const { return "pod64"; }

  // vipu-sim's flags besides its POD and state file (tests that inject faults add theirs).
  virtual std::vector<std::string> vipuSimArgs() const { return {"--activation-delay-ms", "200"}; }

  // Tests that start the operator with their own flags say so: stopping a process that has only just been
  // exec'd would be a race with its signal handling.
  virtual bool startsOperatorInSetUp() const { return true; }

  // Leader election on, in the test's namespace: the operator runs as it would in a cluster. `crashAt`: a
  // failpoint (common/failpoint.h) that SIGKILLs the process when reached; such runs skip leader election,
  // so that the successor need not wait out a lease.
  void startOperator(const std::vector<std::string>& extraArgs = {}, const std::string& crashAt = "") {
    operatorLog_ += operator_ ? operator_->stderrText() : "";
    operator_ = std::make_unique<BackgroundProcess>(operatorArgv(extraArgs, crashAt));
  }

  // The command line startOperator() runs (for tests that run several replicas).
  std::vector<std::string> operatorArgv(const std::vector<std::string>& extraArgs = {},
                                        const std::string& crashAt = "") const {
    std::vector<std::string> argv;
    if (!crashAt.empty()) argv = {"/usr/bin/env", "IPU_OPERATOR_CRASH_AT=" + crashAt};
    for (const std::string& arg :
         {operatorBinary_, std::string("--kubeconfig"), cluster().kubeconfig(), std::string("--log-level"),
          std::string("debug"), std::string("--metrics-bind-address"), std::string("0"),
          std::string("--health-probe-bind-address"), std::string("0")}) {
      argv.push_back(arg);
    }
    if (!hasFlag(extraArgs, "--vipu-controller")) {
      argv.insert(argv.end(), {"--vipu-controller", vipuPod() + "=" + sim_->endpoint()});
    }
    if (crashAt.empty()) {
      argv.insert(argv.end(), {"--leader-election-namespace", ns()});
    } else {
      argv.push_back("--leader-elect=false");
    }
    argv.insert(argv.end(), extraArgs.begin(), extraArgs.end());
    return argv;
  }

  static bool hasFlag(const std::vector<std::string>& args, const std::string& flag) {
    return std::find(args.begin(), args.end(), flag) != args.end();
  }

  // What every operator process of the test wrote to stderr so far.
  std::string operatorLog() const { return operatorLog_ + (operator_ ? operator_->stderrText() : ""); }

  std::string phaseOf(const std::string& job) { return jobStatus(job).value("phase", ""); }

  // Waits until the job's phase is `phase`; on failure the message shows the status.
  ::testing::AssertionResult reachesPhase(const std::string& job, const std::string& phase,
                                          std::chrono::seconds timeout = std::chrono::seconds(90)) {
    if (eventually([&] { return phaseOf(job) == phase; }, timeout)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << job << " never reached " << phase << "; status: " << jobStatus(job).dump();
  }

  // Waits until the job's lastMessage contains `text`; on failure the message shows the status.
  ::testing::AssertionResult saysInLastMessage(const std::string& job, const std::string& text,
                                               std::chrono::seconds timeout = std::chrono::seconds(60)) {
    const auto says = [&] { return jobStatus(job).value("lastMessage", "").find(text) != std::string::npos; };
    if (eventually(says, timeout)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << job << " never said \"" << text << "\"; status: " << jobStatus(job).dump();
  }

  Json podsOf(const std::string& job) {
    const auto listed = kubectl({"get", "pods", "-l", "graphcore.ai/ipujob=" + job, "-o", "json"});
    return listed.ok() ? Json::parse(listed.out)["items"] : Json::array();
  }

  std::vector<vipu::Partition> partitions() {
    auto listed = vipu_->listPartitions("");
    return listed ? *listed : std::vector<vipu::Partition>{};
  }

  // The job's Events, oldest first.
  Json eventsOf(const std::string& job) {
    const auto listed =
        kubectl({"get", "events", "--field-selector", "involvedObject.name=" + job, "-o", "json"});
    EXPECT_TRUE(listed.ok()) << listed.describe();
    return listed.ok() ? Json::parse(listed.out)["items"] : Json::array();
  }

  // The reasons of the job's Events, oldest first.
  std::vector<std::string> eventReasons(const std::string& job) {
    std::vector<std::string> reasons;
    for (const Json& event : eventsOf(job)) reasons.push_back(event.value("reason", ""));
    return reasons;
  }

  // "<type> <message>" of the job's first Event with `reason` ("" while there is none).
  std::string eventWithReason(const std::string& job, const std::string& reason) {
    for (const Json& event : eventsOf(job)) {
      if (event.value("reason", "") == reason)
        return event.value("type", "") + " " + event.value("message", "");
    }
    return "";
  }

  void TearDown() override {
    // Jobs go while the operator runs, so their finalizers are honoured and the namespace can be deleted.
    if (operator_) {
      kubectl({"delete", "ipujobs", "--all", "--timeout", "60s"});
      const int status = operator_->stop();
      EXPECT_EQ(status, 0) << "ipu-operator exit status";
      if (HasFailure() || std::getenv("IPU_TEST_VERBOSE"))
        std::cerr << "---- ipu-operator log ----\n" << operatorLog_ << operator_->stderrText();
    }
    if (sim_) {
      if (HasFailure()) std::cerr << "---- vipu-sim log ----\n" << sim_->log();
      sim_->stop();
    }
    fs::remove_all(directory_);
    ClusterTest::TearDown();
  }

  // Creates the manifest in the test's namespace (or `inNamespace`) and returns the created IPUJob's name
  // (they use generateName).
  std::string createJob(const std::string& manifest, const std::string& inNamespace = "") {
    auto created =
        cluster().kubectl({"-n", inNamespace.empty() ? ns() : inNamespace, "create", "-f", "-", "-o", "name"},
                          RunOptions{.input = manifest});
    EXPECT_TRUE(created.ok()) << created.describe();
    std::string name = created.out.substr(created.out.find('/') + 1);
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    return name;
  }

  Json jobStatus(const std::string& job) const {
    const Json object = getJson("ipujob", job);
    return object.is_object() ? object.value("status", Json::object()) : Json::object();
  }

  // The partition id an operator without --partition-id-prefix derives for `instance` of job `name` in the
  // test's namespace: its prefix comes from this cluster's kube-system namespace uid.
  std::string defaultPartitionId(const std::string& name, std::uint32_t instance = 0) const {
    const Json kubeSystem =
        Json::parse(cluster().kubectl({"get", "namespace", "kube-system", "-o", "json"}).out);
    const std::string prefix = cmd::prefixForClusterUid(kubeSystem["metadata"].value("uid", ""));
    return controllers::partitionIdFor(prefix, ns(), name, instance);
  }

  std::optional<vipu::Partition> partition(const std::string& id) {
    auto partitions = vipu_->listPartitions("");
    if (!partitions) return std::nullopt;
    for (const auto& partition : *partitions) {
      if (partition.id == id) return partition;
    }
    return std::nullopt;
  }

  std::string directory_;
  std::unique_ptr<vipu::testing::SimProcess> sim_;
  std::unique_ptr<vipu::VipuClient> vipu_;
  std::unique_ptr<BackgroundProcess> operator_;
  std::string operatorLog_;                           // of processes the test replaced
  std::string operatorBinary_ = IPU_OPERATOR_BINARY;  // what startOperator() starts
};

}  // namespace ipu::testing
