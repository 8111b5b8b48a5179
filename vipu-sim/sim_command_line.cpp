#include "vipu-sim/sim_command_line.h"

#include <limits>

#include "cli/config_file.h"
#include "cli/flags.h"
#include "vipu/partition_id.h"

namespace ipu::vipu::sim {
namespace {

constexpr std::int64_t kMaxDelayMs = 24 * 3600 * 1000;

ipu::cli::Flags makeFlags() {
  return ipu::cli::Flags("vipu-sim [flags]",
                         "vipu-sim: a V-IPU controller (virmgrpc.UserService) over a simulated IPU-POD.");
}

void defineFlags(ipu::cli::Flags& flags, SimConfig& config) {
  flags.addString("config", &config.configFile,
                  "YAML file of settings (flag names as keys, e.g. 'pod: pod128'); flags given here win",
                  "FILE");
  flags.addString("listen", &config.listen, "address to serve the V-IPU user API on; port 0 picks a free one",
                  "HOST:PORT");
  flags.addString("pod", &config.pod, "POD preset: pod16 (1x16), pod64 (1x64), pod128 (2x64), pod256 (4x64)",
                  "NAME");
  flags.addOptionalInteger<std::uint32_t>("ilds", &config.ilds,
                                          "number of IPU-Link domains, overrides the POD's", 1,
                                          Topology::kMaxIlds, "from --pod");
  flags.addOptionalInteger<std::uint32_t>("ild-size", &config.ildSize,
                                          "IPUs per ILD, a power of two from 4 to 256, overrides the POD's",
                                          1, Topology::kMaxIldSize, "from --pod");
  flags.addString("cluster-id", &config.clusterId,
                  "cluster id reported in partitions and required with explicit IPUs", "ID");
  flags.addList(
      "allocation", &config.allocations,
      "an allocation of whole ILDs, e.g. team-a=0-1 (repeatable; default: one allocation 'default' of all "
      "ILDs)",
      "ID=ILDS");
  flags.addString(
      "state-file", &config.stateFile,
      "JSON file holding every partition, rewritten atomically after each change and loaded at start "
      "(default: memory only, lost on exit)",
      "PATH");
  flags.addInteger<std::int64_t>("activation-delay-ms", &config.activationDelayMs,
                                 "time a new partition stays PS_PENDING before PS_ACTIVE", 0, kMaxDelayMs);
  flags.addInteger<std::int64_t>("reset-duration-ms", &config.resetDurationMs,
                                 "time ResetPartition keeps a partition in POS_RESETTING", 0, kMaxDelayMs);
  flags.addInteger<std::int64_t>("latency-ms", &config.latencyMs, "fault: delay added to every call", 0,
                                 600000);
  flags.addDouble("create-failure-rate", &config.createFailureRate,
                  "fault: share of valid CreatePartition calls that fail with UNAVAILABLE, 0 to 1", 0.0, 1.0);
  flags.addList(
      "error-partition", &config.errorPartitions,
      "fault: a partition with this id goes to PS_ERROR instead of PS_ACTIVE, until reset (repeatable)",
      "ID");
  flags.addDouble(
      "error-rate", &config.errorRate,
      "fault: share of new partitions that go to PS_ERROR instead of PS_ACTIVE, until reset, 0 to 1", 0.0,
      1.0);
  flags.addInteger<std::uint64_t>("seed", &config.seed, "seed of the fault injection's random choices", 0,
                                  std::numeric_limits<std::uint64_t>::max());
  flags.addString("port-file", &config.portFile,
                  "write the port actually listened on to this file once serving", "PATH");
  flags.addString("tls-cert", &config.tlsCert, "serve TLS with this PEM certificate (needs --tls-key)",
                  "FILE");
  flags.addString("tls-key", &config.tlsKey, "PEM private key of --tls-cert", "FILE");
  flags.addString("tls-client-ca", &config.tlsClientCa, "require client certificates signed by this PEM CA",
                  "FILE");
  flags.addBool("quiet", &config.quiet, "do not log each call to stderr");
}

// --config must be applied before the other flags so that they override it.
Result<std::string> findConfigFile(const std::vector<std::string>& args) {
  std::string path;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--config") {
      if (i + 1 == args.size()) return makeError(ErrorCode::kInvalidArgument, "--config needs a value");
      path = args[i + 1];
    } else if (args[i].rfind("--config=", 0) == 0) {
      path = args[i].substr(9);
    }
  }
  return path;
}

}  // namespace

Result<SimCommandLine> parseSimCommandLine(const std::vector<std::string>& args) {
  SimCommandLine commandLine;
  ipu::cli::Flags flags = makeFlags();
  defineFlags(flags, commandLine.config);
  Result<std::string> configFile = findConfigFile(args);
  if (!configFile) return configFile.error();
  if (!configFile->empty()) {
    if (Status applied = ipu::cli::applyConfigFile(flags, *configFile); !applied) return applied.error();
  }
  Result<std::vector<std::string>> positionals = flags.parse(args);
  if (!positionals) return positionals.error();
  commandLine.helpRequested = flags.helpRequested();
  if (commandLine.helpRequested) return commandLine;
  if (!positionals->empty()) {
    return makeError(ErrorCode::kInvalidArgument, "unexpected argument '" + positionals->front() + "'");
  }
  // Everything that can be checked before serving is checked here, so a bad flag never starts a server.
  const SimConfig& config = commandLine.config;
  Result<Topology> topology = config.topology();
  if (!topology) return topology.error();
  if (Result<std::vector<SimAllocation>> allocations = config.allocationList(*topology); !allocations) {
    return allocations.error();
  }
  for (const std::string& id : config.errorPartitions) {
    if (Status valid = validatePartitionId(id); !valid) {
      return makeError(ErrorCode::kInvalidArgument, "--error-partition: " + valid.error().message);
    }
  }
  if (Result<std::optional<ServerTls>> tls = config.tls(); !tls) return tls.error();
  if (config.listen.find(':') == std::string::npos) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--listen '" + config.listen + "' is not of the form HOST:PORT");
  }
  return commandLine;
}

std::string simUsage() {
  SimConfig defaults;
  ipu::cli::Flags flags = makeFlags();
  defineFlags(flags, defaults);
  return flags.usage() +
         "Exit status: 0 after SIGINT/SIGTERM, 1 when it cannot start (state file, address), 2 for bad "
         "flags.\n";
}

}  // namespace ipu::vipu::sim
