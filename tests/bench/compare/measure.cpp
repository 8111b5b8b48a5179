#include "measure.h"

#include <algorithm>
#include <thread>

#include "kube/rest_client.h"
#include "run_steps.h"

namespace ipu::bench {

namespace {

using nlohmann::json;

double since(Clock::time_point start, Clock::time_point at) {
  return std::chrono::duration<double>(at - start).count();
}

// The steady-state figures of a contender whose jobs all run (Scenario::steadyState): a minute with nothing
// to do (its CPU seconds, its RSS after it), two more (its RSS once each runtime has given memory back by
// itself: Go forces a collection every 2 minutes and its scavenger returns the pages; ipu-operator trims
// the heap every 10 s), then a restart.
void measureSteadyState(json& result, Contender& contender, const BenchRun& run) {
  const BenchCluster& cluster = run.cluster;
  const std::string& ns = run.ns;
  const json before = contender.processStats();
  if (!before.contains("cpu_seconds")) return;  // no process of its own
  result["peak_rss_mb"] = before["peak_rss_mb"];
  std::this_thread::sleep_for(std::chrono::minutes(1));
  const json idle = contender.processStats();
  result["idle_cpu_seconds_per_minute"] =
      idle["cpu_seconds"].get<double>() - before["cpu_seconds"].get<double>();
  result["rss_mb"] = idle["rss_mb"];
  if (idle.contains("rss_anon_mb")) result["rss_anon_mb"] = idle["rss_anon_mb"];
  std::this_thread::sleep_for(std::chrono::minutes(2));
  result["rss_after_release_mb"] = contender.processStats()["rss_mb"];
  // While the contender is idle, so that neither slows the other.
  result["restart_list_floor_seconds"] = listFloorSeconds(run, contender);
  if (const auto restarted = contender.restart(cluster, ns)) {
    // From the moment the old Lease could be taken: a successor waiting out a Lease its predecessor kept
    // is the predecessor's cost (reported apart), not the work of getting ready.
    result["ready_after_restart_seconds"] = restarted->seconds - restarted->leaseWaitSeconds;
    result["restart_lease_wait_seconds"] = restarted->leaseWaitSeconds;
    // Against the seconds: how much of the wait was the process's own work (parsing, caching).
    if (const json now = contender.processStats(); now.contains("cpu_seconds"))
      result["cpu_seconds_until_ready"] = now["cpu_seconds"];
    std::this_thread::sleep_for(std::chrono::seconds(10));
    result["rss_after_restart_mb"] = contender.processStats()["rss_mb"];
  }
}

// The two lower bounds of "all worker pods exist" for a client of `qps` and `burst` (a token bucket sends
// at most burst + qps·t requests in t seconds): the pods alone, (N·W − burst)/QPS, and with the k writes
// per job that must precede its pods, (N·W + k·N − burst)/QPS.
json boundsOf(const Scenario& scenario) {
  const double pods = static_cast<double>(scenario.jobs) * scenario.workersPerJob;
  const double before = static_cast<double>(scenario.jobs) * scenario.writesBeforePods;
  const auto bound = [&](double requests) {
    return std::max(0.0, (requests - scenario.boundBurst) / scenario.boundQps);
  };
  return {{"qps", scenario.boundQps},
          {"burst", scenario.boundBurst},
          {"writes_before_pods", scenario.writesBeforePods},
          {"pods_only_seconds", bound(pods)},
          {"must_precede_seconds", bound(pods + before)}};
}

}  // namespace

json measure(Contender& contender, const Scenario& scenario, const std::string& clusterDir,
             std::chrono::seconds timeout) {
  BenchRun run(contender, clusterDir, scenario.jobs * (scenario.workersPerJob + 1));
  const BenchCluster& cluster = run.cluster;
  const ObjectTimeline& pods = *run.pods;
  const ObjectTimeline& jobsTimeline = *run.jobs;

  const json serverCpuBefore = serverCpuSeconds(cluster);
  const int workers = scenario.jobs * scenario.workersPerJob;
  const auto start = Clock::now();
  createJobs(run, contender, 0, scenario.jobs, scenario.workersPerJob);
  const double createSeconds = since(start, Clock::now());

  json result = {{"scenario", scenario.name},
                 {"contender", contender.name()},
                 {"jobs", scenario.jobs},
                 {"workers_per_job", scenario.workersPerJob},
                 {"create_seconds", createSeconds}};
  if (scenario.boundQps > 0) result["bounds"] = boundsOf(scenario);
  // The run ends when every job's status says it runs (its pods, and launchers if it makes them, run by
  // then).
  RoleProgress worker, launcher, jobs;
  bool launchersDone = false;
  const auto deadline = start + timeout;
  for (;;) {
    worker = pods.progress(PodRole::kWorker);
    launcher = pods.progress(PodRole::kLauncher);
    jobs = jobsTimeline.progress(PodRole::kOther);
    // A contender that makes launchers makes one per job; none that makes none.
    launchersDone = launcher.exist == 0 || launcher.running == scenario.jobs;
    if ((worker.running == workers && launchersDone && jobs.running == scenario.jobs) ||
        Clock::now() > deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const bool complete = worker.running == workers && launchersDone && jobs.running == scenario.jobs;
  result["complete"] = complete;
  result["worker_pods"] = worker.exist;
  result["worker_pods_running"] = worker.running;
  result["launcher_pods"] = launcher.exist;
  result["jobs_running"] = jobs.running;
  if (!complete)
    result["error"] =
        std::to_string(worker.running) + " of " + std::to_string(workers) + " worker pods Running, " +
        std::to_string(jobs.running) + " of " + std::to_string(scenario.jobs) + " jobs saying so after " +
        std::to_string(timeout.count()) + " s (watches: " + pods.error() + " " + jobsTimeline.error() + ")";
  if (worker.exist == workers) result["workers_created_seconds"] = since(start, worker.lastSeen);
  if (worker.running == workers) result["workers_running_seconds"] = since(start, worker.lastRunning);
  if (complete && launcher.exist > 0)
    result["launchers_running_seconds"] = since(start, launcher.lastRunning);
  if (complete) result["jobs_running_seconds"] = since(start, jobs.lastRunning);
  const json serverCpuAfter = serverCpuSeconds(cluster);
  result["apiserver_cpu_seconds"] =
      serverCpuAfter["kube-apiserver"].get<double>() - serverCpuBefore["kube-apiserver"].get<double>();
  result["etcd_cpu_seconds"] = serverCpuAfter["etcd"].get<double>() - serverCpuBefore["etcd"].get<double>();

  // The requests until then, read at once so that the steady state's minutes add nothing to them.
  result.update(requestFigures(contenderRequests(cluster, contender), scenario.jobs));
  if (complete) {
    // How much of what its client may send it sent: under 1, something besides the client's limiter
    // (its own queue, its CPU, its requests' latency) set its pace.
    const ClientSettings& settings = contender.settings();
    const double budget = settings.burst + settings.qps * result["jobs_running_seconds"].get<double>();
    result["request_budget_share"] = static_cast<double>(result["requests"].get<std::int64_t>()) / budget;
  }
  result["process"] = contender.processStats();
  if (result["process"].contains("rss_mb")) result["rss_mb"] = result["process"]["rss_mb"];
  if (result["process"].contains("cpu_seconds")) result["cpu_seconds"] = result["process"]["cpu_seconds"];
  result["objects_in_cluster"] = {{"jobs", jobs.exist}, {"pods", worker.exist + launcher.exist}};
  if (scenario.steadyState && complete) measureSteadyState(result, contender, run);
  contender.stop();
  return result;
}

}  // namespace ipu::bench
