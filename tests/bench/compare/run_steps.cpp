#include "run_steps.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include "kube/list_parse.h"

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

namespace {

// Pages through `path` (a collection URL), reading each page's body and keeping only its continue token.
void readAllPages(kube::RestClient& client, const std::string& path) {
  std::string next;
  do {
    std::string query = path + "?limit=500";
    if (!next.empty()) query += "&continue=" + next;  // the server's tokens are base64url: nothing to escape
    next.clear();
    // A list's JSON is one line, its metadata (with the token) first: a line cut by the transport's
    // limit still holds it, and the token is read from the metadata alone, as the Watcher reads it.
    const auto read = client.streamLines(query, [&next](std::string_view line) {
      if (auto token = kube::continueTokenAhead(line)) next = std::move(*token);
      return true;
    });
    if (!read) throw std::runtime_error("list " + path + ": " + read.error().toString());
  } while (!next.empty());
}

}  // namespace

double listFloorSeconds(const BenchRun& run, const Contender& contender) {
  auto podsClient = run.cluster.client({.qps = 1e6, .burst = 1000000});
  auto jobsClient = run.cluster.client({.qps = 1e6, .burst = 1000000});
  const auto start = std::chrono::steady_clock::now();
  std::exception_ptr failed;
  std::thread jobs([&] {
    try {
      readAllPages(*jobsClient, contender.jobResource().path(run.ns));
    } catch (...) {
      failed = std::current_exception();
    }
  });
  readAllPages(*podsClient, kube::ResourceRef::pods().path(run.ns));
  jobs.join();
  if (failed) std::rethrow_exception(failed);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ipu::bench
