#include "cmd/leadership_term.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "cmd/installed_crds.h"
#include "cmd/vipu_proxy_runnable.h"
#include "common/freed_memory.h"
#include "common/log.h"
#include "ctrl/manager.h"
#include "ipujob/ipujob_controller.h"
#include "kube/event_recorder.h"
#include "pod_map/page_snapshot.h"
#include "pod_map/pod_map_publisher.h"
#include "quota/quota_controller.h"
#include "vipu/vipu_client.h"

namespace ipu::cmd {
namespace {

// One gRPC client per --vipu-controller, fenced by `fence`. The targets tell worker pods where V-IPU is: the
// controller itself, or the operator's proxy when there is one.
struct VipuConnections {
  std::vector<std::unique_ptr<vipu::VipuClient>> clients;
  std::vector<controllers::VipuTarget> targets;
};

Result<VipuConnections> connectVipu(const OperatorFlags& flags, std::stop_token fence) {
  VipuConnections connections;
  for (const auto& endpoint : flags.vipuControllers) {
    vipu::ClientOptions options;
    options.name = endpoint.name;
    options.endpoint = endpoint.host + ":" + std::to_string(endpoint.port);
    options.tls = flags.vipuTls;
    options.stop = fence;
    auto client = vipu::VipuClient::create(options);
    if (!client) return client.error();
    connections.clients.push_back(std::move(*client));
    const auto& proxy = flags.vipuProxy;
    connections.targets.push_back({endpoint.name, proxy ? proxy->advertisedHost : endpoint.host,
                                   proxy ? proxy->advertisedPort : endpoint.port,
                                   connections.clients.back().get()});
    log::debug("V-IPU controller", {{"name", endpoint.name}, {"endpoint", options.endpoint}});
  }
  return connections;
}

ctrl::ManagerOptions managerOptions(const OperatorFlags& flags, const std::string& identity,
                                    const kube::RestClient& client) {
  ctrl::ManagerOptions options;
  if (flags.leaderElect) {
    kube::LeaderElectionConfig election;
    election.leaseName = "ipu-operator";
    election.identity = identity;
    election.leaseNamespace =
        flags.leaderElectionNamespace.empty() ? client.defaultNamespace() : flags.leaderElectionNamespace;
    options.leaderElection = election;
  }
  // The first lists parsed every object whole before the caches kept their trimmed copies: the pages freed
  // since go back to the system at once rather than at the next periodic release.
  options.onCachesSynced = [] { releaseFreedMemory(); };
  return options;
}

controllers::ReconcilerOptions reconcilerOptions(const OperatorFlags& flags,
                                                 const PartitionPrefixes& prefixes, Telemetry& telemetry) {
  controllers::ReconcilerOptions options;
  options.controllerName = flags.controllerName;
  options.pods.shmSizeLimit = flags.shmSize;
  options.pods.runtime = {flags.runtimeImage, flags.runtimeImagePullPolicy, flags.runtimeDelivery};
  if (flags.vipuProxy && flags.vipuProxy->httpPort != 0) {
    options.pods.partitionStatusBase =
        "http://" + flags.vipuProxy->advertisedHost + ":" + std::to_string(flags.vipuProxy->httpPort);
  }
  options.partitionIdPrefix = prefixes.current;
  options.legacyPartitionIdPrefix = prefixes.legacy;
  options.podStartTimeout = std::chrono::seconds(flags.podStartTimeoutSeconds);
  options.pods.interactive = {std::chrono::seconds(flags.interactiveDefaultTtlSeconds),
                              std::chrono::seconds(flags.interactiveMaxTtlSeconds),
                              std::chrono::seconds(flags.interactiveIdleSeconds)};
  options.pods.outputs = {std::chrono::seconds(flags.outputsRetainSeconds),
                          std::chrono::seconds(flags.outputsMaxRetainSeconds)};
  options.podDeletionTimeout = std::chrono::seconds(flags.podDeletionTimeoutSeconds);
  // With several controllers, one that is slow or does not answer may hold all but one reconcile worker.
  if (flags.vipuControllers.size() > 1) options.vipuPassesPerController = std::max(1, flags.workers - 1);
  options.hooks.admitted = [&telemetry](double seconds) { telemetry.admitted(seconds); };
  options.hooks.running = [&telemetry](double seconds) { telemetry.running(seconds); };
  return options;
}

}  // namespace

Result<TermEnd> runLeadershipTerm(const OperatorFlags& flags, const PartitionPrefixes& prefixes,
                                  const std::string& identity, kube::RestClient& client, Telemetry& telemetry,
                                  controllers::PodMapPageServer* podMapPage, std::stop_token stop) {
  std::stop_source fence;
  std::stop_callback stopping(stop, [&fence] { fence.request_stop(); });
  auto vipu = connectVipu(flags, fence.get_token());
  if (!vipu) return vipu.error();
  controllers::VipuControllers vipuControllers(vipu->targets);

  std::atomic<bool> lost{false};
  ctrl::ManagerOptions options = managerOptions(flags, identity, client);
  options.onLeadershipLost = [&lost, &fence] {
    lost = true;
    fence.request_stop();
    log::error("leadership lost: V-IPU calls fenced; stopping the controllers, then campaigning again");
  };
  ctrl::Manager manager(client, std::move(options));
  kube::KubeEventRecorder events(client);
  // Kueue is looked for at each term: installed after the operator started, it is used from the next term.
  bool kueue = false;
  std::string kueueNotUsed = "the operator runs with --kueue=false";
  if (flags.kueue) {
    auto installed = kueueInstalled(client);
    if (!installed && installed.error().code != ErrorCode::kPermissionDenied) return installed.error();
    kueue = installed && *installed;
    kueueNotUsed = installed ? "Kueue's CRDs (workloads.kueue.x-k8s.io/v1beta2) are not installed"
                             : "the operator may not list Kueue's Workloads (its RBAC)";
    if (kueue) {
      log::info("Kueue is installed: IPUJobs with its queue-name label are queued in Kueue");
    } else if (installed) {
      log::info(
          "Kueue is not installed: IPUJobs with its queue-name label run under the operator's own queue");
    } else {
      log::warning("Kueue is not used: IPUJobs with its queue-name label run under the operator's own queue",
                   {{"why", kueueNotUsed}});
    }
  }
  auto ipuJobs = controllers::IpuJobController::setup(
      manager, vipuControllers, events,
      {.reconciler = reconcilerOptions(flags, prefixes, telemetry),
       .queueingStrategy = flags.queueingStrategy,
       .missingQuota = flags.missingQuota,
       .workers = flags.workers,
       .orphanSweepInterval = std::chrono::seconds(flags.orphanSweepIntervalSeconds),
       .orphanSweepDryRun = flags.orphanSweepDryRun,
       .workerPodProfile = flags.workerPodProfile,
       .reconcileObserved = [&telemetry](bool ok, double seconds) { telemetry.reconciled(ok, seconds); },
       .admissionPassObserved = [&telemetry](double seconds) { telemetry.admissionPass(seconds); },
       .kueue = kueue,
       .kueueNotUsed = kueueNotUsed});
  auto ipuQuotas = controllers::IpuQuotaController::setup(manager, events);
  // Worker pods' V-IPU, served only while this replica leads, over the term's caches and connections.
  if (flags.vipuProxy) {
    std::vector<controllers::ProxyUpstream> upstreams;
    for (const auto& vipuClient : vipu->clients) upstreams.push_back(controllers::upstreamOf(*vipuClient));
    manager.add("V-IPU proxy", ctrl::RunnableGroup::kLeaderElected,
                [&, upstreams, fenced = fence.get_token()](std::stop_token leading) {
                  runVipuProxy(flags, prefixes, upstreams, *ipuJobs, client, fenced, leading);
                });
  }
  // Each controller's IPUPod and the IPUQueue, written while leading (the inventory is read only then).
  if (flags.podMapIntervalSeconds > 0) {
    std::vector<std::string> names;
    for (const auto& endpoint : flags.vipuControllers) names.push_back(endpoint.name);
    manager.add(
        "IPU-POD map", ctrl::RunnableGroup::kLeaderElected,
        [&, names, interval = std::chrono::seconds(flags.podMapIntervalSeconds)](std::stop_token leading) {
          controllers::PodMapPublisher publisher(client, ipuJobs->inventory(), ipuJobs->jobs(), names,
                                                 {prefixes.current, prefixes.legacy}, &ipuJobs->admitter());
          publisher.run(leading, manager.clock(), interval);
        });
  }
  // While leading, the POD map page reads the caches (and a standby's says it is one).
  if (podMapPage != nullptr) {
    std::vector<std::string> names;
    for (const auto& endpoint : flags.vipuControllers) names.push_back(endpoint.name);
    manager.observeLeading(
        [podMapPage, names, &prefixes, &jobs = *ipuJobs, &quotas = *ipuQuotas](bool leading) {
          if (!leading) return podMapPage->detach();
          podMapPage->attach([names, &prefixes, &jobs,
                              &quotas](Clock::WallTime now) -> std::optional<controllers::PageSnapshot> {
            if (!jobs.synced()) return std::nullopt;
            return controllers::pageSnapshotOf(jobs.inventory(), jobs.jobs(), quotas.quotas(), names,
                                               {prefixes.current, prefixes.legacy}, now);
          });
        });
  }
  // While leading, the metrics count the caches' jobs and quotas and /readyz waits for their sync.
  manager.observeLeading([&telemetry, &jobs = *ipuJobs, &quotas = *ipuQuotas](bool leading) {
    telemetry.setLeading(leading);
    if (!leading) return telemetry.detach();
    telemetry.attach({&jobs.jobs(), &quotas.quotas(), [&jobs] { return jobs.controller().queue().len(); },
                      [&jobs] { return jobs.synced(); }});
  });

  const Status ran = manager.run(stop);
  if (lost) return TermEnd::kLeadershipLost;
  if (!ran) return ran.error();
  return TermEnd::kStopped;
}

}  // namespace ipu::cmd
