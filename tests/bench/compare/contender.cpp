#include "contender.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include "common/time_format.h"
#include "eventually.h"
#include "ipujob/worker_pod.h"

namespace ipu::bench {

kube::ResourceRef IpuJobContender::jobResource() const {
  return {"graphcore.ai", "v1alpha1", "ipujobs", true};
}

nlohmann::json IpuJobContender::jobManifest(const std::string& name, int workers) const {
  nlohmann::json job = {
      {"apiVersion", "graphcore.ai/v1alpha1"}, {"kind", "IPUJob"}, {"metadata", {{"name", name}}}};
  job["spec"]["ipusPerJobInstance"] = std::to_string(workers);
  job["spec"]["workersPerJobInstance"] = std::to_string(workers);
  job["spec"]["workers"]["template"]["spec"]["containers"] = nlohmann::json::array(
      {{{"name", "train"}, {"image", "train:1"}, {"command", {"python3", "train.py"}}}});
  return job;
}

bool IpuJobContender::jobRunning(const nlohmann::json& job) const {
  return job.value("status", nlohmann::json::object()).value("phase", "") == "Running";
}

PodRole IpuJobContender::roleOf(const nlohmann::json& pod) const {
  // The operator's job label is on every worker pod it (or the floor) makes.
  return pod["metadata"].value("labels", nlohmann::json::object()).contains(controllers::kJobNameLabel)
             ? PodRole::kWorker
             : PodRole::kOther;
}

namespace {

void throwIfExited(testing::BackgroundProcess& process, const std::string& name) {
  if (auto exited = process.wait(std::chrono::milliseconds(0)))
    throw std::runtime_error(name + " exited with " + std::to_string(*exited) + ": " + process.stderrText());
}

// A MicroTime ("2026-11-28T21:50:01.123456Z") to the wall clock, fraction included; nullopt for anything
// else.
std::optional<std::chrono::system_clock::time_point> parseMicroTime(const std::string& text) {
  auto whole = parseTime(text);
  if (!whole) return std::nullopt;
  const auto dot = text.find('.');
  if (dot == std::string::npos) return whole;
  double fraction = 0, scale = 0.1;
  for (std::size_t i = dot + 1; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    fraction += (text[i] - '0') * scale;
    scale /= 10;
  }
  return *whole + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                      std::chrono::duration<double>(fraction));
}

// Seconds from now until the Lease can be taken by another process: 0 when it was released (no holder) or
// is gone, else until its last renewal plus its duration.
double secondsUntilLeaseFree(const BenchCluster& cluster, const LeaseRef& lease) {
  const auto got = cluster.tryKubectl({"get", "lease", "-n", lease.ns, lease.name, "-o", "json"});
  if (!got.ok()) return 0;
  const auto spec = nlohmann::json::parse(got.out).value("spec", nlohmann::json::object());
  if (spec.value("holderIdentity", "").empty()) return 0;
  const auto renewed = parseMicroTime(spec.value("renewTime", ""));
  if (!renewed) return 0;
  const auto freeAt = *renewed + std::chrono::seconds(spec.value("leaseDurationSeconds", 0));
  return std::max(0.0, std::chrono::duration<double>(freeAt - std::chrono::system_clock::now()).count());
}

}  // namespace

void stopRunning(testing::BackgroundProcess& process, const std::string& name) {
  throwIfExited(process, name);
  process.stop();
}

nlohmann::json processFigures(int pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  nlohmann::json figures = nlohmann::json::object();
  std::ifstream status(dir + "/status");
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    double kb = 0;
    fields >> key >> kb;
    if (key == "VmRSS:") figures["rss_mb"] = kb / 1024;
    if (key == "VmHWM:") figures["peak_rss_mb"] = kb / 1024;
    // Resident memory split: the heap and stacks the process made, and the mapped files (its code and
    // shared libraries), which a process of the same binary with nothing cached holds too.
    if (key == "RssAnon:") figures["rss_anon_mb"] = kb / 1024;
    if (key == "RssFile:") figures["rss_file_mb"] = kb / 1024;
  }
  std::ifstream stat(dir + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces, so start after its closing parenthesis):
  // state is field 3, utime 14 and stime 15.
  const auto close = text.rfind(')');
  if (close != std::string::npos) {
    std::istringstream rest(text.substr(close + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::stod(field);
      if (i == 15) stime = std::stod(field);
    }
    figures["cpu_seconds"] = (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return figures;
}

Restart restartUntilLogged(std::unique_ptr<testing::BackgroundProcess>& process, const std::string& name,
                           const std::function<void()>& launch, const std::string& line,
                           std::chrono::seconds timeout, const BenchCluster& cluster, const LeaseRef& lease) {
  stopRunning(*process, name);
  process.reset();
  const double leaseWait = secondsUntilLeaseFree(cluster, lease);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout;
  launch();
  for (;;) {
    if (process->stderrText().find(line) != std::string::npos) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return {seconds, std::min(leaseWait, seconds)};
    }
    throwIfExited(*process, name);
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error(name + " did not log '" + line + "' within " +
                               std::to_string(timeout.count()) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void waitForLeaseHolder(const BenchCluster& cluster, const std::string& ns, const std::string& name,
                        std::chrono::seconds timeout) {
  const bool held = testing::eventually(
      [&] {
        const auto holder =
            cluster.tryKubectl({"get", "lease", "-n", ns, name, "-o", "jsonpath={.spec.holderIdentity}"});
        return holder.ok() && !holder.out.empty();
      },
      timeout);
  if (!held)
    throw std::runtime_error("no holder of Lease " + ns + "/" + name + " after " +
                             std::to_string(timeout.count()) + " s");
}

}  // namespace ipu::bench
