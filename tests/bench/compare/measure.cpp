#include "measure.h"

#include <thread>

#include "audit_counts.h"
#include "kube/rest_client.h"

namespace ipu::bench {

namespace {

using nlohmann::json;

double since(Clock::time_point start, Clock::time_point at) {
  return std::chrono::duration<double>(at - start).count();
}

// Simulated nodes for every pod of the scenario (a launcher per job included) at kwok's 110 pods a node,
// with room to spare: the same for every contender.
int nodesFor(const Scenario& scenario) {
  return std::max(4, scenario.jobs * (scenario.workersPerJob + 1) / 100 + 2);
}

// The API server's first write of a kind it has just begun to serve takes seconds (its storage and the CRD's
// validation rules are set up then): one job created and deleted before the contender starts, in a
// namespace of its own, so that no contender's clock includes it.
void warmUp(kube::RestClient& client, const Contender& contender) {
  const std::string ns = "warm-up";
  if (auto created = client.create(kube::ResourceRef::namespaces(), "", json{{"metadata", {{"name", ns}}}});
      !created)
    throw std::runtime_error("create namespace " + ns + ": " + created.error().toString());
  if (auto job = client.create(contender.jobResource(), ns, contender.jobManifest("warm-up", 1)); !job)
    throw std::runtime_error("create the warm-up job: " + job.error().toString());
  // No finalizer (nothing runs yet): the job is gone when the delete returns; its namespace stays, empty.
  if (auto removed = client.remove(contender.jobResource(), ns, "warm-up"); !removed)
    throw std::runtime_error("delete the warm-up job: " + removed.error().toString());
}

AuditCounts contenderRequests(const BenchCluster& cluster, const Contender& contender) {
  return countRequestsInFile(cluster.auditLog(), [&](const std::string& agent) {
    return contender.owns(agent) ? std::string("contender") : std::string();
  });
}

std::int64_t requestsBesidesLeases(const BenchCluster& cluster, const Contender& contender) {
  const AuditCounts counts = contenderRequests(cluster, contender);
  const auto mine = counts.clients.find("contender");
  if (mine == counts.clients.end()) return 0;
  std::int64_t sent = 0;
  for (const auto& [what, count] : mine->second.byVerbResource) {
    if (!what.ends_with(" leases")) sent += count;
  }
  return sent;
}

// The steady-state figures of a contender whose jobs all run (Scenario::steadyState).
void measureSteadyState(json& result, Contender& contender, const BenchCluster& cluster,
                        const std::string& ns) {
  const json before = contender.processStats();
  if (!before.contains("cpu_seconds")) return;  // no process of its own
  std::this_thread::sleep_for(std::chrono::minutes(1));
  const json idle = contender.processStats();
  result["idle_cpu_seconds_per_minute"] =
      idle["cpu_seconds"].get<double>() - before["cpu_seconds"].get<double>();
  result["rss_mb"] = idle["rss_mb"];
  if (idle.contains("rss_anon_mb")) result["rss_anon_mb"] = idle["rss_anon_mb"];
  if (const auto ready = contender.restart(cluster, ns)) {
    result["ready_after_restart_seconds"] = *ready;
    // Against the seconds: how much of the wait was the process's own work (parsing, caching).
    if (const json now = contender.processStats(); now.contains("cpu_seconds"))
      result["cpu_seconds_until_ready"] = now["cpu_seconds"];
    std::this_thread::sleep_for(std::chrono::seconds(10));
    result["rss_after_restart_mb"] = contender.processStats()["rss_mb"];
  }
}

}  // namespace

json measure(Contender& contender, const Scenario& scenario, const std::string& clusterDir,
             std::chrono::seconds timeout) {
  BenchCluster cluster(clusterDir, nodesFor(scenario));
  const std::string ns = "bench";
  cluster.installCrd(std::string(IPU_SOURCE_DIR) + "/crds/", "ipujobs.graphcore.ai");
  cluster.kubectl({"create", "namespace", ns});
  contender.prepare(cluster);
  auto client = cluster.client({.qps = 1e6, .burst = 1000000, .userAgent = "ipu-bench"});
  warmUp(*client, contender);
  contender.start(cluster, ns);
  PodTimeline timeline(*client, ns, [&](const json& pod) { return contender.roleOf(pod); });

  const int workers = scenario.jobs * scenario.workersPerJob;
  const auto start = Clock::now();
  for (int i = 0; i < scenario.jobs; ++i) {
    const std::string name = "job-" + std::to_string(i);
    auto created =
        client->create(contender.jobResource(), ns, contender.jobManifest(name, scenario.workersPerJob));
    if (!created) throw std::runtime_error("create " + name + ": " + created.error().toString());
    contender.jobCreated(*created);
  }
  const double createSeconds = since(start, Clock::now());

  json result = {{"scenario", scenario.name},
                 {"contender", contender.name()},
                 {"jobs", scenario.jobs},
                 {"workers_per_job", scenario.workersPerJob},
                 {"create_seconds", createSeconds}};
  RoleProgress worker, launcher;
  bool launchersDone = false;
  const auto deadline = start + timeout;
  for (;;) {
    worker = timeline.progress(PodRole::kWorker);
    launcher = timeline.progress(PodRole::kLauncher);
    // A contender that makes launchers makes one per job; none that makes none.
    launchersDone = launcher.exist == 0 || launcher.running == scenario.jobs;
    if ((worker.running == workers && launchersDone) || Clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const bool complete = worker.running == workers && launchersDone;
  result["complete"] = complete;
  result["worker_pods"] = worker.exist;
  result["worker_pods_running"] = worker.running;
  result["launcher_pods"] = launcher.exist;
  if (!complete)
    result["error"] = std::to_string(worker.running) + " of " + std::to_string(workers) +
                      " worker pods Running after " + std::to_string(timeout.count()) +
                      " s (watch: " + timeline.error() + ")";
  if (worker.exist == workers) result["workers_created_seconds"] = since(start, worker.lastSeen);
  if (complete) result["workers_running_seconds"] = since(start, worker.lastRunning);
  if (complete && launcher.exist > 0)
    result["launchers_running_seconds"] = since(start, launcher.lastRunning);

  // The writes that follow Running (status) count too: until the contender has sent nothing but Lease
  // renewals for 5 s, at most 2 minutes.
  for (std::int64_t last = -1, i = 0; i < 24; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    const std::int64_t sent = requestsBesidesLeases(cluster, contender);
    if (sent == last) break;
    last = sent;
  }
  result["process"] = contender.processStats();
  if (result["process"].contains("rss_mb")) result["rss_mb"] = result["process"]["rss_mb"];
  if (scenario.steadyState && complete) measureSteadyState(result, contender, cluster, ns);
  contender.stop();
  const AuditCounts counts = contenderRequests(cluster, contender);
  const auto mine = counts.clients.find("contender");
  const std::int64_t requests = mine == counts.clients.end() ? 0 : mine->second.total;
  result["requests"] = requests;
  result["requests_per_job"] = static_cast<double>(requests) / scenario.jobs;
  result["requests_by_verb_resource"] =
      mine == counts.clients.end() ? json::object() : json(mine->second.byVerbResource);
  result["audit_malformed_lines"] = counts.malformedLines;
  return result;
}

}  // namespace ipu::bench
