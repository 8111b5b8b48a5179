#pragma once

// The one contract between the operator, which builds worker pods, and ipu-runtime, which runs inside them:
// where the runtime is installed, where the job's credentials are mounted, the agent's port and the
// environment both sides read. The pod builder and the runtime include this header and nothing else of each
// other, so a name changed here changes on both sides at once.

#include <charconv>
#include <optional>
#include <string_view>

namespace ipu::runtime::contract {

// The runtime's emptyDir, mounted writable in the worker container: the worker's lock and the launch's
// hostfile, and, when the runtime is delivered by an init container, the static binary it copies there.
inline constexpr const char* kInstallDir = "/opt/ipu-runtime";
inline constexpr const char* kBinary = "/opt/ipu-runtime/ipu-runtime";
// When the runtime is delivered as an image volume (the kubelet mounts the ipu-runtime image itself,
// read-only, with no init container), the image is mounted here and the binary is its /ipu-runtime.
inline constexpr const char* kImageDir = "/opt/ipu-runtime-image";
inline constexpr const char* kImageBinary = "/opt/ipu-runtime-image/ipu-runtime";
// Whether `path` is where a worker pod runs the runtime from, however it was delivered.
inline bool isRuntimeBinary(std::string_view path) {
  return path == kBinary || path == kImageBinary;
}
// Written by the launch for a user's own mpirun (kEnvOmpiHostfile), in the writable emptyDir.
inline constexpr const char* kHostfile = "/opt/ipu-runtime/hostfile";
// The per-job certificate Secret is mounted here: the job's CA, and the one key pair every pod of the job
// presents (tls.crt/tls.key, as in a kubernetes.io/tls Secret).
inline constexpr const char* kCredentialsDir = "/etc/ipu-runtime/tls";
inline constexpr const char* kCaFile = "ca.crt";
inline constexpr const char* kCertFile = "tls.crt";
inline constexpr const char* kKeyFile = "tls.key";
// The agent listens on this TCP port in every pod of a multi-worker job instance.
inline constexpr int kAgentPort = 7470;

// A TCP port as both sides read one from text (IPU_RUNTIME_AGENT_PORT, the port of
// IPU_RUNTIME_PARTITION_STATUS_URL): a whole number 1-65535, nothing else (nullopt otherwise). The runtime
// refuses any other value; the operator closes the agent port it names to other jobs' pods.
inline std::optional<int> portFrom(std::string_view text) {
  int port = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535)
    return std::nullopt;
  return port;
}

// Subcommands the operator writes into the worker container's command.
inline constexpr const char* kExecCommand = "exec";        // ipu-runtime exec -- CMD...
inline constexpr const char* kLaunchCommand = "launch";    // ipu-runtime launch [--launcher] -- CMD...
inline constexpr const char* kAgentCommand = "agent";      // ipu-runtime agent
inline constexpr const char* kRshCommand = "rsh";          // ipu-runtime rsh HOST CMD...
inline constexpr const char* kInstallCommand = "install";  // ipu-runtime install DIR (the init container)
// Run by `kubectl ipu cp` through `kubectl exec`, not by the operator: PATH as a ustar stream on stdout.
inline constexpr const char* kFilesCommand = "files";  // ipu-runtime files PATH
inline constexpr const char* kLauncherFlag = "--launcher";
// The container that keeps worker 0's outputs (spec.outputs) after its command ends:
//   ipu-runtime retain --lock FILE --seconds N --path PATH
// waits until the worker's runtime lets go of FILE's lock (its command ended, however it ended), then keeps
// the pod running N seconds so that `kubectl ipu cp` can exec into it and read PATH.
inline constexpr const char* kRetainCommand = "retain";
inline constexpr const char* kRetentionContainer = "ipu-outputs";
// Held (flock) by the runtime in the worker container from start to exit; in the runtime's emptyDir, which
// both containers mount.
inline constexpr const char* kWorkerLockFile = "/opt/ipu-runtime/worker.lock";
// Whether `path` is `dir` or under it: the runtime's own directories the outputs may not be in, and what
// `kubectl ipu cp` may copy from the retention container.
inline bool pathWithin(std::string_view path, std::string_view dir) {
  return path == dir || (path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/');
}

// Environment set by the operator in every worker container.
// Comma-separated host names of this job instance's workers, worker 0 first, as peers resolve them (the pod's
// hostname and the job's headless Service: "<hostname>.<service>", completed by the pod's DNS search path).
inline constexpr const char* kEnvPeers = "IPU_RUNTIME_PEERS";
// Where the runtime writes its termination message (the container's terminationMessagePath).
inline constexpr const char* kEnvTerminationLog = "IPU_RUNTIME_TERMINATION_LOG";
// Seconds the launch waits for every peer's agent to answer (default kDefaultPeerTimeoutSeconds).
inline constexpr const char* kEnvPeerTimeout = "IPU_RUNTIME_PEER_TIMEOUT_SECONDS";
inline constexpr int kDefaultPeerTimeoutSeconds = 600;
// The SHA-256 (hex) of the job's CA certificate as the operator issued it (status.runtimeSecret.caSha256):
// the runtime refuses to use a mounted ca.crt with another digest (a Secret replaced after it was made).
// Unset for pods made before the operator pinned it.
inline constexpr const char* kEnvCaSha256 = "IPU_RUNTIME_CA_SHA256";
// Set in worker 0's container when it keeps its outputs: the file whose lock the runtime holds while it runs
// (kWorkerLockFile).
inline constexpr const char* kEnvWorkerLock = "IPU_RUNTIME_WORKER_LOCK";
// Set in the instance leaders (exec or launch) of an interactive job with idle reclaim on: the seconds
// without a kubectl exec process, port-forward traffic or CPU use after which the runtime ends the command
// and exits 0 with a termination message starting with kIdleReclaimedMessage.
inline constexpr const char* kEnvIdleSeconds = "IPU_RUNTIME_IDLE_SECONDS";
inline constexpr const char* kIdleReclaimedMessage = "reclaimed as idle: ";
// Set when the operator creates the pods while the job's partition activates: where the runtime asks, before
// the command runs, whether the partition is active ("http://HOST:PORT" + kPartitionStatusPath + the id; the
// operator's V-IPU proxy, which answers a pod about its own job's partitions only). Unset: the partition was
// active before the pod was made. The wait ends after IPU_RUNTIME_PARTITION_TIMEOUT_SECONDS
// (kDefaultPartitionTimeoutSeconds), the command then not run.
inline constexpr const char* kEnvPartitionStatusUrl = "IPU_RUNTIME_PARTITION_STATUS_URL";
inline constexpr const char* kEnvPartitionTimeout = "IPU_RUNTIME_PARTITION_TIMEOUT_SECONDS";
inline constexpr int kDefaultPartitionTimeoutSeconds = 600;
// The proxy's HTTP path for a partition's state: GET kPartitionStatusPath + id answers
// {"partition": id, "readyState": "PS_ACTIVE"} (V-IPU's ReadyState names).
inline constexpr std::string_view kPartitionStatusPath = "/v1/partitions/";
// Overrides for tests and unusual clusters: the agent's port and the credentials directory.
inline constexpr const char* kEnvAgentPort = "IPU_RUNTIME_AGENT_PORT";
inline constexpr const char* kEnvCredentialsDir = "IPU_RUNTIME_TLS_DIR";
// OpenMPI's remote-start agent: set to "<kBinary> rsh" so a user's own mpirun/poprun across the job's pods
// starts its daemons through the runtime's agent.
inline constexpr const char* kEnvOmpiRshAgent = "OMPI_MCA_plm_rsh_agent";
// A hostfile (one worker per line, "slots=1") written by the launch for a user's own mpirun.
inline constexpr const char* kEnvOmpiHostfile = "OMPI_MCA_orte_default_hostfile";

// The job's shape, set by the operator in every worker container (IPUJOB_* is also the user's view).
inline constexpr const char* kEnvJobName = "IPUJOB_NAME";
inline constexpr const char* kEnvJobNamespace = "IPUJOB_NAMESPACE";
inline constexpr const char* kEnvInstance = "IPUJOB_INSTANCE";
inline constexpr const char* kEnvInstances = "IPUJOB_INSTANCES";
inline constexpr const char* kEnvWorkerIndex = "IPUJOB_WORKER_INDEX";
inline constexpr const char* kEnvWorkerInInstance = "IPUJOB_WORKER_IN_INSTANCE";
inline constexpr const char* kEnvWorkersPerInstance = "IPUJOB_WORKERS_PER_INSTANCE";
inline constexpr const char* kEnvIpusPerInstance = "IPUJOB_IPUS_PER_INSTANCE";
inline constexpr const char* kEnvReplicasPerWorker = "IPUJOB_REPLICAS_PER_WORKER";
inline constexpr const char* kEnvService = "IPUJOB_SERVICE";

}  // namespace ipu::runtime::contract
