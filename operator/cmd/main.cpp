// ipu-operator: watches IPUJobs and runs them on V-IPU partitions until SIGINT or SIGTERM. Wiring only: the
// controllers live in controllers/, the runtime that runs them (manager, leader election) in operator/ctrl.
#include <csignal>
#include <iostream>
#include <stop_token>
#include <thread>

#include <pthread.h>

#include "cmd/installed_crds.h"
#include "cmd/operator_flags.h"
#include "cmd/telemetry.h"
#include "common/log.h"
#include "ctrl/manager.h"
#include "ipujob/ipujob_controller.h"
#include "kube/cluster_config.h"
#include "kube/cpprest_transport.h"
#include "kube/event_recorder.h"
#include "kube/rest_client.h"
#include "quota/quota_controller.h"
#include "vipu/vipu_client.h"

namespace {

using namespace ipu;

int fail(const std::string& message) {
  std::cerr << "ipu-operator: " << message << "\n";
  return 1;
}

// SIGINT and SIGTERM request `stop`. Blocked in every thread first (threads inherit the mask; a signal that
// comes early waits for sigwait), then one thread waits for them.
void stopOnSignals(std::stop_source stop) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([stop, signals]() mutable {
    int signal = 0;
    sigwait(&signals, &signal);
    log::info("stop signal received; shutting down", {{"signal", std::to_string(signal)}});
    stop.request_stop();
  }).detach();  // blocked in sigwait until a signal or process exit
}

// One gRPC client per --vipu-controller.
struct VipuConnections {
  std::vector<std::unique_ptr<vipu::VipuClient>> clients;
  std::vector<controllers::VipuTarget> targets;
};

// Retries of a call that the controller did not answer end when `stop` fires.
Result<VipuConnections> connectVipu(const std::vector<cmd::VipuEndpoint>& endpoints, std::stop_token stop) {
  VipuConnections connections;
  for (const auto& endpoint : endpoints) {
    vipu::ClientOptions options;
    options.name = endpoint.name;
    options.endpoint = endpoint.host + ":" + std::to_string(endpoint.port);
    options.stop = stop;
    auto client = vipu::VipuClient::create(options);
    if (!client) return client.error();
    connections.clients.push_back(std::move(*client));
    connections.targets.push_back(
        {endpoint.name, endpoint.host, endpoint.port, connections.clients.back().get()});
    log::info("V-IPU controller", {{"name", endpoint.name}, {"endpoint", options.endpoint}});
  }
  return connections;
}

ctrl::ManagerOptions managerOptions(const cmd::OperatorFlags& flags, const kube::RestClient& client) {
  ctrl::ManagerOptions options;
  if (flags.leaderElect) {
    kube::LeaderElectionConfig election;
    election.leaseName = "ipu-operator";
    election.leaseNamespace =
        flags.leaderElectionNamespace.empty() ? client.defaultNamespace() : flags.leaderElectionNamespace;
    options.leaderElection = election;
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  std::stop_source stop;
  stopOnSignals(stop);
  auto flags =
      cmd::parseOperatorFlags(std::vector<std::string>(argv + 1, argv + argc), cmd::processEnvironment);
  if (!flags) {
    std::cerr << "ipu-operator: " << flags.error().message << "\nRun 'ipu-operator --help' for the flags.\n";
    return 2;
  }
  if (flags->helpRequested) {
    std::cout << cmd::operatorUsage();
    return 0;
  }
  log::Level level = log::Level::kInfo;
  log::parseLevel(flags->logLevel, level);
  log::setLevel(level);

  auto config = kube::loadDefaultConfig(flags->kubeconfig);
  if (!config) return fail(config.error().message);
  auto transport = kube::CppRestTransport::create(*config);
  if (!transport) return fail(transport.error().message);
  kube::RestClient client(std::shared_ptr<kube::Transport>(std::move(*transport)), *config,
                          kube::ClientOptions{.qps = flags->qps, .burst = flags->burst});
  if (auto installed = cmd::requireInstalledCrds(client); !installed) return fail(installed.error().message);
  auto vipu = connectVipu(flags->vipuControllers, stop.get_token());
  if (!vipu) return fail(vipu.error().message);
  controllers::VipuControllers vipuControllers(vipu->targets);

  cmd::Telemetry telemetry;
  if (auto serving = telemetry.serve(flags->metricsBindAddress, flags->healthProbeBindAddress); !serving) {
    return fail(serving.error().message);
  }
  ctrl::Manager manager(client, managerOptions(*flags, client));
  kube::KubeEventRecorder events(client);
  controllers::ReconcilerOptions reconcilerOptions;
  reconcilerOptions.pods.shmSizeLimit = flags->shmSize;
  reconcilerOptions.pods.runtime = {flags->runtimeImage, flags->runtimeImagePullPolicy};
  if (flags->runtimeImage.empty()) {
    log::warning(
        "--runtime-image is not set: worker pods run their own commands; jobs with a launcher or several "
        "workers per instance get a LauncherNotRun warning");
  }
  reconcilerOptions.partitionIdPrefix = flags->partitionIdPrefix;
  reconcilerOptions.hooks.admitted = [&telemetry](double seconds) { telemetry.admitted(seconds); };
  reconcilerOptions.hooks.running = [&telemetry](double seconds) { telemetry.running(seconds); };
  auto ipuJobs = controllers::IpuJobController::setup(
      manager, vipuControllers, events,
      {.reconciler = reconcilerOptions,
       .queueingStrategy = flags->queueingStrategy,
       .missingQuota = flags->missingQuota,
       .workers = flags->workers,
       .reconcileObserved = [&telemetry](bool ok, double seconds) { telemetry.reconciled(ok, seconds); },
       .admissionPassObserved = [&telemetry](double seconds) { telemetry.admissionPass(seconds); }});
  auto ipuQuotas = controllers::IpuQuotaController::setup(manager, events);
  // While leading, the metrics count the caches' jobs and quotas and /readyz waits for their sync.
  manager.observeLeading([&telemetry, &jobs = *ipuJobs, &quotas = *ipuQuotas](bool leading) {
    telemetry.setLeading(leading);
    if (!leading) return telemetry.detach();
    telemetry.attach({&jobs.jobs(), &quotas.quotas(), [&jobs] { return jobs.controller().queue().len(); },
                      [&jobs] { return jobs.synced(); }});
  });

  log::info("ipu-operator starting",
            {{"apiServer", config->server},
             {"queueingStrategy", controllers::queueingStrategyName(flags->queueingStrategy)},
             {"missingQuota", controllers::missingQuotaPolicyName(flags->missingQuota)}});
  if (auto ran = manager.run(stop.get_token()); !ran) return fail(ran.error().message);
  return 0;
}
