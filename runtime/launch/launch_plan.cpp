#include "launch/launch_plan.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "command/worker_command.h"
#include "contract/runtime_contract.h"

namespace ipu::runtime::launch {
namespace {

// IPUJob sizes stay far below this; anything larger is a corrupt variable, not a job.
constexpr int kMaxCount = 1 << 16;

int positiveInteger(const GetEnv& getEnv, const std::string& name) {
  std::optional<std::string> text = getEnv(name);
  if (!text || text->empty())
    throw LaunchError(name + " is not set (the operator sets it in every worker pod)");
  return wholeNumberIn(name, *text, 1, kMaxCount);
}

// A DNS name as Kubernetes makes them: letters, digits, '-' and '.'.
bool validHostName(const std::string& host) {
  if (host.empty() || host.size() > 253 || host.front() == '.' || host.front() == '-') return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : separator) + part;
  return out;
}

// Enough of a command to recognise it in a log line.
constexpr std::size_t kSummarisedCommand = 200;

std::string shortened(std::string line) {
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  if (line.size() <= kSummarisedCommand) return line;
  return line.substr(0, kSummarisedCommand) + "... (" + std::to_string(line.size() - kSummarisedCommand) +
         " more characters)";
}

// Whether the command line sets MCA parameter `name`: "--mca name", "-mca name", "--gmca name" (also inside a
// sh -c script, or poprun's --mpi-global-args="--mca name ..."), or OMPI_MCA_<name> (`-x`, `env`, `export`).
bool mcaParameterOnCommandLine(const std::vector<std::string>& command, std::string_view name) {
  std::vector<std::string> words;
  for (const std::string& argument : command) {
    std::size_t start = 0;
    while (start < argument.size()) {
      const std::size_t end = argument.find_first_of(" \t\n'\"", start);
      if (end != start) words.push_back(argument.substr(start, end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  const std::string variable = "OMPI_MCA_" + std::string(name);
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0 && words[i] == name && words[i - 1].ends_with("mca")) return true;
    if (words[i] == variable || words[i].starts_with(variable + "=")) return true;
  }
  return false;
}

// The value a parameter file ("name = value" lines, '#' comments) gives `name`, if it sets it.
std::optional<std::string> valueInParameterFile(const std::string& text, std::string_view name) {
  std::optional<std::string> value;
  for (const std::string& line : split(text, '\n')) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::size_t equals = line.find('=', first);
    if (equals == std::string::npos) continue;
    std::string key = line.substr(first, equals - first);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key != name) continue;
    const std::size_t start = line.find_first_not_of(" \t", equals + 1);
    value = start == std::string::npos ? "" : line.substr(start, line.find_last_not_of(" \t\r") + 1 - start);
  }
  return value;
}

}  // namespace

InstanceShape shapeFromEnvironment(const GetEnv& getEnv) {
  InstanceShape shape;
  shape.workers = positiveInteger(getEnv, contract::kEnvWorkersPerInstance);
  shape.replicasPerWorker = positiveInteger(getEnv, contract::kEnvReplicasPerWorker);
  int ipus = positiveInteger(getEnv, contract::kEnvIpusPerInstance);
  long long replicas = static_cast<long long>(shape.workers) * shape.replicasPerWorker;
  if (replicas > ipus || ipus % replicas != 0)
    throw LaunchError("IPUJOB_IPUS_PER_INSTANCE=" + std::to_string(ipus) + " does not divide into " +
                      std::to_string(replicas) + " replicas (" + std::to_string(shape.workers) +
                      " workers x " + std::to_string(shape.replicasPerWorker) + " replicas per worker)");
  shape.ipusPerReplica = static_cast<int>(ipus / replicas);
  return shape;
}

std::vector<std::string> peersFromEnvironment(const GetEnv& getEnv, int workers) {
  std::optional<std::string> text = getEnv(contract::kEnvPeers);
  if (!text || text->empty())
    throw LaunchError("IPU_RUNTIME_PEERS is not set (the operator sets it in every worker pod)");
  std::vector<std::string> hosts = split(*text, ',');
  for (const auto& host : hosts) {
    if (!validHostName(host))
      throw LaunchError("IPU_RUNTIME_PEERS has an invalid host name \"" + host + "\"");
  }
  if (static_cast<int>(hosts.size()) != workers)
    throw LaunchError("IPU_RUNTIME_PEERS lists " + std::to_string(hosts.size()) + " hosts for " +
                      std::to_string(workers) + " workers");
  return hosts;
}

Environment popdistEnvironment(const InstanceShape& shape, int rank) {
  return {
      {"POPDIST_NUM_TOTAL_REPLICAS", std::to_string(shape.totalReplicas())},
      {"POPDIST_NUM_IPUS_PER_REPLICA", std::to_string(shape.ipusPerReplica)},
      {"POPDIST_NUM_LOCAL_REPLICAS", std::to_string(shape.replicasPerWorker)},
      {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "1"},
      {"POPDIST_REPLICA_INDEX_OFFSET", std::to_string(rank * shape.replicasPerWorker)},
      // One rank per worker pod: each is the first (and only) instance on its host.
      {"POPDIST_LOCAL_INSTANCE_INDEX", "0"},
  };
}

const std::vector<std::string>& passedThroughVariables() {
  static const std::vector<std::string> names = {
      "IPUOF_VIPU_API_HOST",    "IPUOF_VIPU_API_PORT", "IPUOF_VIPU_API_PARTITION_ID", "IPUOF_VIPU_API_GCD_ID",
      "IPUOF_VIPU_API_TIMEOUT", "IPUOF_LOG_LEVEL",     "POPLAR_TARGET_OPTIONS",       "PATH",
      "LD_LIBRARY_PATH",        "PYTHONPATH"};
  return names;
}

std::vector<std::string> poprunCommand(const LaunchInputs& inputs) {
  const InstanceShape& shape = inputs.shape;
  std::string mpiGlobal = "--tag-output --bind-to none --mca plm_rsh_agent '" + inputs.rshAgent + "'";
  if (inputs.runAsRoot) mpiGlobal += " --allow-run-as-root";
  std::vector<std::string> argv = {"poprun",
                                   "--host",
                                   joined(inputs.hosts, ","),
                                   "--num-instances",
                                   std::to_string(shape.ranks()),
                                   "--num-replicas",
                                   std::to_string(shape.totalReplicas()),
                                   "--ipus-per-replica",
                                   std::to_string(shape.ipusPerReplica),
                                   "--mpi-global-args=" + mpiGlobal};
  argv.push_back("--");
  argv.insert(argv.end(), inputs.command.begin(), inputs.command.end());
  return argv;
}

std::vector<std::string> mpirunCommand(const LaunchInputs& inputs) {
  if (static_cast<int>(inputs.hosts.size()) != inputs.shape.ranks())
    throw LaunchError(std::to_string(inputs.hosts.size()) + " hosts for " +
                      std::to_string(inputs.shape.ranks()) + " ranks");
  if (inputs.command.empty()) throw LaunchError("no command to start on the ranks");
  std::vector<std::string> argv = {"mpirun", "--bind-to",     "none",         "--tag-output",
                                   "--mca",  "plm_rsh_agent", inputs.rshAgent};
  if (inputs.runAsRoot) argv.push_back("--allow-run-as-root");
  for (int rank = 0; rank < inputs.shape.ranks(); ++rank) {
    if (rank > 0) argv.push_back(":");
    argv.insert(argv.end(), {"-np", "1", "--host", inputs.hosts[rank]});
    for (const auto& [name, value] : popdistEnvironment(inputs.shape, rank))
      argv.insert(argv.end(), {"-x", name + "=" + value});
    for (const auto& name : inputs.presentVariables) argv.insert(argv.end(), {"-x", name});
    argv.insert(argv.end(), inputs.command.begin(), inputs.command.end());
  }
  return argv;
}

Environment mpiInterfaceEnvironment(const std::vector<std::string>& interfaces, const GetEnv& getEnv,
                                    const std::vector<std::string>& command) {
  Environment environment;
  if (interfaces.empty()) return environment;
  const std::string commandLine = joined(command, " ");
  for (const std::string transport : {"btl", "oob"}) {
    const std::string include = transport + "_tcp_if_include";
    const std::string exclude = transport + "_tcp_if_exclude";
    const bool chosen = getEnv("OMPI_MCA_" + include) || getEnv("OMPI_MCA_" + exclude) ||
                        commandLine.find(include) != std::string::npos ||
                        commandLine.find(exclude) != std::string::npos;
    if (!chosen) environment.emplace_back("OMPI_MCA_" + include, joined(interfaces, ","));
  }
  return environment;
}

Environment mpiMessagingEnvironment(const MpiSurroundings& surroundings, const GetEnv& getEnv,
                                    const std::vector<std::string>& command) {
  if (surroundings.fabricDevices) return {};
  for (const std::string name : {"pml", "mtl"}) {
    if (getEnv("OMPI_MCA_" + name) || mcaParameterOnCommandLine(command, name)) return {};
  }
  std::string pml;  // what the parameter files say, the last one that sets it winning
  for (const std::string& file : surroundings.parameterFiles) {
    if (auto value = valueInParameterFile(file, "pml")) pml = *value;
    // MTLs named to be used (not "^ofi", an exclusion): someone chose cm.
    if (auto mtl = valueInParameterFile(file, "mtl"); mtl && !mtl->starts_with('^')) return {};
  }
  if (pml.empty()) return {{"OMPI_MCA_pml", "^cm"}};
  // A list of layers to use loads cm only when it names it; a list to leave out gets cm added to it (the
  // variable replaces the file's value, it must not bring back what the file left out).
  if (!pml.starts_with('^')) return {};
  for (const std::string& layer : split(pml.substr(1), ',')) {
    if (layer == "cm") return {};
  }
  return {{"OMPI_MCA_pml", pml + ",cm"}};
}

std::string hostfile(const std::vector<std::string>& hosts) {
  std::string text;
  for (const auto& host : hosts) text += host + " slots=1\n";
  return text;
}

std::string shellJoin(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& arg : argv) {
    if (!line.empty()) line += ' ';
    bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
    });
    if (plain) {
      line += arg;
      continue;
    }
    line += '\'';
    for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

std::string launchSummary(const std::vector<std::string>& generated, const LaunchInputs& inputs,
                          bool userLauncher) {
  const std::string hint = std::string(" (") + kEnvLogLaunch + "=full logs the whole line)";
  if (userLauncher) {
    const command::CommandReading reading = command::readWorkerCommand(inputs.command);
    if (reading.scriptLines > 0 && reading.kind == command::CommandKind::kLauncher) {
      return "running the worker command once, a " + inputs.command.front() + " -c script of " +
             std::to_string(reading.scriptLines) +
             " line(s) that starts the ranks with: " + shortened(shellJoin(reading.found)) + hint;
    }
    const std::string line = shellJoin(inputs.command);
    return "running the job's own launcher once: " + shortened(line) +
           (line.size() > kSummarisedCommand ? hint : "");
  }
  const std::string workers = std::to_string(inputs.hosts.size());
  std::string launcher = generated.empty() ? "" : generated.front();
  if (launcher == "poprun") {
    launcher += " --num-replicas " + std::to_string(inputs.shape.totalReplicas()) + " --ipus-per-replica " +
                std::to_string(inputs.shape.ipusPerReplica);
  }
  return "running " + launcher + ", one rank in each of the " + workers + " workers (" +
         joined(inputs.hosts, ",") + "), each rank: " + shortened(shellJoin(inputs.command)) + hint;
}

}  // namespace ipu::runtime::launch
