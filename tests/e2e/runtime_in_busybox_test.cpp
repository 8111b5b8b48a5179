// ipu-runtime inside plain busybox pods on the real node, placed there the way the operator will place it:
// an init container of the runtime image (non-root, no shell, no libc) copies the static binary into an
// emptyDir at /opt/ipu-runtime, and the job's Secret (ca.crt, tls.crt, tls.key) is mounted at
// /etc/ipu-runtime/tls. busybox has no C library, no CA bundle and no openssl.cnf: what works here works in
// any user image. Shown: the runtime as the container's PID 1 passes SIGTERM on and leaves a termination
// message; an agent serves `rsh` from another pod that finds it by its DNS name, over the job's mutual TLS;
// a pod holding another job's Secret is refused.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "contract/runtime_contract.h"
#include "real_node_fixture.h"
#include "tls/pki.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;
namespace contract = runtime::contract;

// Pods start in a few seconds on the real node; the generous bound only stops a hung test.
constexpr auto kPodTimeout = 120s;
const std::string kRuntime = contract::kBinary;

class RuntimeInBusyboxTest : public RealNodeTest {
 protected:
  // The job's Secret as the operator makes it: credentials issued for "<namespace>/<job>/<uid>".
  void createJobSecret(const std::string& secretName, const std::string& job, const std::string& uid) const {
    auto credentials = runtime::pki::issueJobCredentials(ns() + "/" + job + "/" + uid, std::chrono::hours(1));
    create(Json{{"apiVersion", "v1"},
                {"kind", "Secret"},
                {"metadata", {{"name", secretName}}},
                {"type", "Opaque"},
                {"stringData",
                 {{contract::kCaFile, credentials.caCertPem},
                  {contract::kCertFile, credentials.certPem},
                  {contract::kKeyFile, credentials.keyPem}}}}
               .dump());
  }

  // A busybox pod on the real node running `command` with the runtime installed and the Secret mounted.
  Json runtimePod(const std::string& name, const std::string& secretName,
                  const std::vector<std::string>& command) const {
    Json pod = podOnRealNode(name, "");
    Json& spec = pod["spec"];
    spec["volumes"] = {{{"name", "ipu-runtime"}, {"emptyDir", Json::object()}},
                       {{"name", "ipu-runtime-tls"}, {"secret", {{"secretName", secretName}}}}};
    // No command: the image's own entrypoint and default command (`install /opt/ipu-runtime`), as its
    // non-root user.
    spec["initContainers"] = {
        {{"name", "install-ipu-runtime"},
         {"image", TestCluster::get().value("IPU_CLUSTER_IMAGE_IPU_RUNTIME")},
         {"imagePullPolicy", "Never"},
         {"volumeMounts", {{{"name", "ipu-runtime"}, {"mountPath", contract::kInstallDir}}}}}};
    Json& container = spec["containers"][0];
    container["command"] = command;
    container["env"] = {{{"name", contract::kEnvTerminationLog}, {"value", "/dev/termination-log"}},
                        {{"name", contract::kEnvInstance}, {"value", "0"}}};
    container["volumeMounts"] = {
        {{"name", "ipu-runtime"}, {"mountPath", contract::kInstallDir}},
        {{"name", "ipu-runtime-tls"}, {"mountPath", contract::kCredentialsDir}, {"readOnly", true}}};
    // The agent ends what it serves on SIGTERM; the default 30 s would only slow the namespace's deletion.
    spec["terminationGracePeriodSeconds"] = 5;
    return pod;
  }

  // The pod once it ended (a test failure naming its status if it did not within the timeout).
  Json finished(const std::string& name) const {
    Json pod = waitForPhase(name, {"Succeeded", "Failed"}, kPodTimeout);
    EXPECT_FALSE(pod.is_null()) << name << " did not finish: " << getJson("pod", name).dump();
    return pod;
  }

  static const Json& terminatedState(const Json& pod) {
    return pod["status"]["containerStatuses"][0]["state"]["terminated"];
  }
};

// The script of the signal test: it proves where it runs (no C library, no /etc/ssl, the binary installed by
// the non-root init container), then asks PID 1 — the runtime — to stop, as the kubelet would.
const std::string kSignalScript =
    "trap 'echo \"trapped SIGTERM\"; exit 42' TERM; "
    "echo \"pid 1: $(cat /proc/1/comm)\"; "
    "echo \"libc files: $(ls /lib /lib64 /usr/lib 2>/dev/null | grep -c '^libc')\"; "
    "echo \"etc/ssl: $(ls -d /etc/ssl 2>/dev/null | wc -l)\"; "
    "echo \"installed by uid: $(stat -c %u " +
    kRuntime +
    ")\"; "
    "kill -TERM 1; "
    // `wait` returns at once when the trapped signal arrives; the sleep is only the bound.
    "sleep 60 & wait; echo 'no signal arrived'; exit 1";

TEST_F(RuntimeInBusyboxTest, TheRuntimeAsPidOnePassesSigtermToTheCommandAndReportsItsExitCode) {
  createJobSecret("runtime-tls", "signals", "uid-signals");
  create(runtimePod("signals", "runtime-tls",
                    {kRuntime, contract::kExecCommand, "--", "sh", "-c", kSignalScript})
             .dump());
  Json pod = finished("signals");
  ASSERT_FALSE(pod.is_null());

  const Json& init = pod["status"]["initContainerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(init.value("exitCode", -1), 0) << pod["status"].dump();
  EXPECT_NE(logs("signals", "install-ipu-runtime").find("installed into " + kRuntime), std::string::npos);

  EXPECT_EQ(pod["status"]["phase"], "Failed") << pod["status"].dump();
  const Json& terminated = terminatedState(pod);
  EXPECT_EQ(terminated.value("exitCode", -1), 42) << pod["status"].dump();
  std::string message = terminated.value("message", "");
  EXPECT_EQ(message.rfind("instance 0 (signals): sh -c ", 0), 0u) << message;
  EXPECT_NE(message.find("exited with code 42"), std::string::npos) << message;

  std::string signalLogs = logs("signals");
  std::cout << "[ SEEN ] termination message: " << message << "[ SEEN ] logs:\n" << signalLogs;
  auto output = lines(signalLogs);
  EXPECT_EQ(after(output, "pid 1: "), "ipu-runtime");
  EXPECT_EQ(after(output, "libc files: "), "0");
  EXPECT_EQ(after(output, "etc/ssl: "), "0");
  // The init container ran as the image's user, not root.
  EXPECT_EQ(after(output, "installed by uid: "), "65532");
  EXPECT_EQ(std::count(output.begin(), output.end(), "trapped SIGTERM"), 1) << logs("signals");
  EXPECT_EQ(std::count(output.begin(), output.end(), "no signal arrived"), 0) << logs("signals");
}

// Retries while the agent's pod starts and its name appears in the cluster DNS; each failed attempt says why
// on stderr.
std::string rshUntilAnswered(const std::string& host, const std::string& text) {
  return "for attempt in $(seq 60); do " + kRuntime + " rsh " + host + " echo " + text +
         " && exit 0; sleep 1; done; exit 1";
}

TEST_F(RuntimeInBusyboxTest, RshReachesTheAgentByItsDnsNameOverTheJobsTlsAndRefusesAnotherJob) {
  const std::string service = "runtime-peers";
  create(headlessService(service, "runtime-peers", "agent", contract::kAgentPort));
  createJobSecret("job-tls", "train", "uid-train");
  createJobSecret("other-job-tls", "other", "uid-other");

  // A: worker-1 of the job, serving remote starts.
  Json agent = runtimePod("agent-a", "job-tls", {kRuntime, contract::kAgentCommand});
  agent["metadata"]["labels"] = {{"app", "runtime-peers"}};
  agent["spec"]["hostname"] = "worker-1";
  agent["spec"]["subdomain"] = service;
  create(agent.dump());
  const std::string agentName = "worker-1." + service;

  // B: the same job's Secret; it finds A by the short name, through the pod's DNS search path.
  create(runtimePod("client-b", "job-tls",
                    {kRuntime, contract::kExecCommand, "--", "sh", "-c",
                     rshUntilAnswered(agentName, "hello-from-a")})
             .dump());
  Json client = finished("client-b");
  ASSERT_FALSE(client.is_null());
  std::string clientLogs = logs("client-b");
  EXPECT_EQ(client["status"]["phase"], "Succeeded") << clientLogs << getJson("pod", "agent-a").dump();
  auto clientOutput = lines(clientLogs);
  EXPECT_EQ(std::count(clientOutput.begin(), clientOutput.end(), "hello-from-a"), 1) << clientLogs;
  std::string clientIp = client["status"].value("podIP", "");
  ASSERT_FALSE(clientIp.empty());

  Json agentPod = getJson("pod", "agent-a");
  ASSERT_EQ(agentPod["status"].value("phase", ""), "Running") << agentPod["status"].dump();
  std::string agentLogs = logs("agent-a");
  EXPECT_NE(agentLogs.find("ipu-runtime agent: serving job " + ns() + "/train/uid-train on port " +
                           std::to_string(contract::kAgentPort)),
            std::string::npos)
      << agentLogs;
  EXPECT_NE(agentLogs.find("ipu-runtime agent: running for " + clientIp + ":"), std::string::npos)
      << agentLogs;
  EXPECT_NE(agentLogs.find("ipu-runtime agent: command for " + clientIp + ":"), std::string::npos)
      << agentLogs;

  // C: another job's Secret. One attempt: A is known to answer by now.
  create(runtimePod("client-c", "other-job-tls",
                    {kRuntime, contract::kExecCommand, "--", kRuntime, contract::kRshCommand, agentName,
                     "echo", "should-not-run"})
             .dump());
  Json intruder = finished("client-c");
  ASSERT_FALSE(intruder.is_null());
  std::string intruderLogs = logs("client-c");
  EXPECT_EQ(intruder["status"]["phase"], "Failed") << intruderLogs;
  EXPECT_EQ(terminatedState(intruder).value("exitCode", -1), 255) << intruder["status"].dump();
  EXPECT_NE(intruderLogs.find("ipu-runtime rsh: " + agentName + ": TLS handshake failed"), std::string::npos)
      << intruderLogs;
  std::cout << "[ SEEN ] client-b:\n" << clientLogs << "[ SEEN ] client-c:\n" << intruderLogs;
  auto intruderOutput = lines(intruderLogs);
  EXPECT_EQ(std::count(intruderOutput.begin(), intruderOutput.end(), "should-not-run"), 0) << intruderLogs;
  std::string intruderIp = intruder["status"].value("podIP", "");
  ASSERT_FALSE(intruderIp.empty());
  agentLogs = logs("agent-a");
  EXPECT_NE(agentLogs.find("ipu-runtime agent: refused a connection from " + intruderIp + ":"),
            std::string::npos)
      << agentLogs;
  EXPECT_EQ(agentLogs.find("running for " + intruderIp), std::string::npos) << agentLogs;
  std::cout << "[ SEEN ] agent-a:\n" << agentLogs;
}

}  // namespace
}  // namespace ipu::testing
