// How worker 0 of a multi-worker instance starts the ranks: the operator's decision from the worker command,
// what it writes into worker 0's command, and the Events that tell the user.
#include "ipujob/launch_form.h"

#include <gtest/gtest.h>

#include "ipujob/worker_pod.h"
#include "yaml_json.h"

namespace ipu::controllers {
namespace {

using testing::yamlFileToJson;

const WorkerAssignment kPartition{
    "p0", "pod64", "vipu.example", 8090, "", 0, {"j-ipu-runtime-a1b2c", "c0ffee"}};
const char* kBinary = "/opt/ipu-runtime/ipu-runtime";

// A job of one instance over `workers` pods whose worker container runs `command` then `args`.
api::IpuJob jobRunning(int workers, const Json& command, const Json& args = Json::array()) {
  Json container = {{"name", "train"}, {"image", "trainer"}, {"command", command}};
  if (!args.empty()) container["args"] = args;
  const Json object = {
      {"apiVersion", "graphcore.ai/v1alpha1"},
      {"kind", "IPUJob"},
      {"metadata", {{"name", "j"}}},
      {"spec",
       {{"jobInstances", 1},
        {"ipusPerJobInstance", "4"},
        {"workersPerJobInstance", std::to_string(workers)},
        {"workers", {{"template", {{"spec", {{"containers", Json::array({container})}}}}}}}}}};
  auto job = api::parseIpuJob(object);
  EXPECT_TRUE(job.ok()) << job.error().toString();
  job->identity = {"ml", "j", "uid-7"};
  return *job;
}

Json workerCommand(const api::IpuJob& job, int worker) {
  WorkerPodOptions options;
  options.runtime.image = "registry.example/ipu-runtime:1";
  return buildWorkerPod(job, worker, kPartition, options)["spec"]["containers"][0]["command"];
}

TEST(LaunchFormTest, ALauncherAsTheWorkerCommandRunsOnceInWorkerZeroAsWritten) {
  const api::IpuJob job = jobRunning(4, {"mpirun", "-np", "4"}, {"python3", "-c", "print(1)"});
  EXPECT_EQ(launchForm(job.spec), LaunchForm::kLauncherInCommand);
  EXPECT_EQ(workerCommand(job, 0), Json::array({kBinary, "launch", "--launcher", "--", "mpirun", "-np", "4",
                                                "python3", "-c", "print(1)"}));
  for (int worker = 1; worker < 4; ++worker)
    EXPECT_EQ(workerCommand(job, worker), Json::array({kBinary, "agent"}));
}

TEST(LaunchFormTest, TheUsersPoprunManifestScaledToTwoWorkersRunsItsScriptOnce) {
  Json manifest = yamlFileToJson(IPU_EXAMPLES_DIR "/bert-poprun-64ipus.yaml");
  manifest["spec"]["workersPerJobInstance"] = "2";
  manifest["spec"]["modelReplicasPerWorker"] = "8";
  auto job = api::parseIpuJob(manifest);
  ASSERT_TRUE(job.ok()) << job.error().toString();
  job->identity = {"ml", "bert", "uid-1"};
  EXPECT_EQ(launchForm(job->spec), LaunchForm::kLauncherInCommand);
  const Json command = workerCommand(*job, 0);
  ASSERT_GE(command.size(), 7u) << command.dump();
  EXPECT_EQ(Json(std::vector<Json>(command.begin(), command.begin() + 7)),
            Json::array({kBinary, "launch", "--launcher", "--", "/bin/bash", "-c", "--"}));
  const auto notice = launchFormNotice(job->spec, true);
  ASSERT_TRUE(notice.has_value());
  EXPECT_EQ(notice->type, kube::EventType::kNormal);
  EXPECT_EQ(notice->reason, "LauncherInCommand");
  EXPECT_NE(
      notice->message.find("the worker command starts the ranks itself (OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                           "OMPI_ALLOW_RUN_AS_ROOT=1 poprun --allow-run-as-root 1"),
      std::string::npos)
      << notice->message;
  EXPECT_NE(notice->message.find("the other workers run only ipu-runtime's agent"), std::string::npos);
  EXPECT_NE(notice->message.find("(the script's other lines run in worker 0 only)"), std::string::npos);
}

TEST(LaunchFormTest, ARankProgramIsStartedOncePerWorkerByTheRuntimesLaunch) {
  const api::IpuJob job = jobRunning(2, {"sh", "-c", "cd /w && python3 train.py"});
  EXPECT_EQ(launchForm(job.spec), LaunchForm::kGenerated);
  EXPECT_EQ(workerCommand(job, 0),
            Json::array({kBinary, "launch", "--", "sh", "-c", "cd /w && python3 train.py"}));
  EXPECT_EQ(launchFormNotice(job.spec, true), std::nullopt);
}

TEST(LaunchFormTest, OneWorkerPerInstanceOrALauncherCommandIsNotReadAtAll) {
  const api::IpuJob single = jobRunning(1, {"mpirun", "-np", "1", "prog"});
  EXPECT_EQ(launchForm(single.spec), LaunchForm::kGenerated);
  EXPECT_EQ(workerCommand(single, 0), Json::array({kBinary, "exec", "--", "mpirun", "-np", "1", "prog"}));
  EXPECT_EQ(launchFormNotice(single.spec, true), std::nullopt);

  api::IpuJob own = jobRunning(2, {"./run.sh"});
  own.spec.launcherCommand = {"mpirun", "prog"};
  EXPECT_EQ(launchForm(own.spec), LaunchForm::kLauncherCommand);
  EXPECT_EQ(launchFormNotice(own.spec, true), std::nullopt);
}

TEST(LaunchFormTest, ACommandThatHidesWhatItRunsGetsAWarningNamingTheForms) {
  const api::IpuJob job = jobRunning(2, {"bash", "-c", "cd /w; ./launch.sh --big"});
  EXPECT_EQ(launchForm(job.spec), LaunchForm::kGenerated) << "run as every rank, as written";
  const auto notice = launchFormNotice(job.spec, true);
  ASSERT_TRUE(notice.has_value());
  EXPECT_EQ(notice->type, kube::EventType::kWarning);
  EXPECT_EQ(notice->reason, "WorkerCommandUnclear");
  EXPECT_EQ(
      notice->message,
      "the worker command runs the script file ./launch.sh (./launch.sh --big), which cannot be read before "
      "it "
      "runs: it runs as one rank in each of the instance's 2 workers. If it starts poprun or mpirun itself, "
      "that fails (\"mpirun does not support recursive calls\"): put the launch line in launcher.command, or "
      "write poprun/mpirun in the command or in its sh -c script, where it is seen");
  EXPECT_EQ(launchFormNotice(job.spec, false), std::nullopt) << "without the runtime nothing launches anyway";
}

}  // namespace
}  // namespace ipu::controllers
