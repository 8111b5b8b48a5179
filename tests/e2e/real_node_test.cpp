// Real containers on the real node (kubelet + containerd + runc): an IPU worker pod's settings (hostIPC, a
// memory-backed /dev/shm of a set size, IPC_LOCK) hold inside the container, `kubectl logs` shows exactly
// what the program printed, exit codes reach the pod's status, and bad input ends in a clear reason.
// Pods of a headless Service find each other through the cluster DNS. The tests run on the node's host, so
// they can compare the container's view with the host's.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "real_node_fixture.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

// What the operator puts into every IPU worker pod (docs/architecture.md, "Pods"): hostIPC, a memory-backed
// /dev/shm with a size limit, and the IPC_LOCK capability.
void makeIpuWorker(Json& pod, const std::string& shmSize) {
  pod["spec"]["hostIPC"] = true;
  pod["spec"]["volumes"] = {
      {{"name", "devshm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", shmSize}}}}};
  Json& container = pod["spec"]["containers"][0];
  container["volumeMounts"] = {{{"name", "devshm"}, {"mountPath", "/dev/shm"}}};
  container["securityContext"] = {{"capabilities", {{"add", {"IPC_LOCK"}}}}};
}

// Prints what the checks below need, one "key: value" line each.
const std::string kProbeScript =
    "echo \"ipc: $(readlink /proc/self/ns/ipc)\"; "
    "echo \"shm-mount: $(grep ' /dev/shm ' /proc/mounts)\"; "
    "echo \"shm-kb: $(df -k /dev/shm | awk 'NR == 2 { print $2 }')\"; "
    "echo \"capeff: $(awk '/^CapEff:/ { print $2 }' /proc/self/status)\"";

// The IPC namespace a process is in, e.g. "ipc:[4026531839]"; empty if it cannot be read.
std::string ipcNamespace(const std::string& pid) {
  std::error_code error;
  auto target = std::filesystem::read_symlink("/proc/" + pid + "/ns/ipc", error);
  return error ? "" : target.string();
}

// The host's IPC namespace: PID 1's, or where this machine keeps PID 1 unreadable (these VMs' init does,
// even for root), this test process's own, which runs on the host. containerd must be in it too.
std::string hostIpcNamespace() {
  std::string host = ipcNamespace("1");
  if (host.empty()) host = ipcNamespace("self");
  std::ifstream pidFile(TestCluster::get().dir() + "/pids/containerd.pid");
  std::string containerd;
  pidFile >> containerd;
  EXPECT_EQ(ipcNamespace(containerd), host)
      << "containerd (pid " << containerd << ") is not in the host's IPC namespace";
  return host;
}

bool hasCapability(const std::string& capEffHex, int bit) {
  return ((std::stoull(capEffHex, nullptr, 16) >> bit) & 1u) != 0;
}
constexpr int kCapIpcLock = 14;

TEST_F(RealNodeTest, IpuWorkerSettingsHoldInsideTheContainer) {
  Json worker = podOnRealNode("worker", kProbeScript);
  // Not 64Mi: containerd gives every container a 64 MiB /dev/shm of its own by default.
  makeIpuWorker(worker, "96Mi");
  create(worker.dump());
  // The same probes in a plain pod show that each check can fail.
  create(podOnRealNode("plain", kProbeScript).dump());

  for (const std::string name : {"worker", "plain"}) {
    Json pod = waitForPhase(name, {"Succeeded", "Failed"});
    ASSERT_FALSE(pod.is_null()) << name << " did not finish: " << getJson("pod", name).dump();
    EXPECT_EQ(pod["status"]["phase"], "Succeeded") << pod["status"].dump();
    EXPECT_EQ(pod["spec"]["nodeName"], TestCluster::get().value("IPU_CLUSTER_REAL_NODE"));
  }
  auto workerOut = lines(logs("worker"));
  auto plainOut = lines(logs("plain"));

  // hostIPC: the container's IPC namespace is the host's.
  std::string hostIpc = hostIpcNamespace();
  ASSERT_FALSE(hostIpc.empty());
  EXPECT_EQ(after(workerOut, "ipc: "), hostIpc);
  EXPECT_NE(after(plainOut, "ipc: "), hostIpc);
  EXPECT_NE(after(plainOut, "ipc: "), "");

  // A memory-backed /dev/shm of the size limit: 96Mi = 98304 KiB of tmpfs.
  std::string shmMount = after(workerOut, "shm-mount: ");
  EXPECT_EQ(shmMount.rfind("tmpfs /dev/shm tmpfs ", 0), 0u) << shmMount;
  EXPECT_NE(shmMount.find("size=98304k"), std::string::npos) << shmMount;
  EXPECT_EQ(after(workerOut, "shm-kb: "), "98304");
  EXPECT_NE(after(plainOut, "shm-kb: "), "98304");

  // IPC_LOCK in the effective capability set; not granted by default.
  std::string workerCaps = after(workerOut, "capeff: ");
  std::string plainCaps = after(plainOut, "capeff: ");
  ASSERT_FALSE(workerCaps.empty() || plainCaps.empty()) << logs("worker") << logs("plain");
  EXPECT_TRUE(hasCapability(workerCaps, kCapIpcLock)) << "CapEff " << workerCaps;
  EXPECT_FALSE(hasCapability(plainCaps, kCapIpcLock)) << "CapEff " << plainCaps;
}

TEST_F(RealNodeTest, LogsShowExactlyWhatTheProgramPrinted) {
  create(podOnRealNode("printer",
                       "echo 'first line'; printf 'tab\\there  two spaces\\n'; echo 'ünïcødé ✓'; "
                       "echo; echo 'after an empty line'")
             .dump());
  Json pod = waitForPhase("printer", {"Succeeded", "Failed"});
  ASSERT_FALSE(pod.is_null()) << getJson("pod", "printer").dump();
  EXPECT_EQ(pod["status"]["phase"], "Succeeded");
  EXPECT_EQ(logs("printer"), "first line\ntab\there  two spaces\nünïcødé ✓\n\nafter an empty line\n");
}

TEST_F(RealNodeTest, ExitCodeThreeEndsFailedWithExitCodeThree) {
  create(podOnRealNode("crasher", "echo 'about to fail'; exit 3").dump());
  Json pod = waitForPhase("crasher", {"Succeeded", "Failed"});
  ASSERT_FALSE(pod.is_null()) << getJson("pod", "crasher").dump();
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  const Json& terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated["exitCode"], 3) << pod["status"].dump();
  EXPECT_EQ(terminated["reason"], "Error");
  EXPECT_EQ(logs("crasher"), "about to fail\n");
}

TEST_F(RealNodeTest, BusyboxPodRunsWithinSecondsAndServesExec) {
  auto started = std::chrono::steady_clock::now();
  create(podOnRealNode("sleeper", "echo ready; exec sleep 300").dump());
  Json pod = waitForPhase("sleeper", {"Running", "Succeeded", "Failed"});
  auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_FALSE(pod.is_null()) << getJson("pod", "sleeper").dump();
  ASSERT_EQ(pod["status"]["phase"], "Running") << pod["status"].dump();
  std::cout << "[ MEASURED ] kubectl create -> Running: " << elapsed << " s\n";
  RecordProperty("apply_to_running_seconds", std::to_string(elapsed));
  EXPECT_LT(elapsed, 30.0);

  // exec goes API server -> kubelet -> containerd's stream server.
  auto exec = kubectl({"exec", "sleeper", "--", "sh", "-c", "echo from inside; id -u"});
  ASSERT_TRUE(exec.ok()) << exec.describe();
  EXPECT_EQ(exec.out, "from inside\n0\n");
}

TEST_F(RealNodeTest, MissingLocalImageEndsInErrImageNeverPull) {
  Json pod = podOnRealNode("no-image", "true");
  pod["spec"]["containers"][0]["image"] = "localhost/ipu-operator/does-not-exist:1";
  create(pod.dump());
  std::string reason;
  ASSERT_TRUE(eventually(
      [&] {
        Json got = getJson("pod", "no-image");
        if (got.is_null()) return false;
        Json& statuses = got["status"]["containerStatuses"];
        if (!statuses.is_array() || statuses.empty()) return false;
        Json& waiting = statuses[0]["state"]["waiting"];
        reason = waiting.is_object() ? waiting.value("reason", "") : "";
        return !reason.empty() && reason != "ContainerCreating";
      },
      60s))
      << getJson("pod", "no-image").dump();
  EXPECT_EQ(reason, "ErrImageNeverPull");
  EXPECT_EQ(getJson("pod", "no-image")["status"]["phase"], "Pending");
}

TEST_F(RealNodeTest, NodeIsReadyLabelledAndTainted) {
  Json node = getJson("node", TestCluster::get().value("IPU_CLUSTER_REAL_NODE"));
  ASSERT_FALSE(node.is_null());
  EXPECT_EQ(node["metadata"]["labels"].value("ipu-operator.dev/real-node", ""), "true");
  bool tainted = false;
  for (const auto& taint : node["spec"].value("taints", Json::array())) {
    if (taint["key"] == "ipu-operator.dev/real-node" && taint["effect"] == "NoSchedule") tainted = true;
  }
  EXPECT_TRUE(tainted) << node["spec"].dump();
  bool ready = false;
  for (const auto& condition : node["status"]["conditions"]) {
    if (condition["type"] == "Ready") ready = condition["status"] == "True";
  }
  EXPECT_TRUE(ready) << node["status"]["conditions"].dump();
  std::string internalIp;
  for (const auto& address : node["status"]["addresses"]) {
    if (address["type"] == "InternalIP") internalIp = address["address"];
  }
  EXPECT_EQ(internalIp, TestCluster::get().value("IPU_CLUSTER_REAL_NODE_IP"));
  EXPECT_EQ(node["status"]["nodeInfo"].value("containerRuntimeVersion", "").rfind("containerd://", 0), 0u);
}

// The addresses an answer of busybox's nslookup gives ("Address: 10.200.1.3" after "Name:"; the lines above
// it name the server).
std::vector<std::string> answeredAddresses(const std::string& nslookupOutput) {
  std::vector<std::string> addresses;
  bool inAnswer = false;
  for (const auto& line : lines(nslookupOutput)) {
    if (line.rfind("Name:", 0) == 0) inAnswer = true;
    if (inAnswer && line.rfind("Address", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      std::string address;
      words >> address;
      addresses.push_back(address);
    }
  }
  return addresses;
}

// Cluster DNS on the real node (CoreDNS, kubelet clusterDNS): the pods of a headless Service find each other
// by name, as mpirun will find its workers, and names nobody serves fail at once instead of hanging.
TEST_F(RealNodeTest, ClusterDnsResolvesPodsOfAHeadlessService) {
  const std::string service = "peers";
  create(headlessService(service, "dns-peers", "mpi", 2222));
  for (const std::string name : {"worker-a", "worker-b"}) {
    Json pod = podOnRealNode(name, "exec sleep 300");
    pod["metadata"]["labels"] = {{"app", "dns-peers"}};
    pod["spec"]["hostname"] = name;
    pod["spec"]["subdomain"] = service;
    create(pod.dump());
  }
  std::string peerIp;
  for (const std::string name : {"worker-a", "worker-b"}) {
    Json pod = waitForPhase(name, {"Running", "Succeeded", "Failed"});
    ASSERT_FALSE(pod.is_null()) << name << " did not start: " << getJson("pod", name).dump();
    ASSERT_EQ(pod["status"]["phase"], "Running") << pod["status"].dump();
    if (name == "worker-b") peerIp = pod["status"].value("podIP", "");
  }
  ASSERT_FALSE(peerIp.empty());

  // The kubelet points the pod at the cluster DNS on the node IP, with the cluster.local search path.
  auto resolvConf = kubectl({"exec", "worker-a", "--", "cat", "/etc/resolv.conf"});
  ASSERT_TRUE(resolvConf.ok()) << resolvConf.describe();
  auto resolvLines = lines(resolvConf.out);
  EXPECT_EQ(after(resolvLines, "nameserver "), TestCluster::get().value("IPU_CLUSTER_DNS")) << resolvConf.out;
  EXPECT_EQ(after(resolvLines, "nameserver "), TestCluster::get().value("IPU_CLUSTER_REAL_NODE_IP"));
  EXPECT_EQ(after(resolvLines, "search "), ns() + ".svc.cluster.local svc.cluster.local cluster.local")
      << resolvConf.out;

  // A lookup from inside worker-a; a hang is a failure too.
  auto inPodA = [&](const std::vector<std::string>& command) {
    std::vector<std::string> args{"exec", "worker-a", "--"};
    args.insert(args.end(), command.begin(), command.end());
    return kubectl(args, RunOptions{.timeout = 20s});
  };
  // The record comes from the Service's EndpointSlice, which follows the pods by a moment.
  const std::string fullName = "worker-b." + service + "." + ns() + ".svc.cluster.local";
  RunResult lookup;
  EXPECT_TRUE(eventually(
      [&] {
        lookup = inPodA({"nslookup", fullName});
        return lookup.ok() && !answeredAddresses(lookup.out).empty();
      },
      30s, 500ms))
      << "nslookup " << fullName << ": " << lookup.describe() << "\n"
      << lookup.out;
  EXPECT_EQ(answeredAddresses(lookup.out), std::vector<std::string>{peerIp}) << lookup.out;

  // The short name through the search path, as programs resolve it (busybox's nslookup ignores the search
  // path; its ping goes through the C library's resolver). /etc/hosts names only the pod itself, so the
  // answer comes from the cluster DNS; the ping itself shows that the address reaches worker-b.
  auto ping = inPodA({"ping", "-c", "1", "-W", "5", "worker-b." + service});
  EXPECT_TRUE(ping.ok()) << ping.describe() << "\n" << ping.out;
  EXPECT_EQ(ping.out.rfind("PING worker-b." + service + " (" + peerIp + ")", 0), 0u) << ping.out;

  // Names nobody serves fail within seconds: unknown in cluster.local (NXDOMAIN) and outside it (REFUSED:
  // no forward, nothing leaves the machine), by nslookup and through the search path.
  for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
           {"nslookup", "nobody." + service + "." + ns() + ".svc.cluster.local"},
           {"nslookup", "no-such-name.invalid"},
           {"ping", "-c", "1", "-W", "1", "nobody." + service},
           {"ping", "-c", "1", "-W", "1", "no-such-name.invalid"}}) {
    auto started = std::chrono::steady_clock::now();
    auto failed = inPodA(command);
    auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_FALSE(failed.ok()) << command[0] << " " << command.back() << " succeeded: " << failed.out;
    EXPECT_FALSE(failed.timedOut);
    EXPECT_LT(elapsed, 5.0) << command[0] << " " << command.back() << ": " << failed.out << failed.err;
    EXPECT_TRUE(answeredAddresses(failed.out).empty()) << failed.out;
  }
}

TEST_F(RealNodeTest, ClusterDnsIsAComponentOfTheCluster) {
  auto status = run({IPU_SOURCE_DIR "/tools/cluster.sh", "status", "--dir", TestCluster::get().dir()});
  ASSERT_TRUE(status.ok()) << status.describe() << "\n" << status.out;
  EXPECT_NE(status.out.find("\ncoredns: running (pid "), std::string::npos) << status.out;
}

}  // namespace
}  // namespace ipu::testing
