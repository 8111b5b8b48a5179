// The Kubeflow MPI Operator (v2, MPIJob v2beta1) as a contender: the real binary built by
// tools/build-tools.sh --peers, its CRD from its own module. It always runs leader election (Lease
// mpi-operator in its lock namespace) and serves its health check on :8080.
#include <stdexcept>
#include <vector>

#include "contender.h"
#include "subprocess.h"

namespace ipu::bench {

namespace {

class MpiOperator final : public Contender {
 public:
  explicit MpiOperator(ClientSettings settings) : settings_(settings) {}

  std::string name() const override {
    std::string name = "mpi-operator (qps " + std::to_string(static_cast<int>(settings_.qps));
    if (settings_.queueQps > 0) name += ", queue " + std::to_string(settings_.queueQps) + "/s";
    return name + ")";
  }
  // client-go's agent ("mpi-operator/<version> (linux/amd64) kubernetes/<commit>", with "/leader-election"
  // and the like appended for its other clients).
  const ClientSettings& settings() const override { return settings_; }
  bool owns(const std::string& userAgent) const override { return userAgent.starts_with("mpi-operator"); }

  void prepare(const BenchCluster& cluster) override {
    cluster.installCrd(cluster.tool("kubeflow.org_mpijobs.yaml"), "mpijobs.kubeflow.org");
    cluster.kubectl({"create", "namespace", kLockNamespace});
  }

  void start(const BenchCluster& cluster, const std::string& /*ns*/) override {
    launch(cluster);
    waitForLeaseHolder(cluster, kLockNamespace, "mpi-operator", std::chrono::seconds(60));
  }

  std::optional<LeaseRef> lease(const std::string& /*ns*/) const override {
    return LeaseRef{kLockNamespace, "mpi-operator"};
  }

  // Until it logs "Starting workers", which follows its informer caches' sync. It keeps its Lease when it
  // stops, so the new process first waits for that Lease to expire (its lease duration, 15 s): reported
  // apart from the rest of the restart.
  std::optional<Restart> restart(const BenchCluster& cluster, const std::string& ns) override {
    return restartUntilLogged(
        process_, "mpi-operator", [&] { launch(cluster); }, "Starting workers", std::chrono::seconds(120),
        cluster, *lease(ns));
  }

  kube::ResourceRef jobResource() const override { return {"kubeflow.org", "v2beta1", "mpijobs", true}; }

  nlohmann::json jobManifest(const std::string& name, int workers) const override {
    const auto replica = [](int replicas, const std::string& container) {
      nlohmann::json spec = {{"replicas", replicas}};
      spec["template"]["spec"]["containers"] = nlohmann::json::array(
          {{{"name", container}, {"image", "train:1"}, {"command", {"python3", "train.py"}}}});
      return spec;
    };
    return {{"apiVersion", "kubeflow.org/v2beta1"},
            {"kind", "MPIJob"},
            {"metadata", {{"name", name}}},
            {"spec",
             {{"slotsPerWorker", 1},
              {"runPolicy", {{"cleanPodPolicy", "Running"}}},
              {"mpiReplicaSpecs",
               {{"Launcher", replica(1, "launcher")}, {"Worker", replica(workers, "worker")}}}}}};
  }

  // Its status condition Running (True once the launcher runs).
  bool jobRunning(const nlohmann::json& job) const override {
    for (const auto& condition :
         job.value("status", nlohmann::json::object()).value("conditions", nlohmann::json::array())) {
      if (condition.value("type", "") == "Running") return condition.value("status", "") == "True";
    }
    return false;
  }

  PodRole roleOf(const nlohmann::json& pod) const override {
    const std::string role =
        pod["metadata"].value("labels", nlohmann::json::object()).value("training.kubeflow.org/job-role", "");
    if (role == "worker") return PodRole::kWorker;
    if (role == "launcher") return PodRole::kLauncher;
    return PodRole::kOther;
  }
  nlohmann::json processStats() const override { return processFigures(process_->pid()); }

  void stop() override { stopRunning(*process_, "mpi-operator"); }

 private:
  void launch(const BenchCluster& cluster) {
    std::vector<std::string> argv{cluster.tool("mpi-operator"),
                                  "--kubeConfig",
                                  cluster.kubeconfig(),
                                  "--lock-namespace",
                                  kLockNamespace,
                                  "--kube-api-qps",
                                  std::to_string(static_cast<int>(settings_.qps)),
                                  "--kube-api-burst",
                                  std::to_string(settings_.burst),
                                  "--threadiness",
                                  std::to_string(settings_.workers)};
    if (settings_.queueQps > 0) {
      argv.insert(argv.end(), {"--controller-queue-rate-limit", std::to_string(settings_.queueQps),
                               "--controller-queue-burst", std::to_string(settings_.queueBurst)});
    }
    process_ = std::make_unique<testing::BackgroundProcess>(std::move(argv));
  }

  static constexpr const char* kLockNamespace = "mpi-operator";
  ClientSettings settings_;
  std::unique_ptr<testing::BackgroundProcess> process_;
};

}  // namespace

std::unique_ptr<Contender> makeMpiOperator(ClientSettings settings) {
  return std::make_unique<MpiOperator>(settings);
}

}  // namespace ipu::bench
