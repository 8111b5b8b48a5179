#include "namespace_lab.h"

#include <stdexcept>

#include <unistd.h>

#include "subprocess.h"

namespace ipu::testing {
namespace {

void mustRun(const std::vector<std::string>& argv) {
  RunResult result = run(argv);
  if (!result.ok()) throw std::runtime_error(argv[0] + " " + argv[1] + " ...: " + result.describe());
}

}  // namespace

NamespaceLab::NamespaceLab(int workers) {
  // Unique per process and lab: tests and benchmarks may run at once.
  std::string prefix = "ipurt" + std::to_string(getpid() % 100000) + "-" + std::to_string(counter_++);
  hub_ = prefix + "-hub";
  mustRun({"ip", "netns", "add", hub_});
  mustRun({"ip", "-n", hub_, "link", "add", "br0", "type", "bridge"});
  mustRun({"ip", "-n", hub_, "link", "set", "br0", "up"});
  for (int i = 0; i < workers; ++i) {
    std::string ns = prefix + "-w" + std::to_string(i);
    mustRun({"ip", "netns", "add", ns});
    namespaces_.push_back(ns);
    std::string hubSide = "v" + std::to_string(i);
    mustRun({"ip", "-n", hub_, "link", "add", hubSide, "type", "veth", "peer", "name", "eth0", "netns", ns});
    mustRun({"ip", "-n", hub_, "link", "set", hubSide, "master", "br0", "up"});
    mustRun({"ip", "-n", ns, "addr", "add", address(i) + "/24", "dev", "eth0"});
    mustRun({"ip", "-n", ns, "link", "set", "eth0", "up"});
    mustRun({"ip", "-n", ns, "link", "set", "lo", "up"});
  }
}

NamespaceLab::~NamespaceLab() {
  for (const auto& ns : namespaces_) run({"ip", "netns", "del", ns});
  run({"ip", "netns", "del", hub_});
}

std::string NamespaceLab::peers() const {
  std::string list;
  for (std::size_t i = 0; i < namespaces_.size(); ++i) list += (i ? "," : "") + address(static_cast<int>(i));
  return list;
}

std::vector<std::string> NamespaceLab::inWorker(int i, const std::vector<std::string>& argv) const {
  std::vector<std::string> wrapped = {
      "ip",    "netns", "exec", namespaces_[i], "unshare",
      "--uts", "--",    "sh",   "-c",           "hostname w" + std::to_string(i) + " && exec \"$0\" \"$@\""};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

}  // namespace ipu::testing
