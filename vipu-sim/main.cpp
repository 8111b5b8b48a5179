// vipu-sim: serves the V-IPU user API over a simulated POD until SIGINT or SIGTERM. Wiring only.
#include <csignal>
#include <iostream>

#include <pthread.h>

#include "vipu-sim/atomic_file.h"
#include "vipu-sim/call_log.h"
#include "vipu-sim/file_lock.h"
#include "vipu-sim/sim_command_line.h"
#include "vipu-sim/simulated_pod.h"
#include "vipu-sim/user_service.h"
#include "vipu/grpc_server.h"

namespace {

int fail(const ipu::Error& error) {
  std::cerr << "vipu-sim: " << error.message << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ipu::vipu::sim;
  const std::vector<std::string> args(argv + 1, argv + argc);
  ipu::Result<SimCommandLine> commandLine = parseSimCommandLine(args);
  if (!commandLine) {
    std::cerr << "vipu-sim: " << commandLine.error().message << "\nRun 'vipu-sim --help' for the flags.\n";
    return 2;
  }
  if (commandLine->helpRequested) {
    std::cout << simUsage();
    return 0;
  }
  const SimConfig& config = commandLine->config;

  // Block the stop signals before gRPC starts its threads (they inherit the mask); this thread waits for
  // them.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

  ipu::Result<ipu::vipu::Topology> topology = config.topology();
  if (!topology) return fail(topology.error());
  auto allocations = config.allocationList(*topology);
  if (!allocations) return fail(allocations.error());
  auto tls = config.tls();
  if (!tls) return fail(tls.error());
  auto faults = std::make_shared<FaultInjector>(config.faults());
  std::optional<StateFile> stateFile;
  std::unique_ptr<FileLock> stateLock;
  if (!config.stateFile.empty()) {
    auto lock = FileLock::acquire(config.stateFile);
    if (!lock) return fail(lock.error());
    stateLock = std::move(*lock);
    stateFile.emplace(config.stateFile);
  }
  auto pod = SimulatedPod::open(*topology, std::move(*allocations), config.behaviour(), faults, stateFile);
  if (!pod) return fail(pod.error());

  CallLog log(std::cerr, !config.quiet);
  UserService service(**pod, faults, log);
  auto server = ipu::vipu::GrpcServer::start(config.listen, service, *tls);
  if (!server) return fail(server.error());
  const int port = (*server)->port();
  if (!config.portFile.empty()) {
    if (ipu::Status written = writeFileAtomically(config.portFile, std::to_string(port) + "\n"); !written) {
      return fail(written.error());
    }
  }
  const std::size_t partitions = (*pod)->snapshot().partitions.size();
  log.note("vipu-sim serving " + topology->describe() + " on port " + std::to_string(port) + " (" +
           (config.listen.substr(0, config.listen.rfind(':'))) + (tls->has_value() ? ", TLS" : "") +
           "); state " + (stateFile ? "in '" + config.stateFile + "'" : std::string("in memory only")) +
           ", " + std::to_string(partitions) + " partition(s) loaded");

  int received = 0;
  sigwait(&stopSignals, &received);
  log.note(std::string("vipu-sim stopping on ") + (received == SIGINT ? "SIGINT" : "SIGTERM"));
  (*server)->shutdown();
  return 0;
}
