// ipu-runtime: the static binary the operator places into every worker pod (docs/architecture.md, "Runtime
// and launch").
//
//   ipu-runtime exec -- CMD…              run the worker's command as PID 1, with a termination message
//   ipu-runtime launch [--launcher] -- CMD…  worker 0 of a multi-worker instance: start every rank
//   ipu-runtime agent [--port N]          the other workers: serve remote starts until the launch ends
//   ipu-runtime rsh HOST CMD…             mpirun's remote-start agent (OMPI_MCA_plm_rsh_agent)
//   ipu-runtime install DIR               the init container: copy this binary into DIR
//   ipu-runtime files PATH                `kubectl ipu cp`: PATH as a ustar stream on stdout (no tar needed)
//   ipu-runtime retain --lock FILE --seconds N --path PATH
//                                         worker 0's outputs kept N s after its command ends (spec.outputs)
//   ipu-runtime version
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "contract/runtime_contract.h"
#include "files/tree_archive.h"
#include "idle/idle_watch.h"
#include "launch/launch.h"
#include "partition/partition_wait.h"
#include "process/supervisor.h"
#include "process/termination.h"
#include "remote/agent.h"
#include "remote/rsh.h"
#include "retention/worker_lock.h"
#include "settings/whole_number.h"
#include "tls/tls.h"

namespace {

namespace contract = ipu::runtime::contract;
namespace idle = ipu::runtime::idle;
namespace launch = ipu::runtime::launch;
namespace partition = ipu::runtime::partition;
namespace process = ipu::runtime::process;
namespace remote = ipu::runtime::remote;
namespace settings = ipu::runtime::settings;

constexpr int kUsageError = 2;

const char* usage =
    "usage: ipu-runtime exec -- CMD [ARG...]\n"
    "       ipu-runtime launch [--launcher] -- CMD [ARG...]\n"
    "       ipu-runtime agent [--port N]\n"
    "       ipu-runtime rsh HOST CMD [ARG...]\n"
    "       ipu-runtime install DIR\n"
    "       ipu-runtime files PATH\n"
    "       ipu-runtime retain --lock FILE --seconds N --path PATH\n"
    "       ipu-runtime version\n";

int usageError(const std::string& why) {
  std::fprintf(stderr, "ipu-runtime: %s\n%s", why.c_str(), usage);
  return kUsageError;
}

std::string env(const char* name, const std::string& fallback = "") {
  const char* value = std::getenv(name);
  return value != nullptr ? value : fallback;
}

std::string hostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::vector<std::string> splitPeers(const std::string& text) {
  std::vector<std::string> peers;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) peers.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return peers;
}

// The command after "--" (or the remaining arguments when there is no "--").
std::vector<std::string> commandAfter(const std::vector<std::string>& args, std::size_t from) {
  if (from < args.size() && args[from] == "--") ++from;
  return {args.begin() + static_cast<std::ptrdiff_t>(std::min(from, args.size())), args.end()};
}

std::string selfPath() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string(contract::kBinary) : path.string();
}

// IPU_RUNTIME_IDLE_SECONDS: an interactive worker with idle reclaim on (0: off).
std::chrono::seconds idleSecondsFromEnvironment() {
  const std::string text = env(contract::kEnvIdleSeconds);
  if (text.empty()) return std::chrono::seconds(0);
  return std::chrono::seconds(settings::wholeNumberIn(contract::kEnvIdleSeconds, text, 0, 31536000));
}

int runExec(const std::vector<std::string>& args) {
  std::vector<std::string> command = commandAfter(args, 0);
  if (command.empty()) return usageError("exec needs a command");
  const std::chrono::seconds idleFor = idleSecondsFromEnvironment();
  std::optional<idle::IdleWatch> watch;
  process::Supervised outcome = process::supervise(command, {}, [&](pid_t pid) {
    if (idleFor.count() > 0) watch.emplace(idle::IdleOptions{idleFor}, pid);
  });
  if (watch && watch->reclaimed()) {
    // Ended by the watch, not by itself: the worker succeeds, and the job says why it ended.
    const std::string message = std::string(contract::kIdleReclaimedMessage) + watch->reason();
    watch.reset();
    std::fprintf(stderr, "ipu-runtime exec: %s\n", message.c_str());
    process::writeTerminationMessage(env(contract::kEnvTerminationLog), message);
    return 0;
  }
  watch.reset();
  std::string message =
      process::terminationMessage({hostName(), env(contract::kEnvInstance), launch::shellJoin(command),
                                   outcome.status, outcome.ran, outcome.spawnError});
  if (!outcome.spawnError.empty() || !outcome.status.succeeded())
    std::fprintf(stderr, "ipu-runtime exec: %s\n", message.c_str());
  process::writeTerminationMessage(env(contract::kEnvTerminationLog), message);
  return outcome.status.code;
}

int runLaunch(const std::vector<std::string>& args) {
  bool userLauncher = !args.empty() && args[0] == contract::kLauncherFlag;
  std::vector<std::string> command = commandAfter(args, userLauncher ? 1 : 0);
  if (command.empty()) return usageError("launch needs a command");
  auto getEnv = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
  };
  launch::LaunchOptions options;
  options.shape = launch::shapeFromEnvironment(getEnv);
  options.hosts = launch::peersFromEnvironment(getEnv, options.shape.workers);
  options.credentials = remote::podCredentials();
  options.command = command;
  options.userLauncher = userLauncher;
  options.agentPort = remote::agentPort();
  std::string timeout = env(contract::kEnvPeerTimeout, std::to_string(contract::kDefaultPeerTimeoutSeconds));
  options.peerTimeout =
      std::chrono::seconds(settings::wholeNumberIn(contract::kEnvPeerTimeout, timeout, 1, 86400));
  options.runtimeBinary = selfPath();
  options.hostfilePath = contract::kHostfile;
  options.terminationLog = env(contract::kEnvTerminationLog);
  options.worker = hostName();
  options.instance = env(contract::kEnvInstance);
  return launch::runLaunch(options);
}

int runAgent(const std::vector<std::string>& args) {
  // Arguments first: a mistyped flag is reported as such, whatever else is missing.
  std::optional<int> port;
  if (args.size() == 2 && args[0] == "--port") {
    port = settings::wholeNumberIn("--port", args[1], 0, 65535);
  } else if (!args.empty()) {
    return usageError("agent takes no arguments but --port N");
  }
  remote::AgentOptions options{remote::podCredentials(),
                               port ? *port : remote::agentPort(),
                               hostName(),
                               env(contract::kEnvTerminationLog),
                               hostName(),
                               env(contract::kEnvInstance)};
  return remote::runAgent(options);
}

int runRsh(const std::vector<std::string>& args) {
  if (args.size() < 2) return usageError("rsh needs a host and a command");
  remote::RshOptions options{remote::podCredentials(),
                             args[0],
                             {args.begin() + 1, args.end()},
                             splitPeers(env(contract::kEnvPeers)),
                             remote::agentPort()};
  return remote::runRsh(options);
}

// Copies this binary into `dir` (write, then rename: a reader never sees half a file).
int runInstall(const std::vector<std::string>& args) {
  if (args.size() != 1) return usageError("install needs one directory");
  std::filesystem::path target = std::filesystem::path(args[0]) / "ipu-runtime";
  std::filesystem::path partial = target.string() + ".partial";
  std::filesystem::copy_file(selfPath(), partial, std::filesystem::copy_options::overwrite_existing);
  chmod(partial.c_str(), 0755);
  std::filesystem::rename(partial, target);
  std::fprintf(stderr, "ipu-runtime %s installed into %s\n", IPU_RUNTIME_VERSION, target.c_str());
  return 0;
}

// Writes PATH (a file, or a directory and everything under it) to stdout as a ustar archive, for `kubectl ipu
// cp` at the other end of `kubectl exec`. Runs beside the worker's command, so it reports on stderr only and
// never writes the container's termination message.
int runFiles(const std::vector<std::string>& args) {
  if (args.size() != 1) return usageError("files needs one path");
  try {
    const auto summary = ipu::runtime::files::writeTreeArchive(
        args[0], STDOUT_FILENO,
        [](const std::string& warning) { std::fprintf(stderr, "ipu-runtime files: %s\n", warning.c_str()); });
    std::fprintf(stderr, "ipu-runtime files: %llu files, %llu directories, %llu bytes\n",
                 static_cast<unsigned long long>(summary.files),
                 static_cast<unsigned long long>(summary.directories),
                 static_cast<unsigned long long>(summary.bytes));
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ipu-runtime files: %s\n", error.what());
    return 1;
  }
}

// The retention container of worker 0 (spec.outputs): every flag is the operator's, all required.
int runRetain(const std::vector<std::string>& args) {
  ipu::runtime::retention::RetainOptions options;
  bool seconds = false;
  for (std::size_t i = 0; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return usageError("retain: " + args[i] + " needs a value");
    if (args[i] == "--lock") {
      options.lockPath = args[i + 1];
    } else if (args[i] == "--seconds") {
      options.retain = std::chrono::seconds(settings::wholeNumberIn("--seconds", args[i + 1], 0, 31536000));
      seconds = true;
    } else if (args[i] == "--path") {
      options.outputsPath = args[i + 1];
    } else {
      return usageError("retain: unknown flag " + args[i]);
    }
  }
  if (options.lockPath.empty() || !seconds || options.outputsPath.empty())
    return usageError("retain needs --lock, --seconds and --path");
  return ipu::runtime::retention::runRetain(options);
}

// Worker 0 of a job that keeps its outputs: the lock the retention container waits on, held until this
// process exits (contract::kEnvWorkerLock). Without it the outputs are not kept, which the log says; the
// command runs all the same.
void holdWorkerLockWhenAsked() {
  const std::string path = env(contract::kEnvWorkerLock);
  if (path.empty()) return;
  try {
    static ipu::runtime::Fd held = ipu::runtime::retention::holdWorkerLock(path);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ipu-runtime: %s: the outputs will not be kept after the command ends\n",
                 error.what());
  }
}

// IPU_RUNTIME_PARTITION_STATUS_URL: the pod was made while its partition activated, and the command waits
// for it. nullopt: go on with the command; otherwise the exit code (the wait timed out or was stopped, and
// the termination message says so).
std::optional<int> awaitPartition() {
  const std::string text = env(contract::kEnvPartitionStatusUrl);
  if (text.empty()) return std::nullopt;
  const auto url = partition::parseStatusUrl(text);
  if (!url) {
    throw settings::SettingError(std::string(contract::kEnvPartitionStatusUrl) +
                                 ": expected http://HOST:PORT/PATH, not \"" + text + "\"");
  }
  const std::string timeout =
      env(contract::kEnvPartitionTimeout, std::to_string(contract::kDefaultPartitionTimeoutSeconds));
  const partition::WaitOptions options{
      *url, env("IPUOF_VIPU_API_PARTITION_ID", url->path),
      std::chrono::seconds(settings::wholeNumberIn(contract::kEnvPartitionTimeout, timeout, 1, 86400))};
  const partition::WaitOutcome outcome = partition::waitUntilActive(options);
  switch (outcome.kind) {
    case partition::WaitOutcome::Kind::kActive:
      return std::nullopt;
    case partition::WaitOutcome::Kind::kStopped:
      // Deleted before its partition was active (the job ended, or its partition failed): nothing ran.
      process::writeTerminationMessage(env(contract::kEnvTerminationLog),
                                       "stopped by signal " + std::to_string(outcome.signal) +
                                           " while waiting for V-IPU partition " + options.partition +
                                           "; the command did not run");
      return 128 + outcome.signal;
    case partition::WaitOutcome::Kind::kTimedOut:
      break;
  }
  const std::string message = "V-IPU partition " + options.partition + " was not active after " +
                              std::to_string(options.timeout.count()) + " s (" +
                              contract::kEnvPartitionTimeout + "); the command did not run. Last answer of " +
                              text + ": " + outcome.lastAnswer;
  std::fprintf(stderr, "ipu-runtime: %s\n", message.c_str());
  process::writeTerminationMessage(env(contract::kEnvTerminationLog), message);
  return 1;
}

int dispatch(const std::string& subcommand, const std::vector<std::string>& args) {
  if (subcommand == contract::kExecCommand || subcommand == contract::kLaunchCommand) {
    holdWorkerLockWhenAsked();
    if (const auto stopped = awaitPartition()) return *stopped;
  }
  if (subcommand == contract::kExecCommand) return runExec(args);
  if (subcommand == contract::kLaunchCommand) return runLaunch(args);
  if (subcommand == contract::kRetainCommand) return runRetain(args);
  if (subcommand == contract::kAgentCommand) return runAgent(args);
  if (subcommand == contract::kRshCommand) return runRsh(args);
  if (subcommand == contract::kInstallCommand) return runInstall(args);
  if (subcommand == contract::kFilesCommand) return runFiles(args);
  if (subcommand == "version" || subcommand == "--version") {
    std::printf("ipu-runtime %s\n", IPU_RUNTIME_VERSION);
    return 0;
  }
  if (subcommand == "help" || subcommand == "--help" || subcommand == "-h") {
    std::fputs(usage, stdout);
    return 0;
  }
  return usageError("unknown subcommand \"" + subcommand + "\"");
}

}  // namespace

int main(int argc, char** argv) {
  // A peer that goes away must be an error on the write, not a signal that kills the runtime.
  std::signal(SIGPIPE, SIG_IGN);
  // Before anything else touches OpenSSL: it must never look for openssl.cnf in an image we do not know.
  ipu::runtime::tls::initOpenSsl();
  if (argc < 2) return usageError("no subcommand");
  std::vector<std::string> args(argv + 2, argv + argc);
  try {
    return dispatch(argv[1], args);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ipu-runtime %s: %s\n", argv[1], error.what());
    process::writeTerminationMessage(env(contract::kEnvTerminationLog),
                                     std::string("ipu-runtime ") + argv[1] + ": " + error.what());
    return 1;
  }
}
