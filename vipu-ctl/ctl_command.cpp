#include "vipu-ctl/ctl_command.h"

#include <charconv>
#include <map>

#include "cli/flags.h"
#include "vipu-ctl/output_format.h"
#include "vipu/ipu_set.h"
#include "vipu/partition_planner.h"
#include "vipu/topology_discovery.h"
#include "vipu/wait_until_active.h"

namespace ipu::vipu::ctl {
namespace {

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;

struct GlobalOptions {
  std::string endpoint = kLocalEndpoint;
  std::int64_t timeoutMs = 10000;
  int attempts = 5;
  std::string caFile;
  std::string certFile;
  std::string keyFile;
  std::string serverName;
  bool json = false;
};

void defineGlobalFlags(ipu::cli::Flags& flags, GlobalOptions& options) {
  flags.addString("endpoint", &options.endpoint,
                  "V-IPU controller to talk to (default in a worker pod: $IPUOF_VIPU_API_HOST:"
                  "$IPUOF_VIPU_API_PORT, the operator's proxy)",
                  "HOST:PORT");
  flags.addInteger<std::int64_t>("timeout-ms", &options.timeoutMs, "deadline of each call", 1, 3600000);
  flags.addInteger<int>("attempts", &options.attempts,
                        "attempts per call while the controller is UNAVAILABLE", 1, 100);
  flags.addString("ca", &options.caFile, "use TLS, trusting this PEM CA (or the system's roots with --cert)",
                  "FILE");
  flags.addString("cert", &options.certFile, "use TLS with this PEM client certificate (needs --key)",
                  "FILE");
  flags.addString("key", &options.keyFile, "PEM key of --cert", "FILE");
  flags.addString("server-name", &options.serverName, "expected name in the controller's certificate",
                  "NAME");
  flags.addBool("json", &options.json, "print JSON instead of text");
}

ClientOptions clientOptionsOf(const GlobalOptions& global) {
  ClientOptions options;
  options.name = global.endpoint;
  options.endpoint = global.endpoint;
  options.callTimeout = std::chrono::milliseconds(global.timeoutMs);
  options.retry.maxAttempts = global.attempts;
  if (!global.caFile.empty() || !global.certFile.empty() || !global.keyFile.empty()) {
    options.tls = TlsOptions{global.caFile, global.certFile, global.keyFile, global.serverName};
  }
  return options;
}

Result<std::uint32_t> parseNumber(std::string_view text, std::string_view what) {
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return makeError(ErrorCode::kInvalidArgument,
                     std::string(what) + " '" + std::string(text) + "' is not a number");
  }
  return value;
}

Result<IpuLinkRouting> parseRouting(std::string_view text) {
  static const std::map<std::string, IpuLinkRouting, std::less<>> names{
      {"", IpuLinkRouting::kUndefined},
      {"dnc", IpuLinkRouting::kDnc},
      {"swnc", IpuLinkRouting::kSwnc},
      {"btnc", IpuLinkRouting::kBtnc},
      {"ringswnc", IpuLinkRouting::kRingSwnc}};
  if (auto found = names.find(text); found != names.end()) return found->second;
  return makeError(ErrorCode::kInvalidArgument,
                   "--routing '" + std::string(text) + "' is not one of dnc, swnc, btnc, ringswnc");
}

// One subcommand run: its flags parsed, its output streams at hand.
class Command {
 public:
  Command(const GlobalOptions& global, const ApiFactory& connect, std::ostream& out, std::ostream& err)
      : global_(global), connect_(connect), out_(out), err_(err) {}

  int run(const std::string& name, const std::vector<std::string>& args);

 private:
  int usageError(const std::string& message) {
    err_ << "vipu-ctl: " << message << "\nRun 'vipu-ctl --help' for usage.\n";
    return kUsage;
  }
  int failed(const Error& error) {
    err_ << "vipu-ctl: " << error.toString() << "\n";
    return kFailed;
  }
  // Parses the subcommand's flags; `positionals` must match `expected` (-1 = any number).
  bool parseFlags(ipu::cli::Flags& flags, const std::vector<std::string>& args, int expected,
                  std::vector<std::string>& positionals, int& exitCode);
  Result<VipuApi*> api();
  Result<Topology> discoverTopology(VipuApi& api);

  int list(const std::vector<std::string>& args);
  int create(const std::vector<std::string>& args);
  int remove(const std::vector<std::string>& args);
  int reset(const std::vector<std::string>& args);
  int status(const std::vector<std::string>& args);
  int wait(const std::vector<std::string>& args);
  int ipuof(const std::vector<std::string>& args);
  int attributes(const std::vector<std::string>& args);
  int topology(const std::vector<std::string>& args);

  const GlobalOptions& global_;
  const ApiFactory& connect_;
  std::ostream& out_;
  std::ostream& err_;
  std::shared_ptr<VipuApi> api_;
};

bool Command::parseFlags(ipu::cli::Flags& flags, const std::vector<std::string>& args, int expected,
                         std::vector<std::string>& positionals, int& exitCode) {
  Result<std::vector<std::string>> parsed = flags.parse(args);
  if (!parsed) {
    exitCode = usageError(parsed.error().message);
    return false;
  }
  if (flags.helpRequested()) {
    out_ << flags.usage();
    exitCode = kOk;
    return false;
  }
  if (expected >= 0 && parsed->size() != static_cast<std::size_t>(expected)) {
    exitCode = usageError("expected " + std::to_string(expected) + " argument(s), got " +
                          std::to_string(parsed->size()));
    return false;
  }
  positionals = std::move(*parsed);
  return true;
}

Result<VipuApi*> Command::api() {
  if (!api_) {
    Result<std::shared_ptr<VipuApi>> connected = connect_(clientOptionsOf(global_));
    if (!connected) return connected.error();
    api_ = *connected;
  }
  return api_.get();
}

Result<Topology> Command::discoverTopology(VipuApi& api) {
  Result<std::vector<AgentIpuAttributes>> attributes = api.listIpuAttributes({});
  if (!attributes) return attributes.error();
  return topologyFromAttributes(*attributes);
}

int Command::run(const std::string& name, const std::vector<std::string>& args) {
  if (name == "list") return list(args);
  if (name == "create") return create(args);
  if (name == "remove") return remove(args);
  if (name == "reset") return reset(args);
  if (name == "status") return status(args);
  if (name == "wait") return wait(args);
  if (name == "ipuof") return ipuof(args);
  if (name == "attributes") return attributes(args);
  if (name == "topology") return topology(args);
  return usageError("unknown command '" + name + "'");
}

int Command::list(const std::vector<std::string>& args) {
  std::string allocation;
  ipu::cli::Flags flags("vipu-ctl list [--allocation ID]");
  flags.addString("allocation", &allocation, "only partitions of this allocation", "ID");
  std::vector<std::string> positionals;
  int exitCode = kOk;
  if (!parseFlags(flags, args, 0, positionals, exitCode)) return exitCode;
  Result<VipuApi*> client = api();
  if (!client) return failed(client.error());
  Result<std::vector<Partition>> partitions = (*client)->listPartitions(allocation);
  if (!partitions) return failed(partitions.error());
  out_ << (global_.json ? partitionsJson(*partitions) : partitionsText(*partitions));
  return kOk;
}

int Command::create(const std::vector<std::string>& args) {
  std::uint32_t size = 0;
  std::string ipus;
  bool plan = false;
  std::string clusterId;
  std::string allocation;
  std::uint32_t numGcds = 0;
  std::string routing;
  std::int64_t waitMs = 0;
  ipu::cli::Flags flags("vipu-ctl create ID --size N [--ipus LIST | --plan] [flags]");
  flags.addInteger<std::uint32_t>("size", &size, "number of IPUs, a power of two", 1, 1u << 16);
  flags.addString("ipus", &ipus, "explicit IPUs, ILD:FIRST-LAST or ILD:IPU, comma-separated (e.g. 0:16-31)",
                  "LIST");
  flags.addBool("plan", &plan, "choose explicit IPUs with the operator's best-fit planner");
  flags.addString("cluster-id", &clusterId, "cluster id, required by V-IPU with --ipus (--plan fills it)",
                  "ID");
  flags.addString("allocation", &allocation, "allocation to create the partition in", "ID");
  flags.addInteger<std::uint32_t>("num-gcds", &numGcds, "graph compilation domains (0 = one)", 0, 1u << 16);
  flags.addString("routing", &routing,
                  "IPU-Link routing: dnc, swnc, btnc or ringswnc (default: controller's)", "TYPE");
  flags.addInteger<std::int64_t>("wait-ms", &waitMs,
                                 "then wait up to this long for PS_ACTIVE (0 = do not wait)", 0, 3600000);
  std::vector<std::string> positionals;
  int exitCode = kOk;
  if (!parseFlags(flags, args, 1, positionals, exitCode)) return exitCode;
  if (size == 0) return usageError("create needs --size");
  if (plan && !ipus.empty()) return usageError("--plan and --ipus exclude each other");
  Result<IpuLinkRouting> routingType = parseRouting(routing);
  if (!routingType) return usageError(routingType.error().message);

  PartitionRequest request;
  request.id = positionals.front();
  request.size = size;
  request.clusterId = clusterId;
  request.allocationId = allocation;
  request.numGcds = numGcds;
  request.ipuLinkRouting = *routingType;
  if (!ipus.empty()) {
    Result<std::vector<PartitionIpu>> list = parseIpuList(ipus);
    if (!list) return usageError(list.error().message);
    request.ipus = std::move(*list);
  }
  Result<VipuApi*> client = api();
  if (!client) return failed(client.error());
  if (plan) {
    Result<Topology> topology = discoverTopology(**client);
    if (!topology) return failed(topology.error());
    Result<std::vector<Partition>> existing = (*client)->listPartitions("");
    if (!existing) return failed(existing.error());
    Result<IpuSet> taken = IpuSet::fromPartitions(*topology, *existing);
    if (!taken) return failed(taken.error());
    const PlanResult planned = PartitionPlanner(*topology).plan(*taken, GangRequest{1, size});
    if (!planned.placed()) return failed(makeError(ErrorCode::kResourceExhausted, planned.refusal->message));
    PartitionRequest explicitRequest =
        makePartitionRequest(request.id, *topology, planned.placements.front());
    explicitRequest.allocationId = request.allocationId;
    explicitRequest.numGcds = request.numGcds;
    explicitRequest.ipuLinkRouting = request.ipuLinkRouting;
    request = std::move(explicitRequest);
  }
  Result<std::string> id = (*client)->createPartition(request);
  if (!id) return failed(id.error());
  if (waitMs > 0) {
    Result<PartitionStatus> active = waitUntilActive(**client, *id, std::chrono::milliseconds(waitMs));
    if (!active) return failed(active.error());
  }
  if (global_.json) {
    out_ << createdJson(*id, waitMs > 0);
  } else {
    out_ << "created partition " << *id << (waitMs > 0 ? " (PS_ACTIVE)" : "") << "\n";
  }
  return kOk;
}

int Command::remove(const std::vector<std::string>& args) {
  bool force = false;
  ipu::cli::Flags flags("vipu-ctl remove ID [--force]");
  flags.addBool("force", &force, "remove even when the controller would refuse (partition in use)");
  std::vector<std::string> positionals;
  int exitCode = kOk;
  if (!parseFlags(flags, args, 1, positionals, exitCode)) return exitCode;
  Result<VipuApi*> client = api();
  if (!client) return failed(client.error());
  if (Status removed = (*client)->removePartition(positionals.front(), force); !removed) {
    return failed(removed.error());
  }
  if (!global_.json) out_ << "removed partition " << positionals.front() << "\n";
  return kOk;
}

int Command::reset(const std::vector<std::string>& args) {
  std::int64_t waitMs = 0;
  ipu::cli::Flags flags("vipu-ctl reset ID [--wait-ms N]");
  flags.addInteger<std::int64_t>("wait-ms", &waitMs,
                                 "then wait up to this long for PS_ACTIVE (0 = do not wait)", 0, 3600000);
  std::vector<std::string> positionals;
  int exitCode = kOk;
  if (!parseFlags(flags, args, 1, positionals, exitCode)) return exitCode;
  Result<VipuApi*> client = api();
  if (!client) return failed(client.error());
  if (Status done = (*client)->resetPartition(positionals.front()); !done) return failed(done.error());
  if (waitMs > 0) {
    Result<PartitionStatus> active =
        waitUntilActive(**client, positionals.front(), std::chrono::milliseconds(waitMs));
    if (!active) return failed(active.error());
  }
  if (!global_.json) out_ << "reset partition " << positionals.front() << "\n";
  return kOk;
}

int Command::status(const std::vector<std::string>& args) {
  ipu::cli::Flags flags("vipu-ctl status ID");
  std::vector<std::string> positionals;
  int exitCode = kOk;
  if (!parseFlags(flags, args, 1, positionals, exitCode)) return exitCode;
  Result<VipuApi*> client = api();
  if (!client) return failed(client.error());
  Result<PartitionStatus> status = (*client)->getPartitionStatus(positionals.front());
  if (!status) return failed(status.error());
  out_ << (global_.json ? statusJson(*status) : statusText(*status));
  return kOk;
}

int Command::wait(const std::vector<std::string>& args) {
  std::int64_t timeoutMs = 120000;
  ipu::cli::Flags flags("vipu-ctl wait ID [--timeout-ms N]");
  flags.addInteger<std::int64_t>("timeout-ms", &timeoutMs, "give up after this long", 1, 3600000);
  std::vector<std::string> positionals;
  int exitCode = kOk;
  if (!parseFlags(flags, args, 1, positionals, exitCode)) return exitCode;
  Result<VipuApi*> client = api();
  if (!client) return failed(client.error());
  Result<PartitionStatus> active =
      waitUntilActive(**client, positionals.front(), std::chrono::milliseconds(timeoutMs));
  if (!active) return failed(active.error());
  out_ << (global_.json ? statusJson(*active) : statusText(*active));
  return kOk;
}

int Command::ipuof(const std::vector<std::string>& args) {
  std::optional<std::uint32_t> gcd;
  ipu::cli::Flags flags("vipu-ctl ipuof ID [--gcd N]");
  flags.addOptionalInteger<std::uint32_t>("gcd", &gcd, "only this graph compilation domain", 0, 1u << 16,
                                          "all");
  std::vector<std::string> positionals;
  int exitCode = kOk;
  if (!parseFlags(flags, args, 1, positionals, exitCode)) return exitCode;
  Result<VipuApi*> client = api();
  if (!client) return failed(client.error());
  Result<IpuofConfig> config = (*client)->getPartitionIpuofConfig(positionals.front(), gcd);
  if (!config) return failed(config.error());
  out_ << (global_.json ? ipuofJson(*config) : ipuofText(*config));
  return kOk;
}

int Command::attributes(const std::vector<std::string>& args) {
  ipu::cli::Flags flags("vipu-ctl attributes [AGENT...]");
  std::vector<std::string> agents;
  int exitCode = kOk;
  if (!parseFlags(flags, args, -1, agents, exitCode)) return exitCode;
  Result<VipuApi*> client = api();
  if (!client) return failed(client.error());
  Result<std::vector<AgentIpuAttributes>> attributes = (*client)->listIpuAttributes(agents);
  if (!attributes) return failed(attributes.error());
  out_ << (global_.json ? attributesJson(*attributes) : attributesText(*attributes));
  return kOk;
}

int Command::topology(const std::vector<std::string>& args) {
  ipu::cli::Flags flags("vipu-ctl topology");
  std::vector<std::string> positionals;
  int exitCode = kOk;
  if (!parseFlags(flags, args, 0, positionals, exitCode)) return exitCode;
  Result<VipuApi*> client = api();
  if (!client) return failed(client.error());
  Result<Topology> topology = discoverTopology(**client);
  if (!topology) return failed(topology.error());
  Result<std::vector<Partition>> partitions = (*client)->listPartitions("");
  if (!partitions) return failed(partitions.error());
  out_ << occupancyText(*topology, *partitions);
  return kOk;
}

}  // namespace

Result<std::vector<PartitionIpu>> parseIpuList(std::string_view text) {
  std::vector<PartitionIpu> ipus;
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const auto colon = item.find(':');
    if (colon == std::string_view::npos) {
      return makeError(ErrorCode::kInvalidArgument,
                       "--ipus item '" + std::string(item) + "' is not ILD:IPU[-IPU]");
    }
    Result<std::uint32_t> ild = parseNumber(item.substr(0, colon), "ILD");
    if (!ild) return ild.error();
    const std::string_view range = item.substr(colon + 1);
    const auto dash = range.find('-');
    Result<std::uint32_t> first = parseNumber(range.substr(0, dash), "IPU");
    if (!first) return first.error();
    std::uint32_t last = *first;
    if (dash != std::string_view::npos) {
      Result<std::uint32_t> parsedLast = parseNumber(range.substr(dash + 1), "IPU");
      if (!parsedLast) return parsedLast.error();
      last = *parsedLast;
    }
    if (last < *first || last - *first >= 4096) {
      return makeError(ErrorCode::kInvalidArgument,
                       "--ipus range '" + std::string(item) + "' is not FIRST-LAST");
    }
    for (std::uint32_t id = *first; id <= last; ++id) {
      ipus.push_back(PartitionIpu{*ild, 0, id, static_cast<std::uint32_t>(ipus.size())});
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return ipus;
}

std::string ctlUsage() {
  GlobalOptions defaults;
  ipu::cli::Flags flags("vipu-ctl [global flags] COMMAND [ARGS] [flags]",
                        "vipu-ctl: list, create and remove partitions on a V-IPU controller (a real one or "
                        "vipu-sim).");
  defineGlobalFlags(flags, defaults);
  return flags.usage() +
         "Commands:\n"
         "  list [--allocation ID]                        partitions and their ready state\n"
         "  create ID --size N [--ipus LIST | --plan]      create a partition (--wait-ms N to wait for it)\n"
         "  remove ID [--force]                           remove a partition, freeing its IPUs\n"
         "  reset ID [--wait-ms N]                        reset a partition\n"
         "  status ID                                     ready and operation state, errors\n"
         "  wait ID [--timeout-ms N]                      wait until PS_ACTIVE (fails on PS_ERROR)\n"
         "  ipuof ID [--gcd N]                            IPUoF configuration (devices per GCD)\n"
         "  attributes [AGENT...]                         IPU attributes per agent\n"
         "  topology                                      ILDs, taken and free IPUs\n"
         "'vipu-ctl COMMAND --help' shows a command's flags.\n"
         "\nExit status: 0 done, 1 the controller refused or failed, 2 bad usage.\n";
}

std::string defaultEndpoint(const Environment& environment) {
  const auto host = environment("IPUOF_VIPU_API_HOST");
  if (!host || host->empty()) return kLocalEndpoint;
  const auto port = environment("IPUOF_VIPU_API_PORT");
  return *host + ":" + (port && !port->empty() ? *port : "8090");
}

int runCtl(const std::vector<std::string>& args, const ApiFactory& connect, std::ostream& out,
           std::ostream& err, const std::string& defaultEndpoint) {
  GlobalOptions global;
  global.endpoint = defaultEndpoint;
  ipu::cli::Flags flags("vipu-ctl [global flags] COMMAND [ARGS] [flags]");
  defineGlobalFlags(flags, global);
  Result<std::vector<std::string>> rest = flags.parse(args, /*stopAtPositional=*/true);
  if (!rest) {
    err << "vipu-ctl: " << rest.error().message << "\nRun 'vipu-ctl --help' for usage.\n";
    return kUsage;
  }
  if (flags.helpRequested() || rest->empty()) {
    (rest->empty() && !flags.helpRequested() ? err : out) << ctlUsage();
    return flags.helpRequested() ? kOk : kUsage;
  }
  const std::string command = rest->front();
  const std::vector<std::string> commandArgs(rest->begin() + 1, rest->end());
  return Command(global, connect, out, err).run(command, commandArgs);
}

}  // namespace ipu::vipu::ctl
