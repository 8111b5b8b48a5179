#include "kubectl-ipu/logs_command.h"

#include <chrono>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <thread>

#include "api/job_lifecycle.h"
#include "api/resources.h"
#include "common/json_access.h"
#include "common/time_format.h"
#include "kubectl-ipu/worker_logs.h"

namespace ipu::kubectl_ipu {
namespace {

using namespace std::chrono_literals;

std::string logPath(const std::string& ns, const WorkerPod& pod, bool follow,
                    std::optional<std::chrono::system_clock::time_point> since) {
  std::string path = "/api/v1/namespaces/" + ns + "/pods/" + pod.name + "/log?container=" + pod.container +
                     "&timestamps=true";
  if (follow) path += "&follow=true";
  if (since) path += "&sinceTime=" + formatTime(*since);  // whole seconds: lines up to `since` are skipped
  return path;
}

Result<std::vector<WorkerPod>> readWorkers(kube::RestClient& client, const LogsOptions& options,
                                           const std::string& jobUid) {
  auto pods = client.listAll(kube::ResourceRef::pods(), options.ns, {.labelSelector = api::kJobNameLabel});
  if (!pods) return pods.error();
  std::vector<WorkerPod> workers = workerPodsOf(jobUid, member(*pods, "items"));
  if (options.instance) {
    std::erase_if(workers, [&](const WorkerPod& pod) { return pod.instance != *options.instance; });
  }
  return workers;
}

// The latest attempt's logs, merged.
int showOnce(kube::RestClient& client, const LogsOptions& options, const std::string& jobUid,
             std::ostream& out, std::ostream& err) {
  auto workers = readWorkers(client, options, jobUid);
  if (!workers) {
    err << "error: reading the job's pods: " << workers.error().message << '\n';
    return 1;
  }
  if (workers->empty()) {
    err << "The job has no worker pods now" << (options.instance ? " in that instance" : "") << ".\n";
    return 0;
  }
  const int attempt = workers->back().attempt;
  std::vector<std::pair<WorkerPod, std::vector<LogLine>>> logs;
  for (const WorkerPod& pod : *workers) {
    if (pod.attempt != attempt) continue;
    std::vector<LogLine> lines;
    auto read = client.streamLines(logPath(options.ns, pod, false, std::nullopt), [&](std::string_view line) {
      if (auto parsed = parseLogLine(line)) lines.push_back(std::move(*parsed));
      return true;
    });
    if (!read) err << "warning: " << pod.name << ": " << read.error().message << '\n';
    logs.emplace_back(pod, std::move(lines));
  }
  out << mergeLogs(logs) << std::flush;
  return 0;
}

// Follows every worker of the job: a thread per worker pod from when its container starts.
class Follower {
 public:
  Follower(kube::RestClient& client, const LogsOptions& options, std::string jobUid, std::ostream& out,
           std::ostream& err)
      : client_(client), options_(options), jobUid_(std::move(jobUid)), out_(out), err_(err) {}

  ~Follower() {
    stop_.request_stop();
    threads_.clear();  // joins
  }

  int run() {
    // Pods are watched, so a short attempt's pods are followed from the moment their containers start.
    std::jthread watcher([this](std::stop_token stop) { watchPods(stop); });
    while (true) {
      auto job = client_.get(api::ipuJobResource(), options_.ns, options_.job);
      const bool gone = !job && job.error().code == ErrorCode::kNotFound;
      if (!job && !gone) {
        err_ << "error: reading the job: " << job.error().message << '\n';
        return 1;
      }
      if (gone || stringMember(member(*job, "metadata"), "uid") != jobUid_) {
        say("--- the job was deleted");
        return 0;
      }
      if (api::isTerminalPhase(api::phaseOf(*job))) {
        // The pods as they are after the job ended, then every log read to its end.
        if (auto workers = readWorkers(client_, options_, jobUid_)) {
          for (const WorkerPod& pod : *workers) start(pod);
          if (allDone()) {
            say("--- the job ended: " + api::phaseOf(*job));
            return 0;
          }
        }
      }
      std::this_thread::sleep_for(500ms);
    }
  }

 private:
  void say(const std::string& line) {
    std::lock_guard lock(outMutex_);
    out_ << line << '\n' << std::flush;
  }

  void watchPods(std::stop_token stop) {
    const kube::ListOptions selector{.labelSelector = api::kJobNameLabel};
    while (!stop.stop_requested()) {
      auto listed = client_.list(kube::ResourceRef::pods(), options_.ns, selector, stop);
      if (!listed) {
        std::this_thread::sleep_for(1s);
        continue;
      }
      consider(member(*listed, "items"));
      const kube::WatchOptions watch{
          .labelSelector = api::kJobNameLabel,
          .resourceVersion = stringMember(member(*listed, "metadata"), "resourceVersion"),
          .timeoutSeconds = 60};
      (void)client_.watch(
          kube::ResourceRef::pods(), options_.ns, watch,
          [&](kube::WatchEvent&& event) {
            consider(Json::array({std::move(event.object)}));
            return !stop.stop_requested();
          },
          stop);
    }
  }

  void consider(const Json& pods) {
    for (const WorkerPod& pod : workerPodsOf(jobUid_, pods)) {
      if (!options_.instance || pod.instance == *options_.instance) start(pod);
    }
  }

  bool allDone() {
    std::lock_guard lock(mutex_);
    return running_.empty();
  }

  // Called by the pod watcher and by the main loop.
  void start(const WorkerPod& pod) {
    if (!pod.started) return;
    std::lock_guard lock(mutex_);
    if (!followed_.insert(pod.uid).second) return;
    running_.insert(pod.uid);
    if (attemptsShown_.insert(pod.attempt).second) {
      std::lock_guard outLock(outMutex_);
      out_ << "--- attempt " << pod.attempt << '\n' << std::flush;
    }
    threads_.emplace_back([this, pod] {
      follow(pod);
      std::lock_guard done(mutex_);
      running_.erase(pod.uid);
    });
  }

  // Reads the pod's log to its end, reconnecting after a dropped or idle stream without repeating lines.
  void follow(const WorkerPod& pod) {
    const std::string prefix = linePrefix(pod);
    std::optional<std::chrono::system_clock::time_point> last;
    while (!stop_.stop_requested()) {
      const auto read = client_.streamLines(
          logPath(options_.ns, pod, true, last),
          [&](std::string_view text) {
            auto line = parseLogLine(text);
            if (!line || (last && line->time <= *last)) return true;
            last = line->time;
            std::lock_guard lock(outMutex_);
            out_ << prefix << line->text << '\n' << std::flush;
            return true;
          },
          stop_.get_token());
      if (read) return;  // the container has ended: its log is whole
      const ErrorCode code = read.error().code;
      if (code == ErrorCode::kNotFound || code == ErrorCode::kCancelled) return;
      if (code != ErrorCode::kDeadlineExceeded && code != ErrorCode::kUnavailable) {
        std::lock_guard lock(outMutex_);
        err_ << "warning: " << pod.name << ": " << read.error().message << '\n';
        return;
      }
    }
  }

  kube::RestClient& client_;
  const LogsOptions& options_;
  std::string jobUid_;
  std::ostream& out_;
  std::ostream& err_;
  std::stop_source stop_;
  std::mutex mutex_;
  std::set<std::string> followed_;  // pod uids
  std::set<std::string> running_;
  std::set<int> attemptsShown_;
  std::mutex outMutex_;
  std::vector<std::jthread> threads_;  // under mutex_
};

}  // namespace

int showJobLogs(kube::RestClient& client, const LogsOptions& options, std::ostream& out, std::ostream& err) {
  auto job = client.get(api::ipuJobResource(), options.ns, options.job);
  if (!job) {
    err << "error: IPUJob " << options.ns << "/" << options.job << ": " << job.error().message << '\n';
    return 1;
  }
  const std::string uid = stringMember(member(*job, "metadata"), "uid");
  if (!options.follow) return showOnce(client, options, uid, out, err);
  return Follower(client, options, uid, out, err).run();
}

}  // namespace ipu::kubectl_ipu
