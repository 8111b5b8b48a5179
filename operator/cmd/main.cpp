// ipu-operator: watches IPUJobs and runs them on V-IPU partitions until SIGINT or SIGTERM. Wiring only: the
// controllers live in controllers/, the runtime that runs them (manager, leader election) in operator/ctrl.
#include <csignal>
#include <iostream>
#include <stop_token>
#include <thread>

#include <malloc.h>
#include <pthread.h>

#include "admission/admission_plan.h"
#include "cmd/installed_crds.h"
#include "cmd/leadership_term.h"
#include "cmd/operator_flags.h"
#include "cmd/partition_prefix.h"
#include "cmd/telemetry.h"
#include "common/environment.h"
#include "common/freed_memory.h"
#include "common/log.h"
#include "kube/cluster_config.h"
#include "kube/cpprest_transport.h"
#include "kube/leader_elector.h"
#include "kube/rest_client.h"
#include "pod_map/pod_map_page_server.h"

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

}  // namespace

int main(int argc, char** argv) {
  // Two malloc arenas rather than glibc's eight per core: the HTTP client's and the workers' threads would
  // each keep the memory they freed in an arena of their own, which at thousands of cached objects is most
  // of the resident size. Allocation is not where the operator spends its time.
  mallopt(M_ARENA_MAX, 2);
  std::stop_source stop;
  stopOnSignals(stop);
  // After the signals are blocked (its thread inherits the mask); stopped and joined when main returns.
  const std::jthread releaser = releaseFreedMemoryInBackground(std::chrono::seconds(10));
  auto flags =
      cmd::parseOperatorFlags(std::vector<std::string>(argv + 1, argv + argc), ipu::processEnvironment);
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
  kube::skipDefaultCaFileLoads(*config);  // before any thread but the two above, neither of which reads it
  auto transport = kube::CppRestTransport::create(*config);
  if (!transport) return fail(transport.error().message);
  kube::RestClient client(std::shared_ptr<kube::Transport>(std::move(*transport)), *config,
                          kube::ClientOptions{.qps = flags->qps, .burst = flags->burst});
  if (auto installed = cmd::requireInstalledCrds(client); !installed) return fail(installed.error().message);
  cmd::Telemetry telemetry;
  if (auto serving = telemetry.serve(flags->metricsBindAddress, flags->healthProbeBindAddress); !serving) {
    return fail(serving.error().message);
  }
  // The POD map page listens in every replica: a standby reads the API server, the leader its caches
  // (leadership_term).
  std::unique_ptr<controllers::PodMapPageServer> podMapPage;
  if (!flags->podMapPageBindAddress.disabled) {
    podMapPage = std::make_unique<controllers::PodMapPageServer>(
        client, controllers::PodMapPageServer::Options{
                    .address = flags->podMapPageBindAddress,
                    .refreshSeconds = flags->podMapIntervalSeconds > 0 ? flags->podMapIntervalSeconds : 5});
    if (auto serving = podMapPage->serve(); !serving) return fail(serving.error().message);
  }
  if (flags->runtimeImage.empty()) {
    log::warning(
        "--runtime-image is not set: worker pods run their own commands; jobs with a launcher or several "
        "workers per instance get a LauncherNotRun warning");
  }
  if (!flags->vipuProxy) {
    log::warning(
        "--vipu-proxy-bind-address is 0: worker pods get the V-IPU controllers' own addresses, and any of "
        "them can act on any partition (another job's included)");
  }
  log::info("ipu-operator starting",
            {{"apiServer", config->server},
             {"queueingStrategy", controllers::queueingStrategyName(flags->queueingStrategy)},
             {"missingQuota", controllers::missingQuotaPolicyName(flags->missingQuota)},
             {"workerPodProfile", std::string(api::profileName(flags->workerPodProfile))},
             {"runtimeDelivery", controllers::runtimeDeliveryName(flags->runtimeDelivery)},
             {"vipuTls", flags->vipuTls ? "true" : "false"}});
  // Leadership lost (an API server away for longer than the renew deadline, a Lease taken over) ends a term;
  // the process campaigns again with nothing of the old term left, instead of exiting.
  auto prefixes = cmd::resolvePartitionPrefixes(flags->partitionIdPrefix, client, stop.get_token());
  if (!prefixes) {
    if (prefixes.error().code == ErrorCode::kCancelled) return 0;
    return fail(prefixes.error().message);
  }
  const std::string identity = kube::defaultIdentity();
  for (int term = 1;; ++term) {
    auto ended = cmd::runLeadershipTerm(*flags, *prefixes, identity, client, telemetry, podMapPage.get(),
                                        stop.get_token());
    if (!ended) return fail(ended.error().message);
    if (*ended == cmd::TermEnd::kStopped) return 0;
    log::warning("leadership lost; campaigning again", {{"term", std::to_string(term + 1)}});
  }
}
