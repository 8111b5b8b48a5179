// One candidate for a Lease, as a process of its own, for the leader-election integration tests: several
// contend for one Lease and the test kills them. Prints exactly these lines on stdout, each flushed:
//   LEADING <identity>   when it starts leading
//   STOPPED <identity>   when it stops leading (lost, or stopped gracefully)
// Logs go to stderr. SIGTERM or SIGINT stops it gracefully: it releases the lease and exits 0. It exits 1
// when leadership is lost, 2 on bad flags or configuration.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include "kube/cluster_config.h"
#include "kube/cpprest_transport.h"
#include "kube/leader_elector.h"
#include "kube/rest_client.h"

namespace {

using namespace ipu;

constexpr const char* kUsage =
    "usage: lease_contender --kubeconfig PATH --namespace NS --lease NAME --identity ID\n"
    "                       [--lease-duration SECONDS] [--renew-deadline SECONDS] [--retry-period SECONDS]\n"
    "                       [--jitter FACTOR]\n";

struct Flags {
  std::string kubeconfig;
  std::string ns;
  std::string lease;
  std::string identity;
  double leaseSeconds = 4;
  double renewSeconds = 3;
  double retrySeconds = 0.5;
  double jitter = 1.2;
};

bool parseSeconds(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end != text.c_str() && *end == '\0' && std::isfinite(out) && out >= 0;
}

// "--name value" or "--name=value".
bool parseFlags(int argc, char** argv, Flags& flags) {
  std::map<std::string, std::string> values;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) return false;
    if (auto equals = arg.find('='); equals != std::string::npos) {
      values[arg.substr(2, equals - 2)] = arg.substr(equals + 1);
    } else if (i + 1 < argc) {
      values[arg.substr(2)] = argv[++i];
    } else {
      return false;
    }
  }
  for (const auto& [name, value] : values) {
    bool ok = true;
    if (name == "kubeconfig")
      flags.kubeconfig = value;
    else if (name == "namespace")
      flags.ns = value;
    else if (name == "lease")
      flags.lease = value;
    else if (name == "identity")
      flags.identity = value;
    else if (name == "lease-duration")
      ok = parseSeconds(value, flags.leaseSeconds);
    else if (name == "renew-deadline")
      ok = parseSeconds(value, flags.renewSeconds);
    else if (name == "retry-period")
      ok = parseSeconds(value, flags.retrySeconds);
    else if (name == "jitter")
      ok = parseSeconds(value, flags.jitter);
    else
      ok = false;
    if (!ok) return false;
  }
  return !flags.kubeconfig.empty() && !flags.ns.empty() && !flags.lease.empty() && !flags.identity.empty();
}

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(std::lround(seconds * 1000));
}

void say(const std::string& line) {
  std::cout << line << std::endl;
}  // endl: the test reads it at once

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!parseFlags(argc, argv, flags)) {
    std::cerr << kUsage;
    return 2;
  }
  // Signals are taken by sigwait() below, so they must be blocked before any thread starts (threads inherit
  // the mask). SIGUSR1 is how the election thread wakes main when leadership is lost.
  sigset_t signals;
  sigemptyset(&signals);
  for (int signal : {SIGTERM, SIGINT, SIGUSR1}) sigaddset(&signals, signal);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto config = kube::loadKubeconfig(flags.kubeconfig);
  if (!config) {
    std::cerr << "lease_contender: " << config.error().toString() << "\n";
    return 2;
  }
  auto transport = kube::CppRestTransport::create(*config);
  if (!transport) {
    std::cerr << "lease_contender: " << transport.error().toString() << "\n";
    return 2;
  }
  kube::RestClient client(std::shared_ptr<kube::Transport>(std::move(*transport)), *config);
  auto elector = kube::LeaderElector::create(
      client, kube::LeaderElectionConfig{.leaseName = flags.lease,
                                         .leaseNamespace = flags.ns,
                                         .identity = flags.identity,
                                         .leaseDuration = millis(flags.leaseSeconds),
                                         .renewDeadline = millis(flags.renewSeconds),
                                         .retryPeriod = millis(flags.retrySeconds),
                                         .jitterFactor = flags.jitter});
  if (!elector) {
    std::cerr << "lease_contender: " << elector.error().toString() << "\n";
    return 2;
  }

  const kube::LeaderCallbacks callbacks{
      .onStartedLeading = [&](std::stop_token) { say("LEADING " + flags.identity); },
      .onStoppedLeading = [&] { say("STOPPED " + flags.identity); },
      .onNewLeader = {}};
  std::stop_source stop;
  std::atomic<bool> lost{false};
  std::jthread election([&] {
    lost = (*elector)->run(stop.get_token(), callbacks) == kube::LeaderElector::Outcome::kLost;
    ::kill(::getpid(), SIGUSR1);
  });
  int received = 0;
  sigwait(&signals, &received);
  stop.request_stop();
  election.join();
  return lost ? 1 : 0;
}
