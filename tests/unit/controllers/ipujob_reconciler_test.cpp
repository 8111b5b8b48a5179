// The IPUJob reconciler pass by pass, with no cluster: a scripted API server (FakeTransport: every request
// must be expected, in order, and each test ends with none left), an in-memory V-IPU (vipu-sim's
// SimulatedPod) and a FakeClock. Each step checks the exact API calls and the status patch it writes; the
// fixture then applies that patch to its copy of the job, as the API server would, for the next pass.
#include "ipujob/ipujob_reconciler.h"

#include <gtest/gtest.h>

#include "container_env.h"
#include "fake_clock.h"
#include "fake_transport.h"
#include "job_store.h"
#include "scripted_vipu.h"
#include "tls/pki.h"
#include "vipu-sim/simulated_pod.h"

namespace ipu::controllers {
namespace {

using namespace std::chrono_literals;
using testing::envValue;
using testing::FakeTransport;

const std::string kJobPath = "/apis/graphcore.ai/v1alpha1/namespaces/ml/ipujobs/bert";
const std::string kStatusPath = kJobPath + "/status";
// A partition still activating is looked at again this soon first (ActivationPolls), then less often.
constexpr auto kFirstActivationLook = 50ms;
const std::string kPodsPath = "/api/v1/namespaces/ml/pods";
const std::string kSecretsPath = "/api/v1/namespaces/ml/secrets";
const std::string kPoliciesPath = "/apis/networking.k8s.io/v1/namespaces/ml/networkpolicies";
const std::string kPartition = "k8s_ml_bert_0";

// Records Events instead of sending them.
class RecordedEvents final : public kube::EventRecorder {
 public:
  void record(const kube::ObjectReference&, kube::EventType type, std::string_view reason,
              std::string_view) override {
    reasons.push_back(std::string(type == kube::EventType::kWarning ? "Warning " : "") + std::string(reason));
  }
  std::vector<std::string> reasons;
};

Json jobObject(const std::string& specYaml) {
  Json job = {{"apiVersion", "graphcore.ai/v1alpha1"},
              {"kind", "IPUJob"},
              {"metadata",
               {{"namespace", "ml"},
                {"name", "bert"},
                {"uid", "uid-bert"},
                {"generation", 1},
                {"resourceVersion", "1"},
                {"creationTimestamp", "2024-01-01T00:00:00Z"},
                {"finalizers", {kCleanupFinalizer}}}},
              {"spec",
               {{"ipusPerJobInstance", "4"},
                {"workers",
                 {{"template", {{"spec", {{"containers", {{{"name", "main"}, {"image", "train:1"}}}}}}}}}}}}};
  if (!specYaml.empty()) job["spec"].merge_patch(Json::parse(specYaml));
  return job;
}

// An object whose controller is the IPUJob "bert" with this uid, as the API server returns it.
std::string ownedBy(const std::string& uid) {
  return Json{{"metadata",
               {{"name", "bert"},
                {"ownerReferences",
                 {{{"apiVersion", "graphcore.ai/v1alpha1"},
                   {"kind", "IPUJob"},
                   {"name", "bert"},
                   {"uid", uid},
                   {"controller", true}}}}}}}
      .dump();
}

// The API server's answer to a Secret created with generateName: the name it made.
std::string generatedSecret(const std::string& name) {
  return Json{{"kind", "Secret"}, {"metadata", {{"name", name}, {"namespace", "ml"}}}}.dump();
}

class ReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    inventory_->refresh();
    admitter_ = std::make_unique<Admitter>(*inventory_, jobs_);
    makeReconciler("");
    for (kube::Store* store : {static_cast<kube::Store*>(&jobs_), &pods_}) {
      store->apply({kube::WatcherEvent::Kind::kInit, nullptr});
      store->apply({kube::WatcherEvent::Kind::kInitDone, nullptr});
    }
  }

  // The reconciler, injecting ipu-runtime from `runtimeImage` (empty: not injected), with partition id
  // prefixes `prefix` and `legacyPrefix`.
  void makeReconciler(const std::string& runtimeImage, const std::string& prefix = "k8s",
                      const std::string& legacyPrefix = "",
                      api::WorkerPodProfile profile = api::WorkerPodProfile::kIpuBaseline,
                      const std::string& partitionStatusBase = "") {
    ReconcilerOptions options;
    options.workerPodProfile = [profile](const std::string&) { return profile; };
    options.pods.runtime.image = runtimeImage;
    options.pods.partitionStatusBase = partitionStatusBase;
    options.partitionIdPrefix = prefix;
    options.legacyPartitionIdPrefix = legacyPrefix;
    options.hooks.admitted = [this](double) { ++admittedHooks_; };
    options.hooks.running = [this](double) { ++runningHooks_; };
    reconciler_ =
        std::make_unique<IpuJobReconciler>(client_, pods_, *inventory_, *admitter_, events_, clock_, options);
  }

  void TearDown() override {
    EXPECT_EQ(transport_->unexpected(), std::vector<std::string>{});
    EXPECT_EQ(transport_->remaining(), 0u) << "scripted requests were not sent";
  }

  // One pass over the job as the cache has it; the played status patch (if any) is applied to `job_`.
  Action pass() {
    jobs_.apply({kube::WatcherEvent::Kind::kApply, job_});
    const std::size_t before = transport_->played().size();
    auto action = reconciler_->reconcile(std::make_shared<const Json>(job_));
    EXPECT_TRUE(action.ok()) << action.error().toString();
    const auto played = transport_->played();
    for (std::size_t i = before; i < played.size(); ++i) {
      if (played[i].method != "PATCH" || played[i].pathAndQuery != kStatusPath) continue;
      const Json patch = Json::parse(played[i].seen.body);
      lastStatusPatch_ = patch;
      job_["status"] = job_.value("status", Json::object());
      job_["status"].merge_patch(patch["status"]);
      job_["metadata"]["resourceVersion"] = std::to_string(++version_);
    }
    return action.ok() ? *action : Action{};
  }

  void expectStatusPatch() { transport_->expect("PATCH", kStatusPath, 200, "{}"); }
  std::string phase() const { return job_["status"].value("phase", ""); }

  // The worker pod as the API server would hold it once created from the played POST body, in `phase`.
  void addWorkerPod(int index, const std::string& podPhase, Json containerStatuses = nullptr,
                    Json metadata = nullptr) {
    const auto played = transport_->played();
    Json pod;
    for (const auto& step : played) {
      if (step.method == "POST" && step.pathAndQuery == kPodsPath) {
        Json candidate = Json::parse(step.seen.body);
        if (candidate["metadata"]["name"] == "bert-worker-" + std::to_string(index)) pod = candidate;
      }
    }
    ASSERT_TRUE(pod.is_object()) << "pod " << index << " was never created";
    pod["metadata"]["namespace"] = "ml";
    pod["metadata"]["uid"] = "pod-uid-" + std::to_string(++podUids_);
    pod["status"] = {{"phase", podPhase}};
    if (!containerStatuses.is_null()) pod["status"]["containerStatuses"] = containerStatuses;
    if (!metadata.is_null()) pod["metadata"].merge_patch(metadata);
    pods_.apply({kube::WatcherEvent::Kind::kApply, pod});
  }
  void removeWorkerPod(int index) {
    pods_.apply({kube::WatcherEvent::Kind::kDelete,
                 {{"metadata", {{"namespace", "ml"}, {"name", "bert-worker-" + std::to_string(index)}}}}});
  }

  std::optional<vipu::Partition> partition(const std::string& id) {
    auto partitions = vipu_->listPartitions("");
    EXPECT_TRUE(partitions.ok());
    for (const auto& p : *partitions) {
      if (p.id == id) return p;
    }
    return std::nullopt;
  }

  // The job from creation to all workers running; leaves the fixture with one Running worker pod.
  // One instance of two workers, admitted, its partition created and active by the next pass.
  void admitTwoWorkerInstanceUntilItsPartitionIsActive() {
    job_ = jobObject(R"({"workersPerJobInstance": "2", "workers": {"template": {"spec": {"containers":
        [{"name": "main", "image": "train:1", "command": ["python3", "train.py"]}]}}}})");
    expectStatusPatch();  // admission
    EXPECT_EQ(pass(), Action::awaitChange());
    EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook));
    clock_.advance(1s);
  }

  // The pass that makes a two-worker instance's children: its Service, its agents' NetworkPolicy, its pods.
  void createTwoWorkersWithTheirServiceAndPolicy() {
    transport_->expect("POST", "/api/v1/namespaces/ml/services", 201, "{}");
    transport_->expect("POST", kPoliciesPath, 201, "{}");
    transport_->expect("POST", kPodsPath, 201, "{}");
    transport_->expect("POST", kPodsPath, 201, "{}");
    pass();
  }

  // With ipu-runtime injected, one instance of two workers: admitted with its runtime Secret recorded, its
  // partition active, and its Service, agents' NetworkPolicy and two pods made.
  void runTwoWorkerInstanceWithTheRuntimeUntilItsChildrenAreMade() {
    makeReconciler("ipu-runtime:test");
    job_ = jobObject(R"({"workersPerJobInstance": "2", "workers": {"template": {"spec": {"containers":
        [{"name": "main", "image": "train:1", "command": ["python3", "train.py"]}]}}}})");
    transport_->expect("POST", kSecretsPath, 201, generatedSecret("bert-ipu-runtime-x7k2p"));
    expectStatusPatch();
    pass();
    EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook));
    clock_.advance(1s);
    createTwoWorkersWithTheirServiceAndPolicy();
  }

  void runToRunning(const std::string& spec = "") {
    job_ = jobObject(spec);
    expectStatusPatch();  // admission
    EXPECT_EQ(pass(), Action::awaitChange());
    EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook));  // partitions created, activating
    clock_.advance(1s);
    transport_->expect("POST", "/api/v1/namespaces/ml/services", 201, "{}");
    transport_->expect("POST", kPodsPath, 201, "{}");
    EXPECT_EQ(pass(), Action::requeue(1s)) << "\"0 of 1 running\" waits for news of the pod";
    addWorkerPod(0, "Running");
    expectStatusPatch();
    pass();
    EXPECT_EQ(phase(), "Running");
  }

  testing::FakeClock clock_;
  std::shared_ptr<FakeTransport> transport_ = std::make_shared<FakeTransport>();
  kube::RestClient client_{transport_, kube::ClusterConfig{}, kube::ClientOptions{}, clock_};
  testing::InMemoryVipu pod_{clock_};
  std::unique_ptr<vipu::sim::SimulatedPod>& vipu_ = pod_.sim;
  std::unique_ptr<VipuInventory>& inventory_ = pod_.inventory;
  testing::JobStore jobs_;
  kube::Store pods_;
  std::unique_ptr<Admitter> admitter_;
  RecordedEvents events_;
  std::unique_ptr<IpuJobReconciler> reconciler_;
  Json job_;
  Json lastStatusPatch_;
  int version_ = 1;
  int podUids_ = 0;
  int admittedHooks_ = 0;
  int runningHooks_ = 0;
};

TEST_F(ReconcilerTest, ANewJobGetsTheFinalizerAndNothingElse) {
  job_ = jobObject("");
  job_["metadata"].erase("finalizers");
  transport_->expect("PATCH", kJobPath, 200, "{}");
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_EQ(transport_->played().size(), 1u) << "no status write with the version the patch made stale";
  EXPECT_FALSE(partition(kPartition));
}

// However many partitions the POD holds, a job's pass asks V-IPU about the job's own only (GetPartitionStatus
// of each), never for the list of all: its cost does not grow with the number of jobs.
TEST_F(ReconcilerTest, APassReadsTheJobsOwnPartitionsNeverTheListOfAll) {
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(
        vipu_->createPartition(vipu::PartitionRequest{.id = "other-" + std::to_string(i), .size = 4}).ok());
  }
  inventory_->refresh();
  pod_.api->listCalls = 0;
  pod_.api->statusCalls = 0;
  runToRunning();
  EXPECT_EQ(pod_.api->listCalls, 0) << "a pass listed every partition";
  EXPECT_GE(pod_.api->statusCalls, 2) << "activating, then active";
  const int before = pod_.api->statusCalls;
  EXPECT_EQ(pass(), Action::awaitChange()) << "a running job is passed again only when something changes";
  EXPECT_EQ(pod_.api->statusCalls - before, 1) << "one partition, one status read";
  EXPECT_EQ(pod_.api->listCalls, 0);
}

// With the proxy's HTTP face (--vipu-proxy-http-port) and the runtime injected, the pods are made in the pass
// that creates the partition, each told where to ask whether it is active; the job is Running only once the
// partition is active, whatever the pods do before.
TEST_F(ReconcilerTest, WithThePartitionStatusEndpointPodsAreMadeWhileThePartitionActivates) {
  makeReconciler("ipu-runtime:test", "k8s", "", api::WorkerPodProfile::kIpuBaseline, "http://proxy:8091");
  job_ = jobObject("");
  expectStatusPatch();  // admission
  EXPECT_EQ(pass(), Action::awaitChange());
  transport_->expect("POST", "/api/v1/namespaces/ml/services", 201, "{}");
  transport_->expect("POST", kPodsPath, 201, "{}");
  pass();  // "PartitionActivating" is progress within Creating: written with the next change
  ASSERT_TRUE(partition(kPartition));
  EXPECT_EQ(partition(kPartition)->readyState, vipu::ReadyState::kPending) << "the pod came first";
  EXPECT_EQ(phase(), "Creating");
  Json pod;
  for (const auto& step : transport_->played()) {
    if (step.method == "POST" && step.pathAndQuery == kPodsPath) pod = Json::parse(step.seen.body);
  }
  EXPECT_EQ(testing::envValue(pod["spec"]["containers"][0], "IPU_RUNTIME_PARTITION_STATUS_URL"),
            "http://proxy:8091/v1/partitions/" + std::string(kPartition));

  addWorkerPod(0, "Running");
  const Action waiting = pass();
  EXPECT_NE(phase(), "Running") << "its command waits for the partition";
  ASSERT_TRUE(waiting.requeueAfter);
  EXPECT_LE(*waiting.requeueAfter, 500ms) << "looked at again at the activation's pace";
  clock_.advance(1s);
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Running");
  EXPECT_EQ(job_["status"]["partitions"][0]["state"], "Active");
}

// Without a way for the pods to ask (or without the runtime, which does the asking), pods wait for the
// partition.
TEST_F(ReconcilerTest, WithoutTheRuntimePodsAreMadeOnlyOnceThePartitionIsActive) {
  makeReconciler("", "k8s", "", api::WorkerPodProfile::kIpuBaseline, "http://proxy:8091");
  job_ = jobObject("");
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook)) << "no pod while activating";
}

// V-IPU announces no change of its topology: a create it refuses for the placement (its IPUs gone from the
// POD, say) is the operator's sign to read the topology again before planning anew.
TEST_F(ReconcilerTest, ACreateVipuRefusesMakesTheNextPlanReadTheTopologyAgain) {
  job_ = jobObject("");
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::awaitChange());  // admitted: the partition id recorded
  const int topologyReads = pod_.api->attributeCalls;
  pod_.api->createRefusal = makeError(ErrorCode::kFailedPrecondition, "IPU ild0:2 is not in the POD");
  expectStatusPatch();  // the job says why it waits
  pass();
  EXPECT_FALSE(partition(kPartition));
  ASSERT_TRUE(inventory_->controllers().planner("pod64").ok());
  EXPECT_EQ(pod_.api->attributeCalls, topologyReads + 1) << "the topology was not read again";

  // Unreachable is no sign of a changed POD.
  pod_.api->createRefusal = makeError(ErrorCode::kUnavailable, "connection refused");
  jobs_.apply({kube::WatcherEvent::Kind::kApply, job_});
  EXPECT_FALSE(reconciler_->reconcile(std::make_shared<const Json>(job_)).ok()) << "retried with backoff";
  ASSERT_TRUE(inventory_->controllers().planner("pod64").ok());
  EXPECT_EQ(pod_.api->attributeCalls, topologyReads + 1);
}

TEST_F(ReconcilerTest, AdmissionRecordsThePartitionIdsConditionallyBeforeCreatingThem) {
  job_ = jobObject("");
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::awaitChange());
  const Json& patch = lastStatusPatch_;
  EXPECT_EQ(patch["metadata"]["resourceVersion"], "1") << "admission is decided once: written conditionally";
  EXPECT_EQ(patch["status"]["phase"], "Creating");
  EXPECT_EQ(patch["status"]["partitions"], Json::parse(R"([{"id": "k8s_ml_bert_0", "instance": 0, "size": 4,
      "controller": "pod64", "ipus": "ild0:0-3", "state": "Planned"}])"));
  EXPECT_EQ(patch["status"]["startTime"], "2024-01-01T00:00:00Z");
  EXPECT_FALSE(partition(kPartition)) << "intent first: nothing exists in V-IPU before status names it";
  EXPECT_EQ(admittedHooks_, 1);

  // The next pass creates it where admission planned, and waits for PS_ACTIVE without writing anything.
  EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook));
  ASSERT_TRUE(partition(kPartition));
  EXPECT_EQ(partition(kPartition)->readyState, vipu::ReadyState::kPending);
  EXPECT_EQ(events_.reasons, (std::vector<std::string>{"Admitted"})) << "a routine step is no Event";
}

// Read-your-writes: a pass on a cache that still holds the version the admission write replaced (queued by
// another job's change before the write's own event arrived) decides nothing again: no second admission
// write, no second Admitted Event; it waits for the write's event, and the written version goes on.
TEST_F(ReconcilerTest, APassOnTheVersionItsOwnWriteReplacedWaitsForThatWritesEvent) {
  job_ = jobObject("");
  const Json beforeTheWrite = job_;
  transport_->expect("PATCH", kStatusPath, 200, R"({"metadata": {"resourceVersion": "2"}})");
  EXPECT_EQ(pass(), Action::awaitChange());
  auto stale = reconciler_->reconcile(std::make_shared<const Json>(beforeTheWrite));
  ASSERT_TRUE(stale.ok()) << stale.error().toString();
  EXPECT_EQ(*stale, Action::requeue(1s)) << "only a guard against an event lost";
  EXPECT_EQ(events_.reasons, (std::vector<std::string>{"Admitted"}));
  EXPECT_FALSE(partition(kPartition));
  EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook)) << "the written version: created, activating";
  EXPECT_TRUE(partition(kPartition));
}

// A status write the API server found already applied (the object as patched: its version unchanged) sends
// no event: the next pass on that version runs instead of waiting for one.
TEST_F(ReconcilerTest, AWriteThatChangedNothingDoesNotHoldTheNextPass) {
  job_ = jobObject("");
  const Json beforeTheWrite = job_;
  transport_->expect("PATCH", kStatusPath, 200, R"({"metadata": {"resourceVersion": "1"}})");
  EXPECT_EQ(pass(), Action::awaitChange());
  job_ = beforeTheWrite;
  job_["status"] = lastStatusPatch_["status"];  // the cache with the status as written, same version
  EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook)) << "not held: created, activating";
}

// A process that starts after the admission was written (its reservation gone) while someone else took the
// recorded IPUs places the job again, writes where before it creates anything there, and creates it in the
// next pass: a crash in between leaves a partition on the IPUs status names, never one it would not adopt.
TEST_F(ReconcilerTest, APlacementMadeAgainIsRecordedBeforeItsPartitionIsCreated) {
  job_ = jobObject("");
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::awaitChange());
  ASSERT_EQ(job_["status"]["partitions"][0]["ipus"], "ild0:0-3");
  ASSERT_TRUE(vipu_->createPartition(vipu::PartitionRequest{.id = "somebody-else", .size = 4}).ok());
  inventory_->refresh();
  admitter_ = std::make_unique<Admitter>(*inventory_, jobs_);  // a new process: no reservation
  makeReconciler("");

  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook));
  EXPECT_EQ(lastStatusPatch_["status"]["partitions"][0]["ipus"], "ild0:4-7");
  EXPECT_FALSE(partition(kPartition)) << "created before status said where";

  EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook));
  ASSERT_TRUE(partition(kPartition));
  const auto theirs = partition("somebody-else");
  ASSERT_TRUE(theirs);
  const auto ours = partition(kPartition);
  for (const auto& ipu : ours->spec.ipus) {
    EXPECT_EQ(std::count(theirs->spec.ipus.begin(), theirs->spec.ipus.end(), ipu), 0);
  }
}

TEST_F(ReconcilerTest, ActivePartitionsGetTheServiceAndThePodsThenTheJobRuns) {
  runToRunning();
  const auto played = transport_->played();
  const Json pod = Json::parse(played[2].seen.body);
  EXPECT_EQ(pod["metadata"]["name"], "bert-worker-0");
  EXPECT_EQ(pod["metadata"]["labels"]["graphcore.ai/attempt"], "0");
  EXPECT_EQ(lastStatusPatch_["status"]["currentReplicas"], 1);
  EXPECT_EQ(lastStatusPatch_["status"]["launcherStatus"], "Running");
  EXPECT_FALSE(lastStatusPatch_.contains("metadata")) << "observations are not decisions: no precondition";
  EXPECT_EQ(job_["status"]["partitions"][0]["state"], "Active");
  EXPECT_EQ(runningHooks_, 1);
  // A pass with nothing new writes nothing.
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_EQ(transport_->played().size(), played.size());
}

TEST_F(ReconcilerTest, SucceededWorkersEndTheJobAndReleaseThePartition) {
  runToRunning();
  addWorkerPod(0, "Succeeded");
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeueNow());
  EXPECT_EQ(phase(), "Succeeded");
  EXPECT_EQ(job_["status"]["completionTime"], "2024-01-01T00:00:01Z");
  EXPECT_TRUE(partition(kPartition)) << "released by the next pass, once the verdict is recorded";
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_FALSE(partition(kPartition));
  EXPECT_EQ(job_["status"]["partitions"][0]["state"], "Released");
  EXPECT_EQ(job_["status"]["conditions"][2]["type"], "Succeeded");
}

TEST_F(ReconcilerTest, NeverFailsTheJobOnTheFirstFailedWorker) {
  runToRunning();
  addWorkerPod(0, "Failed", Json::parse(R"([{"state": {"terminated": {"exitCode": 3}}}])"));
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Failed");
  EXPECT_NE(job_["status"]["lastMessage"].get<std::string>().find("exit code 3"), std::string::npos)
      << job_["status"].dump();
  // Finished: the partition goes; the failed pod stays for its logs (cleanPodPolicy None).
  expectStatusPatch();
  pass();
  EXPECT_FALSE(partition(kPartition));
}

TEST_F(ReconcilerTest, TheWorkersTerminationMessageEndsTheLastMessage) {
  runToRunning();
  addWorkerPod(0, "Failed", Json::parse(R"([{"state": {"terminated": {"exitCode": 3,
      "message": "instance 0 (bert-worker-0): python3 train.py exited with code 3 after 2.0 s\n"}}}])"));
  expectStatusPatch();
  pass();
  EXPECT_EQ(
      job_["status"]["lastMessage"],
      "Worker pod bert-worker-0 failed with exit code 3: instance 0 (bert-worker-0): python3 train.py exited "
      "with code 3 after 2.0 s");
  expectStatusPatch();
  pass();
}

TEST_F(ReconcilerTest, WorkersStartingAreWrittenASecondAfterTheFirstNewsAndRunningAtOnce) {
  admitTwoWorkerInstanceUntilItsPartitionIsActive();
  transport_->expect("POST", "/api/v1/namespaces/ml/services", 201, "{}");
  transport_->expect("POST", kPodsPath, 201, "{}");
  transport_->expect("POST", kPodsPath, 201, "{}");
  // The pods are made; "0 of 2 running" waits a second for the pods' own news.
  EXPECT_EQ(pass(), Action::requeue(1s));
  addWorkerPod(0, "Running");
  addWorkerPod(1, "Pending");
  clock_.advance(300ms);
  EXPECT_EQ(pass(), Action::requeue(700ms)) << "the wait is not started again";
  EXPECT_EQ(job_["status"]["currentReplicas"], 0) << "nothing written yet";
  EXPECT_EQ(job_["status"]["partitions"][0]["state"], "Planned");
  clock_.advance(700ms);
  expectStatusPatch();
  pass();
  EXPECT_EQ(lastStatusPatch_["status"]["currentReplicas"], 1) << "one write for all that happened";
  EXPECT_EQ(lastStatusPatch_["status"]["partitions"][0]["state"], "Active");
  // The last worker running changes the phase: written at once.
  addWorkerPod(1, "Running");
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Running");
}

// The runtime Secret volume of a pod as POSTed.
const Json& runtimeSecretVolume(const Json& pod) {
  for (const Json& volume : pod["spec"]["volumes"]) {
    if (volume["name"] == "ipu-runtime-tls") return volume["secret"];
  }
  static const Json kNone;
  return kNone;
}

TEST_F(ReconcilerTest, MultiWorkerInstancesGetTheirCertificateSecretRecordedWithTheAdmission) {
  makeReconciler("ipu-runtime:test");
  job_ = jobObject(R"({"workersPerJobInstance": "2", "workers": {"template": {"spec": {"containers":
      [{"name": "main", "image": "train:1", "command": ["python3", "train.py"]}]}}}})");
  transport_->expect("POST", kSecretsPath, 201, generatedSecret("bert-ipu-runtime-x7k2p"));
  expectStatusPatch();  // admission, with the Secret's name
  EXPECT_EQ(pass(), Action::awaitChange());
  const Json& secret = Json::parse(transport_->played().front().seen.body);
  EXPECT_EQ(secret["metadata"]["generateName"], "bert-ipu-runtime-");
  EXPECT_FALSE(secret["metadata"].contains("name")) << "a name known in advance could be taken first";
  EXPECT_EQ(secret["immutable"], true);
  EXPECT_NE(secret["stringData"]["ca.crt"].get<std::string>().find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_NE(secret["stringData"]["tls.key"].get<std::string>().find("PRIVATE KEY"), std::string::npos);
  const std::string caDigest = runtime::pki::pemDigest(secret["stringData"]["ca.crt"]);
  EXPECT_EQ(lastStatusPatch_["status"]["runtimeSecret"],
            (Json{{"name", "bert-ipu-runtime-x7k2p"}, {"caSha256", caDigest}}));
  EXPECT_TRUE(lastStatusPatch_.contains("metadata")) << "recorded only on the version admitted";

  EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook));
  clock_.advance(1s);
  createTwoWorkersWithTheirServiceAndPolicy();
  std::vector<Json> pods;
  for (const auto& step : transport_->played()) {
    if (step.method == "POST" && step.pathAndQuery == kPodsPath) pods.push_back(Json::parse(step.seen.body));
  }
  ASSERT_EQ(pods.size(), 2u);
  for (const Json& pod : pods) {
    EXPECT_EQ(runtimeSecretVolume(pod),
              (Json{{"secretName", "bert-ipu-runtime-x7k2p"}, {"defaultMode", 0400}}));
    EXPECT_EQ(envValue(pod["spec"]["containers"][0], "IPU_RUNTIME_CA_SHA256"), caDigest);
  }
  EXPECT_EQ(pods[0]["spec"]["containers"][0]["command"][1], "launch");
  EXPECT_EQ(pods[1]["spec"]["containers"][0]["command"][1], "agent");
  EXPECT_TRUE(events_.reasons.empty() || std::find(events_.reasons.begin(), events_.reasons.end(),
                                                   "Warning LauncherNotRun") == events_.reasons.end())
      << "the runtime runs the launch";
}

TEST_F(ReconcilerTest, ASecretNotMadeAtAdmissionIsMadeAndRecordedBeforeAnyPod) {
  makeReconciler("ipu-runtime:test");
  job_ = jobObject(R"({"workersPerJobInstance": "2", "workers": {"template": {"spec": {"containers":
      [{"name": "main", "image": "train:1", "command": ["python3", "train.py"]}]}}}})");
  transport_->expect("POST", kSecretsPath, 503, R"({"kind":"Status","code":503})");
  expectStatusPatch();  // admitted all the same
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_FALSE(job_["status"].contains("runtimeSecret"));
  EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook));
  clock_.advance(1s);
  // Before the first pod: made, recorded by a write of its own, and only then the pods.
  transport_->expect("POST", kSecretsPath, 201, generatedSecret("bert-ipu-runtime-q8w4z"));
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeueNow());
  EXPECT_EQ(job_["status"]["runtimeSecret"]["name"], "bert-ipu-runtime-q8w4z");
  EXPECT_TRUE(lastStatusPatch_.contains("metadata")) << "a pass that read the job stale records nothing";
  createTwoWorkersWithTheirServiceAndPolicy();
  int pods = 0;
  for (const auto& step : transport_->played()) {
    if (step.method != "POST" || step.pathAndQuery != kPodsPath) continue;
    ++pods;
    EXPECT_EQ(runtimeSecretVolume(Json::parse(step.seen.body))["secretName"], "bert-ipu-runtime-q8w4z");
  }
  EXPECT_EQ(pods, 2);
}

TEST_F(ReconcilerTest, PodsMadeBeforeSecretsWereRecordedKeepTheirSecretsName) {
  runTwoWorkerInstanceWithTheRuntimeUntilItsChildrenAreMade();
  // As an earlier version leaves a job: worker 0 made (mounting the derived name), worker 1 not yet, and no
  // record of the Secret; this process remembers nothing of it.
  addWorkerPod(0, "Pending");
  removeWorkerPod(1);
  job_["status"].erase("runtimeSecret");
  makeReconciler("ipu-runtime:test");
  transport_->expect("POST", kPodsPath, 201, "{}");  // the Service and policy came before worker 0
  pass();
  const Json pod = Json::parse(transport_->played().back().seen.body);
  EXPECT_EQ(pod["metadata"]["name"], "bert-worker-1");
  EXPECT_EQ(runtimeSecretVolume(pod)["secretName"], legacyRuntimeSecretName({"ml", "bert", "uid-bert"}));
  EXPECT_EQ(envValue(pod["spec"]["containers"][0], "IPU_RUNTIME_CA_SHA256"), "<unset>")
      << "nothing to pin: the operator never read that Secret";
}

// Under load the pod cache lags the operator's own creates. A pass that sees 1 of the 2 pods it just made
// awaits the other instead of creating it — and, with it, the Service and NetworkPolicy — again, each an
// AlreadyExists answer and a read for nothing. One the cache never shows (deleted at once) is made again
// after kCreationExpectationTtl.
TEST_F(ReconcilerTest, APassOnACacheBehindItsOwnCreatesAwaitsThemInsteadOfCreatingThemAgain) {
  runTwoWorkerInstanceWithTheRuntimeUntilItsChildrenAreMade();
  const std::size_t requests = transport_->played().size();

  pass();  // the cache shows neither pod yet
  EXPECT_EQ(transport_->played().size(), requests) << "made the Service, policy or pods again";
  addWorkerPod(0, "Pending");  // worker 1 is not in the cache yet
  pass();
  EXPECT_EQ(transport_->played().size(), requests) << "created again what the cache had not shown yet";
  addWorkerPod(1, "Pending");
  pass();
  EXPECT_EQ(transport_->played().size(), requests);

  // Worker 1 is deleted before the job runs: seen once, it is no longer awaited and is made again at once.
  removeWorkerPod(1);
  transport_->expect("POST", kPodsPath, 201, "{}");
  pass();
  EXPECT_EQ(transport_->played().size(), requests + 1);

  // Made, and deleted before the cache ever showed it: awaited until the TTL, then made again.
  clock_.advance(kCreationExpectationTtl - 1s);
  expectStatusPatch();  // "0 of 2 running", written a second after the first news
  pass();
  EXPECT_EQ(Json::parse(transport_->played().back().seen.body)["status"]["lastMessage"],
            "Waiting for worker pods: 0 of 2 running");
  clock_.advance(2s);
  transport_->expect("POST", kPodsPath, 201, "{}");
  pass();
  EXPECT_EQ(Json::parse(transport_->played().back().seen.body)["metadata"]["name"], "bert-worker-1");
}

TEST_F(ReconcilerTest, OnFailureRestartsOnAResetPartitionWithNewPods) {
  runToRunning(R"({"restartPolicy": {"type": "OnFailure", "backOffLimit": 1}})");
  addWorkerPod(0, "Failed", Json::parse(R"([{"state": {"terminated": {"exitCode": 1}}}])"));
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeueNow());
  EXPECT_EQ(phase(), "Restarting");
  EXPECT_EQ(job_["status"]["restartCount"], 1);
  EXPECT_TRUE(lastStatusPatch_.contains("metadata")) << "a restart is decided once: conditional";

  // The old attempt's pod goes first (its name is the new pod's) ...
  transport_->expect("DELETE", kPodsPath + "/bert-worker-0", 200, "{}");
  EXPECT_EQ(pass(), Action::requeue(500ms));
  EXPECT_EQ(Json::parse(transport_->played().back().seen.body)["preconditions"]["uid"], "pod-uid-2");
  removeWorkerPod(0);
  // ... then the partition is reset and the next attempt's pods are made.
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeueNow());
  EXPECT_EQ(phase(), "Creating");
  EXPECT_EQ(vipu_->getPartitionStatus(kPartition)->operationState, vipu::OperationState::kResetting);
  EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook))
      << "no pod before the reset partition is active again";
  clock_.advance(1s);
  transport_->expect("POST", "/api/v1/namespaces/ml/services", 201, "{}");
  transport_->expect("POST", kPodsPath, 201, "{}");
  pass();
  EXPECT_EQ(Json::parse(transport_->played().back().seen.body)["metadata"]["labels"]["graphcore.ai/attempt"],
            "1");

  // The second failure is over backOffLimit 1.
  addWorkerPod(0, "Failed", Json::parse(R"([{"state": {"terminated": {"exitCode": 1}}}])"));
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Failed");
  EXPECT_EQ(job_["status"]["conditions"][2]["reason"], "BackoffLimitExceeded");
}

TEST_F(ReconcilerTest, ExitCodeRestartsOnlyOnTheListedCodes) {
  runToRunning(R"({"restartPolicy": {"type": "ExitCode", "exitCodes": "2-4"}})");
  addWorkerPod(0, "Failed", Json::parse(R"([{"state": {"terminated": {"exitCode": 9}}}])"));
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Failed");
}

TEST_F(ReconcilerTest, ExitCodeRestartsOnAListedCode) {
  runToRunning(R"({"restartPolicy": {"type": "ExitCode", "exitCodes": "2-4"}})");
  addWorkerPod(0, "Failed", Json::parse(R"([{"state": {"terminated": {"exitCode": 3}}}])"));
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Restarting");
}

TEST_F(ReconcilerTest, AlwaysRunsACompletedJobAgain) {
  runToRunning(R"({"restartPolicy": {"type": "Always", "backOffLimit": 2}})");
  addWorkerPod(0, "Succeeded");
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Restarting");
}

TEST_F(ReconcilerTest, ALostWorkerRestartsAnOnFailureJob) {
  runToRunning(R"({"restartPolicy": {"type": "OnFailure"}})");
  removeWorkerPod(0);
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Restarting");
  EXPECT_EQ(job_["status"]["conditions"][0]["reason"], "WorkerLost");
}

TEST_F(ReconcilerTest, APartitionLostWhileActiveRestartsTheJobAndComesBackOnlyAfterTheOldPodsAreGone) {
  runToRunning(R"({"restartPolicy": {"type": "OnFailure", "backOffLimit": 1}})");
  ASSERT_TRUE(vipu_->removePartition(kPartition, true).ok());  // removed behind the operator's back
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeueNow());
  EXPECT_EQ(phase(), "Restarting");
  EXPECT_EQ(job_["status"]["restartCount"], 1);
  EXPECT_EQ(job_["status"]["conditions"][0]["reason"], "PartitionLost");
  EXPECT_EQ(job_["status"]["partitions"][0]["state"], "Planned");
  EXPECT_EQ(events_.reasons.back(), "Warning Restarting");
  EXPECT_EQ(events_.reasons[events_.reasons.size() - 2], "Warning PartitionLost");
  EXPECT_FALSE(partition(kPartition)) << "never created again silently under the running pod";

  // The old attempt's pod goes first; the partition is created again only once it is gone.
  transport_->expect("DELETE", kPodsPath + "/bert-worker-0", 200, "{}");
  EXPECT_EQ(pass(), Action::requeue(500ms));
  EXPECT_FALSE(partition(kPartition));
  removeWorkerPod(0);
  EXPECT_EQ(pass(), Action::requeue(kFirstActivationLook)) << "created again (on the same IPUs), activating";
  ASSERT_TRUE(partition(kPartition));
  clock_.advance(1s);
  expectStatusPatch();  // active: reset for the new attempt, Creating
  EXPECT_EQ(pass(), Action::requeueNow());
  EXPECT_EQ(phase(), "Creating");
  EXPECT_EQ(job_["status"]["partitions"][0]["state"], "Active");

  // Lost again: over backOffLimit 1.
  clock_.advance(1s);
  transport_->expect("POST", "/api/v1/namespaces/ml/services", 201, "{}");
  transport_->expect("POST", kPodsPath, 201, "{}");
  EXPECT_EQ(pass(), Action::requeue(1s)) << "\"0 of 1 running\" waits a second for the pod's news";
  addWorkerPod(0, "Pending");
  clock_.advance(1s);
  expectStatusPatch();
  pass();
  EXPECT_EQ(job_["status"]["partitions"][0]["state"], "Active");
  ASSERT_TRUE(vipu_->removePartition(kPartition, true).ok());
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Failed");
  EXPECT_NE(job_["status"].value("lastMessage", "").find("was Active and has disappeared"),
            std::string::npos);
}

TEST_F(ReconcilerTest, APartitionLostUnderANeverJobFailsIt) {
  runToRunning();
  ASSERT_TRUE(vipu_->removePartition(kPartition, true).ok());
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Failed");
  EXPECT_EQ(job_["status"]["conditions"][2]["reason"], "PartitionLost");
}

TEST_F(ReconcilerTest, APodOnANodeThatStoppedAnsweringIsLostThenForceDeletedAfterAReset) {
  runToRunning(R"({"restartPolicy": {"type": "OnFailure", "backOffLimit": 1}})");
  // Deleted (the taint manager evicts pods of an unreachable node), but its kubelet never confirms it.
  const Json deleting = {{"deletionTimestamp", formatTime(clock_.wallNow())}};
  addWorkerPod(0, "Running", nullptr, deleting);
  EXPECT_EQ(pass(), Action::requeue(120s)) << "looks again once the deletion is overdue";
  EXPECT_EQ(phase(), "Running");
  clock_.advance(120s);
  addWorkerPod(0, "Running", nullptr, deleting);  // same pod, now overdue (the uid changes: a new read)
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeueNow());
  EXPECT_EQ(phase(), "Restarting");
  EXPECT_NE(job_["status"].value("lastMessage", "").find("its node is not answering"), std::string::npos)
      << job_["status"].dump();

  // The partition is reset before the pod is forgotten, then the pod is force-deleted.
  const std::size_t before = events_.reasons.size();
  transport_->expect("DELETE", kPodsPath + "/bert-worker-0", 200, "{}");
  EXPECT_EQ(pass(), Action::requeue(500ms));
  EXPECT_EQ(Json::parse(transport_->played().back().seen.body)["gracePeriodSeconds"], 0);
  ASSERT_EQ(events_.reasons.size(), before + 2);
  EXPECT_EQ(events_.reasons[before], "PartitionReset");
  EXPECT_EQ(events_.reasons[before + 1], "Warning WorkerPodForceDeleted");
  EXPECT_EQ(vipu_->getPartitionStatus(kPartition)->operationState, vipu::OperationState::kResetting);
}

TEST_F(ReconcilerTest, AJobAdmittedUnderTheFormerDefaultPrefixKeepsItsPartitionAfterAnUpgrade) {
  runToRunning();  // admitted as k8s_ml_bert_0 by a version whose default prefix was the shared "k8s"
  makeReconciler("", "k8s-0a1b2c3d", "k8s");
  addWorkerPod(0, "Succeeded");
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Succeeded");
  expectStatusPatch();  // released
  pass();
  EXPECT_FALSE(partition(kPartition)) << "removed by its job: still the job's under the legacy prefix";
  EXPECT_EQ(job_["status"]["partitions"][0]["state"], "Released");
}

TEST_F(ReconcilerTest, WithoutTheLegacyPrefixAnIdOfAnotherPrefixIsNotTheJobs) {
  runToRunning();
  addWorkerPod(0, "Succeeded");  // nothing left to stop: the end removes no pod
  makeReconciler("", "k8s-0a1b2c3d");
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Failed");
  EXPECT_EQ(job_["status"]["conditions"][2]["reason"], "PartitionNotOwned");
  expectStatusPatch();
  pass();
  EXPECT_TRUE(partition(kPartition)) << "never removed: not derived under this installation's prefix";
}

TEST_F(ReconcilerTest, SuspendingARunningJobRemovesItsPodsAndPartition) {
  runToRunning();
  job_["spec"]["suspend"] = true;
  transport_->expect("DELETE", kPodsPath + "/bert-worker-0", 200, "{}");
  EXPECT_EQ(pass(), Action::requeue(500ms)) << "the partition waits for the worker to stop";
  EXPECT_TRUE(partition(kPartition));
  removeWorkerPod(0);
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_EQ(phase(), "Suspended");
  EXPECT_FALSE(partition(kPartition));
  EXPECT_TRUE(job_["status"]["partitions"].is_null()) << job_["status"].dump();
  EXPECT_TRUE(job_["status"]["startTime"].is_null());
}

// Suspended, resized and resumed while no operator ran: the operator only sees a running job whose spec no
// longer matches its partitions. Its pods and partitions go and it is admitted again with the new shape.
TEST_F(ReconcilerTest, AShapeChangedBehindTheOperatorsBackIsAdmittedAgain) {
  runToRunning();
  EXPECT_EQ(job_["status"]["admittedShape"],
            Json::parse(R"({"jobInstances":1,"ipusPerJobInstance":4,"workersPerJobInstance":1})"));
  job_["spec"]["ipusPerJobInstance"] = "8";
  transport_->expect("DELETE", kPodsPath + "/bert-worker-0", 200, "{}");
  EXPECT_EQ(pass(), Action::requeue(500ms));
  removeWorkerPod(0);
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeueNow());
  EXPECT_EQ(phase(), "Pending");
  EXPECT_FALSE(partition(kPartition)) << "the old partition was kept";
  EXPECT_EQ(job_["status"]["lastMessage"],
            "The job's shape changed (ipusPerJobInstance 4 -> 8) since it was admitted: admitting it again");
  EXPECT_TRUE(job_["status"]["partitions"].is_null()) << job_["status"].dump();
  EXPECT_TRUE(job_["status"]["admittedShape"].is_null());
  expectStatusPatch();  // admitted with the new shape
  pass();
  EXPECT_EQ(job_["status"]["partitions"][0]["size"], 8);
  EXPECT_EQ(job_["status"]["admittedShape"]["ipusPerJobInstance"], 8);
}

// A status written before admittedShape existed is judged by its partitions.
TEST_F(ReconcilerTest, AStatusWithoutARecordedShapeIsJudgedByItsPartitions) {
  runToRunning();
  job_["status"].erase("admittedShape");
  pass();  // the same shape: nothing to do, nothing written
  EXPECT_EQ(phase(), "Running");
  EXPECT_TRUE(partition(kPartition));
  job_["spec"]["jobInstances"] = 2;
  job_["spec"]["workers"]["replicas"] = 2;
  transport_->expect("DELETE", kPodsPath + "/bert-worker-0", 200, "{}");
  EXPECT_EQ(pass(), Action::requeue(500ms));
  removeWorkerPod(0);
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeueNow());
  EXPECT_NE(job_["status"]["lastMessage"].get<std::string>().find("jobInstances 1 -> 2"), std::string::npos);
}

// A job deleted and created again under its name: the earlier one's Service may still exist until the
// garbage collector removes it. The new job waits for it instead of taking it (it would be collected under
// its pods); a name held by somebody else's object fails the job, since waiting cannot help.
TEST_F(ReconcilerTest, AChildNameHeldByAnEarlierJobIsWaitedForAndByAnotherObjectFailsTheJob) {
  job_ = jobObject("");
  expectStatusPatch();  // admission
  pass();
  pass();  // activating
  clock_.advance(1s);
  transport_->expect("POST", "/api/v1/namespaces/ml/services", 409,
                     R"({"kind":"Status","reason":"AlreadyExists","code":409})");
  transport_->expect("GET", "/api/v1/namespaces/ml/services/bert", 200, ownedBy("uid-of-an-earlier-bert"));
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeue(1s));
  EXPECT_EQ(
      job_["status"]["lastMessage"],
      "Waiting for Service ml/bert of an earlier IPUJob named bert to be deleted (the garbage collector "
      "removes it)");
  EXPECT_TRUE(partition(kPartition)) << "waiting keeps the partition";

  transport_->expect("POST", "/api/v1/namespaces/ml/services", 409,
                     R"({"kind":"Status","reason":"AlreadyExists","code":409})");
  transport_->expect("GET", "/api/v1/namespaces/ml/services/bert", 200,
                     R"({"kind":"Service","metadata":{"name":"bert"}})");
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Failed");
  EXPECT_EQ(
      job_["status"]["lastMessage"],
      "Service ml/bert already exists and does not belong to this job: delete it or give the job another "
      "name");
}

TEST_F(ReconcilerTest, TheDeadlineFailsARunningJob) {
  runToRunning(R"({"activeDeadlineSeconds": 60})");
  clock_.advance(30s);
  EXPECT_EQ(pass().requeueAfter, std::optional<Clock::Duration>(29s));  // looks again when it is due
  clock_.advance(29s);
  expectStatusPatch();
  pass();
  EXPECT_EQ(phase(), "Failed");
  EXPECT_EQ(job_["status"]["conditions"][2]["reason"], "DeadlineExceeded");
}

TEST_F(ReconcilerTest, AnInteractiveJobEndsItsTtlAfterItsWorkersRunAndARaisedTtlExtendsIt) {
  runToRunning(R"({"interactive": {"ttl": 60}})");
  const Json& session = job_["status"]["interactive"];
  EXPECT_EQ(session["runningSince"], "2024-01-01T00:00:01Z") << "from when every worker runs, not admission";
  EXPECT_EQ(session["ttlSeconds"], 60);
  EXPECT_EQ(session["expiresAt"], "2024-01-01T00:01:01Z");
  clock_.advance(30s);
  EXPECT_EQ(pass(), Action::requeue(30s)) << "looks again when it is due, writing nothing";

  // Raised while it runs: expiresAt moves, the workers are left alone.
  job_["spec"]["interactive"]["ttl"] = 120;
  job_["metadata"]["generation"] = 2;
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeue(90s));
  EXPECT_EQ(job_["status"]["interactive"]["expiresAt"], "2024-01-01T00:02:01Z");
  EXPECT_EQ(phase(), "Running");

  clock_.advance(90s);
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeueNow());
  EXPECT_EQ(phase(), "Succeeded");
  EXPECT_EQ(job_["status"]["conditions"].back()["reason"], "InteractiveTimeExpired");
  EXPECT_EQ(job_["status"]["lastMessage"],
            "The interactive session's ttl of 120 s ended at 2024-01-01T00:02:01Z: workers stopped, IPUs "
            "released");
  // The next pass stops the still-running worker; the partition is released once it is gone.
  transport_->expect("DELETE", kPodsPath + "/bert-worker-0", 200, "{}");
  EXPECT_EQ(pass(), Action::requeue(500ms));
  EXPECT_TRUE(partition(kPartition));
  removeWorkerPod(0);
  expectStatusPatch();
  pass();
  EXPECT_FALSE(partition(kPartition));
}

TEST_F(ReconcilerTest, AnInteractiveTtlAboveTheMaximumIsCutAndSaidSoAndZeroIsTheDefault) {
  ReconcilerOptions options;
  options.pods.interactive = {std::chrono::seconds(30), std::chrono::seconds(100)};
  reconciler_ =
      std::make_unique<IpuJobReconciler>(client_, pods_, *inventory_, *admitter_, events_, clock_, options);
  runToRunning(R"({"interactive": {"ttl": 500}})");
  EXPECT_EQ(job_["status"]["interactive"]["ttlSeconds"], 100);
  EXPECT_NE(std::find(events_.reasons.begin(), events_.reasons.end(), "Warning InteractiveTtlCapped"),
            events_.reasons.end());

  job_["spec"]["interactive"]["ttl"] = 0;
  expectStatusPatch();
  pass();
  EXPECT_EQ(job_["status"]["interactive"]["ttlSeconds"], 30);
  EXPECT_EQ(job_["status"]["interactive"]["expiresAt"], "2024-01-01T00:00:31Z");
}

TEST_F(ReconcilerTest, AWorkerTheRuntimeEndedAsIdleEndsTheJobAsReclaimedWithoutARestart) {
  runToRunning(R"({"interactive": {"ttl": 600, "idleSeconds": 60}, "restartPolicy": {"type": "Always"}})");
  addWorkerPod(0, "Succeeded", Json::parse(R"([{"name": "main", "state": {"terminated": {"exitCode": 0,
      "message": "reclaimed as idle: no kubectl exec process for 60 s\n"}}}])"));
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeueNow());
  EXPECT_EQ(phase(), "Succeeded");
  EXPECT_EQ(job_["status"]["conditions"].back()["reason"], "InteractiveIdle");
  EXPECT_EQ(job_["status"]["lastMessage"],
            "Reclaimed as idle (no kubectl exec process for 60 s): workers stopped, IPUs released");
  expectStatusPatch();
  pass();
  EXPECT_FALSE(partition(kPartition));
}

TEST_F(ReconcilerTest, WorkerZeroKeepingItsOutputsOutlivesTheJobUntilItsRetentionEnds) {
  makeReconciler("ipu-runtime:test");
  runToRunning(R"({"cleanPodPolicy": "All", "outputs": {"path": "/outputs", "retainSeconds": 120},
    "workers": {"template": {"spec": {"containers": [{"name": "main", "image": "train:1", "command": ["train"]}]}}}})");
  // The command ended at 00:00:05; the retention container runs on.
  addWorkerPod(0, "Running", Json::parse(R"([
      {"name": "main", "state": {"terminated": {"exitCode": 0, "finishedAt": "2024-01-01T00:00:05Z"}}},
      {"name": "ipu-outputs", "state": {"running": {"startedAt": "2024-01-01T00:00:01Z"}}}])"));
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeueNow());
  EXPECT_EQ(phase(), "Succeeded") << "judged by its command, not by the pod";
  expectStatusPatch();  // partition released, status.outputs; the pod is not deleted
  EXPECT_EQ(pass(), Action::requeue(154s)) << "until 00:02:05 and 30 s of grace, from 00:00:01";
  EXPECT_FALSE(partition(kPartition));
  EXPECT_EQ(job_["status"]["outputs"],
            Json::parse(R"({"path": "/outputs", "retainedUntil": "2024-01-01T00:02:05Z"})"));
  EXPECT_NE(std::find(events_.reasons.begin(), events_.reasons.end(), "OutputsRetained"),
            events_.reasons.end());
  // Past the retention and its grace, a retention container that did not end has its pod deleted.
  clock_.advance(154s);
  transport_->expect("DELETE", kPodsPath + "/bert-worker-0", 200, "{}");
  pass();
}

TEST_F(ReconcilerTest, TtlDeletesTheFinishedJobWhenItIsDue) {
  runToRunning(R"({"ttlSecondsAfterFinished": 10})");
  addWorkerPod(0, "Succeeded");
  expectStatusPatch();
  pass();
  expectStatusPatch();  // partition released
  EXPECT_EQ(pass(), Action::requeue(10s));
  clock_.advance(10s);
  transport_->expect("DELETE", kJobPath, 200, "{}");
  EXPECT_EQ(pass(), Action::awaitChange());
  const Json options = Json::parse(transport_->played().back().seen.body);
  EXPECT_EQ(options["propagationPolicy"], "Background");
  EXPECT_EQ(options["preconditions"]["uid"], "uid-bert");
}

// A deleted job's IPUs go back only once its workers stopped: released while they still ran, V-IPU could give
// them to another job while this one's processes still use them.
TEST_F(ReconcilerTest, DeletionStopsTheWorkersThenReleasesThePartitionThenTheFinalizer) {
  runToRunning();
  job_["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:05Z";
  transport_->expect("DELETE", kPodsPath + "/bert-worker-0", 200, "{}");
  EXPECT_EQ(pass(), Action::requeue(500ms));
  EXPECT_TRUE(partition(kPartition)) << "released while its worker still ran";
  // Going (its deletion seen) is not gone: the worker may still run until its grace period ends.
  addWorkerPod(0, "Running", nullptr, {{"deletionTimestamp", formatTime(clock_.wallNow() + 30s)}});
  EXPECT_EQ(pass(), Action::requeue(500ms)) << "no second DELETE: the pod is already going";
  EXPECT_TRUE(partition(kPartition));
  removeWorkerPod(0);
  transport_->expect("PATCH", kJobPath, 200, "{}");
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_FALSE(partition(kPartition));
  EXPECT_EQ(Json::parse(transport_->played().back().seen.body)[1]["value"], Json::array());
}

// A worker on a node that stopped answering never goes by itself: once its deletion is overdue, the release
// fences it off the IPUs, it is force-deleted, and the finalizer goes.
TEST_F(ReconcilerTest, DeletionDoesNotWaitForeverForAWorkerOnANodeThatStoppedAnswering) {
  runToRunning();
  job_["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:05Z";
  addWorkerPod(0, "Running", nullptr, {{"deletionTimestamp", formatTime(clock_.wallNow())}});
  EXPECT_EQ(pass(), Action::requeue(500ms));
  EXPECT_TRUE(partition(kPartition));
  clock_.advance(2min);  // the default podDeletionTimeout
  transport_->expect("DELETE", kPodsPath + "/bert-worker-0", 200, "{}");
  transport_->expect("PATCH", kJobPath, 200, "{}");
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_FALSE(partition(kPartition));
  const auto played = transport_->played();
  EXPECT_EQ(Json::parse(played[played.size() - 2].seen.body)["gracePeriodSeconds"], 0);
}

// A long grace period in the tenant's template does not hold a deleted job's IPUs: the release waits for the
// worker no longer than podDeletionTimeout after its deletion, fences it off the IPUs, and leaves it its
// grace.
TEST_F(ReconcilerTest, DeletionWaitsForAWorkerNoLongerThanTheTimeoutWhateverItsGracePeriod) {
  runToRunning();
  job_["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:05Z";
  addWorkerPod(0, "Running", nullptr,
               {{"deletionTimestamp", formatTime(clock_.wallNow() + std::chrono::hours(24 * 365))},
                {"deletionGracePeriodSeconds", 365 * 24 * 3600}});
  EXPECT_EQ(pass(), Action::requeue(500ms));
  clock_.advance(119s);
  EXPECT_EQ(pass(), Action::requeue(500ms));
  EXPECT_TRUE(partition(kPartition));
  clock_.advance(1s);
  transport_->expect("PATCH", kJobPath, 200, "{}");
  EXPECT_EQ(pass(), Action::awaitChange()) << "no force-delete: its deletion is not overdue";
  EXPECT_FALSE(partition(kPartition));
}

TEST_F(ReconcilerTest, AJobThatDoesNotFitWaitsWithItsPosition) {
  vipu::PartitionRequest whole;
  whole.id = "other";
  whole.size = 64;
  ASSERT_TRUE(vipu_->createPartition(whole).ok());
  inventory_->refresh();  // made outside the operator: admission sees it once the inventory is read
  job_ = jobObject("");
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::requeue(15s));
  EXPECT_EQ(phase(), "Queued");
  EXPECT_EQ(job_["status"]["queuePosition"], 1);
  EXPECT_NE(job_["status"]["lastMessage"].get<std::string>().find("Waiting for capacity (position 1"),
            std::string::npos);
  EXPECT_FALSE(lastStatusPatch_.contains("metadata"));
  // When it starts is not known: what holds the IPUs has no end (no job holds it, so no deadline).
  EXPECT_EQ(job_["status"]["startEstimate"]["unknown"], "not known: 1 partition no job holds has no end");
  EXPECT_EQ(job_["status"]["startEstimate"]["updatedAt"], formatTime(clock_.wallNow()));
  // Waiting again with nothing new writes nothing.
  EXPECT_EQ(pass(), Action::requeue(15s));
}

TEST_F(ReconcilerTest, ALauncherThatIsNotRunYetIsAWarning) {
  job_ = jobObject(R"({"launcher": {"command": ["poprun", "python3", "train.py"]}})");
  expectStatusPatch();
  pass();
  EXPECT_NE(std::find(events_.reasons.begin(), events_.reasons.end(), "Warning LauncherNotRun"),
            events_.reasons.end());
}

TEST_F(ReconcilerTest, AnInvalidSpecFailsAndWaitsForAnEdit) {
  job_ = jobObject(R"({"ipusPerJobInstance": "3"})");
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_EQ(phase(), "Failed");
  EXPECT_EQ(job_["status"]["conditions"][2]["reason"], "InvalidSpec");
}

TEST_F(ReconcilerTest, TerminalErrorsAreToldToTheUser) {
  const auto retry = reconciler_->onError(std::make_shared<const Json>(jobObject("")),
                                          makeError(ErrorCode::kInvalidArgument, "Pod is invalid"));
  EXPECT_EQ(retry, ctrl::Retry::kAfterChange);
  EXPECT_EQ(events_.reasons, std::vector<std::string>{"Warning ReconcileError"});
  EXPECT_EQ(reconciler_->onError(std::make_shared<const Json>(jobObject("")),
                                 makeError(ErrorCode::kUnavailable, "down")),
            ctrl::Retry::kWithBackoff);
}

TEST_F(ReconcilerTest, ATemplateAskingForMoreThanTheProfileFailsBeforeAdmission) {
  job_ = jobObject(R"({"workers": {"template": {"spec": {"hostPID": true, "containers":
      [{"name": "main", "image": "train:1"}]}}}})");
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_EQ(phase(), "Failed");
  EXPECT_EQ(job_["status"]["conditions"][2]["reason"], "ForbiddenPodSpec");
  const std::string message = job_["status"]["lastMessage"];
  EXPECT_EQ(message.rfind("spec.workers.template.spec.hostPID: ", 0), 0u) << message;
  EXPECT_NE(message.find("ipu-baseline"), std::string::npos) << message;
  EXPECT_FALSE(partition(kPartition)) << "nothing held for a job that can never run";
  EXPECT_FALSE(lastStatusPatch_["status"].contains("partitions"));
  EXPECT_EQ(events_.reasons, std::vector<std::string>{"Warning Failed"});
  EXPECT_EQ(pass(), Action::awaitChange()) << "and it waits for an edit, writing nothing more";
}

TEST_F(ReconcilerTest, ANamespaceThePrivilegedProfileAppliesToAdmitsTheSameTemplate) {
  makeReconciler("", "k8s", "", api::WorkerPodProfile::kPrivileged);
  job_ = jobObject(R"({"workers": {"template": {"spec": {"hostPID": true, "containers":
      [{"name": "main", "image": "train:1", "securityContext": {"privileged": true}}]}}}})");
  expectStatusPatch();
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_EQ(phase(), "Creating");
}

TEST_F(ReconcilerTest, PodsThatClaimTheJobWithoutBeingItsWorkersAreIgnoredAndReported) {
  runToRunning();
  const auto impostor = [](const std::string& ns, const std::string& name, bool controller) {
    return Json{{"metadata",
                 {{"namespace", ns},
                  {"name", name},
                  {"uid", "uid-" + name},
                  {"labels", {{"graphcore.ai/ipujob", "bert"}, {"graphcore.ai/attempt", "0"}}},
                  {"ownerReferences",
                   {{{"apiVersion", "graphcore.ai/v1alpha1"},
                     {"kind", "IPUJob"},
                     {"name", "bert"},
                     {"uid", "uid-bert"},
                     {"controller", controller}}}}}},
                {"status",
                 {{"phase", "Failed"},
                  {"containerStatuses", Json::parse(R"([{"state": {"terminated": {"exitCode": 1}}}])")}}}};
  };
  // A Failed pod of another namespace named like a worker, and one of the job's namespace without the
  // controller flag: neither is judged as a worker, nor deleted by the operator.
  pods_.apply({kube::WatcherEvent::Kind::kApply, impostor("other", "bert-worker-0", true)});
  pods_.apply({kube::WatcherEvent::Kind::kApply, impostor("ml", "lookalike", false)});
  events_.reasons.clear();
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_EQ(phase(), "Running");
  EXPECT_EQ(events_.reasons, (std::vector<std::string>{"Warning PodConflict", "Warning PodConflict"}));
  EXPECT_EQ(pass(), Action::awaitChange());
  EXPECT_EQ(events_.reasons.size(), 2u) << "each pod is reported once";
}

}  // namespace
}  // namespace ipu::controllers
