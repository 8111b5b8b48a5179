// Interactive jobs (spec.interactive) with a real Jupyter Notebook server (Debian's jupyter-notebook in the
// debian-notebook image) on the real node: reached with `kubectl port-forward` as the user guide says, the
// session's end in status.interactive.expiresAt, moved later when the ttl is raised without touching the
// worker, then the job Succeeded with InteractiveTimeExpired, its worker stopped and its partition released.
#include <string>

#include <gmock/gmock.h>

#include "common/time_format.h"
#include "operator_on_real_node.h"
#include "subprocess.h"

namespace ipu::testing {
namespace {

// The notebook as a user runs it in a worker: every address, a fixed port, no token (the port is reached
// only through the API server's port-forward, which needs the user's own rights on the pod).
const Json kNotebook = Json::array({"jupyter-notebook", "--no-browser", "--allow-root", "--ip=0.0.0.0",
                                    "--port=8888", "--NotebookApp.port_retries=0", "--NotebookApp.token="});

std::string notebookJob(const std::string& name, int ttl) {
  Json job =
      Json::parse(jobRunning(name, kNotebook, R"({"interactive": {"ttl": )" + std::to_string(ttl) + "}}",
                             TestCluster::get().value("IPU_CLUSTER_IMAGE_DEBIAN_NOTEBOOK")));
  job["spec"]["workers"]["template"]["spec"]["containers"][0]["env"] =
      Json::array({{{"name", "HOME"}, {"value", "/tmp"}}});
  return job.dump();
}

class InteractiveJobTest : public OperatorOnRealNodeTest {
 protected:
  std::string podUid(const std::string& name) {
    const Json pod = getJson("pod", name);
    return pod.is_object() ? pod["metadata"].value("uid", "") : "";
  }
};

long secondsBetween(const std::string& from, const std::string& to) {
  const auto start = parseTime(from);
  const auto end = parseTime(to);
  if (!start || !end) return -1;
  return static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(*end - *start).count());
}

TEST_F(InteractiveJobTest, ANotebookAnswersThroughPortForwardUntilItsRaisedTtlEnds) {
  const std::string job = createJob(notebookJob("notebook", 60));
  ASSERT_TRUE(reachesPhase(job, "Running", 180s));
  const Json session = jobStatus(job)["interactive"];
  ASSERT_TRUE(session.is_object()) << jobStatus(job).dump();
  const std::string runningSince = session.value("runningSince", "");
  EXPECT_EQ(session.value("ttlSeconds", 0), 60);
  EXPECT_EQ(secondsBetween(runningSince, session.value("expiresAt", "")), 60) << session.dump();
  const auto wide = kubectl({"get", "ipujob", job, "-o", "wide"});
  EXPECT_THAT(wide.out, ::testing::HasSubstr(session.value("expiresAt", "?"))) << "the EXPIRES column";
  const std::string worker = job + "-worker-0";
  const std::string workerUid = podUid(worker);
  // As a user does: wait for the notebook to say it serves (kubectl port-forward ends at the first
  // connection the pod refuses), then forward its port.
  EXPECT_TRUE(eventually(
      [&] {
        return kubectl({"logs", worker, "-c", "train"}).out.find(" is running at:") != std::string::npos;
      },
      60s))
      << kubectl({"logs", worker, "-c", "train"}).out;

  // kubectl port-forward pod/<job>-worker-0 :8888, then the notebook's API through it.
  BackgroundProcess forward(
      TestCluster::get().kubectlCommand({"-n", ns(), "port-forward", "pod/" + worker, ":8888"}));
  const auto announced = forward.readLine(30s);
  ASSERT_TRUE(announced) << forward.stderrText();
  const std::string prefix = "Forwarding from 127.0.0.1:";
  ASSERT_EQ(announced->rfind(prefix, 0), 0u) << *announced;
  const std::string localPort =
      announced->substr(prefix.size(), announced->find(' ', prefix.size()) - prefix.size());
  RunResult answer;
  EXPECT_TRUE(eventually(
      [&] {
        answer = run({"curl", "-s", "-m", "5", "http://127.0.0.1:" + localPort + "/api"});
        return answer.ok() && answer.out.find("\"version\"") != std::string::npos;
      },
      60s))
      << answer.describe() << answer.out << forward.stderrText()
      << kubectl({"logs", worker, "-c", "train"}).out;
  forward.stop();

  // The ttl raised while it runs: the end moves, the worker stays the same pod.
  ASSERT_TRUE(
      kubectl({"patch", "ipujob", job, "--type", "merge", "-p", R"({"spec": {"interactive": {"ttl": 90}}})"})
          .ok());
  std::string expiresAt;
  EXPECT_TRUE(eventually(
      [&] {
        expiresAt = jobStatus(job).value("interactive", Json::object()).value("expiresAt", "");
        return secondsBetween(runningSince, expiresAt) == 90;
      },
      30s))
      << jobStatus(job).dump();
  EXPECT_EQ(jobStatus(job).value("interactive", Json::object()).value("ttlSeconds", 0), 90);
  EXPECT_EQ(jobStatus(job).value("phase", ""), "Running");
  EXPECT_EQ(podUid(worker), workerUid) << "the worker was replaced";

  ASSERT_TRUE(reachesPhase(job, "Succeeded", 150s));
  const Json status = jobStatus(job);
  EXPECT_THAT(status.value("lastMessage", ""),
              ::testing::HasSubstr("The interactive session's ttl of 90 s ended at"));
  EXPECT_GE(secondsBetween(expiresAt, status.value("completionTime", "")), 0) << "not before the new expiry";
  bool expired = false;
  for (const Json& condition : status["conditions"])
    expired = expired || condition.value("reason", "") == "InteractiveTimeExpired";
  EXPECT_TRUE(expired) << status.dump();
  EXPECT_EQ(status.value("restartCount", 0), 0);
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s)) << "partition not released";
  EXPECT_TRUE(eventually([&] { return getJson("pod", worker).is_null(); }, 60s)) << "worker not stopped";
}

}  // namespace
}  // namespace ipu::testing
