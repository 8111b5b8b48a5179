#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "audit_counts.h"
#include "bench_cluster.h"
#include "contender.h"
#include "object_timeline.h"

// What every measurement on a fresh cluster does, whatever it measures (measure.h, scale_curve.h).
namespace ipu::bench {

// Simulated nodes for `pods` pods (a launcher per job included) at kwok's 110 pods a node, with room to
// spare: the same for every contender.
int nodesFor(int pods);

// The API server's first write of a kind it has just begun to serve takes seconds (its storage and the CRD's
// validation rules are set up then): one job created and deleted before the contender starts, in a
// namespace of its own, so that no contender's clock includes it.
void warmUp(kube::RestClient& client, const Contender& contender);

// A fresh cluster for `pods` pods with the IPUJob CRD and the namespace "bench", the contender prepared,
// warmed up against and started on it, and the bench's own client (no limits of its own) watching the
// namespace's pods and the contender's jobs.
struct BenchRun {
  BenchRun(Contender& contender, const std::string& clusterDir, int pods);

  BenchCluster cluster;
  const std::string ns = "bench";
  std::unique_ptr<kube::RestClient> client;
  std::unique_ptr<ObjectTimeline> pods;
  std::unique_ptr<ObjectTimeline> jobs;  // running: as the contender says (Contender::jobRunning)
};

// Creates jobs "job-<from>" to "job-<to - 1>" of `workers` workers each with the run's client; throws on the
// first that fails.
void createJobs(BenchRun& run, Contender& contender, int from, int to, int workers);

// The contender's requests in the cluster's audit log so far.
AuditCounts contenderRequests(const BenchCluster& cluster, const Contender& contender);

// Each request counted once: per job (creates, patches, updates, gets, deletes; `jobs` of them), or apart as
// what does not grow with jobs one by one: leader election (leases), lists and watches (informers' starts
// and re-lists). `before`: counts already spent (an earlier point of a curve), left out.
nlohmann::json requestFigures(const AuditCounts& counts, int jobs, const AuditCounts* before = nullptr);

// The CPU seconds of the API server and etcd so far ({"kube-apiserver": s, "etcd": s}): they share the
// machine's cores with the contender, so their work is part of its cost.
nlohmann::json serverCpuSeconds(const BenchCluster& cluster);

// The lower bound of a restart's "ready": the seconds a client takes to read what any restarted contender
// must read before it can act, the run's pods and the contender's jobs in pages of 500 (the page size of
// client-go's reflector and of ipu-operator), both lists side by side, each page's body received whole and
// dropped unparsed (only its continue token is looked for). Throws when a page fails.
double listFloorSeconds(const BenchRun& run, const Contender& contender);

}  // namespace ipu::bench
