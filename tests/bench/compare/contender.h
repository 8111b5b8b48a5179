#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "bench_cluster.h"
#include "kube/resource.h"
#include "object_timeline.h"
#include "subprocess.h"

// What the comparison runs: something that turns N jobs into their pods on a fresh cluster. The bench creates
// the jobs (with a client of its own), watches the pods, and counts each contender's API requests in the
// audit log by its User-Agent.
namespace ipu::bench {

// The client-side limits and parallelism a contender runs with (each tool's own flags).
struct ClientSettings {
  double qps = 50;
  int burst = 100;
  int workers = 2;  // reconciles (or floor threads) in parallel
  // The MPI Operator's second throttle, its work queue's rate limiter (--controller-queue-rate-limit and
  // --controller-queue-burst): every informer event waits on it. 0 = its defaults (10/s, burst 100).
  int queueQps = 0;
  int queueBurst = 0;
};

// Where a contender holds its leader-election Lease.
struct LeaseRef {
  std::string ns;
  std::string name;
};

// A restart: seconds from the new process's start until its caches have synced (as its own log says), and
// of them the seconds it could not have been ready in because the old process's Lease was still held (a
// process that keeps its Lease on SIGTERM makes its successor wait for it to expire).
struct Restart {
  double seconds = 0;
  double leaseWaitSeconds = 0;
};

class Contender {
 public:
  virtual ~Contender() = default;
  // "floor", "ipu-operator", "mpi-operator" with its settings, e.g. "mpi-operator (qps 5)".
  virtual std::string name() const = 0;
  // The client limits and parallelism it runs with.
  virtual const ClientSettings& settings() const = 0;
  // Whether a request with this User-Agent is the contender's.
  virtual bool owns(const std::string& userAgent) const = 0;
  // Installs what the contender's jobs need before any is created (its CRD); the IPUJob CRD is always there.
  // The IPU-POD names the cluster's simulated nodes are labelled with (they reach those PODs): a contender
  // with several V-IPU controllers names each controller's.
  virtual std::vector<std::string> ipuPods() const { return {"pod64"}; }
  virtual void prepare(const BenchCluster& /*cluster*/) {}
  // Starts against the cluster (namespace `ns` exists) and returns once it acts on jobs (holds its lease).
  virtual void start(const BenchCluster& cluster, const std::string& ns) = 0;
  virtual kube::ResourceRef jobResource() const = 0;
  virtual nlohmann::json jobManifest(const std::string& name, int workers) const = 0;
  // Each job as the API server returned it from create (the floor works from these; operators watch).
  virtual void jobCreated(const nlohmann::json& /*job*/) {}
  virtual PodRole roleOf(const nlohmann::json& pod) const = 0;
  // Whether a job's status says it runs (the end of a timed run is every job saying so).
  virtual bool jobRunning(const nlohmann::json& job) const = 0;
  // Its leader-election Lease, if it takes one (`ns`: the bench's namespace).
  virtual std::optional<LeaseRef> lease(const std::string& /*ns*/) const { return std::nullopt; }
  // The contender's process figures ({"rss_mb", "peak_rss_mb", "cpu_seconds"}); {} when it runs in the
  // bench's own process.
  virtual nlohmann::json processStats() const { return nlohmann::json::object(); }
  // Its reconcile passes so far, from its own metrics (ipu-operator's ipu_operator_reconcile_total, every
  // controller's); nullopt when it does not say. Counted from its process's start.
  virtual std::optional<double> reconcilePasses() const { return std::nullopt; }
  // Stops the contender's process and starts it again as it was, or nullopt when it has no process of its
  // own.
  virtual std::optional<Restart> restart(const BenchCluster& /*cluster*/, const std::string& /*ns*/) {
    return std::nullopt;
  }
  // Stops it; throws when it failed on its own while running (its log tail in the message).
  virtual void stop() = 0;
};

// The IPUJob side shared by ipu-operator and the floor: the same manifests, the same worker pods.
class IpuJobContender : public Contender {
 public:
  kube::ResourceRef jobResource() const override;
  // `workers` worker pods on as many IPUs.
  nlohmann::json jobManifest(const std::string& name, int workers) const override;
  PodRole roleOf(const nlohmann::json& pod) const override;
  bool jobRunning(const nlohmann::json& job) const override;
};

std::unique_ptr<Contender> makeFloor(ClientSettings settings);
// `ipus`: the simulated POD's size (vipu-sim, in IPU-Link domains of 256), enough that no job waits.
std::unique_ptr<Contender> makeIpuOperator(ClientSettings settings, const std::string& workDirectory,
                                           int ipus = 16384);
std::unique_ptr<Contender> makeMpiOperator(ClientSettings settings);

// Figures of a process from /proc: resident and peak resident MB, CPU seconds (user + system).
nlohmann::json processFigures(int pid);

// Stops a contender's process; throws (with its log) when it had exited on its own before.
void stopRunning(testing::BackgroundProcess& process, const std::string& name);

// Stops a contender's `process` (throwing, with its log, when it had exited on its own), starts it again with
// `launch` and returns the seconds from that start until its stderr holds `line` (its caches' sync); throws
// when it exits first or after `timeout`.
// `lease`: where the process holds its Lease; the time until the old holder's Lease could be taken (released,
// or its renewal plus its duration) is reported apart.
Restart restartUntilLogged(std::unique_ptr<testing::BackgroundProcess>& process, const std::string& name,
                           const std::function<void()>& launch, const std::string& line,
                           std::chrono::seconds timeout, const BenchCluster& cluster, const LeaseRef& lease);

// Waits until the Lease ns/name has a holder; throws after `timeout`.
void waitForLeaseHolder(const BenchCluster& cluster, const std::string& ns, const std::string& name,
                        std::chrono::seconds timeout);

}  // namespace ipu::bench
