#include "scale_curve.h"

#include <thread>

#include "object_timeline.h"
#include "run_steps.h"
#include "scale_curve_report.h"

namespace ipu::bench {

namespace {

using nlohmann::json;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double cpuOf(const Contender& contender) {
  return contender.processStats().value("cpu_seconds", 0.0);
}

// Until the contender's reconcile passes stop growing for a second (two minutes at most): a restarted
// operator passes over every job once, which is not the next point's fill.
void settle(const Contender& contender) {
  auto last = contender.reconcilePasses();
  for (int i = 0; i < 120; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const auto now = contender.reconcilePasses();
    if (now == last) return;
    last = now;
  }
}

}  // namespace

json measureScaleCurve(Contender& contender, const CurveScenario& scenario, const std::string& clusterDir,
                       std::chrono::seconds timeoutPerPoint) {
  const int lastPoint = scenario.points.empty() ? 0 : scenario.points.back();
  BenchRun run(contender, clusterDir, lastPoint * scenario.workersPerJob);
  const BenchCluster& cluster = run.cluster;
  const ObjectTimeline& pods = *run.pods;
  const ObjectTimeline& jobsTimeline = *run.jobs;

  json curve = {{"scenario", scenario.name},
                {"contender", contender.name()},
                {"workers_per_job", scenario.workersPerJob},
                {"points", json::array()},
                {"complete", false}};
  AuditCounts requestsBefore = contenderRequests(cluster, contender);
  int jobs = 0;
  for (const int point : scenario.points) {
    const int added = point - jobs;
    const double cpuBefore = cpuOf(contender);
    const double passesBefore = contender.reconcilePasses().value_or(0);
    const json serverBefore = serverCpuSeconds(cluster);
    const auto start = Clock::now();
    createJobs(run, contender, jobs, point, scenario.workersPerJob);
    jobs = point;
    const int workers = point * scenario.workersPerJob;
    const auto deadline = start + timeoutPerPoint;
    bool done = false;
    while (!(done = pods.progress(PodRole::kWorker).running == workers &&
                    jobsTimeline.progress(PodRole::kOther).running == point) &&
           Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!done) {
      curve["error"] = "at " + std::to_string(point) +
                       " jobs: " + std::to_string(pods.progress(PodRole::kWorker).running) + " of " +
                       std::to_string(workers) + " worker pods and " +
                       std::to_string(jobsTimeline.progress(PodRole::kOther).running) +
                       " jobs Running after " + std::to_string(timeoutPerPoint.count()) +
                       " s (watches: " + pods.error() + " " + jobsTimeline.error() + ")";
      break;
    }
    json figures = {{"jobs", point}, {"fill_seconds", secondsSince(start)}};
    const AuditCounts requestsNow = contenderRequests(cluster, contender);
    const json requests = requestFigures(requestsNow, added, &requestsBefore);
    figures["requests_per_job"] = requests["requests_per_job"];
    figures["requests_by_verb_resource"] = requests["requests_by_verb_resource"];
    requestsBefore = requestsNow;
    const json process = contender.processStats();
    figures["fill_cpu_seconds"] = process.value("cpu_seconds", 0.0) - cpuBefore;
    figures["peak_rss_mb"] = process["peak_rss_mb"];
    if (const auto passes = contender.reconcilePasses()) {
      const double fillPasses = *passes - passesBefore;
      figures["passes_per_job"] = fillPasses / added;
      if (fillPasses > 0)
        figures["cpu_ms_per_pass"] = 1000 * figures["fill_cpu_seconds"].get<double>() / fillPasses;
    }
    const json serverAfter = serverCpuSeconds(cluster);
    figures["apiserver_cpu_seconds"] =
        serverAfter["kube-apiserver"].get<double>() - serverBefore["kube-apiserver"].get<double>();
    figures["etcd_cpu_seconds"] = serverAfter["etcd"].get<double>() - serverBefore["etcd"].get<double>();

    const double idleFrom = cpuOf(contender);
    std::this_thread::sleep_for(std::chrono::minutes(1));
    const json idle = contender.processStats();
    figures["idle_cpu_seconds_per_minute"] = idle.value("cpu_seconds", 0.0) - idleFrom;
    figures["rss_mb"] = idle["rss_mb"];
    figures["rss_kb_per_job"] = idle.value("rss_mb", 0.0) * 1024 / point;
    figures["restart_list_floor_seconds"] = listFloorSeconds(run, contender);  // idle, before the restart
    if (const auto restarted = contender.restart(cluster, run.ns)) {
      figures["ready_after_restart_seconds"] = restarted->seconds - restarted->leaseWaitSeconds;
      figures["cpu_seconds_until_ready"] = cpuOf(contender);
      std::this_thread::sleep_for(std::chrono::seconds(10));
      figures["rss_after_restart_mb"] = contender.processStats()["rss_mb"];
      settle(contender);
    }
    curve["points"].push_back(std::move(figures));
  }
  curve["complete"] = !curve.contains("error") && jobs == lastPoint;
  curve["objects_in_cluster"] = {{"jobs", jobs}, {"pods", pods.progress(PodRole::kWorker).exist}};
  curve["growth"] = growthOf(curve);
  contender.stop();
  return curve;
}

}  // namespace ipu::bench
