#include "kubectl-ipu/copy_command.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json_access.h"
#include "contract/runtime_contract.h"
#include "files/archive_extractor.h"
#include "kube/resource.h"

extern char** environ;

namespace ipu::kubectl_ipu {
namespace {

namespace contract = runtime::contract;
using Json = nlohmann::json;

// A container of the worker pod and the path it runs ipu-runtime from.
struct RuntimeContainer {
  std::string name;
  std::string binary;
};

// The container of the worker pod that runs ipu-runtime: the operator's command starts with its binary, at
// the path of the way the runtime was delivered (init container or image volume).
std::optional<RuntimeContainer> runtimeContainerOf(const Json& pod) {
  for (const Json& container : arrayMember(member(pod, "spec"), "containers")) {
    const Json& command = arrayMember(container, "command");
    if (!command.empty() && command[0].is_string() &&
        contract::isRuntimeBinary(command[0].get<std::string>()))
      return RuntimeContainer{stringMember(container, "name"), command[0].get<std::string>()};
  }
  return std::nullopt;
}

// What worker 0's retention container keeps after the command ended (spec.outputs), when the pod has one:
// the mount of its outputs volume (its other mount is the runtime's own), and the binary it runs (its
// command's first word: the ipu-runtime image's own).
struct Retention {
  std::string path;
  std::string binary;
};
std::optional<Retention> retentionOf(const Json& pod) {
  for (const Json& container : arrayMember(member(pod, "spec"), "containers")) {
    if (stringMember(container, "name") != contract::kRetentionContainer) continue;
    const Json& command = arrayMember(container, "command");
    const std::string binary =
        !command.empty() && command[0].is_string() ? command[0].get<std::string>() : contract::kBinary;
    for (const Json& mount : arrayMember(container, "volumeMounts")) {
      if (const std::string path = stringMember(mount, "mountPath"); path != contract::kInstallDir)
        return Retention{path, binary};
    }
  }
  return std::nullopt;
}

bool ownedByJob(const Json& pod, const std::string& job) {
  for (const Json& owner : arrayMember(member(pod, "metadata"), "ownerReferences")) {
    if (stringMember(owner, "kind") == "IPUJob" && stringMember(owner, "name") == job &&
        member(owner, "controller") == Json(true))
      return true;
  }
  return false;
}

// "running", or what the container is doing instead ("terminated (exit 0)", "waiting (ContainerCreating)").
std::string containerState(const Json& pod, const std::string& container) {
  for (const Json& status : arrayMember(member(pod, "status"), "containerStatuses")) {
    if (stringMember(status, "name") != container) continue;
    const Json& state = member(status, "state");
    if (state.contains("running")) return "running";
    if (state.contains("terminated"))
      return "terminated (exit " + member(state["terminated"], "exitCode").dump() + ")";
    if (state.contains("waiting")) return "waiting (" + stringMember(state["waiting"], "reason") + ")";
  }
  return "not started";
}

// A child process whose stdout this reads; killed and reaped if the reader gives up.
class Reader {
 public:
  explicit Reader(const std::vector<std::string>& argv) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    const int spawned = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    fd_ = fds[0];
    if (spawned != 0) {
      ::close(fd_);
      throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(spawned) +
                               " (set $KUBECTL to kubectl's path)");
    }
  }
  ~Reader() {
    if (fd_ >= 0) ::close(fd_);
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // The next bytes; empty at the end of the output.
  std::string_view read(std::vector<char>& buffer) {
    for (;;) {
      const ssize_t got = ::read(fd_, buffer.data(), buffer.size());
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw std::runtime_error(std::string("reading kubectl exec: ") + std::strerror(errno));
      return {buffer.data(), static_cast<std::size_t>(got)};
    }
  }

  // Its exit code (128 + the signal that ended it).
  int wait() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

std::string sizeText(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

}  // namespace

int copyFromJob(kube::RestClient& client, const CopyOptions& options, std::ostream& out, std::ostream& err) {
  const std::string podName = options.job + "-worker-" + std::to_string(options.worker);
  auto pod = client.get(kube::ResourceRef::pods(), options.ns, podName);
  if (!pod) {
    if (pod.error().code == ErrorCode::kNotFound) {
      err << "error: no pod " << options.ns << "/" << podName << ": the job has no worker " << options.worker
          << " now (files can be copied from a worker while its container runs)\n";
    } else {
      err << "error: reading " << options.ns << "/" << podName << ": " << pod.error().message << '\n';
    }
    return 1;
  }
  if (!ownedByJob(*pod, options.job)) {
    err << "error: " << options.ns << "/" << podName << " is not a worker of the IPUJob " << options.job
        << '\n';
    return 1;
  }
  const auto container = runtimeContainerOf(*pod);
  if (!container) {
    err << "error: " << podName << " does not run ipu-runtime (the operator runs without --runtime-image); "
        << "`kubectl cp` can copy from it if its image has tar\n";
    return 1;
  }
  std::string source = container->name;
  std::string binary = container->binary;
  if (const std::string state = containerState(*pod, container->name); state != "running") {
    // The command ended: a pod that keeps its outputs (spec.outputs) serves them from its retention
    // container, which sees that directory only.
    const auto retained = retentionOf(*pod);
    if (!retained || containerState(*pod, contract::kRetentionContainer) != "running") {
      err << "error: the container " << container->name << " of " << podName << " is " << state
          << ": files can be copied from a worker while its container runs, or from worker 0 while it keeps "
             "spec.outputs\n";
      return 1;
    }
    if (!contract::pathWithin(options.path, retained->path)) {
      err << "error: the command of " << podName << " has ended and only " << retained->path
          << " is kept (spec.outputs): copy " << options.job << ":" << retained->path
          << " or a path under it\n";
      return 1;
    }
    source = contract::kRetentionContainer;
    binary = retained->binary;
  }
  const char* kubectl = std::getenv("KUBECTL");
  std::vector<std::string> argv{kubectl != nullptr && *kubectl != '\0' ? kubectl : "kubectl"};
  if (!options.kubeconfig.empty()) argv.insert(argv.end(), {"--kubeconfig", options.kubeconfig});
  if (!options.context.empty()) argv.insert(argv.end(), {"--context", options.context});
  argv.insert(argv.end(), {"--namespace", options.ns, "exec", podName, "-c", source, "--", binary,
                           contract::kFilesCommand, options.path});
  try {
    runtime::files::ArchiveExtractor extractor(
        options.destination, [&err](const std::string& warning) { err << "warning: " << warning << '\n'; });
    Reader reader(argv);
    std::vector<char> buffer(1 << 16);
    for (std::string_view bytes = reader.read(buffer); !bytes.empty(); bytes = reader.read(buffer))
      extractor.feed(bytes);
    if (const int code = reader.wait(); code != 0) {
      err << "error: kubectl exec " << podName << " -- ipu-runtime files " << options.path << " failed (exit "
          << code << ")\n";
      return 1;
    }
    const auto summary = extractor.finish();
    out << "copied " << summary.files << (summary.files == 1 ? " file" : " files") << " ("
        << sizeText(summary.bytes) << ") from " << options.ns << "/" << podName << ":" << options.path
        << " to " << options.destination << '\n';
    return 0;
  } catch (const std::exception& error) {
    err << "error: copying " << options.path << " from " << podName << ": " << error.what() << '\n';
    return 1;
  }
}

}  // namespace ipu::kubectl_ipu
