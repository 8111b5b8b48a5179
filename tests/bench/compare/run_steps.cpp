#include "run_steps.h"

#include <algorithm>
#include <stdexcept>

namespace ipu::bench {

using nlohmann::json;

int nodesFor(int pods) {
  return std::max(4, pods / 100 + 2);
}

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

BenchRun::BenchRun(Contender& contender, const std::string& clusterDir, int podCount)
    : cluster(clusterDir, nodesFor(podCount), contender.ipuPods()) {
  cluster.installCrd(std::string(IPU_SOURCE_DIR) + "/crds/", "ipujobs.graphcore.ai");
  cluster.kubectl({"create", "namespace", ns});
  contender.prepare(cluster);
  client = cluster.client({.qps = 1e6, .burst = 1000000, .userAgent = "ipu-bench"});
  warmUp(*client, contender);
  contender.start(cluster, ns);
  pods = ObjectTimeline::pods(*client, ns, [&contender](const json& pod) { return contender.roleOf(pod); });
  jobs = std::make_unique<ObjectTimeline>(
      *client, contender.jobResource(), ns, [](const json&) { return PodRole::kOther; },
      [&contender](const json& job) { return contender.jobRunning(job); });
}

void createJobs(BenchRun& run, Contender& contender, int from, int to, int workers) {
  for (int i = from; i < to; ++i) {
    const std::string name = "job-" + std::to_string(i);
    auto created = run.client->create(contender.jobResource(), run.ns, contender.jobManifest(name, workers));
    if (!created) throw std::runtime_error("create " + name + ": " + created.error().toString());
    contender.jobCreated(*created);
  }
}

AuditCounts contenderRequests(const BenchCluster& cluster, const Contender& contender) {
  return countRequestsInFile(cluster.auditLog(), [&](const std::string& agent) {
    return contender.owns(agent) ? std::string("contender") : std::string();
  });
}

json requestFigures(const AuditCounts& counts, int jobs, const AuditCounts* before) {
  std::int64_t total = 0, leases = 0, lists = 0, watches = 0;
  json byVerbResource = json::object();
  const auto earlier = [&](const std::string& what) -> std::int64_t {
    if (before == nullptr) return 0;
    const auto client = before->clients.find("contender");
    if (client == before->clients.end()) return 0;
    const auto found = client->second.byVerbResource.find(what);
    return found == client->second.byVerbResource.end() ? 0 : found->second;
  };
  if (const auto mine = counts.clients.find("contender"); mine != counts.clients.end()) {
    for (const auto& [what, all] : mine->second.byVerbResource) {
      const std::int64_t count = all - earlier(what);
      if (count == 0) continue;
      byVerbResource[what] = count;
      total += count;
      if (what.ends_with(" leases")) {
        leases += count;
      } else if (what.starts_with("list ")) {
        lists += count;
      } else if (what.starts_with("watch ")) {
        watches += count;
      }
    }
  }
  return {{"requests", total},
          {"requests_per_job", static_cast<double>(total - leases - lists - watches) / jobs},
          {"lease_requests", leases},
          {"list_requests", lists},
          {"watch_requests", watches},
          {"requests_by_verb_resource", byVerbResource},
          {"audit_malformed_lines", counts.malformedLines}};
}

json serverCpuSeconds(const BenchCluster& cluster) {
  json seconds = json::object();
  for (const char* component : {"kube-apiserver", "etcd"}) {
    const json figures = processFigures(cluster.componentPid(component));
    seconds[component] = figures.value("cpu_seconds", 0.0);
  }
  return seconds;
}

}  // namespace ipu::bench
