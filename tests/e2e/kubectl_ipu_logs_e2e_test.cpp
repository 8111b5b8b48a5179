// `kubectl ipu logs` on the real node (simulated nodes have no logs): a job of two workers (two instances)
// whose first attempt fails and whose second succeeds, followed from before its pods exist. Both attempts'
// lines arrive, each prefixed by attempt, instance and worker, and the command ends when the job does.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <gmock/gmock.h>

#include "operator_on_real_node.h"

namespace ipu::testing {
namespace {

class KubectlIpuLogsTest : public OperatorOnRealNodeTest {
 protected:
  std::vector<std::string> pluginCommand(std::vector<std::string> args) const {
    args.insert(args.begin(), {IPU_KUBECTL_IPU_BINARY, "logs", "-n", ns()});
    return args;
  }
  std::vector<std::string> kubeconfigEnv() const { return {"KUBECONFIG=" + cluster().kubeconfig()}; }

  static std::vector<std::string> linesOf(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  // The lines of the user's program (the runtime's own lines about how it ended left out).
  static std::vector<std::string> programLines(const std::vector<std::string>& lines) {
    std::vector<std::string> kept;
    std::copy_if(lines.begin(), lines.end(), std::back_inserter(kept),
                 [](const std::string& line) { return line.find("ipu-runtime exec:") == std::string::npos; });
    return kept;
  }
};

TEST_F(KubectlIpuLogsTest, FollowsEveryWorkerAcrossARestartAndEndsWithTheJob) {
  // Each worker says who it is and in which attempt (the pod's attempt label, through the downward API);
  // attempt 0 fails, attempt 1 succeeds.
  Json job = Json::parse(
      jobRunning("logged",
                 Json::array({"sh", "-c",
                              "echo \"hello from worker $IPUJOB_WORKER_INDEX in attempt $ATTEMPT\"; "
                              "echo \"bye from worker $IPUJOB_WORKER_INDEX\"; [ \"$ATTEMPT\" != 0 ]"}),
                 R"({"jobInstances": 2, "restartPolicy": {"type": "OnFailure", "backOffLimit": 2}})"));
  job["spec"]["workers"]["template"]["spec"]["containers"][0]["env"] = Json::array(
      {{{"name", "ATTEMPT"},
        {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.labels['graphcore.ai/attempt']"}}}}}}});
  // Followed from the moment the job exists, before any of its pods runs.
  ASSERT_EQ(createJob(job.dump()), "logged");
  BackgroundProcess follow(pluginCommand({"logged", "-f"}), kubeconfigEnv());

  std::vector<std::string> lines;
  std::optional<int> exited;
  const auto deadline = std::chrono::steady_clock::now() + 180s;
  while (!exited && std::chrono::steady_clock::now() < deadline) {
    while (auto line = follow.readLine(200ms)) lines.push_back(*line);
    exited = follow.wait(0ms);
  }
  while (auto line = follow.readLine(0ms)) lines.push_back(*line);
  ASSERT_TRUE(exited) << "kubectl ipu logs -f did not end with the job:\n"
                      << ::testing::PrintToString(lines) << follow.stderrText() << jobStatus("logged").dump();
  EXPECT_EQ(*exited, 0) << follow.stderrText();
  std::cout << "$ kubectl ipu logs logged -f\n";
  for (const std::string& line : lines) std::cout << line << '\n';
  EXPECT_EQ(phaseOf("logged"), "Succeeded");
  EXPECT_EQ(jobStatus("logged").value("restartCount", 0), 1);
  EXPECT_THAT(
      programLines(lines),
      ::testing::UnorderedElementsAre(
          "--- attempt 0", "a0 i0 w0 | hello from worker 0 in attempt 0", "a0 i0 w0 | bye from worker 0",
          "a0 i1 w1 | hello from worker 1 in attempt 0", "a0 i1 w1 | bye from worker 1", "--- attempt 1",
          "a1 i0 w0 | hello from worker 0 in attempt 1", "a1 i0 w0 | bye from worker 0",
          "a1 i1 w1 | hello from worker 1 in attempt 1", "a1 i1 w1 | bye from worker 1",
          "--- the job ended: Succeeded"))
      << follow.stderrText();
  EXPECT_EQ(lines.back(), "--- the job ended: Succeeded");
  // Each worker's own lines keep their order, and attempt 1 is announced before its lines.
  const auto at = [&](const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) - lines.begin();
  };
  EXPECT_LT(at("a1 i0 w0 | hello from worker 0 in attempt 1"), at("a1 i0 w0 | bye from worker 0"));
  EXPECT_LT(at("--- attempt 1"), at("a1 i1 w1 | hello from worker 1 in attempt 1"));

  // Without -f: the latest attempt's workers, merged; --instance picks one instance.
  const RunResult now = run(pluginCommand({"logged"}), RunOptions{.extraEnv = kubeconfigEnv()});
  ASSERT_TRUE(now.ok()) << now.describe();
  EXPECT_THAT(programLines(linesOf(now.out)),
              ::testing::UnorderedElementsAre(
                  "a1 i0 w0 | hello from worker 0 in attempt 1", "a1 i0 w0 | bye from worker 0",
                  "a1 i1 w1 | hello from worker 1 in attempt 1", "a1 i1 w1 | bye from worker 1"));
  const RunResult one =
      run(pluginCommand({"logged", "--instance", "1"}), RunOptions{.extraEnv = kubeconfigEnv()});
  ASSERT_TRUE(one.ok()) << one.describe();
  EXPECT_THAT(
      programLines(linesOf(one.out)),
      ::testing::ElementsAre("a1 i1 w1 | hello from worker 1 in attempt 1", "a1 i1 w1 | bye from worker 1"));
  // A job that does not exist: exit 1, saying so.
  const RunResult missing = run(pluginCommand({"nosuchjob"}), RunOptions{.extraEnv = kubeconfigEnv()});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.err.find("nosuchjob"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace ipu::testing
