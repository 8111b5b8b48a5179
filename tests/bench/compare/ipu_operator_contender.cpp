// ipu-operator as a contender: the real binary with its default configuration (leader election on,
// ipu-runtime injected) against the real vipu-sim, a simulated POD large enough that no job waits for IPUs.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "contender.h"
#include "free_port.h"
#include "metrics_text.h"
#include "sim_process.h"
#include "subprocess.h"

namespace ipu::bench {

namespace {

class IpuOperator final : public IpuJobContender {
 public:
  IpuOperator(ClientSettings settings, std::string workDirectory, int ipus)
      : settings_(settings), directory_(std::move(workDirectory)), ipus_(ipus) {}

  std::string name() const override {
    return "ipu-operator (qps " + std::to_string(static_cast<int>(settings_.qps)) + ")";
  }
  const ClientSettings& settings() const override { return settings_; }
  bool owns(const std::string& userAgent) const override { return userAgent == "ipu-operator"; }

  // One V-IPU controller per 16,384 IPUs (vipu-sim's largest: 64 IPU-Link domains of 256), as a facility
  // larger than that runs several V-IPU clusters; the first is pod64, the next pod64-2, pod64-3...
  std::vector<std::string> ipuPods() const override {
    std::vector<std::string> names;
    const int controllers = std::max(1, (ipus_ + kIpusPerController - 1) / kIpusPerController);
    for (int i = 0; i < controllers; ++i)
      names.push_back(i == 0 ? "pod64" : "pod64-" + std::to_string(i + 1));
    return names;
  }

  void start(const BenchCluster& cluster, const std::string& ns) override {
    std::filesystem::create_directories(directory_);
    // IPU-Link domains of 256 IPUs, as many as the scenario's jobs need (64 for 16,384 IPUs, in each of as
    // many controllers as that takes), so admission never waits. The partitions activate after vipu-sim's
    // default delay (1 s, PS_PENDING until then), as a real controller's take a while to power up: a job's
    // pods wait for it.
    int left = ipus_;
    for (const std::string& pod : ipuPods()) {
      const int ipus = std::min(left, kIpusPerController);
      left -= ipus;
      const int domains = std::max(1, (ipus + 255) / 256);
      std::string failure;
      std::filesystem::create_directories(directory_ + "/" + pod);
      auto sim = vipu::testing::SimProcess::start(
          directory_ + "/" + pod, {"--ilds", std::to_string(domains), "--ild-size", "256"}, 0, failure);
      if (!sim) throw std::runtime_error("vipu-sim for " + pod + ": " + failure);
      sims_.emplace_back(pod, std::move(sim));
    }
    launch(cluster, ns);
    waitForLeaseHolder(cluster, ns, "ipu-operator", std::chrono::seconds(60));
  }

  std::optional<LeaseRef> lease(const std::string& ns) const override { return LeaseRef{ns, "ipu-operator"}; }

  std::optional<Restart> restart(const BenchCluster& cluster, const std::string& ns) override {
    // SIGTERM: it gives up its Lease on the way out. Ready at its "caches synced" line (info, its default).
    return restartUntilLogged(
        process_, "ipu-operator", [&] { launch(cluster, ns, restartWrapper()); }, "caches synced",
        std::chrono::seconds(120), cluster, *lease(ns));
  }

  nlohmann::json processStats() const override { return processFigures(process_->pid()); }

  std::optional<double> reconcilePasses() const override {
    const auto scraped = testing::run({"curl", "-sS", "--max-time", "10", "http://" + metrics_ + "/metrics"});
    if (!scraped.ok()) throw std::runtime_error("scrape ipu-operator's metrics: " + scraped.describe());
    return counterTotal(scraped.out, "ipu_operator_reconcile_total");
  }

  void stop() override {
    stopRunning(*process_, "ipu-operator");
    for (auto& [pod, sim] : sims_) sim->stop();
    std::filesystem::remove_all(directory_);
  }

 private:
  // IPU_BENCH_RESTART_WRAPPER: a command the restarted operator runs under, to profile what a restart
  // and the steady state cost, e.g. "heaptrack -o /tmp/operator" or "perf record -g -o /tmp/restart.data --".
  // The figures measured after a wrapped restart are the wrapper's, not the operator's.
  static std::vector<std::string> restartWrapper() {
    std::vector<std::string> words;
    if (const char* wrapper = std::getenv("IPU_BENCH_RESTART_WRAPPER")) {
      std::istringstream in(wrapper);
      for (std::string word; in >> word;) words.push_back(word);
    }
    return words;
  }

  // IPU_BENCH_OPERATOR: another build's ipu-operator (e.g. an earlier commit's, for a before/after
  // comparison on the same machine); the one this build made otherwise.
  static std::string operatorBinary() {
    const char* other = std::getenv("IPU_BENCH_OPERATOR");
    return other != nullptr && *other != '\0' ? other : IPU_OPERATOR_BINARY;
  }

  // At its default log level (info), as it is installed.
  void launch(const BenchCluster& cluster, const std::string& ns, std::vector<std::string> argv = {}) {
    const auto port = [] { return "127.0.0.1:" + std::to_string(testing::freeLoopbackPort()); };
    metrics_ = port();
    std::vector<std::string> operatorArgv{operatorBinary(), "--kubeconfig", cluster.kubeconfig()};
    for (const auto& [pod, sim] : sims_)
      operatorArgv.insert(operatorArgv.end(), {"--vipu-controller", pod + "=" + sim->endpoint()});
    operatorArgv.insert(
        operatorArgv.end(),
        {"--leader-election-namespace", ns, "--qps", std::to_string(settings_.qps), "--burst",
         std::to_string(settings_.burst), "--workers", std::to_string(settings_.workers), "--runtime-image",
         "ipu-runtime:bench", "--metrics-bind-address", metrics_, "--health-probe-bind-address", port()});
    argv.insert(argv.end(), operatorArgv.begin(), operatorArgv.end());
    process_ = std::make_unique<testing::BackgroundProcess>(std::move(argv));
  }

  ClientSettings settings_;
  std::string directory_;
  int ipus_;
  std::string metrics_;  // its metrics endpoint, host:port
  static constexpr int kIpusPerController = 64 * 256;
  std::vector<std::pair<std::string, std::unique_ptr<vipu::testing::SimProcess>>> sims_;
  std::unique_ptr<testing::BackgroundProcess> process_;
};

}  // namespace

std::unique_ptr<Contender> makeIpuOperator(ClientSettings settings, const std::string& workDirectory,
                                           int ipus) {
  return std::make_unique<IpuOperator>(settings, workDirectory, ipus);
}

}  // namespace ipu::bench
