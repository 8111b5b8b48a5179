// Interactive jobs (spec.interactive) with a real Jupyter Notebook server (Debian's jupyter-notebook in the
// debian-notebook image) on the real node: reached with `kubectl port-forward` as the user guide says, the
// session's end in status.interactive.expiresAt, moved later when the ttl is raised without touching the
// worker, then the job Succeeded with InteractiveTimeExpired, its worker stopped and its partition released;
// and idle reclaim: a notebook nobody reaches ends early (InteractiveIdle), one reached through port-forward
// every 30 s and one with a process a kubectl exec left running are kept.
#include <chrono>
#include <sstream>
#include <string>
#include <thread>

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

std::string notebookJob(const std::string& name, int ttl, int idleSeconds = 0) {
  Json job = Json::parse(jobRunning(name, kNotebook,
                                    R"({"interactive": {"ttl": )" + std::to_string(ttl) +
                                        R"(, "idleSeconds": )" + std::to_string(idleSeconds) + "}}",
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

  // Waits for the notebook in `job`'s worker 0 to say it serves.
  ::testing::AssertionResult notebookServes(const std::string& job) {
    const std::string worker = job + "-worker-0";
    if (eventually(
            [&] {
              return kubectl({"logs", worker, "-c", "train"}).out.find(" is running at:") !=
                     std::string::npos;
            },
            90s))
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << kubectl({"logs", worker, "-c", "train"}).out;
  }

  // Whether the runtime of `job`'s worker 0 logged activity of this kind ("ipu-runtime: activity: ..."
  // lines).
  bool activityLogged(const std::string& job, const std::string& kind) {
    std::istringstream lines(kubectl({"logs", job + "-worker-0", "-c", "train"}).out);
    for (std::string line; std::getline(lines, line);) {
      if (line.find("ipu-runtime: activity:") != std::string::npos && line.find(kind) != std::string::npos)
        return true;
    }
    return false;
  }

  // kubectl port-forward pod/<worker> :8888; the local port it announced (empty on failure).
  std::string forwardPort(BackgroundProcess& forward) {
    const auto announced = forward.readLine(30s);
    const std::string prefix = "Forwarding from 127.0.0.1:";
    if (!announced || announced->rfind(prefix, 0) != 0) return "";
    return announced->substr(prefix.size(), announced->find(' ', prefix.size()) - prefix.size());
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
  const std::string localPort = forwardPort(forward);
  ASSERT_FALSE(localPort.empty()) << forward.stderrText();
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

// Idle reclaim (interactive.idleSeconds 40), three notebooks at once: one nobody reaches ends early; one
// whose API answers through kubectl port-forward every 30 s, and one where a process started by kubectl exec
// runs on after the exec ended, are still running well past the idle time.
TEST_F(InteractiveJobTest, IdleNotebooksAreReclaimedEarlyThoseInUseAreKept) {
  const std::string idle = createJob(notebookJob("idle", 600, 40));
  const std::string forwarded = createJob(notebookJob("forwarded", 600, 40));
  const std::string execd = createJob(notebookJob("execd", 600, 40));
  // As soon as it serves, the notebook's API through kubectl port-forward.
  ASSERT_TRUE(reachesPhase(forwarded, "Running", 180s));
  ASSERT_TRUE(notebookServes(forwarded));
  BackgroundProcess forward(TestCluster::get().kubectlCommand(
      {"-n", ns(), "port-forward", "pod/" + forwarded + "-worker-0", ":8888"}));
  const std::string localPort = forwardPort(forward);
  ASSERT_FALSE(localPort.empty()) << forward.stderrText();
  const auto started = std::chrono::steady_clock::now();
  // As soon as it serves, a process started by kubectl exec that outlives the exec (adopted by the runtime,
  // outside the notebook's processes).
  ASSERT_TRUE(reachesPhase(execd, "Running", 180s));
  ASSERT_TRUE(notebookServes(execd));
  const auto exec = kubectl({"exec", execd + "-worker-0", "-c", "train", "--", "sh", "-c",
                             "nohup sleep 100000 > /dev/null 2>&1 &"});
  ASSERT_TRUE(exec.ok()) << exec.describe();

  // The API through the port-forward every 30 s, for well over two idle times.
  int answered = 0;
  while (std::chrono::steady_clock::now() - started < 100s) {
    const auto answer = run({"curl", "-s", "-m", "5", "http://127.0.0.1:" + localPort + "/api"});
    if (answer.ok() && answer.out.find("\"version\"") != std::string::npos) ++answered;
    const auto next = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < next && std::chrono::steady_clock::now() - started < 100s) {
      std::this_thread::sleep_for(1s);
    }
  }
  EXPECT_GE(answered, 4) << forward.stderrText();

  // The notebook nobody reached ended after its idle time, its partition released.
  const Json status = jobStatus(idle);
  EXPECT_EQ(status.value("phase", ""), "Succeeded") << status.dump();
  EXPECT_THAT(status.value("lastMessage", ""), ::testing::HasSubstr("Reclaimed as idle")) << status.dump();
  bool reclaimed = false;
  for (const Json& condition : status.value("conditions", Json::array()))
    reclaimed = reclaimed || condition.value("reason", "") == "InteractiveIdle";
  EXPECT_TRUE(reclaimed) << status.dump();
  EXPECT_TRUE(eventually([&] { return partitions().size() == 2; }, 30s))
      << "the idle job's partition is held";
  // The two in use run on, the same pods.
  EXPECT_EQ(phaseOf(forwarded), "Running") << jobStatus(forwarded).dump();
  EXPECT_EQ(phaseOf(execd), "Running") << jobStatus(execd).dump();
  EXPECT_EQ(jobStatus(forwarded).value("restartCount", 0), 0);
  // Each for the reason it was meant to be kept, as its runtime logged it.
  EXPECT_TRUE(activityLogged(forwarded, "port-forward")) << kubectl({"logs", forwarded + "-worker-0"}).out;
  EXPECT_TRUE(activityLogged(execd, "a process kubectl exec started"))
      << kubectl({"logs", execd + "-worker-0"}).out;
  forward.stop();
}

}  // namespace
}  // namespace ipu::testing
