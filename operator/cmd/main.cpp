// ipu-operator: watches IPUJobs and runs them on V-IPU partitions until SIGINT or SIGTERM. Wiring only.
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <stop_token>
#include <thread>

#include <pthread.h>

#include "cmd/operator_flags.h"
#include "cmd/telemetry.h"
#include "common/log.h"
#include "ctrl/controller.h"
#include "ipujob/ipujob_reconciler.h"
#include "ipujob/orphan_partitions.h"
#include "ipujob/vipu_controllers.h"
#include "kube/cluster_config.h"
#include "kube/cpprest_transport.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/leader_elector.h"
#include "kube/rest_client.h"
#include "vipu/vipu_client.h"

namespace {

using namespace ipu;

int fail(const std::string& message) {
  std::cerr << "ipu-operator: " << message << "\n";
  return 1;
}

// Everything the controller needs, built once; runs until `stop`. False when the caches never synced.
struct Operator {
  kube::RestClient& client;
  controllers::VipuControllers& vipu;
  const cmd::OperatorFlags& flags;
  cmd::Telemetry& telemetry;

  bool run(std::stop_token stop) {
    kube::KubeEventRecorder events(client);
    kube::Informer jobs(client, controllers::ipuJobResource());
    kube::Informer pods(client, kube::ResourceRef::pods(), "",
                        kube::WatcherConfig{.labelSelector = controllers::kJobNameLabel});
    controllers::Admitter admitter(vipu, jobs.store(), flags.queueingStrategy,
                                   [this](double seconds) { telemetry.admissionPass(seconds); });

    controllers::IpuJobReconciler* reconciler = nullptr;  // set below; the controller starts after that
    ctrl::Controller controller(
        "ipujob",
        [&reconciler, this](const std::string& ns, const std::string& name) -> Result<ctrl::RequeueAfter> {
          const auto started = std::chrono::steady_clock::now();
          auto action = reconciler->reconcile(ns, name);
          telemetry.reconciled(
              action.ok(), std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
          if (!action) return action.error();
          return action->requeueAfter;
        },
        flags.workers);

    controllers::ReconcilerOptions options;
    options.pods.shmSizeLimit = flags.shmSize;
    options.partitionIdPrefix = flags.partitionIdPrefix;
    options.hooks.wakeWaitingJobs = [&jobs, &controller] {
      for (const kube::ObjectPtr& job : jobs.store().list()) {
        if (controllers::waitsForAdmission(*job)) controller.queue().add(kube::objectKey(*job));
      }
    };
    options.hooks.admitted = [this](double seconds) { telemetry.admitted(seconds); };
    options.hooks.running = [this](double seconds) { telemetry.running(seconds); };
    controllers::IpuJobReconciler ipuJobReconciler(client, jobs.store(), pods.store(), vipu, admitter, events,
                                                   Clock::real(), options);
    reconciler = &ipuJobReconciler;

    controller.watchPrimary(jobs);
    // A worker pod's changes wake its job (pods carry the job's name in a label; the job is in their
    // namespace).
    controller.watchRelated(pods, [](const ctrl::Json& pod) -> std::optional<std::string> {
      const auto& labels = pod["metadata"].value("labels", ctrl::Json::object());
      const auto job = labels.find(controllers::kJobNameLabel);
      if (job == labels.end() || !job->is_string()) return std::nullopt;
      return pod["metadata"].value("namespace", "") + "/" + job->get<std::string>();
    });
    telemetry.attach({&jobs.store(), [&controller] { return controller.queue().len(); },
                      [&jobs, &pods] { return jobs.store().hasSynced() && pods.store().hasSynced(); }});
    jobs.start();
    pods.start();
    // Orphans first, while no reconcile runs: partitions a killed process left that no IPUJob holds.
    if (jobs.waitForSync(std::chrono::minutes(2))) {
      for (const auto& target : vipu.targets()) {
        if (auto removed =
                controllers::removeOrphanPartitions(flags.partitionIdPrefix, *target.api, jobs.store());
            !removed) {
          log::warning("could not clean up orphaned partitions",
                       {{"controller", target.name}, {"error", removed.error().toString()}});
        }
      }
    }
    const bool started = controller.start(std::chrono::minutes(2));
    if (started) {
      std::mutex mutex;
      std::condition_variable_any stopped;
      std::unique_lock lock(mutex);
      stopped.wait(lock, stop, [] { return false; });
      log::info("stopping the controller");
    }
    controller.stop();
    telemetry.detach();
    pods.stop();
    jobs.stop();
    return started;
  }
};

}  // namespace

int main(int argc, char** argv) {
  // Block the stop signals first (threads inherit the mask; a signal that comes early waits for sigwait); one
  // thread waits for them.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto flags = cmd::parseOperatorFlags(args, cmd::processEnvironment);
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

  std::stop_source stopSource;
  std::thread([&stopSource, stopSignals] {
    int signal = 0;
    sigwait(&stopSignals, &signal);
    log::info("stop signal received; shutting down", {{"signal", std::to_string(signal)}});
    stopSource.request_stop();
  }).detach();  // blocked in sigwait until a signal or process exit

  auto config = kube::loadDefaultConfig(flags->kubeconfig);
  if (!config) return fail(config.error().message);
  auto transport = kube::CppRestTransport::create(*config);
  if (!transport) return fail(transport.error().message);
  kube::ClientOptions clientOptions;
  clientOptions.qps = flags->qps;
  clientOptions.burst = flags->burst;
  kube::RestClient client(std::shared_ptr<kube::Transport>(std::move(*transport)), *config, clientOptions);

  std::vector<std::unique_ptr<vipu::VipuClient>> vipuClients;
  std::vector<controllers::VipuTarget> targets;
  for (const auto& endpoint : flags->vipuControllers) {
    vipu::ClientOptions vipuOptions;
    vipuOptions.name = endpoint.name;
    vipuOptions.endpoint = endpoint.host + ":" + std::to_string(endpoint.port);
    auto vipuClient = vipu::VipuClient::create(vipuOptions);
    if (!vipuClient) return fail(vipuClient.error().message);
    vipuClients.push_back(std::move(*vipuClient));
    targets.push_back({endpoint.name, endpoint.host, endpoint.port, vipuClients.back().get()});
    log::info("V-IPU controller", {{"name", endpoint.name}, {"endpoint", vipuOptions.endpoint}});
  }
  controllers::VipuControllers vipuControllers(std::move(targets));

  cmd::Telemetry telemetry;
  if (auto serving = telemetry.serve(flags->metricsBindAddress, flags->healthProbeBindAddress); !serving) {
    return fail(serving.error().message);
  }
  Operator op{client, vipuControllers, *flags, telemetry};
  log::info("ipu-operator starting",
            {{"apiServer", config->server},
             {"queueingStrategy", controllers::queueingStrategyName(flags->queueingStrategy)}});
  if (!flags->leaderElect) {
    telemetry.setLeading(true);
    return op.run(stopSource.get_token()) ? 0 : 1;
  }

  kube::LeaderElectionConfig election;
  election.leaseName = "ipu-operator";
  election.leaseNamespace =
      flags->leaderElectionNamespace.empty() ? client.defaultNamespace() : flags->leaderElectionNamespace;
  auto elector = kube::LeaderElector::create(client, election);
  if (!elector) return fail(elector.error().message);
  bool synced = true;
  const auto outcome = (*elector)->run(
      stopSource.get_token(),
      kube::LeaderCallbacks{
          .onStartedLeading =
              [&](std::stop_token leading) {
                log::info("leading: starting the controller", {{"identity", (*elector)->identity()}});
                telemetry.setLeading(true);
                if (!op.run(leading)) {
                  synced = false;
                  stopSource.request_stop();
                }
              },
          .onStoppedLeading =
              [&] {
                // Another replica may lead already: stop writing at once, without waiting for anything.
                if (!stopSource.stop_requested()) {
                  std::cerr << "ipu-operator: lost the leader election lease; exiting\n";
                  std::_Exit(1);
                }
              },
          .onNewLeader =
              [](const std::string& identity) {
                log::info("leader", {{"identity", identity}});
              },
      });
  if (outcome == kube::LeaderElector::Outcome::kLost) return 1;
  return synced ? 0 : 1;
}
