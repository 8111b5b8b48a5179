#include "cmd/operator_flags.h"

#include <charconv>

#include "common/log.h"
#include "vipu/cli/flag_set.h"

namespace ipu::cmd {
namespace {

struct RawFlags {
  OperatorFlags flags;
  std::string vipuController;
};

// One FlagSet for parsing and usage, so --help always tells the truth about the defaults.
vipu::cli::FlagSet makeFlagSet(RawFlags& raw) {
  vipu::cli::FlagSet set("ipu-operator [flags]: runs IPUJobs on Graphcore IPUs through V-IPU partitions.");
  OperatorFlags& f = raw.flags;
  set.addString("kubeconfig", &f.kubeconfig,
                "kubeconfig file (default: $KUBECONFIG, then in-cluster, then ~/.kube/config)", "PATH");
  set.addString("vipu-controller", &raw.vipuController,
                "the V-IPU controller partitions come from (required)", "NAME=HOST:PORT");
  set.addInteger("workers", &f.workers, "IPUJobs reconciled in parallel", 1, 64, "N");
  set.addDouble("qps", &f.qps, "client-side limit of API server requests per second", 0.1, 10000);
  set.addInteger("burst", &f.burst, "API server requests allowed at once above --qps", 1, 100000, "N");
  set.addString("shm-size", &f.shmSize, "sizeLimit of the /dev/shm emptyDir added to worker pods",
                "QUANTITY");
  set.addBool("leader-elect", &f.leaderElect,
              "run the controller only while holding the Lease 'ipu-operator'");
  set.addString("leader-election-namespace", &f.leaderElectionNamespace,
                "namespace of the leader election Lease (default: the kubeconfig's namespace)", "NAMESPACE");
  set.addString("log-level", &f.logLevel, "debug, info, warning or error", "LEVEL");
  return set;
}

}  // namespace

Result<VipuEndpoint> parseVipuEndpoint(const std::string& text) {
  const auto equals = text.find('=');
  const auto colon = text.rfind(':');
  if (equals == std::string::npos || equals == 0 || colon == std::string::npos || colon < equals + 2) {
    return makeError(
        ErrorCode::kInvalidArgument,
        "--vipu-controller: expected NAME=HOST:PORT (like pod64=10.0.0.5:8090), not \"" + text + "\"");
  }
  VipuEndpoint endpoint{text.substr(0, equals), text.substr(equals + 1, colon - equals - 1), 0};
  const std::string port = text.substr(colon + 1);
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), endpoint.port);
  if (port.empty() || error != std::errc() || end != port.data() + port.size() || endpoint.port < 1 ||
      endpoint.port > 65535) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--vipu-controller: port must be 1-65535, not \"" + port + "\"");
  }
  return endpoint;
}

Result<OperatorFlags> parseOperatorFlags(const std::vector<std::string>& args) {
  RawFlags raw;
  auto set = makeFlagSet(raw);
  auto rest = set.parse(args);
  if (!rest) return rest.error();
  if (!rest->empty())
    return makeError(ErrorCode::kInvalidArgument, "unexpected argument \"" + rest->front() + "\"");
  raw.flags.helpRequested = set.helpRequested();
  if (raw.flags.helpRequested) return raw.flags;
  if (raw.vipuController.empty())
    return makeError(ErrorCode::kInvalidArgument, "--vipu-controller is required");
  auto endpoint = parseVipuEndpoint(raw.vipuController);
  if (!endpoint) return endpoint.error();
  raw.flags.vipu = *endpoint;
  log::Level level;
  if (!log::parseLevel(raw.flags.logLevel, level)) {
    return makeError(
        ErrorCode::kInvalidArgument,
        "--log-level: expected debug, info, warning or error, not \"" + raw.flags.logLevel + "\"");
  }
  return raw.flags;
}

std::string operatorUsage() {
  RawFlags raw;
  return makeFlagSet(raw).usage();
}

}  // namespace ipu::cmd
