// The floor: what the API server allows for the objects ipu-operator makes, with nothing else. A bare client
// (the operator's own HTTP stack, QPS and burst, as many threads as the operator has workers) takes each job
// as it is created and writes what the operator writes to run it, in its order: the cleanup finalizer, the
// status write recording the job's partition as admitted and its Event, the runtime's certificate Secret
// when an instance spans several pods, the headless Service and the worker pods (built by the operator's own
// pure functions), then the status write saying the job runs. No watch, no reconcile, no V-IPU call, no
// waiting for the pods: the writes follow each other as fast as the client's QPS lets them.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "api/ipujob_status.h"
#include "contender.h"
#include "ipujob/agent_network_policy.h"
#include "ipujob/ipujob_reconciler.h"
#include "ipujob/runtime_injection.h"
#include "ipujob/worker_pod.h"
#include "kube/event_recorder.h"
#include "kube/rest_client.h"
#include "tls/pki.h"

namespace ipu::bench {

namespace {

constexpr const char* kFloorAgent = "ipu-bench-floor";

class Floor final : public IpuJobContender {
 public:
  explicit Floor(ClientSettings settings) : settings_(settings) {}
  ~Floor() override { finish(); }

  std::string name() const override {
    return "floor (qps " + std::to_string(static_cast<int>(settings_.qps)) + ")";
  }
  const ClientSettings& settings() const override { return settings_; }
  bool owns(const std::string& userAgent) const override { return userAgent == kFloorAgent; }

  void start(const BenchCluster& cluster, const std::string& /*ns*/) override {
    client_ = cluster.client({.qps = settings_.qps, .burst = settings_.burst, .userAgent = kFloorAgent});
    events_ = std::make_unique<kube::KubeEventRecorder>(*client_);
    // One certificate set for every job: the floor measures the API server, not key generation.
    credentials_ = runtime::pki::issueJobCredentials("floor/bench", std::chrono::hours(24));
    for (int i = 0; i < settings_.workers; ++i) threads_.emplace_back([this] { work(); });
  }

  void jobCreated(const nlohmann::json& job) override {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(job);
    }
    ready_.notify_one();
  }
  void stop() override {
    finish();
    std::lock_guard lock(mutex_);
    if (!failure_.empty()) throw std::runtime_error("floor: " + failure_);
  }

 private:
  void finish() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    ready_.notify_all();
    threads_.clear();
  }

  void work() {
    for (;;) {
      nlohmann::json object;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return done_ || !queue_.empty(); });
        if (queue_.empty()) return;
        object = std::move(queue_.front());
        queue_.pop_front();
      }
      if (auto failed = run(object); !failed.empty()) {
        std::lock_guard lock(mutex_);
        failure_ = failed;
      }
    }
  }

  // The writes for one job; "" when all succeeded, else what failed.
  std::string run(const nlohmann::json& object) {
    auto job = api::parseIpuJob(object);
    if (!job) return "parse: " + job.error().message;
    const auto& id = job->identity;
    const kube::ResourceRef jobs = jobResource();
    const auto failed = [](const std::string& what, const Error& error) {
      return what + ": " + error.toString();
    };
    const nlohmann::json finalizer = {{"metadata", {{"finalizers", {controllers::kCleanupFinalizer}}}}};
    if (auto r = client_->patch(jobs, id.ns, id.name, kube::PatchType::kMerge, finalizer); !r)
      return failed("finalizer", r.error());
    // The runtime Secret first: its generated name is recorded with the admission, before any pod.
    std::optional<api::RuntimeSecretRecord> runtimeSecret;
    if (controllers::needsRuntimeCredentials(job->spec)) {
      auto secret = client_->create(kube::ResourceRef::secrets(), id.ns,
                                    controllers::buildRuntimeSecret(*job, credentials_));
      if (!secret) return failed("secret", secret.error());
      runtimeSecret = controllers::runtimeSecretRecord((*secret)["metadata"]["name"], credentials_);
    }
    if (auto r = client_->patch(jobs, id.ns, id.name, kube::PatchType::kMerge,
                                {{"status", admitted(*job, runtimeSecret)}}, "status");
        !r)
      return failed("status", r.error());
    events_->record(kube::referenceTo(object), kube::EventType::kNormal, "Admitted",
                    "Admitted to pod64: creating 1 partition(s) of " +
                        std::to_string(job->spec.ipusPerJobInstance) + " IPUs");
    if (auto r =
            client_->create(kube::ResourceRef::services(), id.ns, controllers::buildHeadlessService(*job));
        !r)
      return failed("service", r.error());
    if (runtimeSecret) {
      if (auto r = client_->create(kube::ResourceRef::networkPolicies(), id.ns,
                                   controllers::buildAgentNetworkPolicy(*job));
          !r)
        return failed("networkpolicy", r.error());
    }
    const controllers::WorkerAssignment partition{partitionId(*job),
                                                  "pod64",
                                                  "127.0.0.1",
                                                  8090,
                                                  "{}",
                                                  0,
                                                  runtimeSecret.value_or(api::RuntimeSecretRecord{})};
    controllers::WorkerPodOptions options;
    options.runtime.image = "ipu-runtime:bench";
    for (int k = 0; k < job->spec.workerCount(); ++k) {
      if (auto r = client_->create(kube::ResourceRef::pods(), id.ns,
                                   controllers::buildWorkerPod(*job, k, partition, options));
          !r)
        return failed("pod", r.error());
    }
    const nlohmann::json running = {
        {"status", {{"phase", "Running"}, {"currentReplicas", job->spec.workerCount()}}}};
    if (auto r = client_->patch(jobs, id.ns, id.name, kube::PatchType::kMerge, running, "status"); !r)
      return failed("status", r.error());
    return "";
  }

  static std::string partitionId(const api::IpuJob& job) { return "floor-" + job.identity.uid; }

  // The status the operator writes when it admits a job: its partition held, the shape and the runtime
  // Secret recorded.
  static nlohmann::json admitted(const api::IpuJob& job,
                                 const std::optional<api::RuntimeSecretRecord>& runtimeSecret) {
    api::IpuJobStatus status;
    status.phase = "Pending";
    status.partitions.push_back(
        api::PartitionRecord{.id = partitionId(job),
                             .instance = 0,
                             .size = job.spec.ipusPerJobInstance,
                             .controller = "pod64",
                             .ipus = "ild0:0-" + std::to_string(job.spec.ipusPerJobInstance - 1),
                             .state = "Active"});
    status.admittedShape = api::AdmittedShape{job.spec.jobInstances, job.spec.ipusPerJobInstance,
                                              job.spec.workersPerJobInstance};
    status.runtimeSecret = runtimeSecret;
    return api::toJson(status);
  }

  ClientSettings settings_;
  std::unique_ptr<kube::RestClient> client_;
  std::unique_ptr<kube::KubeEventRecorder> events_;
  runtime::pki::JobCredentials credentials_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<nlohmann::json> queue_;
  bool done_ = false;
  std::string failure_;
  std::vector<std::jthread> threads_;
};

}  // namespace

std::unique_ptr<Contender> makeFloor(ClientSettings settings) {
  return std::make_unique<Floor>(settings);
}

}  // namespace ipu::bench
