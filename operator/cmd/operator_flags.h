#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "admission/admission_plan.h"
#include "admission/quota_plan.h"
#include "api/worker_pod_profile.h"
#include "common/environment.h"
#include "common/result.h"
#include "ipujob/runtime_injection.h"
#include "metrics/bind_address.h"
#include "vipu/client_options.h"

namespace ipu::cmd {

// A V-IPU controller given as NAME=HOST:PORT.
struct VipuEndpoint {
  std::string name;
  std::string host;
  int port = 0;
};

// The V-IPU proxy (controllers/vipu_proxy): where it listens, and the address worker pods are given for it as
// IPUOF_VIPU_API_HOST/PORT instead of a V-IPU controller's.
struct VipuProxyFlags {
  metrics::BindAddress listen;  // a fixed port: pods keep the address they were given across restarts
  std::string advertisedHost;
  int advertisedPort = 0;
  // --vipu-proxy-endpoint-slice NAMESPACE/NAME and --pod-ip: the slice the leading replica points at its own
  // pod IP (cmd/proxy_endpoint.h). Empty: the advertised address reaches the proxy by itself.
  std::string endpointSliceNamespace;
  std::string endpointSliceName;
  std::string podIp;
  // --vipu-proxy-http-port: the proxy's HTTP face (partition status for ipu-runtime), on the bind host and
  // the advertised host; 0: none, and pods are created only once their partitions are active.
  int httpPort = 0;
  bool operator==(const VipuProxyFlags&) const = default;
};

// Everything ipu-operator is configured with; each default is shown by --help.
struct OperatorFlags {
  std::string kubeconfig;                     // empty: $KUBECONFIG, then in-cluster, then ~/.kube/config
  std::vector<VipuEndpoint> vipuControllers;  // at least one; names unique
  // TLS to every V-IPU controller: set by --vipu-tls or any of the --vipu-* certificate flags.
  std::optional<vipu::TlsOptions> vipuTls;
  // Unset (--vipu-proxy-bind-address 0): worker pods get the controllers' own addresses.
  std::optional<VipuProxyFlags> vipuProxy;
  controllers::QueueingStrategy queueingStrategy = controllers::QueueingStrategy::kBestEffortFifo;
  controllers::MissingQuotaPolicy missingQuota = controllers::MissingQuotaPolicy::kUnlimited;
  api::WorkerPodProfile workerPodProfile = api::WorkerPodProfile::kIpuBaseline;
  std::string partitionIdPrefix;         // "": derived from the cluster (cmd/partition_prefix.h)
  int orphanSweepIntervalSeconds = 300;  // 0: at start-up only
  int podStartTimeoutSeconds = 600;      // 0: never
  int podDeletionTimeoutSeconds = 120;   // 0: never
  // Interactive jobs (spec.interactive): the ttl of one that asks for 0, and the most any may have.
  int interactiveDefaultTtlSeconds = 4 * 3600;
  int interactiveMaxTtlSeconds = 24 * 3600;
  // Worker 0 keeping spec.outputs after its command ends: for retainSeconds 0, and the most any may ask.
  int interactiveIdleSeconds = 0;  // idle reclaim; 0: off
  int outputsRetainSeconds = 600;
  int outputsMaxRetainSeconds = 3600;
  int podMapIntervalSeconds = 5;  // 0: no IPUPods are published
  bool orphanSweepDryRun = false;
  // Jobs with Kueue's queue-name label are given to Kueue when its CRDs are installed.
  bool kueue = true;
  // The IPUJobs this operator acts on: those whose spec.managedBy is this (a job without it: the default).
  std::string controllerName = "graphcore.ai/ipu-operator";
  int workers = 2;
  double qps = 50;
  int burst = 100;
  std::string shmSize = "10Gi";
  std::string
      runtimeImage;  // empty: ipu-runtime is not injected (LauncherNotRun warnings for jobs that need it)
  std::string runtimeImagePullPolicy = "IfNotPresent";
  controllers::RuntimeDelivery runtimeDelivery = controllers::RuntimeDelivery::kInitContainer;
  bool leaderElect = true;
  std::string leaderElectionNamespace;  // empty: the kubeconfig's namespace
  // Parsed from --metrics-bind-address, --health-probe-bind-address and --pod-map-page-bind-address (their
  // defaults live with the flags).
  metrics::BindAddress metricsBindAddress;
  metrics::BindAddress healthProbeBindAddress;
  metrics::BindAddress podMapPageBindAddress;  // disabled: no POD map page
  std::string logLevel = "info";
  bool helpRequested = false;
};

// Every flag can also come from the environment: --log-level from IPU_OPERATOR_LOG_LEVEL, and so on; the
// command line wins. --vipu-controller's variable holds a comma-separated list, used when no
// --vipu-controller is given.
std::string environmentVariableFor(const std::string& flag);

// NAME=HOST:PORT; InvalidArgument naming what is wrong.
Result<VipuEndpoint> parseVipuEndpoint(const std::string& text);

using ipu::Environment;

// --vipu-proxy-bind-address and --vipu-proxy-advertise-address ("" when not given) as VipuProxyFlags:
// nullopt for "0"; the advertised address defaults to the bind address when that names one host, and its
// port to the bind port. InvalidArgument naming the flag otherwise.
Result<std::optional<VipuProxyFlags>> parseVipuProxyFlags(const std::string& bindAddress,
                                                          const std::string& advertiseAddress);

// InvalidArgument (the message names the flag or variable) for unknown flags, bad values and a missing
// --vipu-controller.
Result<OperatorFlags> parseOperatorFlags(const std::vector<std::string>& args,
                                         const Environment& environment = {});
std::string operatorUsage();

}  // namespace ipu::cmd
