#include "launch/launch.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <unistd.h>

#include "contract/runtime_contract.h"
#include "launch/finish_peers.h"
#include "net/routes.h"
#include "process/spawn.h"
#include "process/supervisor.h"
#include "process/termination.h"

namespace ipu::runtime::launch {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kAttemptTimeout = std::chrono::seconds(5);
// Peers usually start within a second or two of worker 0 (the kubelet starts a job's pods one after another):
// ask again soon and at most 100 ms apart while that is likely, so the launch starts within 100 ms of the
// last agent; a peer still missing after kBriskWait is held up (an image pull, a full node), and is asked
// once a second, which keeps the DNS and connection attempts of a large instance's launch small.
constexpr auto kFirstRetryPause = std::chrono::milliseconds(20);
constexpr auto kBriskRetryPause = std::chrono::milliseconds(100);
constexpr auto kBriskWait = std::chrono::seconds(10);
constexpr auto kLongestRetryPause = std::chrono::milliseconds(1000);
constexpr auto kProgressEvery = std::chrono::seconds(15);

void say(const std::string& text) {
  std::fprintf(stderr, "ipu-runtime launch: %s\n", text.c_str());
}

// Pings the agent on `host` once; the reason when it did not answer.
std::optional<std::string> ping(const LaunchOptions& options, const std::string& host) {
  try {
    remote::Connection connection =
        remote::connectToAgent(options.credentials, host, options.agentPort, kAttemptTimeout);
    connection.send(protocol::pingFrame());
    auto reply = connection.receive(kAttemptTimeout);
    if (!reply) return "the agent closed the connection";
    if (reply->type != protocol::FrameType::kPong)
      return "the agent answered " + protocol::describe(reply->type);
    connection.close();
    return std::nullopt;
  } catch (const std::exception& error) {
    return error.what();
  }
}

// Waits for every peer's agent; the failure message when one did not answer in time.
std::optional<std::string> waitForPeers(const LaunchOptions& options) {
  std::vector<std::string> waiting(options.hosts.begin() + 1, options.hosts.end());
  const auto started = Clock::now();
  auto deadline = started + options.peerTimeout;
  auto nextProgress = Clock::now() + kProgressEvery;
  std::string lastError;
  std::chrono::milliseconds pause = kFirstRetryPause;
  while (!waiting.empty()) {
    std::erase_if(waiting, [&](const std::string& host) {
      auto error = ping(options, host);
      if (error) lastError = host + ": " + *error;
      return !error;
    });
    if (waiting.empty()) break;
    if (Clock::now() > deadline)
      return "peer " + waiting.front() + " did not answer within " +
             std::to_string(options.peerTimeout.count()) + " s (" + lastError + ")";
    if (Clock::now() > nextProgress) {
      say("waiting for " + std::to_string(waiting.size()) + " peer(s), last error: " + lastError);
      nextProgress = Clock::now() + kProgressEvery;
    }
    std::this_thread::sleep_for(pause);
    const bool brisk = Clock::now() - started < kBriskWait;
    pause = std::min<std::chrono::milliseconds>(pause * 2, brisk ? kBriskRetryPause : kLongestRetryPause);
  }
  return std::nullopt;
}

// Tells every peer that answers how the instance ended, so its agent exits with it.
void tellPeersTheOutcome(const LaunchOptions& options, int code, const std::string& message) {
  std::vector<std::string> peers(options.hosts.begin() + 1, options.hosts.end());
  for (const std::string& failure :
       finishPeers(options.credentials, peers, options.agentPort, code, message, kFinishPeersWithin))
    say("could not tell " + failure + " that the launch ended");
}

std::optional<std::string> environmentValue(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

// The interfaces this pod reaches its peers through, by the kernel's IPv4 routes; empty when that cannot be
// told (no /proc/net/route, names that do not resolve), and OpenMPI then chooses as it always does.
std::vector<std::string> peerInterfaces(const std::vector<std::string>& hosts) {
  std::ifstream table("/proc/net/route");
  const std::string text((std::istreambuf_iterator<char>(table)), std::istreambuf_iterator<char>());
  std::vector<std::uint32_t> peers;
  for (std::size_t i = 1; i < hosts.size(); ++i) {
    for (std::uint32_t address : net::ipv4AddressesOf(hosts[i])) peers.push_back(address);
  }
  return net::interfacesToPeers(net::parseRouteTable(text), peers);
}

// What OpenMPI could use here besides TCP: the device nodes of RDMA, Omni-Path and InfiniPath adapters, and
// the MCA parameter files of Debian's OpenMPI, of one built from source, and of the user.
MpiSurroundings mpiSurroundings() {
  MpiSurroundings surroundings;
  std::error_code error;
  surroundings.fabricDevices = std::filesystem::exists("/dev/infiniband", error);
  for (const auto& entry : std::filesystem::directory_iterator("/dev", error)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("hfi1_") || name.starts_with("ipath") || name.starts_with("qib"))
      surroundings.fabricDevices = true;
  }
  std::vector<std::string> files = {"/etc/openmpi/openmpi-mca-params.conf",
                                    "/usr/local/etc/openmpi-mca-params.conf"};
  if (auto home = environmentValue("HOME")) files.push_back(*home + "/.openmpi/mca-params.conf");
  for (const std::string& path : files) {
    std::ifstream file(path);
    if (file)
      surroundings.parameterFiles.emplace_back(std::istreambuf_iterator<char>(file),
                                               std::istreambuf_iterator<char>());
  }
  return surroundings;
}

void writeHostfile(const LaunchOptions& options) {
  std::ofstream out(options.hostfilePath, std::ios::trunc);
  out << hostfile(options.hosts);
  if (!out) say("could not write the hostfile " + options.hostfilePath);
}

}  // namespace

LaunchInputs launchInputs(const LaunchOptions& options, bool runAsRoot, const GetEnv& getEnv) {
  LaunchInputs inputs{
      options.shape, options.hosts, options.command, options.runtimeBinary + " rsh", runAsRoot, {}};
  for (const auto& name : passedThroughVariables()) {
    if (getEnv(name)) inputs.presentVariables.push_back(name);
  }
  return inputs;
}

std::vector<std::string> launchCommand(const LaunchOptions& options, bool poprunAvailable, bool runAsRoot,
                                       const GetEnv& getEnv) {
  if (options.userLauncher) return options.command;
  const LaunchInputs inputs = launchInputs(options, runAsRoot, getEnv);
  return poprunAvailable ? poprunCommand(inputs) : mpirunCommand(inputs);
}

int runLaunch(const LaunchOptions& options) {
  auto started = Clock::now();
  process::TerminationFacts facts{options.worker, options.instance, "launch", {}, {}, ""};
  auto finishWith = [&](process::ExitStatus status, const std::string& detail) {
    facts.status = status;
    facts.ran = Clock::now() - started;
    facts.detail = detail;
    std::string message = process::terminationMessage(facts);
    tellPeersTheOutcome(options, status.succeeded() ? 0 : status.code, message);
    say(message);
    process::writeTerminationMessage(options.terminationLog, message);
    return status.code;
  };

  if (options.hosts.size() > 1) {
    say("waiting for the agents of " + std::to_string(options.hosts.size() - 1) + " peer(s)");
    if (auto error = waitForPeers(options)) return finishWith({1, 0}, *error);
    say("all " + std::to_string(options.hosts.size()) + " workers answered in " +
        std::to_string(
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count()) +
        " ms");
  }
  writeHostfile(options);
  const bool runAsRoot = geteuid() == 0;
  std::vector<std::string> command =
      launchCommand(options, process::onPath("poprun"), runAsRoot, environmentValue);
  facts.what = command.front();
  // One readable line; the whole one (the program once per rank, every -x) when asked for.
  if (environmentValue(kEnvLogLaunch) == "full") {
    say("running " + shellJoin(command));
  } else {
    say(launchSummary(command, launchInputs(options, runAsRoot, environmentValue), options.userLauncher));
  }
  process::SpawnOptions spawn;
  spawn.environment = {{contract::kEnvOmpiRshAgent, options.runtimeBinary + " rsh"},
                       {contract::kEnvOmpiHostfile, options.hostfilePath}};
  for (auto& variable : mpiMessagingEnvironment(mpiSurroundings(), environmentValue, command)) {
    say("OpenMPI without its cm messaging layer (" + variable.first + "=" + variable.second +
        "): no RDMA, Omni-Path or InfiniPath device here, and loading its libraries would cost every rank "
        "0.2 s; set OMPI_MCA_pml yourself to choose");
    spawn.environment.push_back(std::move(variable));
  }
  if (options.hosts.size() > 1) {
    const auto interfaces = peerInterfaces(options.hosts);
    std::string names;
    for (auto& variable : mpiInterfaceEnvironment(interfaces, environmentValue, command)) {
      names += (names.empty() ? "" : ", ") + variable.first;
      spawn.environment.push_back(std::move(variable));
    }
    if (!names.empty()) {
      say("MPI over " + spawn.environment.back().second + ", which routes to the peers (" + names +
          "; set them yourself to choose)");
    }
  }
  process::Supervised outcome = process::supervise(command, spawn);
  return finishWith(outcome.status, outcome.spawnError);
}

}  // namespace ipu::runtime::launch
