#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/ipujob.h"
#include "command/worker_command.h"
#include "kube/event_recorder.h"

// How worker 0 of an instance with several workers starts the instance's ranks (docs/user-guide.md, "Your
// own poprun/mpirun"): decided once, from the spec, by the operator, which writes it into worker 0's command.
// Pure.
namespace ipu::controllers {

enum class LaunchForm {
  kGenerated,          // the runtime's poprun/mpirun starts the worker command as one rank per worker
  kLauncherCommand,    // spec.launcher.command, run once in worker 0
  kLauncherInCommand,  // the worker command starts the ranks itself (poprun/mpirun/mpiexec): run once in
                       // worker 0
};

// The first worker container's command and args as Kubernetes joins them (empty when it has no command).
std::vector<std::string> workerCommandLine(const api::IpuJobSpec& spec);

// The form for a job whose instances span several workers (kGenerated for any other job).
LaunchForm launchForm(const api::IpuJobSpec& spec);

// What the job's users should know about how its instances start, as an Event when it is admitted: that a
// launcher was found in the worker command and what the other workers run then (Normal), or that the
// command hides what it runs and which form to use if it starts a launcher (Warning). nullopt: nothing to
// say (one worker per instance, launcher.command, a plain rank program, or no runtime injected).
struct LaunchFormNotice {
  kube::EventType type = kube::EventType::kNormal;
  std::string reason;
  std::string message;
};
std::optional<LaunchFormNotice> launchFormNotice(const api::IpuJobSpec& spec, bool runtimeInjected);

}  // namespace ipu::controllers
