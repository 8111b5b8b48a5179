#include "ipujob/launch_form.h"

#include "common/json_access.h"
#include "ipujob/pod_json.h"

namespace ipu::controllers {
namespace {

namespace command = runtime::command;

// Long enough to recognise a command line, short enough for one Event.
constexpr std::size_t kShownCommand = 160;

std::string shown(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) line += (line.empty() ? "" : " ") + word;
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  if (line.size() > kShownCommand) line = line.substr(0, kShownCommand) + "...";
  return line;
}

bool spansSeveralWorkers(const api::IpuJobSpec& spec) {
  return spec.workersPerJobInstance > 1;
}

}  // namespace

std::vector<std::string> workerCommandLine(const api::IpuJobSpec& spec) {
  const Json& containers = member(member(spec.workerTemplate, "spec"), "containers");
  if (!containers.is_array() || containers.empty()) return {};
  const Json& worker = containers[0];
  std::vector<std::string> line = stringsOf(member(worker, "command"));
  if (line.empty()) return {};  // the image's entrypoint: nothing the operator can read or wrap
  const std::vector<std::string> args = stringsOf(member(worker, "args"));
  line.insert(line.end(), args.begin(), args.end());
  return line;
}

LaunchForm launchForm(const api::IpuJobSpec& spec) {
  if (!spansSeveralWorkers(spec)) return LaunchForm::kGenerated;
  if (!spec.launcherCommand.empty()) return LaunchForm::kLauncherCommand;
  const std::vector<std::string> line = workerCommandLine(spec);
  if (!line.empty() && command::readWorkerCommand(line).kind == command::CommandKind::kLauncher)
    return LaunchForm::kLauncherInCommand;
  return LaunchForm::kGenerated;
}

std::optional<LaunchFormNotice> launchFormNotice(const api::IpuJobSpec& spec, bool runtimeInjected) {
  if (!runtimeInjected || !spansSeveralWorkers(spec) || !spec.launcherCommand.empty()) return std::nullopt;
  const std::vector<std::string> line = workerCommandLine(spec);
  if (line.empty()) return std::nullopt;
  const command::CommandReading reading = command::readWorkerCommand(line);
  const std::string workers = std::to_string(spec.workersPerJobInstance);
  switch (reading.kind) {
    case command::CommandKind::kRankProgram:
      return std::nullopt;
    case command::CommandKind::kLauncher:
      return LaunchFormNotice{
          kube::EventType::kNormal, "LauncherInCommand",
          "the worker command starts the ranks itself (" + shown(reading.found) +
              "): worker 0 of each instance runs it once, with a hostfile of the instance's " + workers +
              " workers; the other workers run only ipu-runtime's agent, which starts the ranks your "
              "launcher "
              "asks for" +
              (reading.scriptLines > 1 ? " (the script's other lines run in worker 0 only)" : "")};
    case command::CommandKind::kUnclear:
      return LaunchFormNotice{
          kube::EventType::kWarning, "WorkerCommandUnclear",
          "the worker command " + reading.why + " (" + shown(reading.found) +
              "), which cannot be read before it runs: it runs as one rank in each of the instance's " +
              workers +
              " workers. If it starts poprun or mpirun itself, that fails (\"mpirun does not support "
              "recursive "
              "calls\"): put the launch line in launcher.command, or write poprun/mpirun in the command or "
              "in "
              "its sh -c script, where it is seen"};
  }
  return std::nullopt;
}

}  // namespace ipu::controllers
