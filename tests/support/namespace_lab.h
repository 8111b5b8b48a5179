#pragma once

#include <string>
#include <vector>

namespace ipu::testing {

// N "hosts" on one machine, for real multi-host runs without a cluster: each worker is a network namespace
// (10.77.0.1 .. 10.77.0.N on eth0) joined by a bridge in a hub namespace, and its commands run in a UTS
// namespace of their own with host name "w<i>". Nothing is created in the machine's own network namespace;
// the destructor deletes the namespaces, which removes everything. Needs root and iproute2; throws
// std::runtime_error naming the failing `ip` command.
class NamespaceLab {
 public:
  explicit NamespaceLab(int workers);
  ~NamespaceLab();
  NamespaceLab(const NamespaceLab&) = delete;
  NamespaceLab& operator=(const NamespaceLab&) = delete;

  static std::string address(int worker) { return "10.77.0." + std::to_string(worker + 1); }
  // Every worker's address, comma-separated, worker 0 first (IPU_RUNTIME_PEERS).
  std::string peers() const;
  // argv run inside worker `i`'s namespaces, with host name "w<i>".
  std::vector<std::string> inWorker(int i, const std::vector<std::string>& argv) const;

 private:
  static inline int counter_ = 0;
  std::string hub_;
  std::vector<std::string> namespaces_;
};

}  // namespace ipu::testing
