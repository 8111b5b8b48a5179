// What ipu-runtime costs, each figure next to a reference measured in the same run:
//   remote start   16 concurrent `ipu-runtime rsh 127.0.0.1 true` through one agent (mutual TLS, a fork in
//                  the agent, /bin/sh -c there), 20 rounds, p50/p99 per start, vs 16 concurrent local
//                  fork+exec of `true`;
//   mpirun         `ipu-runtime launch -- true` over 16 ranks on 16 "hosts" (network namespaces, an agent in
//                  each but the first: mpirun's daemons start through rsh) vs `mpirun -np 16 true` on one of
//                  them, wall time min/median/max (needs root and OpenMPI; skipped otherwise, saying why);
//   binary size    the static binary as built and stripped (as the runtime image holds it).
// Writes JSON to stdout and to the file given as the first argument, then a short table.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "contract/runtime_contract.h"
#include "free_port.h"
#include "namespace_lab.h"
#include "runtime_fixture.h"
#include "subprocess.h"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;
using ipu::testing::BackgroundProcess;
using ipu::testing::run;

constexpr int kConcurrentStarts = 16;
constexpr int kRounds = 20;
constexpr int kHosts = 16;
constexpr int kMpiRuns = 5;

double milliseconds(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// The value at fraction p of the sorted samples (the same rule as the other benchmarks).
double percentile(std::vector<double> samples, double p) {
  std::sort(samples.begin(), samples.end());
  return samples[static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1))];
}

Json spread(const std::vector<double>& samples) {
  return {
      {"min", percentile(samples, 0)}, {"median", percentile(samples, 0.5)}, {"max", percentile(samples, 1)}};
}

// Starts `count` copies of argv at once, each by fork + exec (stdin and stdout /dev/null, stderr inherited),
// and waits for all of them. Returns each one's start-to-exit time in ms; throws if any did not exit 0.
std::vector<double> startConcurrently(const std::vector<std::string>& argv, int count) {
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<std::pair<pid_t, Clock::time_point>> started;
  for (int i = 0; i < count; ++i) {
    Clock::time_point at = Clock::now();
    pid_t pid = fork();
    if (pid == 0) {
      int devNull = open("/dev/null", O_RDWR);
      dup2(devNull, STDIN_FILENO);
      dup2(devNull, STDOUT_FILENO);
      execv(args[0], args.data());
      _exit(127);
    }
    if (pid < 0) throw std::runtime_error("fork failed");
    started.emplace_back(pid, at);
  }
  std::vector<double> latencies;
  while (latencies.size() < started.size()) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    Clock::time_point ended = Clock::now();
    if (pid < 0) throw std::runtime_error("waitpid failed");
    auto child =
        std::find_if(started.begin(), started.end(), [pid](const auto& s) { return s.first == pid; });
    // Not one of ours: the agent, which must not end, and the next round's rsh will say so.
    if (child == started.end()) continue;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw std::runtime_error(argv[0] + " ended with status " + std::to_string(status));
    latencies.push_back(milliseconds(ended - child->second));
  }
  return latencies;
}

// Waits until the agent says it listens ("serving job … on port N").
void waitUntilServing(const BackgroundProcess& agent) {
  auto deadline = Clock::now() + 30s;
  while (agent.stderrText().find("serving job") == std::string::npos) {
    if (Clock::now() > deadline) throw std::runtime_error("the agent did not start: " + agent.stderrText());
    std::this_thread::sleep_for(5ms);
  }
}

Json remoteStart(const std::string& binary) {
  ipu::testing::JobSecretDir secret("bench/runtime/remote-start/uid-1");
  const std::string port = std::to_string(ipu::testing::freeLoopbackPort());
  // rsh reads both from the environment it inherits from this process.
  setenv(ipu::runtime::contract::kEnvCredentialsDir, secret.path.c_str(), 1);
  setenv(ipu::runtime::contract::kEnvAgentPort, port.c_str(), 1);
  BackgroundProcess agent({binary, "agent"}, {secret.environment(), "IPU_RUNTIME_AGENT_PORT=" + port});
  waitUntilServing(agent);

  const std::vector<std::string> rsh = {binary, "rsh", "127.0.0.1", "true"};
  const std::vector<std::string> local = {"/bin/true"};
  // One warm-up round of each (page cache, the agent's first fork), not counted.
  startConcurrently(rsh, kConcurrentStarts);
  startConcurrently(local, kConcurrentStarts);
  std::vector<double> rshMs, localMs;
  for (int round = 0; round < kRounds; ++round) {
    auto remote = startConcurrently(rsh, kConcurrentStarts);
    rshMs.insert(rshMs.end(), remote.begin(), remote.end());
    auto here = startConcurrently(local, kConcurrentStarts);
    localMs.insert(localMs.end(), here.begin(), here.end());
  }
  // The same one at a time: what a start costs without queueing behind 15 others on the machine's cores.
  std::vector<double> rshAloneMs, localAloneMs;
  for (int round = 0; round < kRounds; ++round) {
    rshAloneMs.push_back(startConcurrently(rsh, 1).front());
    localAloneMs.push_back(startConcurrently(local, 1).front());
  }
  agent.stop();
  unsetenv(ipu::runtime::contract::kEnvCredentialsDir);
  unsetenv(ipu::runtime::contract::kEnvAgentPort);
  return {{"concurrent", kConcurrentStarts},
          {"rounds", kRounds},
          {"rsh_ms_p50", percentile(rshMs, 0.5)},
          {"rsh_ms_p99", percentile(rshMs, 0.99)},
          {"local_ms_p50", percentile(localMs, 0.5)},
          {"local_ms_p99", percentile(localMs, 0.99)},
          {"ratio_p50", percentile(rshMs, 0.5) / percentile(localMs, 0.5)},
          {"ratio_p99", percentile(rshMs, 0.99) / percentile(localMs, 0.99)},
          {"one_at_a_time_rsh_ms_p50", percentile(rshAloneMs, 0.5)},
          {"one_at_a_time_local_ms_p50", percentile(localAloneMs, 0.5)}};
}

// Why the mpirun comparison cannot run here, or "" when it can.
std::string mpirunUnavailable() {
  if (geteuid() != 0) return "needs root: the 16 hosts are network namespaces";
  if (!run({"sh", "-c", "command -v mpirun"}).ok()) return "OpenMPI is missing (run tools/install-deps.sh)";
  return "";
}

Json mpirunAcrossHosts(const std::string& binary) {
  if (std::string why = mpirunUnavailable(); !why.empty()) return {{"skipped", why}};
  ipu::testing::JobSecretDir secret("bench/runtime/mpirun/uid-1");
  ipu::testing::NamespaceLab lab(kHosts);
  const std::vector<std::string> environment = {secret.environment(),
                                                "IPU_RUNTIME_PEERS=" + lab.peers(),
                                                "IPUJOB_INSTANCE=0",
                                                "IPUJOB_WORKERS_PER_INSTANCE=" + std::to_string(kHosts),
                                                "IPUJOB_REPLICAS_PER_WORKER=1",
                                                "IPUJOB_IPUS_PER_INSTANCE=" + std::to_string(kHosts),
                                                "OMPI_ALLOW_RUN_AS_ROOT=1",
                                                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
  // As the launch runs mpirun, but every rank on the one host (2 cores here: --oversubscribe).
  const std::vector<std::string> oneHost = {
      "mpirun", "--bind-to", "none", "--oversubscribe", "-np", std::to_string(kHosts), "true"};
  std::vector<double> acrossSeconds, oneHostSeconds;
  // Alternating, so that a slow moment of the machine falls on both.
  for (int attempt = 0; attempt < kMpiRuns; ++attempt) {
    auto started = Clock::now();
    auto local = run(lab.inWorker(0, oneHost), {.timeout = 120s, .extraEnv = environment});
    if (!local.ok()) throw std::runtime_error("mpirun on one host: " + local.describe());
    oneHostSeconds.push_back(milliseconds(Clock::now() - started) / 1000);

    // Agents end when the launch tells them its outcome: new ones for each run, listening before the clock
    // starts.
    std::vector<std::unique_ptr<BackgroundProcess>> agents;
    for (int host = 1; host < kHosts; ++host)
      agents.push_back(
          std::make_unique<BackgroundProcess>(lab.inWorker(host, {binary, "agent"}), environment));
    for (const auto& agent : agents) waitUntilServing(*agent);
    started = Clock::now();
    auto launched =
        run(lab.inWorker(0, {binary, "launch", "--", "true"}), {.timeout = 120s, .extraEnv = environment});
    if (!launched.ok()) throw std::runtime_error("ipu-runtime launch: " + launched.describe());
    acrossSeconds.push_back(milliseconds(Clock::now() - started) / 1000);
    for (const auto& agent : agents) {
      if (agent->wait(15s) != 0)
        throw std::runtime_error("an agent did not end with 0: " + agent->stderrText());
    }
  }
  return {{"ranks", kHosts},
          {"hosts", kHosts},
          {"runs", kMpiRuns},
          {"across_hosts_seconds", spread(acrossSeconds)},
          {"one_host_seconds", spread(oneHostSeconds)},
          {"ratio_median", percentile(acrossSeconds, 0.5) / percentile(oneHostSeconds, 0.5)}};
}

Json binarySize(const std::string& binary) {
  std::string stripped =
      std::filesystem::temp_directory_path() / ("ipu-runtime-stripped-" + std::to_string(getpid()));
  auto strip = run({"objcopy", "--strip-all", binary, stripped});
  if (!strip.ok()) throw std::runtime_error("objcopy --strip-all: " + strip.describe());
  Json size = {{"as_built_bytes", std::filesystem::file_size(binary)},
               {"stripped_bytes", std::filesystem::file_size(stripped)}};
  std::filesystem::remove(stripped);
  return size;
}

void printTable(const Json& result) {
  const Json& remote = result["remote_start"];
  const Json& mpi = result["mpirun"];
  const Json& size = result["binary"];
  auto row = [](const char* what, double ours, double reference, const char* unit) {
    std::printf("%-40s %11.2f %-2s %11.2f %-2s %6.1fx\n", what, ours, unit, reference, unit,
                ours / reference);
  };
  std::printf("\n%-40s %14s %14s %7s\n", "", "ipu-runtime", "reference", "ratio");
  row("start `true`, 16 at once, p50", remote["rsh_ms_p50"].get<double>(),
      remote["local_ms_p50"].get<double>(), "ms");
  row("start `true`, 16 at once, p99", remote["rsh_ms_p99"].get<double>(),
      remote["local_ms_p99"].get<double>(), "ms");
  row("start `true`, one at a time, p50", remote["one_at_a_time_rsh_ms_p50"].get<double>(),
      remote["one_at_a_time_local_ms_p50"].get<double>(), "ms");
  if (mpi.contains("skipped")) {
    std::printf("%-40s skipped: %s\n", "mpirun 16 ranks", mpi["skipped"].get<std::string>().c_str());
  } else {
    for (const char* statistic : {"min", "median", "max"}) {
      std::string what = std::string("mpirun 16 ranks, 16 hosts vs 1, ") + statistic;
      row(what.c_str(), mpi["across_hosts_seconds"][statistic].get<double>(),
          mpi["one_host_seconds"][statistic].get<double>(), "s");
    }
  }
  std::printf("%-40s %11.1f MB as built, %.1f MB stripped\n", "static binary",
              size["as_built_bytes"].get<double>() / 1e6, size["stripped_bytes"].get<double>() / 1e6);
  std::printf("(references: local fork+exec of `true`; `mpirun -np 16 true` on one host)\n");
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string binary = ipu::testing::runtimeBinary();
  auto started = Clock::now();
  Json result = {{"benchmark", "runtime"}, {"build_type", IPU_BUILD_TYPE}, {"runtime_binary", binary}};
  result["remote_start"] = remoteStart(binary);
  result["mpirun"] = mpirunAcrossHosts(binary);
  result["binary"] = binarySize(binary);
  result["wall_seconds"] = milliseconds(Clock::now() - started) / 1000;
  const std::string text = result.dump(2);
  std::cout << text << "\n";
  if (argc > 1) {
    std::ofstream out(argv[1]);
    out << text << "\n";
    if (!out) {
      std::cerr << "runtime_bench: cannot write " << argv[1] << "\n";
      return 1;
    }
  }
  printTable(result);
  return 0;
} catch (const std::exception& error) {
  std::cerr << "runtime_bench: " << error.what() << "\n";
  return 1;
}
