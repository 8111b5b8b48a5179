#include "launch/launch_plan.h"

#include <map>

#include <gtest/gtest.h>

#include "remote/peer_name.h"

namespace ipu::runtime::launch {
namespace {

GetEnv environment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

GetEnv shapeEnvironment(const std::string& workers, const std::string& replicasPerWorker,
                        const std::string& ipus) {
  return environment({{"IPUJOB_WORKERS_PER_INSTANCE", workers},
                      {"IPUJOB_REPLICAS_PER_WORKER", replicasPerWorker},
                      {"IPUJOB_IPUS_PER_INSTANCE", ipus}});
}

std::string errorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const settings::SettingError& error) {  // LaunchError and the numbers it reads
    return error.what();
  }
  return "no error";
}

std::map<std::string, std::string> asMap(const Environment& env) {
  return {env.begin(), env.end()};
}

// instances x replicas x IPUs per replica, as users write them.
struct ShapeCase {
  std::string workers, replicasPerWorker, ipus;
  InstanceShape expected;
};

TEST(LaunchPlanTest, ShapesComeFromTheOperatorsVariables) {
  std::vector<ShapeCase> cases = {
      {"1", "16", "64", {1, 16, 4}},  // the 64-IPU user manifest: 1 instance x 16 replicas x 4 IPUs
      {"1", "1", "4", {1, 1, 4}},     // the multi-IPU BERT manifest
      {"2", "2", "4", {2, 2, 1}},    {"4", "1", "16", {4, 1, 4}}, {"8", "2", "64", {8, 2, 4}},
  };
  for (const auto& c : cases) {
    InstanceShape shape = shapeFromEnvironment(shapeEnvironment(c.workers, c.replicasPerWorker, c.ipus));
    EXPECT_EQ(shape, c.expected) << c.workers << "x" << c.replicasPerWorker << " on " << c.ipus;
    EXPECT_EQ(shape.totalReplicas() * shape.ipusPerReplica, std::stoi(c.ipus));
  }
}

TEST(LaunchPlanTest, MalformedShapeVariablesNameTheVariable) {
  EXPECT_EQ(errorOf([] { shapeFromEnvironment(environment({})); }),
            "IPUJOB_WORKERS_PER_INSTANCE is not set (the operator sets it in every worker pod)");
  EXPECT_EQ(errorOf([] { shapeFromEnvironment(shapeEnvironment("two", "1", "4")); }),
            "IPUJOB_WORKERS_PER_INSTANCE=\"two\" is not a whole number");
  EXPECT_EQ(errorOf([] { shapeFromEnvironment(shapeEnvironment("2", "1 ", "4")); }),
            "IPUJOB_REPLICAS_PER_WORKER=\"1 \" is not a whole number");
  EXPECT_EQ(errorOf([] { shapeFromEnvironment(shapeEnvironment("0", "1", "4")); }),
            "IPUJOB_WORKERS_PER_INSTANCE=0 is out of range 1-65536");
  EXPECT_EQ(errorOf([] { shapeFromEnvironment(shapeEnvironment("1", "1", "99999999999")); }),
            "IPUJOB_IPUS_PER_INSTANCE=\"99999999999\" is not a whole number");
  EXPECT_EQ(errorOf([] { shapeFromEnvironment(shapeEnvironment("3", "1", "4")); }),
            "IPUJOB_IPUS_PER_INSTANCE=4 does not divide into 3 replicas (3 workers x 1 replicas per worker)");
  EXPECT_EQ(errorOf([] { shapeFromEnvironment(shapeEnvironment("4", "2", "4")); }),
            "IPUJOB_IPUS_PER_INSTANCE=4 does not divide into 8 replicas (4 workers x 2 replicas per worker)");
}

TEST(LaunchPlanTest, PeersAreListedWorkerZeroFirst) {
  auto env = environment({{"IPU_RUNTIME_PEERS", "job-worker-2.job,job-worker-3.job"}});
  EXPECT_EQ(peersFromEnvironment(env, 2), (std::vector<std::string>{"job-worker-2.job", "job-worker-3.job"}));
  EXPECT_EQ(errorOf([&] { peersFromEnvironment(env, 3); }), "IPU_RUNTIME_PEERS lists 2 hosts for 3 workers");
  EXPECT_EQ(errorOf([] { peersFromEnvironment(environment({}), 1); }),
            "IPU_RUNTIME_PEERS is not set (the operator sets it in every worker pod)");
  EXPECT_EQ(errorOf([] {
              peersFromEnvironment(environment({{"IPU_RUNTIME_PEERS", "a,,b"}}), 3);
            }),
            "IPU_RUNTIME_PEERS has an invalid host name \"\"");
  EXPECT_EQ(errorOf([] {
              peersFromEnvironment(environment({{"IPU_RUNTIME_PEERS", "a;rm -rf /"}}), 1);
            }),
            "IPU_RUNTIME_PEERS has an invalid host name \"a;rm -rf /\"");
}

TEST(LaunchPlanTest, EachRankGetsWhatPoprunWouldPassIt) {
  InstanceShape shape{2, 2, 1};
  EXPECT_EQ(asMap(popdistEnvironment(shape, 0)),
            (std::map<std::string, std::string>{{"POPDIST_NUM_TOTAL_REPLICAS", "4"},
                                                {"POPDIST_NUM_IPUS_PER_REPLICA", "1"},
                                                {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
                                                {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "1"},
                                                {"POPDIST_REPLICA_INDEX_OFFSET", "0"},
                                                {"POPDIST_LOCAL_INSTANCE_INDEX", "0"}}));
  EXPECT_EQ(asMap(popdistEnvironment(shape, 1))["POPDIST_REPLICA_INDEX_OFFSET"], "2");
  InstanceShape pod64{1, 16, 4};
  auto only = asMap(popdistEnvironment(pod64, 0));
  EXPECT_EQ(only["POPDIST_NUM_TOTAL_REPLICAS"], "16");
  EXPECT_EQ(only["POPDIST_NUM_IPUS_PER_REPLICA"], "4");
  EXPECT_EQ(only["POPDIST_NUM_LOCAL_REPLICAS"], "16");
}

LaunchInputs twoWorkers() {
  return {{2, 2, 1},
          {"j-worker-0.j", "j-worker-1.j"},
          {"python3", "train.py"},
          "/opt/ipu-runtime/ipu-runtime rsh",
          false,
          {"IPUOF_VIPU_API_PARTITION_ID", "PATH"}};
}

TEST(LaunchPlanTest, PoprunGetsTheHostsAndTheShape) {
  EXPECT_EQ(poprunCommand(twoWorkers()),
            (std::vector<std::string>{"poprun", "--host", "j-worker-0.j,j-worker-1.j", "--num-instances", "2",
                                      "--num-replicas", "4", "--ipus-per-replica", "1",
                                      "--mpi-global-args=--tag-output --bind-to none --mca plm_rsh_agent "
                                      "'/opt/ipu-runtime/ipu-runtime rsh'",
                                      "--", "python3", "train.py"}));
  LaunchInputs pod64{{1, 16, 4}, {"bert-worker-0.bert"}, {"python3", "run_pretraining.py"}, "rt rsh", true,
                     {}};
  std::vector<std::string> argv = poprunCommand(pod64);
  EXPECT_EQ(std::vector<std::string>(argv.begin() + 1, argv.begin() + 9),
            (std::vector<std::string>{"--host", "bert-worker-0.bert", "--num-instances", "1",
                                      "--num-replicas", "16", "--ipus-per-replica", "4"}));
  EXPECT_EQ(argv[9],
            "--mpi-global-args=--tag-output --bind-to none --mca plm_rsh_agent 'rt rsh' --allow-run-as-root");
}

TEST(LaunchPlanTest, MpirunStartsOneRankPerWorkerWithItsOwnEnvironment) {
  std::vector<std::string> rank0 = {"-np",     "1",
                                    "--host",  "j-worker-0.j",
                                    "-x",      "POPDIST_NUM_TOTAL_REPLICAS=4",
                                    "-x",      "POPDIST_NUM_IPUS_PER_REPLICA=1",
                                    "-x",      "POPDIST_NUM_LOCAL_REPLICAS=2",
                                    "-x",      "POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=1",
                                    "-x",      "POPDIST_REPLICA_INDEX_OFFSET=0",
                                    "-x",      "POPDIST_LOCAL_INSTANCE_INDEX=0",
                                    "-x",      "IPUOF_VIPU_API_PARTITION_ID",
                                    "-x",      "PATH",
                                    "python3", "train.py"};
  std::vector<std::string> rank1 = rank0;
  rank1[3] = "j-worker-1.j";
  rank1[13] = "POPDIST_REPLICA_INDEX_OFFSET=2";
  std::vector<std::string> expected = {"mpirun",
                                       "--bind-to",
                                       "none",
                                       "--tag-output",
                                       "--mca",
                                       "plm_rsh_agent",
                                       "/opt/ipu-runtime/ipu-runtime rsh"};
  expected.insert(expected.end(), rank0.begin(), rank0.end());
  expected.push_back(":");
  expected.insert(expected.end(), rank1.begin(), rank1.end());
  EXPECT_EQ(mpirunCommand(twoWorkers()), expected);

  LaunchInputs asRoot = twoWorkers();
  asRoot.runAsRoot = true;
  EXPECT_EQ(mpirunCommand(asRoot)[7], "--allow-run-as-root");
  LaunchInputs missingHost = twoWorkers();
  missingHost.hosts.pop_back();
  EXPECT_EQ(errorOf([&] { mpirunCommand(missingHost); }), "1 hosts for 2 ranks");
}

TEST(LaunchPlanTest, OnlyVariablesPoprunExportsArePassedThrough) {
  const auto& names = passedThroughVariables();
  for (const char* name :
       {"IPUOF_VIPU_API_HOST", "IPUOF_VIPU_API_PORT", "IPUOF_VIPU_API_PARTITION_ID", "POPLAR_TARGET_OPTIONS",
        "PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "IPUOF_LOG_LEVEL"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  EXPECT_EQ(std::find(names.begin(), names.end(), "HOME"), names.end());
}

TEST(LaunchPlanTest, RshCompletesTheShortNamesMpirunUses) {
  std::vector<std::string> peers = {"j-worker-0.j", "j-worker-1.j", "j-worker-10.j"};
  EXPECT_EQ(remote::completePeerName("j-worker-1", peers), "j-worker-1.j");
  EXPECT_EQ(remote::completePeerName("j-worker-10", peers), "j-worker-10.j");
  EXPECT_EQ(remote::completePeerName("j-worker-1.j", peers), "j-worker-1.j");
  EXPECT_EQ(remote::completePeerName("10.0.0.7", peers), "10.0.0.7");
  EXPECT_EQ(remote::completePeerName("j-worker", peers), "j-worker");
}

TEST(LaunchPlanTest, HostfileAndShellQuoting) {
  EXPECT_EQ(hostfile({"a.j", "b.j"}), "a.j slots=1\nb.j slots=1\n");
  EXPECT_EQ(shellJoin({"python3", "-c", "print('hi there')", "--x=1"}),
            "python3 -c 'print('\\''hi there'\\'')' --x=1");
  EXPECT_EQ(shellJoin({""}), "''");
}

TEST(LaunchPlanTest, OpenMpiIsKeptToTheInterfacesThatReachThePeersUnlessTheUserChose) {
  const std::vector<std::string> command{"python3", "train.py"};
  const Environment chosen = mpiInterfaceEnvironment({"eth0"}, environment({}), command);
  EXPECT_EQ(chosen,
            (Environment{{"OMPI_MCA_btl_tcp_if_include", "eth0"}, {"OMPI_MCA_oob_tcp_if_include", "eth0"}}));
  EXPECT_EQ(mpiInterfaceEnvironment({"net1", "eth0"}, environment({}), command)[0].second, "net1,eth0");
  EXPECT_TRUE(mpiInterfaceEnvironment({}, environment({}), command).empty())
      << "nothing known: OpenMPI's own choice";

  EXPECT_EQ(mpiInterfaceEnvironment({"eth0"}, environment({{"OMPI_MCA_btl_tcp_if_exclude", "lo,docker0"}}),
                                    command),
            (Environment{{"OMPI_MCA_oob_tcp_if_include", "eth0"}}))
      << "include and exclude together are an error in OpenMPI: the user's exclude stands alone";
  EXPECT_EQ(mpiInterfaceEnvironment({"eth0"}, environment({{"OMPI_MCA_oob_tcp_if_include", "ib0"}}), command),
            (Environment{{"OMPI_MCA_btl_tcp_if_include", "eth0"}}));
  EXPECT_TRUE(mpiInterfaceEnvironment({"eth0"}, environment({}),
                                      {"mpirun", "--mca", "btl_tcp_if_include", "ib0", "--mca",
                                       "oob_tcp_if_exclude", "lo", "-np", "4", "prog"})
                  .empty())
      << "the user's own launcher line wins";
}

TEST(LaunchPlanTest, OpenMpiSkipsItsCmLayerWhereNoFabricCouldUseItUnlessTheUserChose) {
  const std::vector<std::string> command{"python3", "train.py"};
  const Environment skipCm{{"OMPI_MCA_pml", "^cm"}};
  EXPECT_EQ(mpiMessagingEnvironment({}, environment({}), command), skipCm);
  EXPECT_TRUE(mpiMessagingEnvironment({.fabricDevices = true}, environment({}), command).empty())
      << "an RDMA, Omni-Path or InfiniPath device: OpenMPI's own choice";

  for (const char* variable : {"OMPI_MCA_pml", "OMPI_MCA_mtl"}) {
    EXPECT_TRUE(mpiMessagingEnvironment({}, environment({{variable, "ucx"}}), command).empty()) << variable;
  }
  for (const std::vector<std::string>& chosen : std::vector<std::vector<std::string>>{
           {"mpirun", "--mca", "pml", "ucx", "-np", "2", "prog"},
           {"mpirun", "-mca", "mtl", "ofi", "prog"},
           {"mpirun", "--gmca", "pml", "ob1", "prog"},
           {"mpirun", "-x", "OMPI_MCA_pml=ucx", "prog"},
           {"sh", "-c", "export OMPI_MCA_mtl=psm2; mpirun prog"},
           {"sh", "-c", "mpirun --mca pml cm\nprog"},
           {"poprun", "--mpi-global-args=--mca pml ucx --tag-output", "--", "prog"}}) {
    EXPECT_TRUE(mpiMessagingEnvironment({}, environment({}), chosen).empty()) << shellJoin(chosen);
  }
  EXPECT_EQ(mpiMessagingEnvironment({}, environment({}), {"python3", "pml.py", "--mca", "btl", "tcp,self"}),
            skipCm)
      << "other parameters, and pml as a word elsewhere, are no choice of a messaging layer";

  EXPECT_EQ(
      mpiMessagingEnvironment({.parameterFiles = {"# pml = ucx\nbtl_tcp_if_include = eth0\npmlx = 1\n"}},
                              environment({}), command),
      skipCm);
}

TEST(LaunchPlanTest, OpenMpisParameterFilesKeepWhatTheyLeftOutAndWinWhenTheyChoose) {
  const std::vector<std::string> command{"python3", "train.py"};
  // Debian 12's own /etc/openmpi/openmpi-mca-params.conf.
  const std::string debian =
      "btl_base_warn_component_unused=0\nmtl = ^ofi\nbtl = ^uct,openib,ofi\n"
      "pml = ^ucx\nosc = ^ucx,pt2pt\n";
  EXPECT_EQ(mpiMessagingEnvironment({.parameterFiles = {debian}}, environment({}), command),
            (Environment{{"OMPI_MCA_pml", "^ucx,cm"}}))
      << "the variable replaces the file's value: ucx stays out";
  EXPECT_EQ(
      mpiMessagingEnvironment({.parameterFiles = {debian, "pml = ^ucx,v \n"}}, environment({}), command),
      (Environment{{"OMPI_MCA_pml", "^ucx,v,cm"}}))
      << "the user's file, read last, wins";
  EXPECT_TRUE(
      mpiMessagingEnvironment({.parameterFiles = {"pml = ^cm,ucx"}}, environment({}), command).empty());
  EXPECT_TRUE(
      mpiMessagingEnvironment({.parameterFiles = {debian, "pml = ucx"}}, environment({}), command).empty())
      << "layers named to be used: cm is loaded only when named";
  EXPECT_TRUE(mpiMessagingEnvironment({.parameterFiles = {"mtl = psm2"}}, environment({}), command).empty())
      << "an MTL named to be used is a choice of cm";
}

TEST(LaunchSummaryTest, TheRuntimesOwnLauncherIsOneLineWithTheProgramOnce) {
  LaunchInputs inputs = twoWorkers();
  inputs.command = {"python3", "-c", std::string(400, 'x')};
  const std::string summary = launchSummary(mpirunCommand(inputs), inputs, false);
  EXPECT_EQ(summary,
            "running mpirun, one rank in each of the 2 workers (j-worker-0.j,j-worker-1.j), each rank: "
            "python3 -c " +
                std::string(189, 'x') +
                "... (211 more characters) (IPU_RUNTIME_LOG_LAUNCH=full logs the whole line)");
  EXPECT_EQ(
      launchSummary(poprunCommand(twoWorkers()), twoWorkers(), false),
      "running poprun --num-replicas 4 --ipus-per-replica 1, one rank in each of the 2 workers "
      "(j-worker-0.j,j-worker-1.j), each rank: python3 train.py (IPU_RUNTIME_LOG_LAUNCH=full logs the whole "
      "line)");
}

TEST(LaunchSummaryTest, AUsersLauncherIsShownAsWrittenAndAScriptByTheLauncherInIt) {
  LaunchInputs inputs = twoWorkers();
  inputs.command = {"mpirun", "-np", "2", "python3", "-c", "print(1)"};
  EXPECT_EQ(launchSummary(inputs.command, inputs, true),
            "running the job's own launcher once: mpirun -np 2 python3 -c 'print(1)'");
  inputs.command = {"bash", "-c",
                    "cd /w\npip install -r requirements.txt\nOMPI_X=1 mpirun -np 2 prog --fast\n"};
  EXPECT_EQ(
      launchSummary(inputs.command, inputs, true),
      "running the worker command once, a bash -c script of 3 line(s) that starts the ranks with: OMPI_X=1 "
      "mpirun -np 2 prog --fast (IPU_RUNTIME_LOG_LAUNCH=full logs the whole line)");
}

}  // namespace
}  // namespace ipu::runtime::launch
