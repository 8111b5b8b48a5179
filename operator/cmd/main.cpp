// ipu-operator: watches IPUJobs and runs them on V-IPU partitions until SIGINT or SIGTERM. Wiring only.
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <stop_token>
#include <thread>

#include <pthread.h>

#include "cmd/operator_flags.h"
#include "common/log.h"
#include "ctrl/controller.h"
#include "ipujob/ipujob_reconciler.h"
#include "ipujob/orphan_partitions.h"
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
  vipu::VipuApi& vipu;
  const cmd::OperatorFlags& flags;

  bool run(std::stop_token stop) {
    kube::KubeEventRecorder events(client);
    kube::Informer jobs(client, controllers::ipuJobResource());
    kube::Informer pods(client, kube::ResourceRef::pods(), "",
                        kube::WatcherConfig{.labelSelector = controllers::kJobNameLabel});
    controllers::ReconcilerOptions options;
    options.pods.shmSizeLimit = flags.shmSize;
    controllers::IpuJobReconciler reconciler(
        client, jobs.store(), pods.store(),
        controllers::VipuTarget{flags.vipu.name, flags.vipu.host, flags.vipu.port, &vipu}, events,
        Clock::real(), options);
    ctrl::Controller controller(
        "ipujob",
        [&reconciler](const std::string& ns, const std::string& name) -> Result<ctrl::RequeueAfter> {
          auto action = reconciler.reconcile(ns, name);
          if (!action) return action.error();
          return action->requeueAfter;
        },
        flags.workers);
    controller.watchPrimary(jobs);
    // A worker pod's changes wake its job (pods carry the job's name in a label; the job is in their
    // namespace).
    controller.watchRelated(pods, [](const ctrl::Json& pod) -> std::optional<std::string> {
      const auto& labels = pod["metadata"].value("labels", ctrl::Json::object());
      const auto job = labels.find(controllers::kJobNameLabel);
      if (job == labels.end() || !job->is_string()) return std::nullopt;
      return pod["metadata"].value("namespace", "") + "/" + job->get<std::string>();
    });
    jobs.start();
    pods.start();
    // Orphans first, while no reconcile runs: partitions a killed process left that no IPUJob holds.
    if (jobs.waitForSync(std::chrono::minutes(2))) {
      if (auto removed = controllers::removeOrphanPartitions(vipu, jobs.store()); !removed) {
        log::warning("could not clean up orphaned partitions", {{"error", removed.error().toString()}});
      }
    }
    if (!controller.start(std::chrono::minutes(2))) return false;
    std::mutex mutex;
    std::condition_variable_any stopped;
    std::unique_lock lock(mutex);
    stopped.wait(lock, stop, [] { return false; });
    log::info("stopping the controller");
    controller.stop();
    pods.stop();
    jobs.stop();
    return true;
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
  auto flags = cmd::parseOperatorFlags(args);
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

  vipu::ClientOptions vipuOptions;
  vipuOptions.name = flags->vipu.name;
  vipuOptions.endpoint = flags->vipu.host + ":" + std::to_string(flags->vipu.port);
  auto vipuClient = vipu::VipuClient::create(vipuOptions);
  if (!vipuClient) return fail(vipuClient.error().message);

  Operator op{client, **vipuClient, *flags};
  log::info("ipu-operator starting",
            {{"vipuController", vipuOptions.endpoint}, {"apiServer", config->server}});
  if (!flags->leaderElect) return op.run(stopSource.get_token()) ? 0 : 1;

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
