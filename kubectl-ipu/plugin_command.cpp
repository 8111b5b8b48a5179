#include "kubectl-ipu/plugin_command.h"

#include <charconv>
#include <fstream>
#include <iterator>
#include <optional>
#include <ostream>

#include <unistd.h>

#include "admission/published_queue.h"
#include "api/ipupod.h"
#include "api/resources.h"
#include "cli/yaml_json.h"
#include "common/json_access.h"
#include "kubectl-ipu/copy_command.h"
#include "kubectl-ipu/fit_report.h"
#include "kubectl-ipu/logs_command.h"
#include "kubectl-ipu/quota_report.h"
#include "kubectl-ipu/terminal_map.h"
#include "kubectl-ipu/top_report.h"
#include "kubectl-ipu/why_report.h"

#ifndef IPU_OPERATOR_VERSION
#define IPU_OPERATOR_VERSION "unknown"
#endif

namespace ipu::kubectl_ipu {
namespace {

constexpr const char* kUsage = R"(kubectl ipu: the IPUs of this cluster, for the people who use them.

Usage: kubectl ipu <command> [flags]

Commands:
  status    each V-IPU controller's IPU-POD: every IPU free or marked by the job holding it
  quota     each namespace's IPU use against its IPUQuota, and the jobs waiting for admission
  top       who holds IPUs now, per namespace and per job, and for how long
  why JOB   where the job is, what it needs, what is free, what holds it back, what would let it run
            and when it starts at the latest
  fit       before submitting: whether jobs can ever run here and under the quota, would start now, or
            where they would wait and until when (-f FILE, or --ipus N [--instances M])
  logs JOB  every worker's log, each line prefixed by attempt, instance and worker
  cp JOB:PATH DEST
            a file or directory out of a running worker (worker 0 unless --worker), through
            kubectl exec: no tar needed in the image
  version   the release of this plugin
  help      this text

Flags:
  -n, --namespace NS     the namespace (default: the context's)
  -A, --all-namespaces   quota, top: every namespace you may list
      --controller NAME  status: only this V-IPU controller
  -f, --follow           logs: follow every worker, new attempts too, until the job ends
  -f, --filename FILE    fit: the IPUJobs to fit, one or many YAML documents ("-": standard input)
      --ipus N           fit: a job of partitions of N IPUs (ipusPerJobInstance)
      --instances M      fit: with M of them (jobInstances; default 1)
      --instance N       logs: only this job instance's workers
      --worker N         cp: from <job>-worker-N (default 0)
  -o, --output FORMAT    text (default) or json
      --color WHEN       auto (default: on a terminal, unless NO_COLOR is set), always or never
      --kubeconfig PATH  the kubeconfig (default: $KUBECONFIG, then ~/.kube/config)
      --context NAME     the kubeconfig context (default: its current context)
  -h, --help             this text

Jobs are named only where you may list IPUJobs; elsewhere "another namespace".
Exit codes: 0 done, 1 the cluster could not be read, 2 a wrong command line, 3 (fit) a job can never
run as it is or cannot be read.
)";

struct Options {
  std::string command;
  std::string ns;
  bool allNamespaces = false;
  std::string controller;
  std::string job;          // logs, why; cp: JOB:PATH
  std::string destination;  // cp
  int worker = 0;           // cp
  bool follow = false;
  std::optional<int> instance;
  std::string filename;                // fit
  std::optional<int> ipus, instances;  // fit
  std::string output = "text";
  std::string color = "auto";
  std::string kubeconfig;
  std::string context;
  bool help = false;
};

Result<Options> parseArgs(const std::vector<std::string>& args) {
  Options options;
  auto usage = [](const std::string& message) { return makeError(ErrorCode::kInvalidArgument, message); };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    std::string value;
    bool inlineValue = false;
    if (arg.starts_with("--") && arg.find('=') != std::string::npos) {
      value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
      inlineValue = true;
    }
    auto next = [&](std::string& into) -> Status {
      if (inlineValue) {
        into = value;
        return {};
      }
      if (i + 1 >= args.size()) return usage(arg + " needs a value");
      into = args[++i];
      return {};
    };
    Status taken;
    if (arg == "-h" || arg == "--help") {
      options.help = true;
    } else if (arg == "-A" || arg == "--all-namespaces") {
      options.allNamespaces = true;
    } else if (arg == "-n" || arg == "--namespace") {
      taken = next(options.ns);
    } else if (arg == "--controller") {
      taken = next(options.controller);
    } else if (arg == "--filename" || (arg == "-f" && options.command == "fit")) {
      taken = next(options.filename);
    } else if (arg == "-f" || arg == "--follow") {
      options.follow = true;
    } else if (arg == "--instance" || arg == "--ipus" || arg == "--instances" || arg == "--worker") {
      std::string text;
      taken = next(text);
      int number = -1;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
      if (taken && (error != std::errc() || end != text.data() + text.size() || number < 0)) {
        return usage(arg + " must be a whole number, not '" + text + "'");
      }
      if (arg == "--worker") {
        options.worker = number;
      } else {
        (arg == "--instance" ? options.instance
         : arg == "--ipus"   ? options.ipus
                             : options.instances) = number;
      }
    } else if (arg == "-o" || arg == "--output") {
      taken = next(options.output);
    } else if (arg == "--color") {
      taken = next(options.color);
    } else if (arg == "--kubeconfig") {
      taken = next(options.kubeconfig);
    } else if (arg == "--context") {
      taken = next(options.context);
    } else if (arg.starts_with("-")) {
      return usage("unknown flag " + arg);
    } else if (options.command.empty()) {
      options.command = arg;
    } else if ((options.command == "logs" || options.command == "why" || options.command == "cp") &&
               options.job.empty()) {
      options.job = arg;
    } else if (options.command == "cp" && options.destination.empty()) {
      options.destination = arg;
    } else {
      return usage("unexpected argument '" + arg + "'");
    }
    if (!taken) return taken.error();
  }
  if (options.command == "logs" && options.job.empty())
    return usage("logs needs the job's name: kubectl ipu logs JOB");
  if (options.command == "cp") {
    const std::size_t colon = options.job.find(':');
    if (options.destination.empty() || colon == std::string::npos || colon == 0 ||
        colon + 1 == options.job.size())
      return usage("cp copies JOB:PATH to DEST: kubectl ipu cp JOB:PATH DEST");
  }
  if (options.command == "fit" && options.filename.empty() == !options.ipus) {
    return usage("fit needs either -f FILE or --ipus N [--instances M]");
  }
  if (options.instances && !options.ipus) return usage("--instances goes with --ipus");
  if (options.output != "text" && options.output != "json") {
    return usage("--output must be text or json, not '" + options.output + "'");
  }
  if (options.color != "auto" && options.color != "always" && options.color != "never") {
    return usage("--color must be auto, always or never, not '" + options.color + "'");
  }
  return options;
}

// A list's items ([] when the answer has none).
std::vector<Json> itemsOf(const Json& list) {
  const Json& items = member(list, "items");
  return items.is_array() ? items.get<std::vector<Json>>() : std::vector<Json>{};
}

// The IPUJobs the user may list: every namespace when allowed, else the namespace asked for.
struct JobListing {
  std::vector<Json> jobs;
  bool allNamespaces = false;
};

Result<JobListing> listJobs(kube::RestClient& client, const std::string& ns, bool preferAll) {
  if (preferAll) {
    auto all = client.listAll(api::ipuJobResource(), "");
    if (all) return JobListing{itemsOf(*all), true};
    if (all.error().code != ErrorCode::kPermissionDenied) return all.error();
  }
  auto own = client.listAll(api::ipuJobResource(), ns);
  if (own) return JobListing{itemsOf(*own), false};
  if (own.error().code == ErrorCode::kPermissionDenied) return JobListing{};
  return own.error();
}

Result<std::vector<api::IpuPodStatus>> listPods(kube::RestClient& client, const std::string& controller) {
  auto listed = client.listAll(api::ipuPodResource(), "");
  if (!listed) {
    if (listed.error().code == ErrorCode::kNotFound) {
      return makeError(ErrorCode::kNotFound,
                       "this cluster serves no IPUPods: is ipu-operator installed (with its CRDs)?");
    }
    return listed.error();
  }
  std::vector<api::IpuPodStatus> pods;
  for (const Json& pod : member(*listed, "items")) {
    api::IpuPodStatus status = api::parseIpuPodStatus(member(pod, "status"));
    if (status.controller.empty()) status.controller = stringMember(member(pod, "metadata"), "name");
    if (!controller.empty() && status.controller != controller) continue;
    pods.push_back(std::move(status));
  }
  return pods;
}

Json mapJson(const PodMapView& view, Clock::WallTime now) {
  Json json = api::toJson(view.status);
  json["holders"] = Json::array();
  for (const MapHolder& holder : view.holders) {
    Json entry{{"mark", std::string(1, holder.mark)},
               {"kind", holder.kind},
               {"label", holder.label},
               {"ipuCount", holder.ipuCount},
               {"partitions", holder.partitions}};
    entry["job"] = holder.job ? Json{{"namespace", holder.job->ns}, {"name", holder.job->name}} : Json();
    if (holder.since) {
      entry["heldSeconds"] = std::chrono::duration_cast<std::chrono::seconds>(now - *holder.since).count();
    }
    json["holders"].push_back(entry);
  }
  for (std::size_t i = 0; i < view.status.holders.size() && i < json["holders"].size(); ++i) {
    json["holders"][i]["ipus"] = view.status.holders[i].ipus;
  }
  return json;
}

// The admission plan's inputs as the operator publishes them (the IPUQueue), ready to plan.
Result<controllers::PlanInputs> readPublishedQueue(kube::RestClient& client) {
  auto queue = client.get(api::ipuQueueResource(), "", api::kIpuQueueName);
  if (!queue && queue.error().code == ErrorCode::kNotFound) {
    return makeError(ErrorCode::kNotFound,
                     "the operator publishes no IPUQueue: is ipu-operator (with its CRDs) installed, running "
                     "and at least as new as this plugin?");
  }
  if (!queue) return queue.error();
  return controllers::planInputsFromQueueStatus(member(*queue, "status"));
}

int fail(Terminal& terminal, const std::string& what, const Error& error) {
  terminal.err << "error: " << what << ": " << error.message << '\n';
  return kExitFailed;
}

int status(const Options& options, Connection& connection, Terminal& terminal, bool color) {
  auto pods = listPods(*connection.client, options.controller);
  if (!pods) return fail(terminal, "reading the IPU-POD maps", pods.error());
  auto jobs = listJobs(*connection.client, connection.ns, true);
  if (!jobs) return fail(terminal, "reading IPUJobs", jobs.error());
  const VisibleJobs visible = visibleJobsOf(jobs->jobs);
  if (pods->empty()) {
    if (options.output == "json") {
      terminal.out << Json{{"controllers", Json::array()}}.dump(2) << '\n';
      return kExitOk;
    }
    terminal.out << (options.controller.empty()
                         ? "No IPU-POD maps published yet (is the operator running?).\n"
                         : "No IPU-POD map for the controller " + options.controller + ".\n");
    return options.controller.empty() ? kExitOk : kExitFailed;
  }
  Json json{{"controllers", Json::array()}};
  bool first = true;
  for (const api::IpuPodStatus& pod : *pods) {
    const PodMapView view = podMapViewOf(pod, visible);
    if (options.output == "json") {
      json["controllers"].push_back(mapJson(view, terminal.now));
      continue;
    }
    if (!first) terminal.out << '\n';
    first = false;
    terminal.out << renderPodMap(view, {terminal.width, color, terminal.now});
  }
  if (options.output == "json") terminal.out << json.dump(2) << '\n';
  return kExitOk;
}

int quota(const Options& options, Connection& connection, Terminal& terminal) {
  const std::string ns = options.allNamespaces ? "" : connection.ns;
  auto quotas = connection.client->listAll(api::ipuQuotaResource(), ns);
  if (!quotas) return fail(terminal, "reading IPUQuotas", quotas.error());
  auto jobs = connection.client->listAll(api::ipuJobResource(), ns);
  if (!jobs) return fail(terminal, "reading IPUJobs", jobs.error());
  const QuotaReport report = quotaReportOf(itemsOf(*quotas), itemsOf(*jobs));
  if (options.output == "json") {
    terminal.out << toJson(report).dump(2) << '\n';
  } else {
    terminal.out << renderQuotaReport(report, terminal.width);
  }
  return kExitOk;
}

int top(const Options& options, Connection& connection, Terminal& terminal) {
  auto pods = listPods(*connection.client, "");
  if (!pods) return fail(terminal, "reading the IPU-POD maps", pods.error());
  // The jobs shown: this namespace's, or with -A every namespace's (refused, as `kubectl get -A` is, to a
  // user who may not list them all).
  Result<JobListing> jobs = JobListing{};
  if (options.allNamespaces) {
    auto all = connection.client->listAll(api::ipuJobResource(), "");
    if (!all) return fail(terminal, "reading IPUJobs in every namespace", all.error());
    jobs = JobListing{itemsOf(*all), true};
  } else {
    jobs = listJobs(*connection.client, connection.ns, false);
    if (!jobs) return fail(terminal, "reading IPUJobs", jobs.error());
  }
  // IPUs of jobs not shown are counted under "(other namespaces)", named or not.
  const VisibleJobs visible = visibleJobsOf(jobs->jobs);
  const TopReport report = topReportOf(jobs->jobs, *pods, visible);
  if (options.output == "json") {
    terminal.out << toJson(report, terminal.now).dump(2) << '\n';
  } else {
    terminal.out << renderTopReport(report, terminal.width, terminal.now);
  }
  return kExitOk;
}

int why(const Options& options, Connection& connection, Terminal& terminal) {
  auto job = connection.client->get(api::ipuJobResource(), connection.ns, options.job);
  if (!job) return fail(terminal, "IPUJob " + connection.ns + "/" + options.job, job.error());
  auto pods = listPods(*connection.client, "");
  if (!pods) return fail(terminal, "reading the IPU-POD maps", pods.error());
  auto quotas = connection.client->listAll(api::ipuQuotaResource(), connection.ns);
  if (!quotas) return fail(terminal, "reading IPUQuotas", quotas.error());
  auto jobs = listJobs(*connection.client, connection.ns, true);
  if (!jobs) return fail(terminal, "reading IPUJobs", jobs.error());
  WhyReport report = whyOf(*job, *pods, itemsOf(*quotas), jobs->jobs, terminal.now);
  // The start estimate needs the whole queue: from the IPUQueue, when the operator publishes one (without
  // it, `why` says everything else).
  if (auto inputs = readPublishedQueue(*connection.client)) {
    report.estimate =
        publishedEstimateOf(*inputs, stringMember(member(*job, "metadata"), "uid"), terminal.now);
    report.now = terminal.now;
  }
  if (options.output == "json") {
    terminal.out << toJson(report).dump(2) << '\n';
  } else {
    terminal.out << renderWhy(report);
  }
  return kExitOk;
}

Result<std::vector<Json>> readDocuments(const std::string& filename, std::istream* in) {
  std::string text;
  if (filename == "-") {
    if (in == nullptr) return makeError(ErrorCode::kInvalidArgument, "no standard input to read");
    text.assign(std::istreambuf_iterator<char>(*in), std::istreambuf_iterator<char>());
  } else {
    std::ifstream file(filename);
    if (!file) return makeError(ErrorCode::kNotFound, "cannot open " + filename);
    text.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  return cli::readYamlDocuments(text);
}

int fit(const Options& options, Connection& connection, Terminal& terminal) {
  std::vector<FitRequest> requests;
  if (!options.filename.empty()) {
    auto documents = readDocuments(options.filename, terminal.in);
    if (!documents) {
      terminal.err << "error: " << options.filename << ": " << documents.error().message << '\n';
      return kExitUsage;
    }
    requests = fitRequestsOf(*documents, connection.ns);
  } else {
    requests.push_back(fitRequestOf(static_cast<std::uint32_t>(*options.ipus),
                                    static_cast<std::uint32_t>(options.instances.value_or(1)),
                                    connection.ns));
  }
  auto inputs = readPublishedQueue(*connection.client);
  if (!inputs) return fail(terminal, "reading the admission queue", inputs.error());
  OwnNamespace own{connection.ns, {}, std::nullopt};
  auto jobs = listJobs(*connection.client, connection.ns, false);
  if (!jobs) return fail(terminal, "reading IPUJobs", jobs.error());
  for (const Json& job : jobs->jobs) own.jobUids.insert(stringMember(member(job, "metadata"), "uid"));
  if (auto quotas = connection.client->listAll(api::ipuQuotaResource(), connection.ns)) {
    own.quotas = itemsOf(*quotas);
  } else if (quotas.error().code != ErrorCode::kPermissionDenied) {
    return fail(terminal, "reading IPUQuotas", quotas.error());
  }
  const std::vector<FitOutcome> outcomes = fitOf(std::move(*inputs), own, requests, terminal.now);
  if (options.output == "json") {
    terminal.out << toJson(outcomes).dump(2) << '\n';
  } else {
    terminal.out << renderFit(outcomes, terminal.width, terminal.now);
  }
  for (const FitOutcome& outcome : outcomes) {
    if (outcome.verdict == FitOutcome::Verdict::kNever || outcome.verdict == FitOutcome::Verdict::kInvalid)
      return kExitNeverFits;
  }
  return kExitOk;
}

}  // namespace

std::string pluginVersion() {
  return IPU_OPERATOR_VERSION;
}

int runPlugin(const std::vector<std::string>& args, Terminal& terminal, const Connect& connect) {
  auto options = parseArgs(args);
  if (!options) {
    terminal.err << "error: " << options.error().message << "\nSee 'kubectl ipu --help'.\n";
    return kExitUsage;
  }
  if (options->help || options->command.empty() || options->command == "help") {
    (options->command.empty() && !options->help ? terminal.err : terminal.out) << kUsage;
    return options->command.empty() && !options->help ? kExitUsage : kExitOk;
  }
  if (options->command == "version") {
    if (options->output == "json") {
      terminal.out << Json{{"version", pluginVersion()}}.dump() << '\n';
    } else {
      terminal.out << "kubectl-ipu " << pluginVersion() << '\n';
    }
    return kExitOk;
  }
  if (options->command != "status" && options->command != "quota" && options->command != "top" &&
      options->command != "logs" && options->command != "why" && options->command != "fit" &&
      options->command != "cp") {
    terminal.err << "error: unknown command '" << options->command << "'\nSee 'kubectl ipu --help'.\n";
    return kExitUsage;
  }
  auto connection = connect(options->kubeconfig, options->context);
  if (!connection) return fail(terminal, "connecting to the cluster", connection.error());
  if (!options->ns.empty()) connection->ns = options->ns;
  const bool color =
      options->color == "always" || (options->color == "auto" && terminal.tty && !terminal.noColor);
  if (options->command == "status") return status(*options, *connection, terminal, color);
  if (options->command == "quota") return quota(*options, *connection, terminal);
  if (options->command == "why") return why(*options, *connection, terminal);
  if (options->command == "fit") return fit(*options, *connection, terminal);
  if (options->command == "cp") {
    const std::size_t colon = options->job.find(':');
    return copyFromJob(*connection->client,
                       {.ns = connection->ns,
                        .job = options->job.substr(0, colon),
                        .path = options->job.substr(colon + 1),
                        .destination = options->destination,
                        .worker = options->worker,
                        .kubeconfig = options->kubeconfig,
                        .context = options->context},
                       terminal.out, terminal.err);
  }
  if (options->command == "logs") {
    return showJobLogs(*connection->client,
                       {connection->ns, options->job, options->follow, options->instance}, terminal.out,
                       terminal.err);
  }
  return top(*options, *connection, terminal);
}

}  // namespace ipu::kubectl_ipu
