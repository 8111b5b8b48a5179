#include "cmd/operator_flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <set>
#include <tuple>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "admission/admission_plan.h"
#include "api/job_lifecycle.h"
#include "cli/flags.h"
#include "common/log.h"
#include "ipujob/orphan_partitions.h"
#include "kube/quantity.h"
#include "metrics/bind_address.h"

namespace ipu::cmd {
namespace {

// What spec.managedBy accepts (the CRD's pattern): a DNS name, '/', a name.
bool validControllerName(const std::string& name) {
  const auto slash = name.find('/');
  if (name.size() > 63 || slash == std::string::npos || slash == 0 || slash + 1 == name.size()) return false;
  const auto inDomain = [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
           c == '-' || c == '.';
  };
  const auto inName = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  };
  const std::string domain = name.substr(0, slash), rest = name.substr(slash + 1);
  return std::all_of(domain.begin(), domain.end(), inDomain) &&
         std::all_of(rest.begin(), rest.end(), inName) &&
         std::isalnum(static_cast<unsigned char>(domain.front())) &&
         std::isalnum(static_cast<unsigned char>(domain.back())) &&
         std::isalnum(static_cast<unsigned char>(rest.front())) &&
         std::isalnum(static_cast<unsigned char>(rest.back()));
}

constexpr const char* kVipuControllerFlag = "vipu-controller";

// The flags as text, where OperatorFlags holds them parsed.
struct RawFlags {
  OperatorFlags flags;
  std::vector<std::string> vipuControllers;
  std::string queueingStrategy = "BestEffortFIFO";
  std::string missingQuota = "unlimited";
  std::string workerPodProfile = "ipu-baseline";
  std::string runtimeDelivery = "init-container";
  std::string metricsBindAddress = ":8080";
  std::string healthProbeBindAddress = ":8081";
  std::string podMapPageBindAddress = "0";
  std::string vipuProxyBindAddress = "0";
  std::string vipuProxyAdvertiseAddress;
  std::string vipuProxyEndpointSlice;
  int vipuProxyHttpPort = 0;
  std::string podIp;
  bool vipuTls = false;
  vipu::TlsOptions vipuTlsFiles;
};

// One set of flags for parsing and usage, so --help always tells the truth about the defaults.
void defineFlags(cli::Flags& set, RawFlags& raw) {
  set.showEnvironment(environmentVariableFor);
  OperatorFlags& f = raw.flags;
  set.addString("kubeconfig", &f.kubeconfig,
                "kubeconfig file (default: $KUBECONFIG, then in-cluster, then ~/.kube/config)", "PATH");
  set.addList(
      kVipuControllerFlag, &raw.vipuControllers,
      "a V-IPU controller partitions come from; repeat for several IPU-PODs. Worker pods run on nodes "
      "labelled ipu.graphcore.ai/vipu-controller=NAME (at least one is required)",
      "NAME=HOST:PORT");
  set.addBool("vipu-tls", &raw.vipuTls,
              "connect to the V-IPU controllers over TLS (implied by the --vipu-*-cert flags)");
  set.addString("vipu-ca-cert", &raw.vipuTlsFiles.caCertFile,
                "PEM file of the CA that signs the V-IPU controllers' certificates; only it is trusted "
                "(default with TLS: the system's roots)",
                "PATH");
  set.addString("vipu-client-cert", &raw.vipuTlsFiles.clientCertFile,
                "PEM client certificate for V-IPU controllers that check them (with --vipu-client-key)",
                "PATH");
  set.addString("vipu-client-key", &raw.vipuTlsFiles.clientKeyFile, "PEM key of --vipu-client-cert", "PATH");
  set.addString("vipu-tls-server-name", &raw.vipuTlsFiles.serverNameOverride,
                "the name the V-IPU controllers' certificates carry, when it is not the endpoint's host",
                "NAME");
  set.addString(
      "vipu-proxy-bind-address", &raw.vipuProxyBindAddress,
      "where the V-IPU proxy listens (HOST:PORT, :PORT for every interface): worker pods reach V-IPU "
      "through it and act only on their own job's partitions. 0: no proxy, worker pods get the "
      "controllers' own addresses and can act on any partition",
      "ADDRESS");
  set.addString("vipu-proxy-advertise-address", &raw.vipuProxyAdvertiseAddress,
                "the proxy's address as worker pods reach it (IPUOF_VIPU_API_HOST/PORT), e.g. its Service's "
                "name; HOST or HOST:PORT (default: the bind address, when it names one host; the port: the "
                "bind port)",
                "ADDRESS");
  set.addInteger(
      "vipu-proxy-http-port", &raw.vipuProxyHttpPort,
      "a second port of the proxy, on its bind host, where ipu-runtime asks over HTTP whether its "
      "job's partition is active: worker pods are then created while their partitions activate and "
      "each command waits for its own. 0: pods are created only once the partitions are active",
      0, 65535, "PORT");
  set.addString("vipu-proxy-endpoint-slice", &raw.vipuProxyEndpointSlice,
                "NAMESPACE/NAME of an EndpointSlice of the proxy's headless Service (made by the Helm chart) "
                "that the leading "
                "replica points at its own --pod-ip, so that the advertised name reaches the leader",
                "SLICE");
  set.addString("pod-ip", &raw.podIp,
                "this replica's pod IP (IPv4), for --vipu-proxy-endpoint-slice (the chart sets "
                "IPU_OPERATOR_POD_IP from the downward API)",
                "IP");
  set.addString("queueing-strategy", &raw.queueingStrategy,
                "BestEffortFIFO (a job that fits runs even if an earlier one waits) or StrictFIFO (no "
                "overtaking)",
                "STRATEGY");
  set.addString(
      "missing-quota", &raw.missingQuota,
      "jobs in namespaces without an IPUQuota: unlimited (admitted against free IPUs alone) or deny "
      "(not admitted until a cluster admin gives the namespace a quota)",
      "POLICY");
  set.addString(
      "worker-pod-profile", &raw.workerPodProfile,
      "what IPUJob worker templates may ask for where the Namespace's graphcore.ai/worker-pod-profile "
      "annotation does not say: ipu-baseline (Pod Security baseline plus hostIPC and IPC_LOCK) or "
      "privileged (anything); a job asking for more ends ForbiddenPodSpec before admission",
      "PROFILE");
  set.addString(
      "partition-id-prefix", &f.partitionIdPrefix,
      "starts the id of every V-IPU partition this operator makes (default: k8s- and the first 8 hex digits "
      "of the kube-system namespace's uid, which differ from cluster to cluster; jobs admitted under the "
      "former shared default k8s keep their partitions)",
      "PREFIX");
  set.addInteger("orphan-sweep-interval-seconds", &f.orphanSweepIntervalSeconds,
                 "how often partitions with this prefix that no IPUJob holds are removed after the start-up "
                 "sweep (one found orphaned by two sweeps in a row); 0: at start-up only",
                 0, 86400, "SECONDS");
  set.addInteger("pod-start-timeout-seconds", &f.podStartTimeoutSeconds,
                 "a worker pod that cannot start (unschedulable, an image that cannot be pulled, a container "
                 "that cannot be created) fails this long after it was created, ending the attempt and, by "
                 "restartPolicy, the job, so its IPUs are not held by pods that never run; 0: never",
                 0, 86400 * 7, "SECONDS");
  set.addInteger("pod-deletion-timeout-seconds", &f.podDeletionTimeoutSeconds,
                 "a worker pod still there this long after its deletion deadline is on a node that stopped "
                 "answering: it counts as lost (the job restarts by restartPolicy) and is force-deleted once "
                 "the IPUs it could reach are reset or released; 0: never",
                 0, 86400 * 7, "SECONDS");
  set.addInteger(
      "interactive-ttl-seconds", &f.interactiveDefaultTtlSeconds,
      "how long an interactive IPUJob (spec.interactive) with ttl 0 lives from when its workers run", 1,
      31536000, "SECONDS");
  set.addInteger("interactive-max-ttl-seconds", &f.interactiveMaxTtlSeconds,
                 "the longest an interactive IPUJob may live from when its workers run: a longer "
                 "spec.interactive.ttl is cut to this (Warning Event InteractiveTtlCapped)",
                 1, 31536000, "SECONDS");
  set.addInteger(
      "interactive-idle-seconds", &f.interactiveIdleSeconds,
      "idle reclaim: an interactive IPUJob's single-worker instance ends after this long without a "
      "process started by kubectl exec, port-forward traffic or CPU use (spec.interactive.idleSeconds "
      "0), and none waits longer; 0: off unless the job asks",
      0, 31536000, "SECONDS");
  set.addInteger("outputs-retain-seconds", &f.outputsRetainSeconds,
                 "how long worker 0 of an IPUJob with spec.outputs (and retainSeconds 0) keeps its outputs "
                 "directory for kubectl ipu cp after its command ends",
                 1, 31536000, "SECONDS");
  set.addInteger("outputs-max-retain-seconds", &f.outputsMaxRetainSeconds,
                 "the longest worker 0 keeps spec.outputs after its command ends: a longer "
                 "spec.outputs.retainSeconds is cut to this (Warning Event OutputsRetentionCapped)",
                 1, 31536000, "SECONDS");
  set.addInteger(
      "pod-map-interval-seconds", &f.podMapIntervalSeconds,
      "each V-IPU controller's IPUPod (what is free and who holds it, read by `kubectl ipu status`) "
      "is written at most this often, and only when it changed; 0: no IPUPods",
      0, 3600, "SECONDS");
  set.addBool("orphan-sweep-dry-run", &f.orphanSweepDryRun,
              "log the orphaned partitions the sweeps would remove, and remove none");
  set.addBool(
      "kueue", &f.kueue,
      "give IPUJobs with the label kueue.x-k8s.io/queue-name to Kueue (a Workload per job, admitted by "
      "Kueue's quota, placed by the operator) when Kueue's CRDs are installed; false: such jobs run "
      "under the operator's own queue and IPUQuotas, with a Warning Event saying so");
  set.addString(
      "controller-name", &f.controllerName,
      "the IPUJobs this operator acts on: those whose spec.managedBy is this name (a job without "
      "spec.managedBy belongs to the default name); a second install on the same cluster takes another "
      "(a domain-prefixed path, at most 63 characters)",
      "NAME");
  set.addInteger("workers", &f.workers, "IPUJobs reconciled in parallel", 1, 64, "N");
  set.addDouble("qps", &f.qps, "client-side limit of API server requests per second", 0.1, 10000);
  set.addInteger("burst", &f.burst, "API server requests allowed at once above --qps", 1, 100000, "N");
  set.addString("shm-size", &f.shmSize, "sizeLimit of the /dev/shm emptyDir added to worker pods",
                "QUANTITY");
  set.addString(
      "runtime-image", &f.runtimeImage,
      "image of ipu-runtime, injected into every worker pod (init container) to launch multi-worker "
      "instances and report exit codes; empty: not injected",
      "IMAGE");
  set.addString("runtime-image-pull-policy", &f.runtimeImagePullPolicy,
                "pull policy of the runtime image, as its init container or image volume (Always, "
                "IfNotPresent or Never)",
                "POLICY");
  set.addString("runtime-delivery", &raw.runtimeDelivery,
                "how ipu-runtime reaches worker pods: init-container (any container runtime) or image-volume "
                "(the runtime image mounted read-only, no init container: the pods start sooner; needs "
                "Kubernetes 1.35+ and containerd 2.1+ or CRI-O 1.31+ on the nodes)",
                "MODE");
  set.addBool("leader-elect", &f.leaderElect,
              "run the controller only while holding the Lease 'ipu-operator'");
  set.addString("leader-election-namespace", &f.leaderElectionNamespace,
                "namespace of the leader election Lease (default: the kubeconfig's namespace)", "NAMESPACE");
  set.addString("metrics-bind-address", &raw.metricsBindAddress,
                "where /metrics is served (HOST:PORT, :PORT for every interface, 0 to turn it off)",
                "ADDRESS");
  set.addString("health-probe-bind-address", &raw.healthProbeBindAddress,
                "where /healthz and /readyz are served (HOST:PORT, :PORT, or 0)", "ADDRESS");
  set.addString("pod-map-page-bind-address", &raw.podMapPageBindAddress,
                "where the POD map page is served, reloading every --pod-map-interval-seconds (5 when 0): "
                "127.0.0.1:PORT for `kubectl port-forward`; any other address serves only requests whose "
                "bearer token the cluster accepts and shows what that user may list; 0: no page",
                "ADDRESS");
  set.addString("log-level", &f.logLevel, "debug, info, warning or error", "LEVEL");
}

cli::Flags makeFlags() {
  return cli::Flags("ipu-operator [flags]",
                    "ipu-operator: runs IPUJobs on Graphcore IPUs through V-IPU partitions.\n"
                    "Every flag can also be set in the environment as IPU_OPERATOR_<FLAG> (--log-level: "
                    "IPU_OPERATOR_LOG_LEVEL;\n"
                    "IPU_OPERATOR_VIPU_CONTROLLER takes a comma-separated list); the command line wins.");
}

std::vector<std::string> splitCommas(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

// The V-IPU TLS flags: files readable now (a typo stops the operator at start-up, naming the flag), a client
// certificate only with its key.
Status checkVipuTls(RawFlags& raw) {
  const vipu::TlsOptions& files = raw.vipuTlsFiles;
  if (!raw.vipuTls && files.caCertFile.empty() && files.clientCertFile.empty() &&
      files.clientKeyFile.empty() && files.serverNameOverride.empty()) {
    return {};
  }
  if (files.clientCertFile.empty() != files.clientKeyFile.empty()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--vipu-client-cert and --vipu-client-key go together: give both or neither");
  }
  for (const auto& [flag, path] :
       {std::pair<const char*, const std::string&>{"--vipu-ca-cert", files.caCertFile},
        {"--vipu-client-cert", files.clientCertFile},
        {"--vipu-client-key", files.clientKeyFile}}) {
    if (path.empty()) continue;
    std::ifstream in(path, std::ios::binary);
    if (!in || in.peek() == std::ifstream::traits_type::eof()) {
      return makeError(ErrorCode::kInvalidArgument,
                       std::string(flag) + ": cannot read \"" + path + "\" (or it is empty)");
    }
  }
  raw.flags.vipuTls = files;
  return {};
}

// A name the API server could have given an object: lower-case letters, digits, '-' and '.', alphanumeric at
// both ends, at most 253 characters (namespaces are stricter; the API server says so when one is not).
bool isObjectName(const std::string& name) {
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return !name.empty() && name.size() <= 253 && alnum(name.front()) && alnum(name.back()) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

// --vipu-proxy-http-port, into raw.flags.vipuProxy.
Status checkProxyHttpPort(RawFlags& raw) {
  if (raw.vipuProxyHttpPort == 0) return {};
  if (!raw.flags.vipuProxy) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--vipu-proxy-http-port needs --vipu-proxy-bind-address (the proxy is off)");
  }
  if (raw.vipuProxyHttpPort == raw.flags.vipuProxy->listen.port ||
      raw.vipuProxyHttpPort == raw.flags.vipuProxy->advertisedPort) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--vipu-proxy-http-port: " + std::to_string(raw.vipuProxyHttpPort) +
                         " is the proxy's gRPC port; the HTTP port must be another");
  }
  raw.flags.vipuProxy->httpPort = raw.vipuProxyHttpPort;
  return {};
}

// --vipu-proxy-endpoint-slice and --pod-ip, into raw.flags.vipuProxy.
Status checkProxyEndpointSlice(RawFlags& raw) {
  // --pod-ip alone is harmless: the chart sets it whether the proxy runs or not.
  if (raw.vipuProxyEndpointSlice.empty()) return {};
  if (!raw.flags.vipuProxy) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--vipu-proxy-endpoint-slice needs --vipu-proxy-bind-address (the proxy is off)");
  }
  const auto slash = raw.vipuProxyEndpointSlice.find('/');
  const std::string ns = raw.vipuProxyEndpointSlice.substr(0, slash);
  const std::string name = slash == std::string::npos ? "" : raw.vipuProxyEndpointSlice.substr(slash + 1);
  if (!isObjectName(ns) || !isObjectName(name)) {
    return makeError(
        ErrorCode::kInvalidArgument,
        "--vipu-proxy-endpoint-slice: expected NAMESPACE/NAME, not \"" + raw.vipuProxyEndpointSlice + "\"");
  }
  in_addr address{};
  if (::inet_pton(AF_INET, raw.podIp.c_str(), &address) != 1) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--vipu-proxy-endpoint-slice needs --pod-ip, this replica's IPv4 pod IP (\"" +
                         raw.podIp + "\" is none; the chart sets IPU_OPERATOR_POD_IP from status.podIP)");
  }
  raw.flags.vipuProxy->endpointSliceNamespace = ns;
  raw.flags.vipuProxy->endpointSliceName = name;
  raw.flags.vipuProxy->podIp = raw.podIp;
  return {};
}

// Parses what stays text in RawFlags into `raw.flags`, and checks the rest.
Status checkValues(RawFlags& raw, const std::vector<std::string>& controllers) {
  OperatorFlags& flags = raw.flags;
  if (controllers.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "--vipu-controller is required (or " +
                                                      environmentVariableFor(kVipuControllerFlag) + ")");
  }
  std::set<std::string> names;
  for (const std::string& text : controllers) {
    auto endpoint = parseVipuEndpoint(text);
    if (!endpoint) return endpoint.error();
    if (!names.insert(endpoint->name).second) {
      return makeError(ErrorCode::kInvalidArgument,
                       "--vipu-controller: the name \"" + endpoint->name + "\" is given twice");
    }
    flags.vipuControllers.push_back(*endpoint);
  }
  if (auto tls = checkVipuTls(raw); !tls) return tls.error();
  if (flags.interactiveDefaultTtlSeconds > flags.interactiveMaxTtlSeconds) {
    return makeError(ErrorCode::kInvalidArgument, "--interactive-ttl-seconds (" +
                                                      std::to_string(flags.interactiveDefaultTtlSeconds) +
                                                      ") is longer than --interactive-max-ttl-seconds (" +
                                                      std::to_string(flags.interactiveMaxTtlSeconds) + ")");
  }
  if (flags.outputsRetainSeconds > flags.outputsMaxRetainSeconds) {
    return makeError(ErrorCode::kInvalidArgument, "--outputs-retain-seconds (" +
                                                      std::to_string(flags.outputsRetainSeconds) +
                                                      ") is longer than --outputs-max-retain-seconds (" +
                                                      std::to_string(flags.outputsMaxRetainSeconds) + ")");
  }
  if (!validControllerName(flags.controllerName)) {
    return makeError(
        ErrorCode::kInvalidArgument,
        "--controller-name: \"" + flags.controllerName +
            "\" is not a domain-prefixed path of at most 63 characters (like example.com/ipu-operator, "
            "as spec.managedBy takes)");
  }
  if (flags.controllerName == api::kMultiKueueControllerName) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--controller-name: kueue.x-k8s.io/multikueue is MultiKueue's name, not an operator's");
  }
  if (!controllers::parseQueueingStrategy(raw.queueingStrategy, flags.queueingStrategy)) {
    return makeError(
        ErrorCode::kInvalidArgument,
        "--queueing-strategy: expected BestEffortFIFO or StrictFIFO, not \"" + raw.queueingStrategy + "\"");
  }
  if (!controllers::parseMissingQuotaPolicy(raw.missingQuota, flags.missingQuota)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--missing-quota: expected unlimited or deny, not \"" + raw.missingQuota + "\"");
  }
  if (auto profile = api::parseWorkerPodProfile(raw.workerPodProfile)) {
    flags.workerPodProfile = *profile;
  } else {
    return makeError(
        ErrorCode::kInvalidArgument,
        "--worker-pod-profile: expected ipu-baseline or privileged, not \"" + raw.workerPodProfile + "\"");
  }
  if (auto delivery = controllers::parseRuntimeDelivery(raw.runtimeDelivery)) {
    flags.runtimeDelivery = *delivery;
  } else {
    return makeError(ErrorCode::kInvalidArgument,
                     "--runtime-delivery: expected init-container or image-volume, "
                     "not \"" +
                         raw.runtimeDelivery + "\"");
  }
  const std::string& policy = flags.runtimeImagePullPolicy;
  if (policy != "Always" && policy != "IfNotPresent" && policy != "Never") {
    return makeError(ErrorCode::kInvalidArgument,
                     "--runtime-image-pull-policy: \"" + policy + "\" is not Always, IfNotPresent or Never");
  }
  // Checked here: an invalid sizeLimit would fail every worker pod at the API server instead.
  if (auto valid = kube::validateQuantity(flags.shmSize); !valid) {
    return makeError(ErrorCode::kInvalidArgument, "--shm-size: " + valid.error().message);
  }
  const std::string number = flags.shmSize.substr(0, flags.shmSize.find_first_not_of("+-0123456789."));
  if (number.front() == '-' || number.find_first_of("123456789") == std::string::npos) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--shm-size: \"" + flags.shmSize + "\" must be more than zero (like 10Gi)");
  }
  if (auto valid = controllers::validatePartitionIdPrefix(flags.partitionIdPrefix);
      !flags.partitionIdPrefix.empty() && !valid) {
    return makeError(ErrorCode::kInvalidArgument, "--partition-id-prefix: " + valid.error().message);
  }
  for (const auto& [flag, text, address] :
       {std::tuple<const char*, const std::string&, metrics::BindAddress&>{
            "--metrics-bind-address", raw.metricsBindAddress, flags.metricsBindAddress},
        {"--health-probe-bind-address", raw.healthProbeBindAddress, flags.healthProbeBindAddress},
        {"--pod-map-page-bind-address", raw.podMapPageBindAddress, flags.podMapPageBindAddress}}) {
    auto parsed = metrics::parseBindAddress(text);
    if (!parsed)
      return makeError(ErrorCode::kInvalidArgument, std::string(flag) + ": " + parsed.error().message);
    address = *parsed;
  }
  auto proxy = parseVipuProxyFlags(raw.vipuProxyBindAddress, raw.vipuProxyAdvertiseAddress);
  if (!proxy) return proxy.error();
  flags.vipuProxy = *proxy;
  if (auto slice = checkProxyEndpointSlice(raw); !slice) return slice.error();
  if (auto http = checkProxyHttpPort(raw); !http) return http.error();
  log::Level level;
  if (!log::parseLevel(flags.logLevel, level)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--log-level: expected debug, info, warning or error, not \"" + flags.logLevel + "\"");
  }
  return {};
}

}  // namespace

Result<std::optional<VipuProxyFlags>> parseVipuProxyFlags(const std::string& bindAddress,
                                                          const std::string& advertiseAddress) {
  auto listen = metrics::parseBindAddress(bindAddress);
  if (!listen) {
    return makeError(ErrorCode::kInvalidArgument, "--vipu-proxy-bind-address: " + listen.error().message);
  }
  if (listen->disabled) {
    if (advertiseAddress.empty()) return std::optional<VipuProxyFlags>{};
    return makeError(ErrorCode::kInvalidArgument,
                     "--vipu-proxy-advertise-address needs --vipu-proxy-bind-address (the proxy is off)");
  }
  const bool everyInterface = listen->host.empty() || listen->host == "0.0.0.0" || listen->host == "::";
  if (advertiseAddress.empty()) {
    if (everyInterface) {
      return makeError(ErrorCode::kInvalidArgument,
                       "--vipu-proxy-advertise-address is needed: the proxy listens on every interface (" +
                           bindAddress +
                           "), so the operator cannot tell worker pods where to reach it "
                           "(give the proxy Service's name, like ipu-operator-vipu-proxy.ipu-system.svc)");
    }
    return std::optional<VipuProxyFlags>{VipuProxyFlags{*listen, listen->host, listen->port}};
  }
  // HOST:PORT, or HOST alone with the bind port.
  auto advertised = metrics::parseBindAddress(advertiseAddress);
  if (!advertised)
    advertised = metrics::parseBindAddress(advertiseAddress + ":" + std::to_string(listen->port));
  if (!advertised || advertised->disabled || advertised->host.empty()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--vipu-proxy-advertise-address: expected HOST or HOST:PORT (like "
                     "ipu-operator-vipu-proxy.ipu-system.svc:8090), not \"" +
                         advertiseAddress + "\"");
  }
  return std::optional<VipuProxyFlags>{VipuProxyFlags{*listen, advertised->host, advertised->port}};
}

std::string environmentVariableFor(const std::string& flag) {
  std::string name = "IPU_OPERATOR_";
  for (char c : flag) name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

Result<VipuEndpoint> parseVipuEndpoint(const std::string& text) {
  const auto equals = text.find('=');
  const auto colon = text.rfind(':');
  if (equals == std::string::npos || equals == 0 || colon == std::string::npos || colon < equals + 2) {
    return makeError(
        ErrorCode::kInvalidArgument,
        "--vipu-controller: expected NAME=HOST:PORT (like pod64=10.0.0.5:8090), not \"" + text + "\"");
  }
  VipuEndpoint endpoint{text.substr(0, equals), text.substr(equals + 1, colon - equals - 1), 0};
  // The name is the value of the nodes' ipu.graphcore.ai/vipu-controller label that worker pods select.
  if (!kube::isLabelValue(endpoint.name)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--vipu-controller: the name \"" + endpoint.name +
                         "\" cannot be a node label value (at most 63 letters, digits, '-', '_' or '.', "
                         "beginning and ending with a letter or digit)");
  }
  const std::string port = text.substr(colon + 1);
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), endpoint.port);
  if (port.empty() || error != std::errc() || end != port.data() + port.size() || endpoint.port < 1 ||
      endpoint.port > 65535) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--vipu-controller: port must be 1-65535, not \"" + port + "\"");
  }
  return endpoint;
}

Result<OperatorFlags> parseOperatorFlags(const std::vector<std::string>& args,
                                         const Environment& environment) {
  RawFlags raw;
  cli::Flags set = makeFlags();
  defineFlags(set, raw);
  std::vector<std::string> environmentControllers;
  if (environment) {
    for (const std::string& name : set.names()) {
      const std::string variable = environmentVariableFor(name);
      const auto value = environment(variable);
      if (!value) continue;
      if (name == kVipuControllerFlag) {
        environmentControllers = splitCommas(*value);
        continue;
      }
      if (auto applied = set.preset(name, *value); !applied) {
        return makeError(ErrorCode::kInvalidArgument, variable + ": " + applied.error().message);
      }
    }
  }
  auto rest = set.parse(args);
  if (!rest) return rest.error();
  if (!rest->empty())
    return makeError(ErrorCode::kInvalidArgument, "unexpected argument \"" + rest->front() + "\"");
  raw.flags.helpRequested = set.helpRequested();
  if (raw.flags.helpRequested) return raw.flags;
  if (auto valid =
          checkValues(raw, raw.vipuControllers.empty() ? environmentControllers : raw.vipuControllers);
      !valid) {
    return valid.error();
  }
  return raw.flags;
}

std::string operatorUsage() {
  RawFlags raw;
  cli::Flags set = makeFlags();
  defineFlags(set, raw);
  return set.usage();
}

}  // namespace ipu::cmd
