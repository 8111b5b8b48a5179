#include "kubectl-ipu/worker_logs.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "api/resources.h"
#include "common/json_access.h"
#include "common/time_format.h"

namespace ipu::kubectl_ipu {
namespace {

int intLabel(const Json& labels, const char* name) {
  const std::string text = stringMember(labels, name);
  int value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() ? value : -1;
}

bool controlledBy(const Json& pod, const std::string& uid) {
  const Json& references = member(member(pod, "metadata"), "ownerReferences");
  if (!references.is_array()) return false;
  return std::any_of(references.begin(), references.end(), [&](const Json& reference) {
    return stringMember(reference, "uid") == uid && member(reference, "controller") == true;
  });
}

}  // namespace

std::vector<WorkerPod> workerPodsOf(const std::string& jobUid, const Json& pods) {
  std::vector<WorkerPod> workers;
  if (!pods.is_array()) return workers;
  for (const Json& pod : pods) {
    if (!controlledBy(pod, jobUid)) continue;
    const Json& metadata = member(pod, "metadata");
    const Json& labels = member(metadata, "labels");
    WorkerPod worker{stringMember(metadata, "name"), stringMember(metadata, "uid"),
                     intLabel(labels, api::kAttemptLabel), intLabel(labels, api::kInstanceLabel),
                     intLabel(labels, api::kWorkerIndexLabel)};
    if (worker.attempt < 0 || worker.instance < 0 || worker.worker < 0) continue;
    const Json& containers = member(member(pod, "spec"), "containers");
    if (containers.is_array() && !containers.empty()) worker.container = stringMember(containers[0], "name");
    const Json& statuses = member(member(pod, "status"), "containerStatuses");
    if (statuses.is_array()) {
      for (const Json& status : statuses) {
        if (stringMember(status, "name") != worker.container) continue;
        const Json& state = member(status, "state");
        worker.finished = member(state, "terminated").is_object();
        worker.started = worker.finished || member(state, "running").is_object();
      }
    }
    worker.deleting = member(metadata, "deletionTimestamp").is_string();
    workers.push_back(std::move(worker));
  }
  std::sort(workers.begin(), workers.end(), [](const WorkerPod& a, const WorkerPod& b) {
    return std::tie(a.attempt, a.worker, a.name) < std::tie(b.attempt, b.worker, b.name);
  });
  return workers;
}

std::string linePrefix(const WorkerPod& pod) {
  return "a" + std::to_string(pod.attempt) + " i" + std::to_string(pod.instance) + " w" +
         std::to_string(pod.worker) + " | ";
}

std::optional<LogLine> parseLogLine(std::string_view line) {
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view stamp = line.substr(0, space);
  // "2026-11-28T01:40:00.123456789Z": whole seconds for parseTime, the fraction read here.
  const std::size_t dot = stamp.find('.');
  const std::string whole =
      dot == std::string_view::npos ? std::string(stamp) : std::string(stamp.substr(0, dot)) + "Z";
  const auto seconds = parseTime(whole);
  if (!seconds || stamp.empty() || stamp.back() != 'Z') return std::nullopt;
  std::chrono::nanoseconds fraction{0};
  if (dot != std::string_view::npos) {
    std::string digits(stamp.substr(dot + 1, stamp.size() - dot - 2));
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    digits.resize(9, '0');
    fraction = std::chrono::nanoseconds(std::stoll(digits));
  }
  return LogLine{*seconds + std::chrono::duration_cast<std::chrono::system_clock::duration>(fraction),
                 std::string(line.substr(space + 1))};
}

std::string mergeLogs(const std::vector<std::pair<WorkerPod, std::vector<LogLine>>>& workers) {
  struct Entry {
    std::chrono::system_clock::time_point time;
    std::size_t worker;
    std::size_t index;
  };
  std::vector<Entry> entries;
  for (std::size_t w = 0; w < workers.size(); ++w) {
    for (std::size_t i = 0; i < workers[w].second.size(); ++i)
      entries.push_back({workers[w].second[i].time, w, i});
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.time, a.worker, a.index) < std::tie(b.time, b.worker, b.index);
  });
  std::string text;
  for (const Entry& entry : entries) {
    text += linePrefix(workers[entry.worker].first) + workers[entry.worker].second[entry.index].text + '\n';
  }
  return text;
}

}  // namespace ipu::kubectl_ipu
