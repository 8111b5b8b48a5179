// Jobs isolated from each other, with real containers on the real node: what another tenant of the cluster
// can try against a job's credentials and agents, and a job's own command that will not stop. Each runs a
// real multi-worker job through the operator and the injected ipu-runtime.
#include <regex>
#include <string>

#include "common/time_format.h"
#include "container_env.h"
#include "hostile_tenant.h"
#include "ipujob/child_names.h"
#include "operator_on_real_node.h"
#include "tls/pki.h"

namespace ipu::testing {
namespace {

// Every rank prints the SHA-256 of the CA its pod mounted, allreduces, then for `seconds` (the window another
// pod floods its agents in) starts a short process every 0.1 s, as a data loader starts its workers, and
// allreduces again. A pod whose PIDs the flood used up cannot start them: the rank fails, and the job.
std::string ranksPrintingTheirCaThenForking(int seconds) {
  return "import hashlib, subprocess, time; from mpi4py import MPI; c = MPI.COMM_WORLD; "
         "ca = hashlib.sha256(open('/etc/ipu-runtime/tls/ca.crt', 'rb').read()).hexdigest(); "
         "print('rank %d ca %s sum %d' % (c.Get_rank(), ca, c.allreduce(1)), flush=True); "
         "end = time.time() + " +
         std::to_string(seconds) +
         "\n"
         "while time.time() < end: subprocess.run(['true'], check=True); time.sleep(0.1)\n"
         "print('rank %d after the wait sum %d' % (c.Get_rank(), c.allreduce(1)), flush=True)";
}

// Opens `count` TCP connections to host:port one after another (each given 2 s), holds those that opened
// for 10 s, then prints how many opened: a bounded flood from one process.
std::string flooder(const std::string& host, int port, int count) {
  return "import socket, time\n"
         "held, failed = [], 0\n"
         "for i in range(" +
         std::to_string(count) +
         "):\n"
         "    try:\n"
         "        held.append(socket.create_connection(('" +
         host + "', " + std::to_string(port) +
         "), timeout=2))\n"
         "    except OSError:\n"
         "        failed += 1\n"
         "time.sleep(10)\n"
         "print('flood: opened %d, failed %d' % (len(held), failed), flush=True)\n";
}

Json podOnTheRealNode(const std::string& name, const Json& command) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"restartPolicy", "Never"},
        {"nodeSelector", {{"ipu-operator.dev/real-node", "true"}}},
        {"tolerations",
         Json::array(
             {{{"key", "ipu-operator.dev/real-node"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})},
        {"containers", Json::array({{{"name", "main"},
                                     {"image", debianMpi()},
                                     {"imagePullPolicy", "Never"},
                                     {"command", command}}})}}}};
}

// A suspended job whose derived Secret name another principal of the namespace fills with a CA of their own;
// once resumed, its workers (a memory limit, and the node's PID limit per pod) run while another pod opens
// 2,000 connections to an agent. The planted CA is never mounted, the flood is refused and counted, and the
// job completes.
TEST_F(OperatorOnRealNodeTest, APlantedSecretIsNeverMountedAndAFloodedAgentKeepsItsJobRunning) {
  const std::string name = "flooded";
  Json spec = Json::parse(R"({"workersPerJobInstance": "2", "suspend": true})");
  std::string manifest = jobRunning(name, Json::array({"python3", "-c", ranksPrintingTheirCaThenForking(25)}),
                                    spec.dump(), debianMpi());
  Json job = Json::parse(manifest);
  job["spec"]["workers"]["template"]["spec"]["containers"][0]["resources"] = {
      {"limits", {{"memory", "256Mi"}}}};
  ASSERT_EQ(createJob(job.dump()), name);
  ASSERT_TRUE(reachesPhase(name, "Suspended", 60s)) << jobStatus(name).dump();

  const std::string uid = getJson("ipujob", name)["metadata"].value("uid", "");
  const PlantedSecret secret =
      plantedRuntimeSecret(controllers::legacyRuntimeSecretName({ns(), name, uid}), ns(), name, uid);
  const auto& attackers = secret.credentials;
  ASSERT_TRUE(kubectl({"create", "-f", "-"}, RunOptions{.input = secret.object.dump()}).ok());
  ASSERT_TRUE(kubectl({"patch", "ipujob", name, "--type=merge", "-p", R"({"spec":{"suspend":false}})"}).ok());

  // The ranks are up (both printed their CA) before the flood starts.
  const std::string launcher = name + "-worker-0", agent = name + "-worker-1";
  const auto bothRanksUp = [&] {
    const auto logs = kubectl({"logs", launcher, "-c", "train"});  // fails until the container starts
    return logs.ok() && linesByRank(logs.out)[1].size() == 1;
  };
  ASSERT_TRUE(eventually(bothRanksUp, 180s)) << jobStatus(name).dump();
  const std::string agentIp = getJson("pod", agent)["status"].value("podIP", "");
  ASSERT_FALSE(agentIp.empty());
  ASSERT_TRUE(
      kubectl({"create", "-f", "-"},
              RunOptions{.input = podOnTheRealNode(
                                      "flooder", Json::array({"python3", "-c", flooder(agentIp, 7470, 2000)}))
                                      .dump()})
          .ok());

  ASSERT_TRUE(reachesPhase(name, "Succeeded", 180s)) << jobStatus(name).dump();
  const std::string pinned = jobStatus(name)["runtimeSecret"].value("caSha256", "");
  ASSERT_EQ(pinned.size(), 64u) << jobStatus(name).dump();
  EXPECT_NE(pinned, runtime::pki::pemDigest(attackers.caCertPem));
  for (int rank = 0; rank < 2; ++rank) {
    const auto lines = rankLines(launcher, rank);
    ASSERT_EQ(lines.size(), 2u) << "rank " << rank;
    EXPECT_EQ(lines[0], "rank " + std::to_string(rank) + " ca " + pinned + " sum 2")
        << "the job's own CA, mounted";
    EXPECT_EQ(lines[1], "rank " + std::to_string(rank) + " after the wait sum 2");
  }
  // The flood happened while the job ran, and the agent refused it.
  ASSERT_TRUE(
      eventually([&] { return getJson("pod", "flooder")["status"].value("phase", "") == "Succeeded"; }, 60s));
  const auto flood = kubectl({"logs", "flooder"});
  EXPECT_NE(flood.out.find("flood: opened"), std::string::npos) << flood.out;
  const auto agentLog = kubectl({"logs", agent, "-c", "train"});
  std::smatch refused;
  ASSERT_TRUE(std::regex_search(agentLog.out, refused, std::regex("refused ([0-9]+) connection")))
      << agentLog.out;
  EXPECT_GT(std::stoi(refused[1]), 0) << agentLog.out;
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s));
}

// A served command that ignores SIGTERM and leaves a daemon behind (setsid): when the launch ends, the agent
// stops both, so the worker pod ends and the job frees its IPUs at once instead of running to its deadline.
TEST_F(OperatorOnRealNodeTest, AServedCommandThatTrapsSigtermAndLeavesADaemonDoesNotHoldTheJob) {
  const std::string stubborn = "trap '' TERM; setsid sleep 1000 & echo stubborn started; sleep 1000";
  const std::string launch = "/opt/ipu-runtime/ipu-runtime rsh ${IPU_RUNTIME_PEERS#*,} \"" + stubborn +
                             "\" & sleep 5; echo launcher done";
  const Json spec = {{"workersPerJobInstance", "2"},
                     {"activeDeadlineSeconds", 600},
                     {"launcher", {{"command", Json::array({"sh", "-c", launch})}}}};
  const std::string job = createJob(jobRunning("stubborn", Json::array({"true"}), spec.dump()));
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 120s)) << jobStatus(job).dump();
  const auto agentLog = kubectl({"logs", job + "-worker-1", "-c", "train"});
  EXPECT_NE(agentLog.out.find("ipu-runtime agent: running for "), std::string::npos) << agentLog.out;
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s));
  // Ended by the agent, not by the job's deadline: well within the launcher's seconds plus the grace.
  const Json status = jobStatus(job);
  const auto started = parseTime(status.value("startTime", ""));
  const auto completed = parseTime(status.value("completionTime", ""));
  ASSERT_TRUE(started && completed) << status.dump();
  EXPECT_LT(std::chrono::duration_cast<std::chrono::seconds>(*completed - *started).count(), 60)
      << status.dump();
}

// What a worker reaches of V-IPU: its IPUOF_VIPU_API_* name the operator's proxy, and vipu-ctl run as a
// job's command (the vipu-sim image carries it; without --endpoint it calls the address the pod was given,
// as Poplar does) lists and reads the job's own partition only, and another job's partition cannot be
// removed or reset through it: that job keeps running, its partition active.
TEST_F(OperatorOnRealNodeTest, AWorkerReachesVipuThroughTheProxyAndOnlyForItsOwnPartition) {
  const std::string vipuImage = TestCluster::get().value("IPU_CLUSTER_IMAGE_VIPU_SIM");
  const std::string victim = createJob(jobRunning("victim", Json::array({"sleep", "3600"})));
  ASSERT_TRUE(reachesPhase(victim, "Running", 120s));
  const std::string victimPartition = jobStatus(victim)["partitions"][0].value("id", "");
  ASSERT_FALSE(victimPartition.empty()) << jobStatus(victim).dump();

  const auto ctlJob = [&](const std::string& name, const Json& args) {
    Json command = Json::array({"/vipu-ctl"});
    for (const auto& arg : args) command.push_back(arg);
    return createJob(jobRunning(name, command, "", vipuImage));
  };
  const std::string lister = ctlJob("lister", {"--json", "list"});
  const std::string reader = ctlJob("reader", {"status", "$(IPUOF_VIPU_API_PARTITION_ID)"});
  const std::string ipuof = ctlJob("ipuof", {"ipuof", "$(IPUOF_VIPU_API_PARTITION_ID)"});
  const std::string remover = ctlJob("remover", {"remove", victimPartition});
  const std::string resetter = ctlJob("resetter", {"reset", victimPartition});
  for (const std::string& job : {lister, reader, ipuof}) {
    EXPECT_TRUE(reachesPhase(job, "Succeeded", 120s)) << kubectl({"logs", job + "-worker-0"}).out;
  }
  for (const auto& [job, why] : {std::pair{remover, "only the operator creates and removes partitions"},
                                 std::pair{resetter, "is not one of IPUJob"}}) {
    ASSERT_TRUE(reachesPhase(job, "Failed", 120s));
    const auto logs = kubectl({"logs", job + "-worker-0", "-c", "train"});
    EXPECT_NE(logs.out.find("PermissionDenied"), std::string::npos) << logs.out;
    EXPECT_NE(logs.out.find(why), std::string::npos) << logs.out;
  }

  // The worker was given the proxy, not vipu-sim's own address.
  const Json worker = getJson("pod", lister + "-worker-0")["spec"]["containers"][0];
  EXPECT_EQ(envValue(worker, "IPUOF_VIPU_API_HOST"), proxyHost_);
  EXPECT_EQ(envValue(worker, "IPUOF_VIPU_API_PORT"), std::to_string(proxyPort_));

  // The lister saw exactly its own partition, though the victim (and the other jobs) hold theirs.
  const std::string own = jobStatus(lister)["partitions"][0].value("id", "");
  const auto listed = kubectl({"logs", lister + "-worker-0", "-c", "train"});
  EXPECT_EQ(partitionIdsListed(listed.out), std::vector<std::string>{own}) << listed.out;
  const auto read = kubectl({"logs", reader + "-worker-0", "-c", "train"});
  EXPECT_NE(read.out.find(jobStatus(reader)["partitions"][0].value("id", "")), std::string::npos) << read.out;

  // The victim never noticed.
  EXPECT_EQ(phaseOf(victim), "Running");
  const auto held = partition(victimPartition);
  ASSERT_TRUE(held) << victimPartition << " is gone";
  EXPECT_EQ(held->readyState, vipu::ReadyState::kActive);
  EXPECT_NE(operatorLog().find("V-IPU proxy refused a call"), std::string::npos);
}

}  // namespace
}  // namespace ipu::testing
